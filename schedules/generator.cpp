#include "schedules/generator.hpp"

#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> all = {
      {"gpipe", "GPipe: all forwards, then all backwards, flush", &make_gpipe},
      {"1f1b", "1F1B with flush (PipeDream-Flush / DAPPLE)", &make_1f1b},
      {"interleaved", "interleaved 1F1B with v chunks per device (Megatron-LM)", &make_interleaved, {"chunks"}},
      {"zb-h1", "Zero Bubble H1: split backward I/W, 1F1B memory", &make_zb_h1},
      {"zb-h2", "Zero Bubble H2: split backward I/W, 2p-1 activations", &make_zb_h2},
      {"chimera", "Chimera: 2f bidirectional pipelines (f down, f up), direct/doubling/halving concat", &make_chimera,
       {"pipelines", "concat", "width"}},
      {"pipedream", "PipeDream: flush-free 1F1B, update after every backward, weight stashing", &make_pipedream},
      {"pipedream-2bw", "PipeDream-2BW: flush-free 1F1B, update every m micro-batches, 2 versions", &make_pipedream_2bw,
       {"twobw-policy"}},
      {"async-1f1b", "async 1F1B: flush-free, update after every backward, no stashing", &make_async_1f1b},
      {"amp", "AMPNet (fairscale AMPnetPipe): max_active_keys in flight, local update every muf backwards", &make_amp,
       {"max-active-keys", "min-update-frequency"}},
      {"amdp", "AMDP: p/2 asynchronous pipelines on Chimera's placement, update inside the next iteration", &make_amdp,
       {"amdp-update"}},
      {"dualpipe", "DualPipe: two directions on p ranks, F&B pairs, zero-bubble W (DeepSeek-V3)", &make_dualpipe},
      {"dualpipev", "DualPipeV: DualPipe cut in half, 2p stages in a V on p ranks", &make_dualpipev},
      {"looped-bfs", "Looped BFS: v chunks per device, each chunk's micro-batches all at once (PyTorch)", &make_looped_bfs,
       {"chunks"}},
      {"interleaved-zb", "interleaved zero bubble: interleaved 1F1B with split I/W (PyTorch)", &make_interleaved_zb,
       {"chunks"}},
      {"zb-v", "ZB-V: zero bubble on 2p stages in a V, 1F1B memory (PyTorch's order)", &make_zb_v},
      {"v-half", "V-Half: V-shaped, half of 1F1B's activation memory (controllable-memory paper)", &make_v_half},
      {"v-min", "V-Min: V-shaped, a third of 1F1B's activation memory (controllable-memory paper)", &make_v_min},
  };
  return all;
}

const GeneratorInfo& find_generator(std::string_view name) {
  for (const auto& g : generators())
    if (g.name == name) return g;
  std::vector<std::string> names;
  std::string known;
  for (const auto& g : generators()) {
    names.emplace_back(g.name);
    known += (known.empty() ? "" : ", ") + std::string(g.name);
  }
  throw InputError("unknown schedule " + quote(name) + " (" + did_you_mean(name, names) + "known: " + known + ")");
}

int pipeline_devices(std::string_view name, const ScheduleParams& params) {
  return name == "chimera" ? params.p * params.width : params.p;
}

Schedule plain_pipeline(std::string_view name, const ScheduleParams& params, int chunks) {
  require_positive(name, "p", params.p);
  require_positive(name, "m", params.m);
  require_positive(name, "iterations", params.iterations);
  Schedule s;
  s.name = std::string(name);
  s.num_devices = params.p;
  s.num_stages = params.p * chunks;
  s.microbatches = params.m;
  s.iterations = params.iterations;
  s.placement = round_robin_placement(s.num_stages, params.p);
  s.ops.resize(static_cast<std::size_t>(params.p));
  return s;
}

Schedule v_pipeline(std::string_view name, const ScheduleParams& params) {
  Schedule s = plain_pipeline(name, params, 2);
  const int p = params.p;
  for (int st = 0; st < 2 * p; ++st) s.placement[0][static_cast<std::size_t>(st)] = st < p ? st : 2 * p - 1 - st;
  return s;
}

int run_microbatches(std::string_view name, const ScheduleParams& params) {
  const long long n = static_cast<long long>(params.m) * params.iterations;
  require(n <= std::numeric_limits<std::int32_t>::max(), name,
          "m x iterations (" + std::to_string(n) + ") is too many micro-batches for one run");
  return static_cast<int>(n);
}

void require_positive(std::string_view schedule, std::string_view flag, long long value) {
  if (value <= 0)
    throw InputError(std::string(schedule) + ": " + std::string(flag) + " must be a positive integer, got " +
                     std::to_string(value));
}

void require(bool ok, std::string_view schedule, const std::string& what) {
  if (!ok) throw InputError(std::string(schedule) + ": " + what);
}

}  // namespace pipesim
