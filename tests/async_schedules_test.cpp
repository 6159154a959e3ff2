// The asynchronous 1F1B family (pipedream, pipedream-2bw, async-1f1b; spec §10) and AMP
// (spec §9): exact op orders, weight versions and staleness as the engine measures them,
// one fill and drain per run (exact makespans in integer ns, zero-cost links, free
// optimizer), deadlock-freedom over a grid, and parameter errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "input_error.hpp"
#include "cost_models/uniform.hpp"
#include "generated.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ScheduleParams params(int p, int m, int iterations = 1, int mak = 0, int muf = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.iterations = iterations;
  out.set("max-active-keys", mak);
  out.set("min-update-frequency", muf);
  return out;
}

ScheduleParams naive_2bw(int p, int m, int iterations) {
  ScheduleParams out = params(p, m, iterations);
  out.set("twobw-policy", "naive");
  return out;
}

UniformCostModel costs(Tick fwd = 1000, Tick bwd = 2000) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{fwd, bwd, 0};
  return UniformCostModel(cfg);
}

// One engine run plus the weight version each F / B used, by (stage, micro-batch).
struct Measured {
  SimResult r;
  std::map<std::pair<int, int>, int> f, b;
  int mismatch(int stage, int k) const { return b.at({stage, k}) - f.at({stage, k}); }
};

Measured measure(const Schedule& s) {
  TimelineRecorder rec;
  Measured out{simulate(s, costs(), &rec), {}, {}};
  for (const OpRecord& o : rec.timeline.ops) {
    if (o.op.kind == OpKind::F) out.f[{o.op.stage, o.op.microbatch}] = o.weight_version;
    if (o.op.kind == OpKind::B) out.b[{o.op.stage, o.op.microbatch}] = o.weight_version;
  }
  return out;
}

std::string label(const std::string& name, int p, int m, int t, int mak = 0, int muf = 1) {
  return name + " p=" + std::to_string(p) + " m=" + std::to_string(m) + " T=" + std::to_string(t) +
         " mak=" + std::to_string(mak) + " muf=" + std::to_string(muf);
}

// ---- exact orders (p = 4) --------------------------------------------------------------

TEST(AsyncSchedules, PipeDreamP4M4T2) {
  // One 1F1B over ids 0..7 (no flush between the two iterations), OPT after every B.
  const Schedule s = generate("pipedream", params(4, 4, 2));
  EXPECT_EQ(s.weight_policy, WeightPolicy::Stash);
  EXPECT_THAT(testing_schedules::device_rows(s),
              ElementsAre("0F0 0F1 0F2 0F3 0B0 0OPT 0F4 0B1 0OPT 0F5 0B2 0OPT 0F6 0B3 0OPT 0F7 0B4 0OPT "
                          "0B5 0OPT 0B6 0OPT 0B7 0OPT",
                          "1F0 1F1 1F2 1B0 1OPT 1F3 1B1 1OPT 1F4 1B2 1OPT 1F5 1B3 1OPT 1F6 1B4 1OPT 1F7 1B5 1OPT "
                          "1B6 1OPT 1B7 1OPT",
                          "2F0 2F1 2B0 2OPT 2F2 2B1 2OPT 2F3 2B2 2OPT 2F4 2B3 2OPT 2F5 2B4 2OPT 2F6 2B5 2OPT "
                          "2F7 2B6 2OPT 2B7 2OPT",
                          "3F0 3B0 3OPT 3F1 3B1 3OPT 3F2 3B2 3OPT 3F3 3B3 3OPT 3F4 3B4 3OPT 3F5 3B5 3OPT "
                          "3F6 3B6 3OPT 3F7 3B7 3OPT"));
  // async-1f1b: the same order, only the weight policy differs.
  const Schedule a = generate("async-1f1b", params(4, 4, 2));
  EXPECT_EQ(a.ops, s.ops);
  EXPECT_EQ(a.weight_policy, WeightPolicy::Current);
}

