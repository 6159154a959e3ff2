// AMDP (spec §8): the code's per-rank tables and sequences literally, the weight-version
// table of §8.5 as the engine measures it, deadlock-freedom, memory and errors.
//
// Ids: pipeline c's k-th micro-batch over the run (the spec's F{c}.{k}) is
// (k / n_p) * N + c * n_p + k % n_p, with n_p = 2N/D (schedules/generators/amdp.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "input_error.hpp"
#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

ScheduleParams params(int D, int N, int T = 1, const std::string& update = "code") {
  ScheduleParams out;
  out.p = D;
  out.m = N;
  out.iterations = T;
  out.set("amdp-update", update);
  return out;
}

UniformCostModel costs(Tick fwd, Tick bwd, Tick optimizer = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{fwd, bwd, 0};
  cfg.optimizer = optimizer;
  return UniformCostModel(cfg);
}

std::string label(int D, int N, int T, const std::string& u = "code") {
  return "D=" + std::to_string(D) + " N=" + std::to_string(N) + " T=" + std::to_string(T) + " update=" + u;
}

// Iteration t, pipeline c, index j within the pipeline's share of the iteration.
struct Mb {
  int t, c, j;
};
Mb decode(int id, int N, int D) {
  const int n_p = 2 * N / D;
  return {id / N, (id % N) / n_p, (id % N) % n_p};
}

// ---- §8.3: the code's cyclic order tables -----------------------------------------------

const std::vector<std::vector<int>> kFwd4 = {{0, 2, 1, 3}, {0, 1, 2, 3}, {1, 0, 3, 2}, {1, 3, 0, 2}};
const std::vector<std::vector<int>> kBwd4 = {{1, 3, 0, 2}, {1, 0, 3, 2}, {0, 1, 2, 3}, {0, 2, 1, 3}};
const std::vector<std::vector<int>> kFwd8 = {{0, 4, 1, 2, 5, 6, 3, 7}, {0, 1, 4, 5, 2, 3, 6, 7}, {1, 0, 5, 4, 3, 2, 7, 6},
                                             {1, 5, 0, 3, 4, 7, 2, 6}, {2, 6, 3, 0, 7, 4, 1, 5}, {2, 3, 6, 7, 0, 1, 4, 5},
                                             {3, 2, 7, 6, 1, 0, 5, 4}, {3, 7, 2, 1, 6, 5, 0, 4}};
const std::vector<std::vector<int>> kBwd8 = {{3, 7, 2, 1, 6, 5, 0, 4}, {3, 2, 7, 6, 1, 0, 5, 4}, {2, 3, 6, 7, 0, 1, 4, 5},
                                             {2, 6, 3, 0, 7, 4, 1, 5}, {1, 5, 0, 3, 4, 7, 2, 6}, {1, 0, 5, 4, 3, 2, 7, 6},
                                             {0, 1, 4, 5, 2, 3, 6, 7}, {0, 4, 1, 2, 5, 6, 3, 7}};

// The slots x (pipeline x mod K, x >= K: the pair's second micro-batch) of a rank's F or B ops.
std::vector<int> slots(const Schedule& s, int rank, OpKind kind) {
  const int K = s.num_pipelines;
  std::vector<int> out;
  for (const Op& op : s.ops[static_cast<std::size_t>(rank)])
    if (op.kind == kind) out.push_back(op.pipeline + K * (decode(op.microbatch, s.microbatches, s.num_devices).j % 2));
  return out;
}

TEST(Amdp, OrderTablesOfTheCodeRepeatCyclically) {
  for (int D : {4, 8}) {
    const auto& fwd = D == 4 ? kFwd4 : kFwd8;
    const auto& bwd = D == 4 ? kBwd4 : kBwd8;
    for (int N : {D, 2 * D, 3 * D}) {
      const Schedule s = generate("amdp", params(D, N, 2));
      for (int r = 0; r < D; ++r) {
        SCOPED_TRACE(label(D, N, 2) + " rank " + std::to_string(r));
        std::vector<int> f_expected, b_expected;
        for (int g = 0; g < 2 * N / D; ++g) {
          f_expected.insert(f_expected.end(), fwd[static_cast<std::size_t>(r)].begin(), fwd[static_cast<std::size_t>(r)].end());
          b_expected.insert(b_expected.end(), bwd[static_cast<std::size_t>(r)].begin(), bwd[static_cast<std::size_t>(r)].end());
        }
        EXPECT_EQ(slots(s, r, OpKind::F), f_expected);
        EXPECT_EQ(slots(s, r, OpKind::B), b_expected);
      }
    }
  }
}

