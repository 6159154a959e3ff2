#include <pthread.h>
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "cost_models/catalog.hpp"
#include "kernels/cpu_profile_backend.hpp"
using namespace pipesim;
double med(std::vector<double> v){std::sort(v.begin(),v.end());return v[v.size()/2];}
int main(int argc,char**argv){
  int n=argc>1?atoi(argv[1]):4; int tokens=argc>2?atoi(argv[2]):2; int blocks=argc>3?atoi(argv[3]):2; int rounds=argc>4?atoi(argv[4]):150;
  CpuProfileBackend be; ModelSpec m = find_model("gpt-tiny");
  std::vector<std::unique_ptr<ProfileWorkload>> w; for(int i=0;i<n;++i) w.push_back(i==0?be.workload(m,1,1):be.workload(m,1,1+i));
  for (int rep=0; rep<3; ++rep) {
    // alone: thread 0's workload back to back
    std::vector<double> af; for(int i=0;i<rounds;++i){ double f=0; for(auto&p:w[0]->stage_passes(blocks)) f+=p.forward+p.input_grad+p.weight_grad; af.push_back(f);} 
    std::mutex mu; std::condition_variable cv; std::vector<int> has(n,0); for(int t=0;t<tokens;++t) has[t*n/tokens]=1;
    std::vector<std::vector<double>> times(n); bool stop=false;
    std::vector<std::thread> th;
    for(int i=0;i<n;++i) th.emplace_back([&,i]{ for(int r=0;r<rounds;++r){ {std::unique_lock l(mu); cv.wait(l,[&]{return has[i]>0;}); has[i]--; }
        double f=0; for(auto&p:w[i]->stage_passes(blocks)) f+=p.forward+p.input_grad+p.weight_grad; times[i].push_back(f);
        {std::lock_guard l(mu); has[(i+1)%n]++; cv.notify_all();} } });
    for(auto&t:th) t.join();
    std::vector<double> all; for(auto&v:times) all.insert(all.end(), v.begin(), v.end());
    printf("%d threads %d tokens: alone %.1f us, ring %.1f us (x%.3f); thread0 x%.3f\n", n, tokens, med(af)*1e6, med(all)*1e6, med(all)/med(af), med(times[0])/med(af));
  }
}