TEST(AsyncSchedules, PipeDream2BWP4M4T2) {
  // OPT only after the backward that completes a batch (B3, B7).
  const Schedule s = generate("pipedream-2bw", params(4, 4, 2));
  EXPECT_EQ(s.weight_policy, WeightPolicy::TwoBW);
  EXPECT_THAT(testing_schedules::device_rows(s),
              ElementsAre("0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0F6 0B3 0OPT 0F7 0B4 0B5 0B6 0B7 0OPT",
                          "1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1OPT 1F6 1B4 1F7 1B5 1B6 1B7 1OPT",
                          "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2F4 2B3 2OPT 2F5 2B4 2F6 2B5 2F7 2B6 2B7 2OPT",
                          "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3OPT 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 3OPT"));
  const Schedule naive = generate("pipedream-2bw", naive_2bw(4, 4, 2));
  EXPECT_EQ(naive.ops, s.ops);
  EXPECT_EQ(naive.weight_policy, WeightPolicy::Current);
}

TEST(AsyncSchedules, AmpOrdersP4) {
  // mak = 2: stage 0 is 1F1B with warm-up 1; the keys travel as pairs through the middle.
  const Schedule s = generate("amp", params(4, 4, 1, 2, 1));
  EXPECT_EQ(s.weight_policy, WeightPolicy::Current);
  EXPECT_THAT(testing_schedules::device_rows(s), ElementsAre("0F0 0F1 0B0 0OPT 0F2 0B1 0OPT 0F3 0B2 0OPT 0B3 0OPT",
                                             "1F0 1F1 1B0 1OPT 1B1 1OPT 1F2 1F3 1B2 1OPT 1B3 1OPT",
                                             "2F0 2F1 2B0 2OPT 2B1 2OPT 2F2 2F3 2B2 2OPT 2B3 2OPT",
                                             "3F0 3B0 3OPT 3F1 3B1 3OPT 3F2 3B2 3OPT 3F3 3B3 3OPT"));
  // mak = p: fairscale's 1F1B; muf = 3 over 8 backwards: after B2, B5, and the leftover B6 B7.
  const auto u = testing_schedules::device_rows(generate("amp", params(4, 4, 2, 0, 3)));
  EXPECT_EQ(u[0], "0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0OPT 0F6 0B3 0F7 0B4 0B5 0OPT 0B6 0B7 0OPT");
  EXPECT_EQ(u[3], "3F0 3B0 3F1 3B1 3F2 3B2 3OPT 3F3 3B3 3F4 3B4 3F5 3B5 3OPT 3F6 3B6 3F7 3B7 3OPT");
}

TEST(AsyncSchedules, AmpWithPActiveKeysIsAsync1F1B) {
  for (int p : {1, 2, 3, 4, 7}) {
    for (int m : {1, 2, 5, 8}) {
      for (int t : {1, 3}) {
        SCOPED_TRACE(label("amp", p, m, t));
        EXPECT_EQ(generate("amp", params(p, m, t, p, 1)).ops, generate("async-1f1b", params(p, m, t)).ops);
      }
    }
  }
}

// ---- weight versions and staleness -------------------------------------------------------

TEST(AsyncSchedules, PipeDreamStashesLagsAndHoldsPMinusSVersions) {
  for (int p : {1, 2, 3, 4, 6}) {
    for (int m : {1, 4, 7}) {
      for (int t : {2, 5}) {
        const int n = m * t;
        if (n < 2 * p) continue;  // the steady state must be reached for the version peak
        SCOPED_TRACE(label("pipedream", p, m, t));
        const Measured v = measure(generate("pipedream", params(p, m, t)));
        for (int s = 0; s < p; ++s) {
          const int w = p - s - 1;
          std::int64_t delay_sum = 0;
          for (int k = 0; k < n; ++k) {
            EXPECT_EQ(v.f.at({s, k}), std::max(0, k - w)) << "F lags by p-s-1 versions, s=" << s << " k=" << k;
            EXPECT_EQ(v.mismatch(s, k), 0);
            delay_sum += std::min(k, w);
          }
          const StageStaleness& st = v.r.staleness[static_cast<std::size_t>(s)];
          EXPECT_EQ(st.backwards, n);
          EXPECT_EQ(st.mismatched, 0);
          EXPECT_EQ(st.gradients, n);
          EXPECT_EQ(st.max_delay, w);  // gradient delay p-s-1 in the steady state
          EXPECT_EQ(st.delay_sum, delay_sum);
          EXPECT_EQ(v.r.devices[static_cast<std::size_t>(s)].peak_weight_versions, p - s);
        }
      }
    }
  }
}

