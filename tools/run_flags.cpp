#include "tools/run_flags.hpp"

#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/units.hpp"
#include "executor/backend_factory.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {

void add_executor_flags(CLI::App& cmd, ExecutorFlags& f) {
  cmd.add_option("--backend", f.backend, "Where the ops run: cpu (Eigen kernels) or cuda")->capture_default_str();
  cmd.add_option("--sm-partition", f.sm_partition,
                 "cuda, several devices on one GPU: auto (own SMs each, green contexts, where the driver allows), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd.add_option("--cuda-graphs", f.cuda_graphs,
                 "cuda: replay each block op as one CUDA graph launch (on) or launch its kernels one by one (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd.add_option("--model", f.model, "Model from the catalog (GPT-style, e.g. gpt-tiny, gpt-small) or a file")
      ->capture_default_str();
  cmd.add_option("--micro-batch-size", f.micro_batch_size, "Sequences per micro-batch")->capture_default_str();
  cmd.add_option("--optimizer", f.optimizer, "sgd or adam")->check(CLI::IsMember({"sgd", "adam"}))->capture_default_str();
  cmd.add_option("--lr", f.lr, "Learning rate")->capture_default_str();
  cmd.add_option("--seed", f.seed, "Seed of the weights and the synthetic data")->capture_default_str();
  cmd.add_option("--timeout", f.timeout, "Stop a run in which no op finishes for this long")->capture_default_str();
  cmd.add_option("--channel-capacity", f.channel_capacity,
                 "Messages a link holds before its sender blocks (0: all the link carries)")
      ->capture_default_str();
}

RunOptions make_run_options(const ExecutorFlags& f, const std::string& max_memory) {
  RunOptions options;
  options.micro_batch_size = f.micro_batch_size;
  options.seed = f.seed;
  options.optimizer = {f.optimizer == "sgd" ? OptimizerKind::Sgd : OptimizerKind::Adam, f.lr};
  options.timeout = std::chrono::nanoseconds(parse_duration(f.timeout, "--timeout"));
  options.channel_capacity = f.channel_capacity;
  options.backend = make_backend_factory(f.backend, f.sm_partition, f.cuda_graphs == "on");
  // The CPU backend holds the weights in this machine's memory; the CUDA backend holds them on
  // the GPU, where a failed allocation is reported as the op's error.
  if (const auto limit = memory_limit(max_memory); limit && f.backend == "cpu")
    options.max_memory_bytes = static_cast<std::int64_t>(limit->from_flag ? limit->bytes : limit->bytes / 2);
  return options;
}

namespace {

struct LaunchTotals {
  std::string path;  // the devices' paths, distinct ones joined by "; "
  LaunchCounts launches;
  std::int64_t timed_ops = 0, device_ns = 0;
};

std::optional<LaunchTotals> launch_totals(const MeasuredRun& run) {
  LaunchTotals t;
  for (const BackendStats& s : run.backend_stats) {
    if (s.path.empty()) continue;
    if (t.path.find(s.path) == std::string::npos) t.path += (t.path.empty() ? "" : "; ") + s.path;
    t.launches += s.launches;
    t.timed_ops += s.timed_ops;
    t.device_ns += s.device_ns;
  }
  if (t.path.empty()) return std::nullopt;
  return t;
}

}  // namespace

nlohmann::ordered_json launch_json(const MeasuredRun& run) {
  const auto t = launch_totals(run);
  if (!t) return nullptr;
  const LaunchCounts& l = t->launches;
  nlohmann::ordered_json j = {{"path", t->path},
                              {"block_ops", l.stage_ops},
                              {"graph_launches", l.graph_launches},
                              {"direct_ops", l.direct_ops},
                              {"captures", l.captures},
                              {"instantiations", l.instantiations},
                              {"updates", l.updates},
                              {"timed_ops", t->timed_ops},
                              {"device_time_s", static_cast<double>(t->device_ns) * 1e-9}};
  auto& devices = j["devices"] = nlohmann::ordered_json::array();
  for (const BackendStats& s : run.backend_stats)
    devices.push_back({{"path", s.path}, {"graph_launches", s.launches.graph_launches},
                       {"direct_ops", s.launches.direct_ops}, {"device_time_s", static_cast<double>(s.device_ns) * 1e-9}});
  return j;
}

std::string launch_line(const MeasuredRun& run) {
  const auto t = launch_totals(run);
  if (!t) return "";
  const LaunchCounts& l = t->launches;
  return "launch        " + t->path + ": " + std::to_string(l.graph_launches) + " of " + std::to_string(l.stage_ops) +
         " block ops replayed as one graph launch each, " + std::to_string(l.direct_ops) + " launched kernel by kernel; " +
         std::to_string(l.captures) + " captures; GPU time of the ops " +
         format_duration(t->device_ns) + " (CUDA events)\n";
}

void warn_if_oversubscribed(const Schedule& schedule) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && static_cast<unsigned>(schedule.num_devices) > cores)
    std::cerr << "pipesim: warning: " << schedule.num_devices << " devices on " << cores
              << " cores: device threads share cores, so measured times include waiting for a core\n";
}

}  // namespace pipesim