TEST(Amdp, PlacementIsChimeraWithFEqualDOver4) {
  // §8.2: D = 8, GPU r holds chunk 0 at r, 1 at (11-r) mod 8, 2 at (r+4) mod 8, 3 at 7-r.
  const Schedule s8 = generate("amdp", params(8, 8));
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(s8.device_of(0, r), r);
    EXPECT_EQ(s8.device_of(1, (11 - r) % 8), r);
    EXPECT_EQ(s8.device_of(2, (r + 4) % 8), r);
    EXPECT_EQ(s8.device_of(3, 7 - r), r);
  }
  const Schedule s4 = generate("amdp", params(4, 4));
  for (int st = 0; st < 4; ++st) {
    EXPECT_EQ(s4.device_of(0, st), st);
    EXPECT_EQ(s4.device_of(1, st), 3 - st);
  }
  EXPECT_EQ(s4.chunks_per_device(), 1);  // full stages, as Chimera
}

// ---- §8.3: the concrete D = 4 sequences (T = 3, G = 2) ----------------------------------

// Translates the spec's "F0.4 B1.3* fin |U1| ..." for one rank into ops.
std::vector<Op> translate(const Schedule& s, int rank, const std::string& text) {
  const int N = s.microbatches, n_p = 2 * N / s.num_devices;
  auto stage_on = [&](int c) {
    for (int st = 0; st < s.num_stages; ++st)
      if (s.device_of(c, st) == rank) return st;
    return -1;
  };
  std::vector<Op> out;
  std::istringstream in(text);
  for (std::string tok; in >> tok;) {
    if (tok == "fin" || tok == "...") continue;  // FIN has nothing to reduce at width 1
    if (tok.front() == '|') {
      for (const auto& [c, st] : s.replicas_on(rank)) out.push_back(opt_step(st, c));
      continue;
    }
    const OpKind kind = tok[0] == 'F' ? OpKind::F : OpKind::B;
    const int c = tok[1] - '0';
    const int k = std::stoi(tok.substr(3));
    out.push_back(make_op(kind, stage_on(c), (k / n_p) * N + c * n_p + k % n_p, c));
    if (tok.back() == '*') out.push_back(grad_sync(stage_on(c), c));
  }
  return out;
}

TEST(Amdp, ConcreteD4SequencesOfTheSpec) {
  const std::vector<std::string> spec = {
      "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 B0.0 F0.2 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3* B0.2 F0.4 F0.5 B0.3* fin F1.4 B1.4 |U1| "
      "F1.5 B1.5 B0.4 F0.6 F0.7 B0.5 F1.6 B1.6 F1.7 B1.7* B0.6 F0.8 F0.9 B0.7* fin F1.8 B1.8 |U2| ...",
      "F0.0 F1.0 F0.1 F1.1 B1.0 B0.0 B1.1 B0.1 F0.2 F1.2 F0.3 F1.3 B1.2 B0.2 B1.3* B0.3* fin F0.4 F1.4 F0.5 F1.5 |U1| "
      "B1.4 B0.4 B1.5 B0.5 F0.6 F1.6 F0.7 F1.7 B1.6 B0.6 B1.7* B0.7* fin F0.8 F1.8 F0.9 F1.9 |U2| ...",
      "F1.0 F0.0 F1.1 F0.1 B0.0 B1.0 B0.1 B1.1 F1.2 F0.2 F1.3 F0.3 B0.2 B1.2 B0.3* B1.3* fin F1.4 F0.4 F1.5 F0.5 |U1| "
      "B0.4 B1.4 ...",
      "F1.0 F1.1 F0.0 B0.0 F0.1 B0.1 B1.0 F1.2 F1.3 B1.1 F0.2 B0.2 F0.3 B0.3* B1.2 F1.4 F1.5 B1.3* fin F0.4 B0.4 |U1| "
      "F0.5 B0.5 B1.4 ...",
  };
  const Schedule s = generate("amdp", params(4, 8, 3));
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::vector<Op> want = translate(s, r, spec[static_cast<std::size_t>(r)]);
    const auto& got = s.ops[static_cast<std::size_t>(r)];
    ASSERT_GE(got.size(), want.size());
    EXPECT_EQ(std::vector<Op>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(want.size())), want);
    // After the last group: the deferred B*, then U(T).
    EXPECT_EQ(got[got.size() - 4].kind, OpKind::B);
    EXPECT_EQ(got[got.size() - 3].kind, OpKind::GradSync);
    EXPECT_EQ(got[got.size() - 2].kind, OpKind::OptStep);
    EXPECT_EQ(got[got.size() - 1].kind, OpKind::OptStep);
  }
}