TEST(AsyncSchedules, Async1F1BMismatchIsPMinusSMinus1) {
  for (int p : {1, 2, 4, 5}) {
    for (int m : {1, 3, 8}) {
      for (int t : {1, 4}) {
        const int n = m * t;
        SCOPED_TRACE(label("async-1f1b", p, m, t));
        const Measured v = measure(generate("async-1f1b", params(p, m, t)));
        for (int s = 0; s < p; ++s) {
          const int w = p - s - 1;
          std::int64_t sum = 0, mismatched = 0;
          for (int k = 0; k < n; ++k) {
            // F(k) on w_{k-(p-s-1)}, B(k) on w_k: mismatch p-s-1 once k >= p-s-1 (spec §10.3).
            EXPECT_EQ(v.f.at({s, k}), std::max(0, k - w));
            EXPECT_EQ(v.b.at({s, k}), k);
            sum += std::min(k, w);
            mismatched += std::min(k, w) > 0;
          }
          const StageStaleness& st = v.r.staleness[static_cast<std::size_t>(s)];
          EXPECT_EQ(st.mismatch_sum, sum);
          EXPECT_EQ(st.mismatched, mismatched);
          EXPECT_EQ(st.max_mismatch, std::min(n - 1, w));
          EXPECT_EQ(st.max_delay, 0);
          EXPECT_EQ(v.r.devices[static_cast<std::size_t>(s)].peak_weight_versions, 1);
        }
      }
    }
  }
}

TEST(AsyncSchedules, PipeDream2BWBatchTUsesPreviousVersion) {
  for (int p : {1, 2, 4}) {
    for (int m : {p, p + 1, 2 * p + 3}) {
      for (int t : {2, 4}) {
        SCOPED_TRACE(label("pipedream-2bw", p, m, t));
        const Measured v = measure(generate("pipedream-2bw", params(p, m, t)));
        for (int s = 0; s < p; ++s) {
          for (int k = 0; k < m * t; ++k) {
            EXPECT_EQ(v.f.at({s, k}), std::max(0, k / m - 1));
            EXPECT_EQ(v.mismatch(s, k), 0);
          }
          const StageStaleness& st = v.r.staleness[static_cast<std::size_t>(s)];
          EXPECT_EQ(st.mismatched, 0);
          EXPECT_EQ(st.gradients, m * t);
          EXPECT_EQ(st.delay_sum, m * (t - 1));  // batch t >= 1 computed on W^(t-1), applied to W^t
          EXPECT_EQ(st.max_delay, 1);
          EXPECT_EQ(v.r.devices[static_cast<std::size_t>(s)].peak_weight_versions, 2);
        }
      }
    }
  }
}

TEST(AsyncSchedules, PipeDream2BWNaiveAccumulationMismatch) {
  // Spec §10.2: p = m = 4, stage 0: per batch t >= 1 the pattern 1,1,1,0.
  const Measured v = measure(generate("pipedream-2bw", naive_2bw(4, 4, 3)));
  std::vector<int> pattern;
  for (int k = 0; k < 12; ++k) pattern.push_back(v.mismatch(0, k));
  EXPECT_EQ(pattern, std::vector<int>({0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0}));
  // In general the first p-s-1 micro-batches of every batch t >= 1 straddle one update.
  for (int p : {2, 3, 4, 6}) {
    for (int m : {p, 2 * p}) {
      SCOPED_TRACE(label("pipedream-2bw naive", p, m, 3));
      const SimResult n = simulate(generate("pipedream-2bw", naive_2bw(p, m, 3)), costs());
      for (int s = 0; s < p; ++s) {
        const StageStaleness& st = n.staleness[static_cast<std::size_t>(s)];
        EXPECT_EQ(st.mismatched, 2 * (p - s - 1));
        EXPECT_EQ(st.mismatch_sum, 2 * (p - s - 1));
        EXPECT_EQ(st.max_mismatch, s == p - 1 ? 0 : 1);
        EXPECT_EQ(st.max_delay, 0);
        EXPECT_EQ(n.devices[static_cast<std::size_t>(s)].peak_weight_versions, 1);
      }
    }
  }
}

// Mismatch of key k at a 1F1B stage with warm-up w and an update after every muf-th
// backward: floor((c + w)/muf) with c = (k - w) mod muf in the steady state (spec §9);
// during the warm-up F(k) precedes every backward and k of them pass before B(k).
int one_f_one_b_mismatch(int k, int w, int muf) { return k >= w ? ((k - w) % muf + w) / muf : k / muf; }

int ceil_div(int a, int b) { return (a + b - 1) / b; }

