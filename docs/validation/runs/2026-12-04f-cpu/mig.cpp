#include <pthread.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "core/cpu_affinity.hpp"
#include "cost_models/catalog.hpp"
#include "kernels/cpu_profile_backend.hpp"
using namespace pipesim;
double med(std::vector<double> v){std::sort(v.begin(),v.end());return v[v.size()/2];}
int main(int argc,char**argv){
  int blocks=argc>1?atoi(argv[1]):2; int rounds=argc>2?atoi(argv[2]):200;
  CpuProfileBackend be; ModelSpec m = find_model("gpt-tiny");
  auto a = be.workload(m, 1, 1);
  auto sum=[&](int core){ pin_to_core(pthread_self(), core); auto t=a->stage_passes(blocks); double f=0,x=0,w=0; for(auto&p:t){f+=p.forward;x+=p.input_grad;w+=p.weight_grad;} return std::vector<double>{f,x,w}; };
  for(int i=0;i<5;++i) sum(0);
  for (int rep=0; rep<3; ++rep) {
    std::vector<double> sf,si,sw,mf,mi,mw;
    for(int i=0;i<rounds;++i){
      auto s=sum(0); sf.push_back(s[0]); si.push_back(s[1]); sw.push_back(s[2]);   // same core as before (core 0 -> core 0)
      auto mg=sum(1); mf.push_back(mg[0]); mi.push_back(mg[1]); mw.push_back(mg[2]); // migrated to core 1
      sum(0); // back on 0 (migrated, untimed)
    }
    printf("blocks %d: same core F %.1f I %.1f W %.1f | migrated F %.1f (x%.3f) I %.1f (x%.3f) W %.1f (x%.3f)\n", blocks,
      med(sf)*1e6, med(si)*1e6, med(sw)*1e6, med(mf)*1e6, med(mf)/med(sf), med(mi)*1e6, med(mi)/med(si), med(mw)*1e6, med(mw)/med(sw));
  }
}