// The per-group templates of §8.3 expanded literally, kinds only ('*' dropped): f, b, u.
std::string template_shape(int D, int G, int T, bool embedding) {
  const std::string u(static_cast<std::size_t>(D / 2), 'u');
  std::string s;
  for (int it = 0; it < T; ++it)
    for (int i = 0; i < G; ++i) {
      const bool first = it == 0 && i == 0;
      const std::string upd = it > 0 && i == 0 ? u : "";
      if (embedding) {
        s += first ? "ff" : "ffb";  // F F B*(if i==0) [FIN]
        s += D == 4 ? "fb" + upd + "fbb" : "fffffbf" + upd + "bbbbbb";
      } else {
        s += first ? "ff" : "bff";  // B*(if i==0) [FIN] F F
        s += D == 4 ? "ff" + upd + "bbb" : "ffffff" + upd + "bbbbbbb";
      }
    }
  return s + "b" + u;  // after the last group: B* ; U(T)
}

TEST(Amdp, PerGroupTemplatesOfTheCode) {
  for (int D : {4, 8})
    for (int G : {1, 2, 3})
      for (int T : {1, 2, 3}) {
        const Schedule s = generate("amdp", params(D, G * D, T));
        for (int r = 0; r < D; ++r) {
          SCOPED_TRACE(label(D, G * D, T) + " rank " + std::to_string(r));
          std::string got;
          for (const Op& op : s.ops[static_cast<std::size_t>(r)])
            if (op.kind != OpKind::GradSync) got += op.kind == OpKind::F ? 'f' : op.kind == OpKind::B ? 'b' : 'u';
          EXPECT_EQ(got, template_shape(D, G, T, r % 4 == 0 || r % 4 == 3));
        }
      }
}

// B* marks (§8.3): in group G-1, exactly the backwards of slots x >= K, i.e. each
// pipeline's last micro-batch of the iteration (j = n_p - 1), at D = 4, 8 and beyond.
TEST(Amdp, GradSyncFollowsEachPipelinesLastBackward) {
  for (int D : {4, 8, 12})
    for (int N : {D, 2 * D, 3 * D}) {
      const Schedule s = generate("amdp", params(D, N, 2));
      for (int r = 0; r < D; ++r) {
        const auto& list = s.ops[static_cast<std::size_t>(r)];
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (list[i].kind == OpKind::GradSync) {
            ASSERT_GT(i, 0u);
            EXPECT_EQ(list[i - 1].kind, OpKind::B);
          }
          if (list[i].kind != OpKind::B) continue;
          const Mb m = decode(list[i].microbatch, N, D);
          ASSERT_LT(i + 1, list.size());
          EXPECT_EQ(list[i + 1] == grad_sync(list[i].stage, list[i].pipeline), m.j == 2 * N / D - 1);
        }
      }
    }
}

// ---- deadlock-freedom, completeness, memory ---------------------------------------------