TEST(AsyncSchedules, AmpStalenessBoundAndExactLinearForm) {
  for (int p : {1, 2, 3, 4, 5}) {
    for (int mak = 1; mak <= p; ++mak) {
      for (int muf : {1, 2, 3, 5}) {
        for (int m : {1, 3, 2 * p}) {
          for (int t : {1, 3}) {
            const int n = m * t;
            SCOPED_TRACE(label("amp", p, m, t, mak, muf));
            const Measured v = measure(generate("amp", params(p, m, t, mak, muf)));
            for (int s = 0; s < p; ++s) {
              const StageStaleness& st = v.r.staleness[static_cast<std::size_t>(s)];
              EXPECT_EQ(st.backwards, n);
              EXPECT_EQ(st.gradients, n);  // the final OptStep applies any leftover
              EXPECT_LE(st.max_mismatch, ceil_div(mak - 1, muf));
              if (mak == 1) {
                EXPECT_EQ(st.mismatch_sum, 0);  // sequential model parallelism
              }
              if (muf == 1) {
                // One update per backward: the mismatch is the number b of backwards between
                // F(j) and B(j). Key j = q*mak + i sees the earlier keys of its group (up to
                // p-s-1 of them) and the tail of the previous group.
                for (int j = 0; j < n; ++j) {
                  const int q = j / mak, i = j % mak;
                  const int b = std::min(i, p - s - 1) + (q >= 1 ? std::max(0, mak - 1 - s - i) : 0);
                  EXPECT_EQ(v.mismatch(s, j), b) << "s=" << s << " j=" << j;
                }
              }
              // Stage 0 is 1F1B with warm-up mak-1; with mak = p every stage s has p-s-1.
              const int w = s == 0 ? mak - 1 : (mak == p ? p - s - 1 : -1);
              if (w < 0) continue;
              std::int64_t sum = 0;
              for (int k = 0; k < n; ++k) {
                EXPECT_EQ(v.mismatch(s, k), one_f_one_b_mismatch(k, w, muf)) << "s=" << s << " k=" << k;
                sum += one_f_one_b_mismatch(k, w, muf);
              }
              EXPECT_EQ(st.mismatch_sum, sum);
            }
          }
        }
      }
    }
  }
}

// ---- one fill and drain per run ------------------------------------------------------------

TEST(AsyncSchedules, MakespanIsOneFillAndDrainPerRun) {
  for (int p : {1, 2, 4, 5}) {
    for (int m : {p, 2 * p + 1}) {
      for (int t : {1, 3}) {
        const std::vector<std::pair<const char*, ScheduleParams>> cases = {
            {"pipedream", params(p, m, t)},     {"async-1f1b", params(p, m, t)},     {"pipedream-2bw", params(p, m, t)},
            {"pipedream-2bw", naive_2bw(p, m, t)}, {"amp", params(p, m, t, 0, 1)}, {"amp", params(p, m, t, 0, 3)}};
        for (const auto& [name, prm] : cases) {
          for (auto [f, b] : {std::pair<Tick, Tick>{1000, 2000}, {3000, 1000}, {7, 13}}) {
            SCOPED_TRACE(label(name, p, m, t, prm.number("max-active-keys"), prm.number("min-update-frequency")) +
                         " F=" + std::to_string(f) + " B=" + std::to_string(b));
            const SimResult r = simulate(generate(name, prm), costs(f, b));
            EXPECT_EQ(r.makespan, (t * m + p - 1) * (f + b));
            for (const DeviceStats& d : r.devices) EXPECT_EQ(d.busy, t * m * (f + b));
            // No bubble between iterations: each one after the first takes m (t_F + t_B).
            ASSERT_EQ(r.iteration_end.size(), static_cast<std::size_t>(t));
            for (int i = 1; i < t; ++i)
              EXPECT_EQ(r.iteration_end[static_cast<std::size_t>(i)] - r.iteration_end[static_cast<std::size_t>(i - 1)],
                        m * (f + b));
          }
        }
      }
    }
  }
}

