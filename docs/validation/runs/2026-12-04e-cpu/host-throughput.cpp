#include <pthread.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>
using C=std::chrono::steady_clock;
// chunk: a small matrix-vector-ish loop over 256 KiB
void run(int core,double secs,std::vector<double>*t){
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(core,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);
  std::vector<float> a(64*1024,1.0f);volatile float sink=0;
  auto t0=C::now();
  while(C::now()-t0<std::chrono::duration<double>(secs)){auto b=C::now();float acc=0;for(int r=0;r<8;r++)for(size_t i=0;i<a.size();i++){acc+=a[i]*1.0001f;a[i]=acc*1e-9f+1.0f;}sink=acc;
    t->push_back(std::chrono::duration<double,std::micro>(C::now()-b).count());}
}
void rep(const char*l,std::vector<double>&v){std::sort(v.begin(),v.end());double m=0;for(double x:v)m+=x;m/=v.size();printf("%s med %.1f mean %.1f p90 %.1f n %zu\n",l,v[v.size()/2],m,v[v.size()*9/10],v.size());}
int main(int argc,char**argv){double secs=atof(argv[1]);
 for(int k=0;k<2;k++){
  {std::vector<double> g0,g1;std::thread a(run,0,secs,&g0),b(run,1,secs,&g1);a.join();b.join();rep("both  core0",g0);rep("both  core1",g1);}
  {std::vector<double> g0;std::thread a(run,0,secs,&g0);a.join();rep("alone core0",g0);}
  {std::vector<double> g1;std::thread a(run,1,secs,&g1);a.join();rep("alone core1",g1);}
 }}
