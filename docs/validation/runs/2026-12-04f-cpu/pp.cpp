#include <pthread.h>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "core/cpu_affinity.hpp"
using namespace pipesim;
int main(int argc,char**argv){
  int coreb = argc>1?atoi(argv[1]):0; int n=20000;
  pin_to_core(pthread_self(),0);
  std::mutex mu; std::condition_variable cv; int turn=0; bool stop=false;
  std::thread tb([&]{ pin_to_core(pthread_self(),coreb); std::unique_lock l(mu); for(;;){ cv.wait(l,[&]{return turn==1||stop;}); if(turn!=1) break; turn=0; cv.notify_all(); } });
  std::vector<double> r;
  for(int i=0;i<n;++i){ auto t0=std::chrono::steady_clock::now(); { std::unique_lock l(mu); turn=1; cv.notify_all(); cv.wait(l,[&]{return turn==0;}); } r.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count()); }
  { std::lock_guard l(mu); stop=true; cv.notify_all(); } tb.join();
  std::sort(r.begin(),r.end()); printf("b on core %d: round trip median %.1f us p10 %.1f p90 %.1f\n", coreb, r[n/2]*1e6, r[n/10]*1e6, r[9*n/10]*1e6);
}