TEST(Amdp, DeadlockFreeCompleteAndHalfTheModelPerGpu) {
  for (int D : {4, 8, 12, 16}) {
    for (int N : {D, 2 * D, 3 * D}) {
      for (int T : {1, 2, 3}) {
        for (const char* u : {"code", "early", "late"}) {
          SCOPED_TRACE(label(D, N, T, u));
          const Schedule s = generate("amdp", params(D, N, T, u));
          const ValidationReport v = validate(s);
          EXPECT_TRUE(v.ok()) << (v.errors.empty() ? "" : v.errors.front());
          // Every F and B once, on its stage's device; T GradSyncs and T OptSteps per replica.
          std::map<std::tuple<OpKind, int, int, int>, int> seen;
          for (int d = 0; d < D; ++d)
            for (const Op& op : s.ops[static_cast<std::size_t>(d)]) {
              EXPECT_EQ(s.device_of(op), d);
              ++seen[{op.kind, op.pipeline, op.stage, op.microbatch}];
            }
          EXPECT_EQ(seen.size(), static_cast<std::size_t>(2 * N * T * D + 2 * D * D / 2));
          for (const auto& [key, n] : seen) EXPECT_EQ(n, std::get<3>(key) < 0 ? T : 1);
          for (int id = 0; id < N * T; ++id)
            EXPECT_EQ(seen.count({OpKind::F, decode(id, N, D).c, 0, id}), 1u);
          const SimResult r = simulate(s, costs(1000, 2000));
          for (int d = 0; d < D; ++d) {
            EXPECT_EQ(s.replicas_on(d).size(), static_cast<std::size_t>(D / 2));  // K M_theta
            EXPECT_EQ(r.devices[static_cast<std::size_t>(d)].peak_weight_versions, D / 2);
            const bool first_stage_rank = d % 4 == 0 || d % 4 == 3;
            EXPECT_EQ(r.devices[static_cast<std::size_t>(d)].peak_activations, first_stage_rank ? D - 1 : D);
          }
        }
      }
    }
  }
}

// [derived] With t_F = t_B the chained groups never idle: makespan = (2NT + 2) t, i.e.
// Chimera Table 3's (D-2f)/(2fN'+D-2f) with f = D/4 over N' = N*T micro-batches.
TEST(Amdp, MakespanClosedForms) {
  for (int D : {4, 8, 12, 16})
    for (int N : {D, 2 * D, 3 * D})
      for (int T : {1, 2, 3})
        for (Tick t : {1000, 1500, 7}) {
          SCOPED_TRACE(label(D, N, T) + " t=" + std::to_string(t));
          const SimResult r = simulate(generate("amdp", params(D, N, T)), costs(t, t));
          EXPECT_EQ(r.makespan, (2 * N * T + 2) * t);
          const int f = D / 4;
          for (const DeviceStats& d : r.devices)
            EXPECT_EQ((r.makespan - d.busy) * (2 * f * N * T + D - 2 * f), (D - 2 * f) * r.makespan);
          // [derived] t_B = 2 t_F: one extra t_F of idle per group (intermediate bubbles,
          // as Chimera's direct concatenation, pitfall 2): (G*T*(3D + 1) + 3) t_F.
          const SimResult r2 = simulate(generate("amdp", params(D, N, T)), costs(t, 2 * t));
          EXPECT_EQ(r2.makespan, ((N / D) * T * (3 * D + 1) + 3) * t);
        }
}

// ---- §8.5 weight versions, measured by the engine -------------------------------------

struct Expect {
  int f, b;     // versions F and B use
  int applied;  // the n of the U(n) that applies the gradient
};

// §8.5 for t >= 1; t = 0 runs on w_0 and U(1) applies it. "early" / "late" are pipesim's
// alternatives (amdp.cpp), with the rows their positions give.
Expect expected(int D, const std::string& u, int stage, int t, int j) {
  if (t == 0) return {0, 0, 1};
  const bool last = stage == D - 1;
  if (u == "early") return stage == 0 && j < 2 ? Expect{t - 1, t, t + 1} : Expect{t, t, t + 1};
  if (!last) return j < 2 ? Expect{t - 1, t, t + 1} : Expect{t, t, t + 1};
  if (u == "late") return j == 0 ? Expect{t - 1, t, t + 1} : Expect{t, t, t + 1};
  if (j == 0) return {t - 1, t - 1, t};             // quirk 1: applied one step early
  if (j == 1 && D >= 8) return {t - 1, t, t + 1};   // D = 8 (and the reconstruction)
  return {t, t, t + 1};
}