TEST(AsyncSchedules, AmpMakespanWithFewerActiveKeys) {
  // Groups of mak keys, one group per round trip p(t_F + t_B):
  // makespan = (p*floor((N-1)/mak) + (N-1) mod mak + p)(t_F + t_B).
  for (int p : {2, 3, 4, 6}) {
    for (int mak = 1; mak <= p; ++mak) {
      for (int n : {1, 2, mak, 2 * p + 1, 3 * p}) {
        for (auto [f, b] : {std::pair<Tick, Tick>{1000, 1000}, {1000, 2000}, {3000, 1000}}) {
          SCOPED_TRACE(label("amp", p, n, 1, mak) + " F=" + std::to_string(f) + " B=" + std::to_string(b));
          const SimResult r = simulate(generate("amp", params(p, n, 1, mak, 2)), costs(f, b));
          const int slot_last = p * ((n - 1) / mak) + (n - 1) % mak;
          EXPECT_EQ(r.makespan, (slot_last + p) * (f + b));
        }
      }
    }
  }
}

// ---- completeness and deadlock-freedom -------------------------------------------------------

TEST(AsyncSchedules, EveryOpOnceAndDeadlockFree) {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, p, 2 * p + 1}) {
      for (int t : {1, 2, 5}) {
        std::vector<std::pair<std::string, ScheduleParams>> cases = {{"pipedream", params(p, m, t)},
                                                                     {"async-1f1b", params(p, m, t)}};
        if (m >= p) {
          cases.push_back({"pipedream-2bw", params(p, m, t)});
          cases.push_back({"pipedream-2bw", naive_2bw(p, m, t)});
        }
        for (int mak : {1, (p + 1) / 2, p})
          for (int muf : {1, 2, 7}) cases.push_back({"amp", params(p, m, t, mak, muf)});
        for (const auto& [name, prm] : cases) {
          SCOPED_TRACE(label(name, p, m, t, prm.number("max-active-keys"), prm.number("min-update-frequency")));
          const Schedule s = generate(name, prm);
          const ValidationReport report = validate(s);
          EXPECT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
          const int n = m * t;
          int expected_updates = n;  // pipedream, async-1f1b
          if (name == "pipedream-2bw") expected_updates = t;
          if (name == "amp") expected_updates = ceil_div(n, prm.number("min-update-frequency"));
          // validate() rules out duplicates, so n in-range F's and B's per stage are each id once.
          for (int st = 0; st < p; ++st) {
            std::map<OpKind, int> count;
            for (const Op& op : s.ops[static_cast<std::size_t>(st)]) {
              ++count[op.kind];
              EXPECT_EQ(op.stage, st);
              EXPECT_LT(op.microbatch, n);
            }
            EXPECT_EQ(count[OpKind::F], n);
            EXPECT_EQ(count[OpKind::B], n);
            EXPECT_EQ(count[OpKind::OptStep], expected_updates);
          }
          EXPECT_GT(simulate(s, costs()).makespan, 0);
        }
      }
    }
  }
}

// ---- parameter errors ---------------------------------------------------------------------

TEST(AsyncSchedules, ParameterErrors) {
  for (const char* name : {"pipedream", "async-1f1b", "pipedream-2bw", "amp"}) {
    EXPECT_THAT(error_of(name, params(0, 4)), HasSubstr(std::string(name) + ": p must be a positive integer, got 0"));
    EXPECT_THAT(error_of(name, params(4, 0)), HasSubstr("m must be a positive integer, got 0"));
    EXPECT_THAT(error_of(name, params(4, 4, 0)), HasSubstr("iterations must be a positive integer, got 0"));
    EXPECT_THAT(error_of(name, params(4, 1 << 20, 1 << 12)), HasSubstr("too many micro-batches"));
  }
  EXPECT_THAT(error_of("pipedream-2bw", params(4, 3)), HasSubstr("pipedream-2bw: m (3) must be at least p (4)"));
  ScheduleParams bad = params(4, 4);
  bad.set("twobw-policy", "shadow");
  EXPECT_THAT(error_of("pipedream-2bw", bad), HasSubstr("pipedream-2bw: twobw-policy must be double-buffer or naive, got 'shadow'"));
  EXPECT_THAT(error_of("amp", params(4, 4, 1, 5)), HasSubstr("amp: max_active_keys (5) must lie in [1, p] = [1, 4]"));
  EXPECT_THAT(error_of("amp", params(4, 4, 1, -1)), HasSubstr("max_active_keys (-1) must lie in [1, p]"));
  EXPECT_THAT(error_of("amp", params(4, 4, 1, 0, 0)), HasSubstr("amp: min_update_frequency must be a positive integer, got 0"));
  EXPECT_EQ(error_of("amp", params(4, 4, 1, 4, 100)), "");
}

}  // namespace
}  // namespace pipesim
