#include <pthread.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>
using C=std::chrono::steady_clock;
void run(int core,double secs,std::vector<double>*t){
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(core,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);
  std::vector<float> a(64*1024,1.0f);volatile float sink=0;
  auto t0=C::now();
  while(C::now()-t0<std::chrono::duration<double>(secs)){auto b=C::now();float acc=0;for(int r=0;r<8;r++)for(size_t i=0;i<a.size();i++){acc+=a[i]*1.0001f;a[i]=acc*1e-9f+1.0f;}sink=acc;
    t->push_back(std::chrono::duration<double,std::micro>(C::now()-b).count());}
}
double med(std::vector<double>v){std::sort(v.begin(),v.end());return v[v.size()/2];}
int main(int argc,char**argv){double secs=atof(argv[1]);
  std::vector<double> g0,g1,a0,a1;
  {std::thread a(run,0,secs,&a0);a.join();}{std::thread a(run,1,secs,&a1);a.join();}
  {std::thread a(run,0,secs,&g0),b(run,1,secs,&g1);a.join();b.join();}
  printf("alone %.0f %.0f together %.0f %.0f ratio %.2f %.2f\n",med(a0),med(a1),med(g0),med(g1),med(g0)/med(a0),med(g1)/med(a1));
}