TEST(Amdp, WeightVersionTableAsTheEngineMeasuresIt) {
  for (int D : {4, 8, 12}) {
    for (int G : {1, 2}) {
      for (const char* u : {"code", "early", "late"}) {
        const int N = G * D, T = 3, K = D / 2;
        SCOPED_TRACE(label(D, N, T, u));
        TimelineRecorder rec;
        const Schedule s = generate("amdp", params(D, N, T, u));
        const SimResult r = simulate(s, costs(1000, 2000, 100), &rec);
        // Versions each F / B used, and the end of each replica's OptSteps.
        std::map<std::tuple<int, int, int>, int> f_version, b_version;  // (c, s, id)
        std::map<std::tuple<int, int, int>, Tick> b_end;
        std::map<std::pair<int, int>, std::vector<Tick>> opt_end;
        for (const OpRecord& rec_op : rec.timeline.ops) {
          const Op& op = rec_op.op;
          if (op.kind == OpKind::F) f_version[{op.pipeline, op.stage, op.microbatch}] = rec_op.weight_version;
          if (op.kind == OpKind::B) {
            b_version[{op.pipeline, op.stage, op.microbatch}] = rec_op.weight_version;
            b_end[{op.pipeline, op.stage, op.microbatch}] = rec_op.end;
          }
          if (op.kind == OpKind::OptStep) opt_end[{op.pipeline, op.stage}].push_back(rec_op.end);
        }
        ASSERT_EQ(f_version.size(), static_cast<std::size_t>(N * T * D));
        std::vector<int> mismatched(static_cast<std::size_t>(D), 0);
        for (const auto& [key, fv] : f_version) {
          const auto [c, st, id] = key;
          const Mb m = decode(id, N, D);
          const Expect e = expected(D, u, st, m.t, m.j);
          SCOPED_TRACE("pipeline " + std::to_string(c) + " stage " + std::to_string(st) + " id " + std::to_string(id));
          EXPECT_EQ(fv, e.f);
          EXPECT_EQ(b_version.at(key), e.b);
          mismatched[static_cast<std::size_t>(st)] += e.b != e.f;
          // The OptStep that applies the gradient: the replica's first one ending after it.
          const auto& ends = opt_end.at({c, st});
          int n = 1;
          while (n <= T && ends[static_cast<std::size_t>(n - 1)] < b_end.at(key)) ++n;
          EXPECT_EQ(n, e.applied);
        }
        for (int st = 0; st < D; ++st) {
          const StageStaleness& ss = r.staleness.at(static_cast<std::size_t>(st));
          EXPECT_EQ(ss.backwards, N * T);  // K pipelines x n_p x T
          EXPECT_EQ(ss.mismatched, mismatched[static_cast<std::size_t>(st)]);
          EXPECT_EQ(ss.mismatch_sum, ss.mismatched);
          EXPECT_LE(ss.max_mismatch, 1);
          // The engine's delay: (version when applied) - (version used). Every gradient is
          // applied by the first update after it, so even quirk 1 shows as delay 0.
          EXPECT_EQ(ss.gradients, ss.backwards);
          EXPECT_EQ(ss.max_delay, 0);
        }
        // Only the first two micro-batches per pipeline per iteration t >= 1 straddle U.
        const bool early = std::string(u) == "early";
        EXPECT_EQ(mismatched[0], 2 * K * (T - 1));
        EXPECT_EQ(mismatched[1], early ? 0 : 2 * K * (T - 1));
        EXPECT_EQ(mismatched[static_cast<std::size_t>(D - 1)],
                  early || (D == 4 && std::string(u) == "code") ? 0 : K * (T - 1));
      }
    }
  }
}

// ---- parameter errors -------------------------------------------------------------------

std::string error_of(const ScheduleParams& p) { return error_of("amdp", p); }

TEST(Amdp, ParameterErrors) {
  EXPECT_THAT(error_of(params(6, 12)), HasSubstr("amdp: p (6) must be a multiple of 4"));
  EXPECT_THAT(error_of(params(2, 4)), HasSubstr("multiple of 4"));
  EXPECT_THAT(error_of(params(8, 12)), HasSubstr("amdp: m (12) must be a multiple of p (8)"));
  EXPECT_THAT(error_of(params(4, 0)), HasSubstr("m must be a positive integer"));
  EXPECT_THAT(error_of(params(4, 4, 0)), HasSubstr("iterations must be a positive integer"));
  EXPECT_THAT(error_of(params(4, 4, 1, "middle")), HasSubstr("amdp-update must be code, early or late, got 'middle'"));
  EXPECT_EQ(error_of(params(4, 4)), "");
}

}  // namespace
}  // namespace pipesim
