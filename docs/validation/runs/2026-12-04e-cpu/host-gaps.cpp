#include <pthread.h>
#include <sched.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <algorithm>
using C=std::chrono::steady_clock;
void run(int core,double secs,std::vector<double>*gaps){
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(core,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);
  auto t0=C::now(),last=t0;
  while(true){auto n=C::now();double g=std::chrono::duration<double,std::micro>(n-last).count();if(g>20)gaps->push_back(g);last=n;if(n-t0>std::chrono::duration<double>(secs))break;}
}
int main(int argc,char**argv){double secs=argc>1?atof(argv[1]):2;int both=argc>2?atoi(argv[2]):1;
  std::vector<double> g[2];std::vector<std::thread> t;
  for(int c=0;c<2;c++){ if(both||c==0) t.emplace_back(run,c,secs,&g[c]);} for(auto&x:t)x.join();
  if(!both){std::thread u(run,1,secs,&g[1]);u.join();}
  for(int c=0;c<2;c++){printf("core %d:",c);for(double th:{20.,50.,100.,200.,500.,1000.}){double s=0;int n=0;for(double x:g[c])if(x>th){s+=x;n++;}printf("  >%4.0fus %4d %5.2f%%",th,n,100*s/1e6/secs);}printf("\n");}
}
