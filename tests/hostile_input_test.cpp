// Hostile input against the real binary (issue #17), one case per class of bad input a
// careful user or a script produces. Each case runs in a fresh folder in which every output
// the command names already exists; after the failing run it must be byte for byte as it
// was, no temporary file may be left behind, and the user sees exactly one line with the
// documented exit code (tools/exit_codes.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

using pipesim::testing_cli::Result;

// A folder of its own per case; `run` executes a shell command line in it, with $P the
// binary.
class Sandbox {
 public:
  explicit Sandbox(const std::string& name)
      : dir_(fs::temp_directory_path() / ("pipesim_hostile_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path path(const std::string& name) const { return dir_ / name; }
  void write(const std::string& name, const std::string& bytes) const {
    fs::create_directories(path(name).parent_path());
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  Result run(const std::string& command_line) const {
    return pipesim::testing_cli::run_shell("cd '" + dir_.string() + "' && P='" + std::string(PIPESIM_CLI) + "' && " +
                                           command_line);
  }
  // Files a run left behind that the folder did not hold before (temporary outputs).
  std::vector<std::string> temporaries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.path().filename().string().find(".pipesim-") != std::string::npos) out.push_back(e.path().string());
    return out;
  }

 private:
  fs::path dir_;
};

constexpr const char* kCycleCsv = "0F0,0B0,0F1,0B1\n1F1,1B1,1F0,1B0\n";  // a deadlock
constexpr const char* kValidCsv = "0F0,0B0\n";

struct Case {
  const char* name;   // also the sandbox's name: [a-z0-9_]
  const char* klass;  // the class
  std::map<std::string, std::string> inputs;  // files created first
  std::string command;                        // a shell command line; $P is pipesim
  std::vector<std::string> outputs;           // files that exist before the run and must survive it
  int code;
  std::string message;  // a part of the one line
};

std::string sentinel(const std::string& name) { return "pre-existing " + name + " \x01\xff\n"; }

// The committed version-1 CPU profile made a version-2 file, then changed by `change`.
std::string version2_profile(const std::function<void(nlohmann::json&)>& change) {
  std::ifstream in(std::string(PIPESIM_EXAMPLES) + "/../docs/validation/gpt-small-cpu-profile.json");
  nlohmann::json p = nlohmann::json::parse(in);
  p["version"] = 2;
  change(p);
  return p.dump();
}

// Every curve's second point 0.1 x (below the reader's floor of 0.5).
void add_bad_curve(nlohmann::json& p) {
  const nlohmann::json& mb = p["micro_batches"][0];
  const nlohmann::json curve = {{"slowdown", {1, 0.1}}, {"times", {mb["block"]["forward"], mb["block"]["forward"]}}};
  p["interference"] = {{"micro_batch_size", mb["size"]},
                       {"block", {{"forward", curve}, {"input_grad", curve}, {"weight_grad", curve}}},
                       {"embedding", {{"forward", curve}, {"weight_grad", curve}}},
                       {"head", {{"forward", curve}, {"input_grad", curve}, {"weight_grad", curve}}}};
}

// ---- the cases ---------------------------------------------------------------------------

std::vector<Case> cases() {
  const std::string big_config = "{\"fwd\": \"" + std::string(1 << 20, '1') + "ms\"}";
  const std::string profile = std::string(PIPESIM_EXAMPLES) + "/../docs/validation/gpt-small-cpu-profile.json";
  return {
      // Outputs: nothing is lost.
      {"later_output_folder_missing", "outputs", {}, "$P simulate --trace t.json --report nodir/r.html", {"t.json"}, 2,
       "--report: cannot write 'nodir/r.html': the folder 'nodir' does not exist"},
      {"deadlock_after_outputs", "outputs", {{"cy.csv", kCycleCsv}},
       "$P simulate --schedule-file cy.csv --trace t.json --report r.html --save-config c.json",
       {"t.json", "r.html", "c.json"}, 2, "cy.csv: deadlock: "},
      {"overflow_while_tracing", "outputs", {}, "$P simulate -p 2 -m 4 --fwd 9000000000s --trace t.json", {"t.json"},
       2, "simulated time overflows 2^63 ns"},
      {"overflow_while_streaming", "outputs", {},
       "$P simulate -p 2 -m 300000 --fwd 9000000000s --trace t.json --max-trace-ops 0 --trace-budget 10GB", {"t.json"}, 2,
       "simulated time overflows 2^63 ns"},
      {"file_size_limit", "outputs", {}, "(ulimit -f 8; exec $P simulate -p 8 -m 64 --trace t.json)", {"t.json"}, 4,
       "--trace: cannot write 't.json': File too large (the file was left as it was)"},
      {"gzip_file_size_limit", "outputs", {}, "(ulimit -f 8; exec $P simulate -p 8 -m 64 --trace t.json.gz)",
       {"t.json.gz"}, 4, "--trace: cannot write 't.json.gz': File too large (the file was left as it was)"},
      {"trace_budget_too_small", "outputs", {}, "$P simulate --trace t.json --trace-budget 10KB", {"t.json"}, 2,
       "--trace-budget: at least 1MB (or 0 for no limit), got '10KB'"},
      {"trace_budget_not_a_size", "outputs", {}, "$P compare --trace-dir tr --trace-budget lots", {}, 2,
       "--trace-budget: expected a size with a unit such as 512B, 64MiB, 1.5GB; got 'lots'"},
      {"progress_interval_not_a_duration", "outputs", {}, "$P simulate --progress soon", {}, 2,
       "--progress: expected a duration with a unit such as 1ms, 250us, 2.5s; got 'soon'"},
      {"progress_interval_zero", "outputs", {}, "$P sweep --model gpt3-1.3b --gpus 8 --progress 0s", {}, 2,
       "--progress: the interval must be positive, got '0s'"},
      {"full_device", "outputs", {}, "$P simulate --report /dev/full", {}, 4,
       "--report: cannot write '/dev/full': No space left on device"},
      {"full_stdout", "outputs", {}, "{ $P schedule -p 8 -m 64 --format csv > /dev/full; }", {}, 4,
       "cannot write to standard output: No space left on device"},
      {"two_outputs_one_file", "outputs", {}, "$P simulate --trace x.json --report ./x.json", {"x.json"}, 2,
       "--report and --trace both name './x.json': give each output its own file"},
      {"output_is_the_config", "outputs", {{"c.json", "{\"stages\": 2}"}}, "$P simulate --config c.json --save-config c.json",
       {}, 2, "--save-config 'c.json' is also the input of --config: the run would overwrite its own input"},
      {"output_is_the_schedule", "outputs", {{"s.csv", kValidCsv}}, "$P schedule --schedule-file s.csv -o s.csv", {}, 2,
       "--out 's.csv' is also the input of --schedule-file"},
      {"output_is_a_directory", "outputs", {{"d/keep", "x"}}, "$P simulate --trace d", {}, 2,
       "--trace: cannot write 'd': it is a directory"},
      {"output_fifo_without_reader", "outputs", {}, "mkfifo f.json && $P simulate --trace f.json", {}, 2,
       "--trace: cannot write 'f.json': a FIFO that no process reads"},
      {"save_config_of_bad_settings", "outputs", {}, "$P simulate --save-config c.json -p 0", {"c.json"}, 2,
       "1f1b: p must be a positive integer, got 0"},
      {"save_config_rejected_late", "outputs", {}, "$P compare --schedules 1f1b,interleaved -m 9 --save-config c.json",
       {"c.json"}, 2, "interleaved: m (9) must be a multiple of its number of rounds"},
      {"empty_output_name", "outputs", {}, "$P simulate --trace ''", {}, 2,
       "--trace: expected a value, got an empty string"},
      {"trace_dir_later_schedule_fails", "outputs", {}, "$P compare --schedules 1f1b,interleaved -m 9 --trace-dir tr",
       {"tr/1f1b.trace.json", "tr/interleaved.trace.json"}, 2, "interleaved: m (9) must be a multiple of its number of rounds"},
      {"schedule_out_bad_settings", "outputs", {}, "$P schedule -o s.csv --format csv -p 0", {"s.csv"}, 2,
       "1f1b: p must be a positive integer, got 0"},
      {"sweep_outputs_nothing_fits", "outputs", {},
       "$P sweep --model gpt3-1.3b --gpus 8 --pp 3 --csv s.csv --json s.json --report s.html",
       {"s.csv", "s.json", "s.html"}, 2, "no valid configuration"},
      {"profile_out_bad_settings", "outputs", {}, "$P profile --model gpt-tiny --out p.json --repeats 0", {"p.json"}, 2,
       "profile: repeats must be at least 1, got 0"},
      {"profile_too_many_neighbours", "outputs", {}, "$P profile --model gpt-tiny --out p.json --neighbours 100000",
       {"p.json"}, 2, "cores - 1 (past the cores the simulator shares them itself); got 100000"},
      {"profile_negative_neighbours", "outputs", {}, "$P profile --model gpt-tiny --out p.json --neighbours -2",
       {"p.json"}, 2, "--neighbours: expected 0 or more, got -2"},
      {"profile_shared_core_not_on_or_off", "outputs", {}, "$P profile --model gpt-tiny --out p.json --shared-core maybe",
       {"p.json"}, 2, "--shared-core: maybe not in {on,off}"},
      {"profile_shared_core_threads_not_beyond_cores", "outputs", {},
       "$P profile --model gpt-tiny --out p.json --shared-core-threads 1", {"p.json"}, 2,
       "--shared-core-threads: expected more device threads than the "},
      {"profile_shared_core_threads_beyond_the_most", "outputs", {},
       "$P profile --model gpt-tiny --out p.json --shared-core-threads 1025", {"p.json"}, 2,
       " cores this process may use, at most 1024; got 1025"},
      {"profile_shared_core_threads_not_a_number", "outputs", {},
       "$P profile --model gpt-tiny --out p.json --shared-core-threads many", {"p.json"}, 2,
       "--shared-core-threads: 'many': expected a decimal integer"},
      {"profile_min_time_without_unit", "outputs", {}, "$P profile --model gpt-tiny --out p.json --min-time 25",
       {"p.json"}, 2, "--min-time: expected a duration with a unit such as 1ms, 250us, 2.5s"},
      {"profile_stage_blocks_beyond_layers", "outputs", {}, "$P profile --model gpt-tiny --out p.json --stage-blocks 9",
       {"p.json"}, 2, "--stage-blocks: expected 1..8 (gpt-tiny's layers), got 9"},
      {"profile_stage_blocks_zero", "outputs", {}, "$P profile --model gpt-tiny --out p.json --stage-blocks 0",
       {"p.json"}, 2, "--stage-blocks: expected 1 or more, got 0"},
      {"validate_min_time_negative", "numbers", {}, "$P validate --min-time -1ms --report r.html", {"r.html"}, 2,
       "--min-time: must not be negative; got '-1ms'"},
      {"profile_mean_outside_range", "config",
       {{"p.json", version2_profile([](nlohmann::json& p) {
          nlohmann::json& f = p["micro_batches"][0]["block"]["forward"];
          f["mean_s"] = f["max_s"].get<double>() * 2;
        })}},
       "$P simulate --cost p.json", {}, 2, "p.json: /micro_batches/0/block/forward/mean_s: expected min_s <= mean_s <= max_s"},
      {"profile_stage_blocks_in_file_beyond_layers", "config",
       {{"p.json", version2_profile([](nlohmann::json& p) { p["settings"]["stage_blocks"] = 99; })}},
       "$P simulate --cost p.json", {}, 2, "p.json: /settings/stage_blocks: expected at most the model's"},
      {"profile_slowdown_below_floor", "config", {{"p.json", version2_profile(add_bad_curve)}},
       "$P simulate --cost p.json", {}, 2,
       "p.json: /interference/block/forward/slowdown/1: expected a slowdown in 0.5..100; got 0.1"},
      {"profile_quantiles_decrease", "config",
       {{"p.json", version2_profile([](nlohmann::json& p) {
          nlohmann::json& f = p["micro_batches"][0]["block"]["forward"];
          f["repeats"] = 2;
          f["quantiles_s"] = {f["max_s"], f["min_s"]};
        })}},
       "$P simulate --cost p.json", {}, 2,
       "p.json: /micro_batches/0/block/forward/quantiles_s/1: expected non-decreasing values; "},
      {"run_trace_bad_settings", "outputs", {}, "$P run --trace t.json --micro-batch-size 0", {"t.json"}, 2,
       "--micro-batch-size: expected at least 1 sequence, got 0"},
      {"validate_report_bad_settings", "outputs", {}, "$P validate --report r.html --repeats 0", {"r.html"}, 2,
       "profile: repeats must be at least 1, got 0"},
      // --data (executor/text_corpus.hpp): a UTF-8 text file, big enough for one sequence per split.
      {"run_data_missing", "inputs", {}, "$P run --data none.txt --trace t.json --report r.html", {"t.json", "r.html"}, 2,
       "--data: cannot read text corpus 'none.txt': "},
      {"run_data_directory", "inputs", {{"d/keep", "x"}}, "$P run --data d --trace t.json", {"t.json"}, 2,
       "--data: cannot read text corpus 'd': a directory, not a regular file"},
      {"run_data_empty", "inputs", {{"e.txt", ""}}, "$P run --data e.txt --trace t.json", {"t.json"}, 2,
       "--data 'e.txt': the file is empty; expected UTF-8 text"},
      {"run_data_nul", "inputs", {{"b.txt", std::string("ab\ncd\0ef", 8)}}, "$P run --data b.txt --json", {}, 2,
       "--data 'b.txt': a NUL byte at line 2, byte 5: a binary file, expected UTF-8 text"},
      {"run_data_not_utf8", "inputs", {{"l.txt", "caf\xe9 au lait\n"}}, "$P run --data l.txt --trace t.json", {"t.json"}, 2,
       "--data 'l.txt': bytes that are not UTF-8 at line 1, byte 3: a binary file, expected UTF-8 text"},
      {"run_data_too_small", "inputs", {{"s.txt", std::string(200, 'a')}}, "$P run --data s.txt --trace t.json",
       {"t.json"}, 2,
       "--data 's.txt': 200 bytes leave the validation split (the last 10 %) 20 tokens, fewer than one sequence of "
       "model 'gpt-tiny' (seq_len 32 + 1 target); give at least 330 bytes"},
      {"run_data_small_vocabulary", "inputs",
       {{"m.json", "{\"models\": [{\"name\": \"v64\", \"family\": \"gpt\", \"layers\": 2, \"hidden\": 16, "
                   "\"heads\": 2, \"ffn_hidden\": 32, \"seq_len\": 8, \"vocab\": 64, \"mlp\": \"gelu\", \"source\": \"t\"}]}"},
        {"t.txt", std::string(400, 'a')}},
       "$P run --model m.json -p 2 --data t.txt", {}, 2,
       "--data 't.txt': byte-level tokens need a vocabulary of at least 256; model 'v64' has 64"},
      // pipesim converge (tools/cmd_converge.cpp).
      {"converge_bad_seeds", "numbers", {}, "$P converge --seeds 1,x --report r.html", {"r.html"}, 2,
       "--seeds: expected comma-separated non-negative integers, got '1,x'"},
      {"converge_seed_twice", "numbers", {}, "$P converge --seeds 2,2 --report r.html", {"r.html"}, 2,
       "--seeds: 2 is listed twice"},
      {"converge_validate_every_zero", "numbers", {}, "$P converge --validate-every 0 --report r.html", {"r.html"}, 2,
       "--validate-every: expected a number of iterations >= 1, got 0"},
      {"converge_negative_target", "numbers", {}, "$P converge --target -1 --report r.html", {"r.html"}, 2,
       "--target: expected a validation loss > 0 (or 0: chosen from the runs), got -1.000000"},
      {"converge_hardware_without_model", "semantics", {}, "$P converge --tp 2 --report r.html", {"r.html"}, 2,
       "--tp: used only with --model (the GPU settings of the analytical model)"},
      {"converge_uniform_flag_without_cost_model", "semantics", {}, "$P converge --fwd 2ms --report r.html", {"r.html"},
       2, "--fwd: used only with --cost-model uniform (the costs of a simulated iteration)"},
      {"converge_unknown_cost_model", "semantics", {}, "$P converge --cost-model roofline --report r.html", {"r.html"}, 2,
       "--cost-model: unknown cost model 'roofline' (known: uniform, analytical, profiled)"},
      {"converge_cost_model_against_the_flags", "semantics", {}, "$P converge --cost-model profiled --report r.html",
       {"r.html"}, 2, "--cost-model profiled: needs --cost"},
      {"converge_two_gpu_types", "semantics", {}, "$P converge --model gpt3-1.3b --hardware h100-sxm,a100-sxm --report r.html",
       {"r.html"}, 2, "--hardware: converge takes one GPU type, got 'h100-sxm,a100-sxm'"},
      {"converge_binary_data", "inputs", {{"b.txt", "\x7f""ELF\x02\x01\x01\xff"}}, "$P converge --data b.txt --report r.html",
       {"r.html"}, 2, "--data 'b.txt': bytes that are not UTF-8 at line 1, byte 7: a binary file, expected UTF-8 text"},
      {"converge_lr_empty_list", "numbers", {}, "$P converge --lr , --report r.html", {"r.html"}, 2,
       "--lr: no learning rate in ','; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_empty_item", "numbers", {}, "$P converge --lr 1e-3,,3e-3 --report r.html", {"r.html"}, 2,
       "--lr: an empty item in '1e-3,,3e-3'; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_not_a_number", "numbers", {}, "$P converge --lr 1e-3,fast --report r.html", {"r.html"}, 2,
       "--lr: 'fast': expected a decimal number; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_nan", "numbers", {}, "$P converge --lr 1e-3,nan --report r.html", {"r.html"}, 2,
       "--lr: 'nan': expected a decimal number; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_zero", "numbers", {}, "$P converge --lr 0,1e-3 --report r.html", {"r.html"}, 2,
       "--lr: '0' is not > 0; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_negative", "numbers", {}, "$P converge --lr=-3e-3 --report r.html", {"r.html"}, 2,
       "--lr: '-3e-3' is not > 0; give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2"},
      {"converge_lr_twice", "numbers", {}, "$P converge --lr 1e-3,3e-3,0.001 --report r.html", {"r.html"}, 2,
       "--lr: '0.001' is listed twice (as '1e-3')"},
      {"converge_bad_variant_list", "numbers", {}, "$P converge --schedules amp --max-active-keys 2,x --report r.html",
       {"r.html"}, 2,
       "--max-active-keys: expected positive integers or ranges A..B (powers of two from A to B), comma-separated, "
       "e.g. 1,2,4 or 8..128; got 'x'"},
      {"converge_bad_variant_choice", "flags", {}, "$P converge --schedules pipedream-2bw --twobw-policy naive,lazy "
       "--report r.html", {"r.html"}, 2, "--twobw-policy: expected double-buffer or naive, got 'lazy'"},
      {"run_validate_every_uneven_steps", "semantics", {},
       "$P run --schedule amp -p 2 -m 4 --iterations 2 --min-update-frequency 3 --validate-every 1 --trace t.json",
       {"t.json"}, 2,
       "--validate-every: stage 0 of 'amp' takes 3 optimizer steps in 2 iterations, not a whole number per iteration"},
      {"run_validate_every_negative", "numbers", {}, "$P run --validate-every -3 --trace t.json", {"t.json"}, 2,
       "--validate-every: expected a number of iterations >= 1 (or 0: no validation), got -3"},
      // What-if contention (tools/sharing_flags.hpp): every bad value named.
      {"sharing_bad_interference", "flags", {}, "$P simulate --schedule amdp -p 4 --interference 1,x --trace t.json", {"t.json"}, 2,
       "--interference: expected slowdown factors between 0.1 and 1000, comma-separated, got 'x'"},
      {"sharing_interference_not_from_one", "flags", {}, "$P compare --schedules 1f1b,amdp -p 4 --interference 1.2,1.5", {}, 2,
       "--interference: the first factor is an op's with no neighbour busy and must be 1, got '1.2,1.5'"},
      {"sharing_nics_without_nodes", "flags", {}, "$P simulate --schedule 1f1b -p 4 --nics-per-node 1", {}, 2,
       "--nics-per-node: the nodes are not known: give --devices-per-node, or --model with --nodes"},
      {"sharing_bad_core_sharing", "flags", {}, "$P simulate --schedule 1f1b -p 4 --share-cores 2 --core-sharing fair", {}, 2,
       "--core-sharing: expected slice or queue, got 'fair'"},
      {"sharing_overlap_below_one", "flags", {}, "$P simulate --schedule 1f1b -p 4 --overlap-slowdown 0.5", {}, 2,
       "--overlap-slowdown: expected a factor between 1 and 1000, got 0.500000"},
      {"validate_bad_core_sharing", "flags", {}, "$P validate --core-sharing fair --report r.html", {"r.html"}, 2,
       "--core-sharing: fair not in {auto,slice,queue}"},
      {"validate_bad_core_speeds", "flags", {}, "$P validate --core-speeds fast --report r.html", {"r.html"}, 2,
       "--core-speeds: fast not in {measure,off}"},
      {"validate_negative_warmup_iterations", "numbers", {}, "$P validate --warmup-iterations -2 --report r.html",
       {"r.html"}, 2, "--warmup-iterations: expected 0 to 1000, got -2"},
      {"validate_zero_runs", "numbers", {}, "$P validate --runs 0 --report r.html", {"r.html"}, 2,
       "--runs: expected 1 to 100 runs per schedule, got 0"},
      {"validate_runs_with_one_trace", "outputs", {}, "$P validate --runs 3 --trace t.json --report r.html",
       {"t.json", "r.html"}, 2, "--trace: with --runs, use --trace-dir (a trace per run)"},
      {"validate_zero_iterations", "numbers", {}, "$P validate --iterations 0 --report r.html", {"r.html"}, 2,
       "--iterations: expected 1 to 2147483645 measured iterations (after the 2 of --warmup-iterations), got 0"},
      {"validate_iterations_overflow", "numbers", {}, "$P validate --iterations 2147483647 --report r.html", {"r.html"},
       2, "--iterations: expected 1 to 2147483645 measured iterations (after the 2 of --warmup-iterations), got "
       "2147483647"},
      // A what-if flag whose 0 means "not given" refuses 0 when given: it would share nothing silently.
      {"sharing_zero_cores", "flags", {}, "$P simulate --schedule 1f1b -p 4 --share-cores 0 --trace t.json", {"t.json"},
       2, "--share-cores: '0': expected a number of cores above 0"},
      {"sharing_too_many_cores", "flags", {}, "$P simulate --schedule 1f1b -p 4 --share-cores 2e6", {}, 2,
       "--share-cores: expected a number of cores above 0, at most 1000000; got 2000000.00"},
      {"grad_reduce_bytes_three", "flags", {}, "$P simulate --model gpt3-1.3b -p 2 --nodes 2 --grad-reduce-bytes 3",
       {}, 2, "--grad-reduce-bytes: 3 not in {2,4}"},
      {"price_beyond_any_gpu", "numbers", {}, "$P compare --model gpt3-1.3b --price-per-hour 1.7e308 --report r.html",
       {"r.html"}, 2, "--price-per-hour: expected a positive price per GPU-hour such as 2.99 (US dollars), at most "
       "1000000; got '1.7e308'"},
      {"catalog_price_beyond_any_gpu", "config",
       {{"g.json", "{\"gpus\": [{\"name\": \"x\", \"peak_flops\": {\"bf16\": \"1PFLOP/s\"}, \"hbm_bandwidth\": \"1TB/s\", "
                   "\"memory\": \"80GiB\", \"price_per_hour\": \"1e300USD\"}]}"}},
       "$P catalog --file g.json", {}, 2, "g.json: /gpus/0/price_per_hour: expected a positive price per GPU-hour"},
      // The format follows -o's name, and may not contradict it (a timeline in s.json reads back as bad JSON).
      {"schedule_format_against_the_name", "outputs", {}, "$P schedule -o s.json --format text", {"s.json"}, 2,
       "--format text: the output 's.json' ends in .json (give --format json, or another name)"},
      // A dangling link names a file in a folder that does not exist: refused, and the link stays a link.
      {"output_through_a_dangling_link", "outputs", {},
       "ln -s /nonexistent/x.json d.json && { $P simulate --trace d.json; rc=$?; test -L d.json && exit $rc; }", {}, 2,
       "--trace: cannot write 'd.json': the folder '/nonexistent' does not exist"},
      {"output_through_a_loop_of_links", "outputs", {},
       "ln -s l1 l2 && ln -s l2 l1 && $P simulate --trace l1", {}, 2,
       "--trace: cannot write 'l1': too many levels of symbolic links"},
      {"trace_dir_dangling_link", "outputs", {}, "ln -s /nonexistent/dir t && $P compare --trace-dir t", {}, 2,
       "--trace-dir: cannot create 't': a symbolic link to '/nonexistent/dir', which does not exist"},
      {"trace_dir_is_a_file", "outputs", {}, "$P compare --trace-dir t.json", {"t.json"}, 2,
       "--trace-dir: cannot create 't.json': it exists and is not a folder"},
      {"trace_budget_without_a_trace", "flags", {}, "$P simulate --trace-budget 5MB", {}, 2,
       "--trace-budget: used only with a Chrome trace (--trace)"},
      {"unknown_command", "flags", {}, "$P simulat", {}, 2,
       "unknown command 'simulat' (did you mean 'simulate'? commands: simulate, compare,"},
      {"zero_cost_ops", "numbers", {}, "$P compare --fwd 0ns --bwd 0ns --trace-dir t", {}, 2,
       "--fwd and --bwd: both 0 ns: every op would take no time and the run would have no throughput"},
      {"input_grad_free_fraction_above_one", "numbers", {}, "$P simulate --input-grad-free-fraction 2", {}, 2,
       "--input-grad-free-fraction: expected a share from 0 to 1, got 2.000"},
      {"compare_trace_budget_without_a_trace", "flags", {}, "$P compare --max-trace-ops 5", {}, 2,
       "--max-trace-ops: used only with a Chrome trace (--trace-dir)"},
      {"wgrad_above_bwd", "numbers", {}, "$P simulate --wgrad 5ms", {}, 2,
       "--wgrad 5.000 ms: more than --bwd 2.000 ms (the weight gradient is a part of the full backward)"},
      {"efficiency_key_twice", "flags", {}, "$P simulate --model gpt3-1.3b --efficiency gemm=0.5,gemm=0.6", {}, 2,
       "--efficiency 'gemm=0.6': gemm is given twice (which value is meant?)"},
      {"efficiency_empty_list", "flags", {}, "$P simulate --model gpt3-1.3b --efficiency ,", {}, 2,
       "--efficiency ',': expected KEY=VALUE, e.g. gemm=0.7"},
      {"global_batch_zero", "flags", {}, "$P compare --model gpt3-1.3b --global-batch-size 0 --report r.html",
       {"r.html"}, 2, "--global-batch-size: '0': expected a number of sequences above 0"},
      {"global_batch_negative_in_config", "config", {{"c.json", "{\"model\": \"gpt3-1.3b\", \"global-batch-size\": -8}"}},
       "$P simulate --config c.json", {}, 2, "c.json: /global-batch-size: '-8': expected a number of sequences above 0"},
      {"sharing_zero_nics", "flags", {}, "$P simulate --schedule 1f1b -p 4 --nics-per-node 0", {}, 2,
       "--nics-per-node: '0': expected a number of NICs above 0"},
      {"sharing_hosts_without_sharing", "flags", {}, "$P simulate --schedule 1f1b -p 4 --devices-per-host 2", {}, 2,
       "--devices-per-host: needs --share-cores or --interference (what the devices of a host share)"},
      // Inputs: only regular files, bounded, every one named.
      {"schedule_file_is_a_directory", "inputs", {{"d.csv/keep", "x"}}, "$P simulate --schedule-file d.csv", {}, 2,
       "cannot read schedule file 'd.csv': a directory, not a regular file"},
      {"schedule_file_is_a_fifo", "inputs", {}, "mkfifo f.csv && $P simulate --schedule-file f.csv", {}, 2,
       "cannot read schedule file 'f.csv': a FIFO (named pipe), not a regular file"},
      {"config_is_a_fifo", "inputs", {}, "mkfifo f.json && $P simulate --config f.json", {}, 2,
       "cannot read config file 'f.json': a FIFO (named pipe)"},
      {"catalog_is_a_fifo", "inputs", {}, "mkfifo m.json && $P simulate --model m.json", {}, 2,
       "cannot read catalog file 'm.json': a FIFO (named pipe)"},
      {"profile_is_a_fifo", "inputs", {}, "mkfifo p.json && $P simulate --cost p.json", {}, 2,
       "cannot read profile 'p.json': a FIFO (named pipe)"},
      {"schedule_file_is_a_device", "inputs", {}, "ln -s /dev/zero z.csv && $P check --schedule-file z.csv", {}, 2,
       "cannot read schedule file 'z.csv': a character device"},
      {"config_is_a_socket", "inputs", {}, "SOCKET c.json && $P simulate --config c.json", {}, 2,
       "cannot read config file 'c.json': a socket"},
      {"config_too_large", "inputs", {{"big.json", big_config}}, "$P simulate --config big.json", {}, 2,
       "config file 'big.json' has 1048589 bytes, more than the 1.0 MiB (1048576 bytes) a config file may have"},
      {"long_token_is_cut", "inputs", {}, "$P simulate --schedule $(printf 'a%.0s' $(seq 1 3000))", {}, 2,
       "...' (3000 characters)"},
      {"control_characters_in_a_file_name", "inputs", {}, "$P simulate --schedule-file \"$(printf 'a\\033[31m.csv')\"", {},
       2, "cannot read schedule file 'a\\x1b[31m.csv': No such file or directory"},
      {"control_characters_in_a_schedule_name", "inputs",
       {{"n.json", "{\"name\": \"a\\u001b[31m\", \"ops\": [[\"0F0\", \"0B0\"]]}"}}, "$P check --schedule-file n.json", {}, 2,
       "n.json: /name: 'a\\x1b[31m': a schedule name is printable text"},
      // Integers are decimal and range-checked; numbers finite; overflow caught.
      {"hexadecimal_flag", "integers", {}, "$P simulate -p 0x10", {}, 2,
       "--stages: '0x10': expected a decimal integer (hexadecimal, binary and octal are not accepted)"},
      {"overflowing_flag", "integers", {}, "$P simulate -p 99999999999", {}, 2, "--stages: '99999999999': out of range (-2147483648 to 2147483647)"},
      {"overflowing_int64_flag", "integers", {}, "$P simulate -p 99999999999999999999", {}, 2,
       "--stages: '99999999999999999999': out of range"},
      {"negative_unsigned_flag", "integers", {}, "$P simulate --max-trace-ops -1", {}, 2,
       "--max-trace-ops: '-1': must not be negative"},
      {"negative_seed", "integers", {}, "$P run --seed -1", {}, 2, "--seed: '-1': must not be negative"},
      {"flag_given_twice", "integers", {}, "$P simulate -m 4 --microbatches 8", {}, 2,
       "--microbatches: given 2 times; it takes one value"},
      {"plus_sign", "integers", {}, "$P simulate -m +8", {}, 2, "--microbatches: '+8': expected a decimal integer"},
      {"exponent_in_an_integer", "integers", {}, "$P simulate -m 1e3", {}, 2, "--microbatches: '1e3': expected a decimal"},
      {"hexadecimal_config_key", "integers", {{"c.json", "{\"stages\": \"0x10\"}"}}, "$P simulate --config c.json", {},
       2, "c.json: /stages: '0x10': expected a decimal integer"},
      {"fractional_config_integer", "integers", {{"c.json", "{\"stages\": 4.5}"}}, "$P simulate --config c.json", {}, 2,
       "c.json: /stages: '4.5': expected a decimal integer"},
      {"negative_config_unsigned", "integers", {{"c.json", "{\"max-trace-ops\": -5}"}}, "$P simulate --config c.json",
       {}, 2, "c.json: /max-trace-ops: '-5': must not be negative"},
      {"nan_number", "integers", {}, "$P run --lr nan", {}, 2, "--lr: 'nan': expected a decimal number"},
      {"infinite_number", "integers", {}, "$P simulate --input-grad-free-fraction 1e999", {}, 2,
       "--input-grad-free-fraction: '1e999': out of range"},
      {"boolean_word", "integers", {}, "$P simulate --model gpt3-1.3b --sequence-parallel yes", {}, 2,
       "--sequence-parallel: 'yes': expected true or false"},
      {"cluster_product_overflows", "integers", {}, "$P simulate --model gpt3-1.3b --nodes 100000 --gpus-per-node 100000",
       {}, 2, "cluster: 100000 nodes x 100000 GPUs per node is more than the 16777216 GPUs pipesim models"},
      {"duration_below_resolution", "integers", {}, "$P simulate --fwd 0.0001ns", {}, 2,
       "--fwd: '0.0001ns' is below the resolution of 1 ns"},
      // The memory guard covers every path that can allocate without bound.
      {"sweep_results_too_large", "memory", {}, "$P sweep --model gpt3-1.3b --gpus 8 --max-memory 1KiB", {}, 2,
       "combinations, whose results alone need"},
      {"sweep_configuration_too_large", "memory", {},
       "$P sweep --model gpt3-1.3b --gpus 8 --pp 2 -m 65536 --schedules 1f1b --iterations 1000 --max-memory 2GiB", {}, 2,
       "the schedule needs more memory than a thread may use"},
      {"sweep_iterations", "memory", {}, "$P sweep --model gpt3-1.3b --gpus 8 --iterations 1000000", {}, 2,
       "--iterations: at most 1000"},
      {"sweep_jobs", "memory", {}, "$P sweep --model gpt3-1.3b --gpus 8 --jobs 100000", {}, 2,
       "--jobs: at most 1024 threads"},
      // The sweep's own flags (#15): a config without the required keys, contradictory filters,
      // a variant list with an unknown value, a batch with -m.
      {"sweep_config_without_model", "flags", {{"c.json", "{\"gpus\": 8}"}},
       "$P sweep --config c.json --csv s.csv", {"s.csv"}, 2, "--model is required (see pipesim sweep --help)"},
      {"sweep_synchronous_and_stale", "flags", {},
       "$P sweep --model gpt3-1.3b --gpus 8 --synchronous-only --max-delay 2 --csv s.csv", {"s.csv"}, 2,
       "--synchronous-only: not with --max-mismatch or --max-delay above 0"},
      {"sweep_negative_mismatch", "flags", {}, "$P sweep --model gpt3-1.3b --gpus 8 --max-mismatch -3", {}, 2,
       "--max-mismatch and --max-delay: expected a number of optimizer steps (0 or more)"},
      {"cuda_graphs_not_on_or_off", "flags", {}, "$P run --schedule 1f1b -p 2 -m 2 --trace t.json --cuda-graphs maybe",
       {"t.json"}, 2, "--cuda-graphs: maybe not in {on,off}"},
      {"sweep_unknown_concat", "flags", {}, "$P sweep --model gpt3-1.3b --gpus 8 --concat direct,tripling", {}, 2,
       "--concat: expected direct, doubling or halving, got 'tripling'"},
      // A generator's constraints (its metadata, schedules/generator.hpp) and a text setting's
      // choices, refused by generate() before anything is written.
      {"generator_constraint", "flags", {}, "$P schedule --schedule gems -m 7 -o s.csv", {"s.csv"}, 2,
       "gems: m must be even (got p=4, m=7)"},
      {"generator_constraint_even_p", "flags", {}, "$P simulate --schedule gems -p 5 --report s.html", {"s.html"}, 2,
       "gems: p must be even (got p=5, m=8)"},
      {"generator_setting_choice", "flags", {}, "$P schedule --schedule pipedream-2bw --twobw-policy shadow -o s.csv",
       {"s.csv"}, 2, "pipedream-2bw: twobw-policy must be double-buffer or naive, got 'shadow'"},
      // A grid file (docs/sweep.md#blocks): its shape, each block's settings, named by file and JSON path.
      {"sweep_grid_not_blocks", "flags", {{"g.json", "[1]"}}, "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2,
       "g.json: expected {\"blocks\": [{\"model\": ..., \"gpus\": ..., ...}, ...]}, got array"},
      {"sweep_grid_no_blocks", "flags", {{"g.json", "{\"blocks\": []}"}}, "$P sweep --grid g.json --csv s.csv",
       {"s.csv"}, 2, "g.json: /blocks: expected a non-empty array of objects, got an empty array"},
      {"sweep_grid_block_not_object", "flags", {{"g.json", "{\"blocks\": [{\"model\": \"gpt3-1.3b\", \"gpus\": 8}, 7]}"}},
       "$P sweep --grid g.json --json s.json", {"s.json"}, 2, "g.json: /blocks/1: expected an object of settings, got number"},
      {"sweep_grid_bad_value", "flags", {{"g.json", "{\"blocks\": [{\"model\": \"gpt3-1.3b\", \"gpus\": 8, \"iterations\": \"two\"}]}"}},
       "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2, "g.json: /blocks/0/iterations: 'two': expected a decimal integer"},
      {"sweep_grid_bad_list", "flags", {{"g.json", "{\"blocks\": [{\"model\": \"gpt3-1.3b\", \"gpus\": 8, \"pp\": \"2..x\"}]}"}},
       "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2, "g.json: /blocks/0: --pp: expected positive integers"},
      {"sweep_grid_output_in_block", "flags", {{"g.json", "{\"blocks\": [{\"model\": \"gpt3-1.3b\", \"gpus\": 8, \"csv\": \"x.csv\"}]}"}},
       "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2,
       "g.json: /blocks/0/csv: not a setting here (give --csv on the command line)"},
      {"sweep_grid_unknown_model", "flags", {{"g.json", "{\"blocks\": [{\"model\": \"gpt3-1.3b\", \"gpus\": 8}, {\"model\": \"nope\", \"gpus\": 8}]}"}},
       "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2, "g.json: /blocks/1: unknown model 'nope'"},
      {"sweep_grid_duplicate_name", "flags", {{"g.json", "{\"blocks\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}"}},
       "$P sweep --grid g.json --model gpt3-1.3b --gpus 8 --csv s.csv", {"s.csv"}, 2,
       "g.json: /blocks/1/name: 'a' is the name of /blocks/0 too"},
      {"sweep_grid_invalid_json", "flags", {{"g.json", "{\"blocks\": [{\"model\": }]}"}},
       "$P sweep --grid g.json --csv s.csv", {"s.csv"}, 2, "g.json: line 1, column"},
      {"sweep_grid_missing", "flags", {}, "$P sweep --grid none.json --csv s.csv", {"s.csv"}, 2, "none.json"},
      {"sweep_gpus_list_bad", "flags", {}, "$P sweep --model gpt3-1.3b --gpus 8,x --csv s.csv", {"s.csv"}, 2,
       "--gpus: expected GPU counts, comma-separated, e.g. 32,64; got 'x'"},
      {"sweep_model_twice", "flags", {}, "$P sweep --model gpt3-1.3b,gpt3-1.3b --gpus 8 --csv s.csv", {"s.csv"}, 2,
       "--model: 'gpt3-1.3b' is listed twice"},
      {"sweep_blocks_report", "outputs", {},
       "$P sweep --model gpt3-1.3b --gpus 8,16 --pp 16 --tp 2 --csv s.csv --report s.html", {"s.csv", "s.html"}, 2,
       "pipesim: error: block 8: no valid configuration: all"},
      {"sweep_block_nothing_valid", "outputs", {}, "$P sweep --model gpt3-1.3b --gpus 8,16 --pp 16 --tp 2 --csv s.csv",
       {"s.csv"}, 2, "pipesim: error: block 8: no valid configuration: all"},
      {"sweep_sharing_bad_curve", "flags", {}, "$P sweep --model gpt3-1.3b --gpus 8 --interference 2 --csv s.csv",
       {"s.csv"}, 2, "--interference: the first factor"},
      // A failed write is the run's one line, not the tables and then the error.
      {"save_config_to_a_full_device", "outputs", {}, "$P compare --save-config /dev/full --trace-dir t", {}, 4,
       "--save-config: cannot write '/dev/full': No space left on device"},
      // A failed write is the run's one line: the summary line comes after the outputs are in place.
      {"sweep_json_to_a_full_device", "outputs", {}, "$P sweep --model gpt3-1.3b --gpus 8 --json /dev/full --csv s.csv",
       {"s.csv"}, 4, "--json: cannot write '/dev/full': No space left on device"},
      // One iteration shows no staleness across steps: a staleness filter would pass PipeDream-2BW.
      {"sweep_staleness_filter_one_iteration", "flags", {},
       "$P sweep --model gpt3-1.3b --gpus 8 --iterations 1 --synchronous-only --csv s.csv", {"s.csv"}, 2,
       "--synchronous-only: need --iterations 2 or more"},
      {"sweep_batch_and_microbatches", "flags", {}, "$P sweep --model gpt3-1.3b --gpus 8 -m 8 --global-batch-size 64",
       {}, 2, "--global-batch-size"},
      {"schedule_file_too_large", "memory", {{"s.csv", kValidCsv}}, "$P simulate --schedule-file s.csv --max-memory 1KiB",
       {}, 2, "the schedule of 's.csv' has ~2 ops and needs"},
      // The budget holds the tracks too: 20000 devices' tracks alone are ~19 MB (a 1 MB budget wrote 187 MB).
      {"trace_budget_under_the_tracks", "memory", {}, "$P simulate -p 20000 -m 1 --trace t.json --trace-budget 1MB",
       {"t.json"}, 2, "--trace-budget 1.0 MB: the trace's tracks alone (20000 devices, before any op) take"},
      {"iterations_beyond_32_bits", "memory", {}, "$P simulate --iterations 100000000", {}, 2,
       "pipesim numbers ops with 32 bits"},
      // p x v overflowed an int in the interleaved family's op count: a crash past the guard.
      {"chunks_times_stages_overflow", "memory", {}, "$P simulate --schedule interleaved -p 4096 -v 1048576 -m 1 "
       "--trace t.json", {"t.json"}, 2, "interleaved with p=4096, m=1, v=1048576 has ~1.3e10 ops; pipesim numbers ops "
       "with 32 bits (at most 4.3e9 ops per schedule); reduce p, m or v"},
      {"chunks_beyond_memory", "memory", {}, "$P check --schedule looped-bfs -v 1073741824", {}, 2,
       "looped-bfs with p=4, m=8, v=1073741824 has ~7.3e10 ops"},
      {"run_micro_batch_size", "memory", {}, "$P run --micro-batch-size 100000 --max-memory 1GiB", {}, 2,
       "model 'gpt-tiny' at micro-batch size 100000: the replicas' weights, gradients and optimizer state and the "
       "activations in flight need up to"},
      {"profile_link_sizes", "memory", {}, "$P profile --model gpt-tiny --out p.json --link-sizes 1KiB,3GiB", {"p.json"},
       2, "profile: link size 3.0 GiB needs three buffers of it"},
      {"fit_runs_too_large", "memory",
       {{"r.csv", "name,model,hardware,tp,pp,dp,global-batch,micro-batch-size,schedule,recompute,sequence-parallel,"
                  "seconds\nx,gpt3-175b,a100-80g,1,64,1,1048576,1,1f1b,none,false,1\n"}},
       "$P fit --measurements r.csv --hardware a100-80g --evaluate --max-memory 1GiB", {}, 2,
       "r.csv:2: 1f1b with p=64, m=1048576 (with the runs before it) has ~1.3e8 ops and needs"},
      {"fit_output_kept", "outputs", {{"r.csv", "name,model\n"}},
       "$P fit --measurements r.csv --hardware a100-80g -o gpu.json", {"gpu.json"}, 2, "r.csv:1: missing column"},
      {"fit_memory_only_runs", "outputs",
       {{"r.csv", "name,model,hardware,tp,pp,dp,global-batch,micro-batch-size,schedule,recompute,sequence-parallel,"
                  "activation-memory\nx,gpt3-1.3b,a100-80g,1,2,1,8,1,1f1b,none,false,2GiB\n"}},
       "$P fit --measurements r.csv --hardware a100-80g -o gpu.json", {"gpu.json"}, 2,
       "r.csv: no run has a measured time (column 'seconds'), and the fit needs some"},
      {"fit_bad_memory_size", "inputs",
       {{"r.csv", "name,model,hardware,tp,pp,dp,global-batch,micro-batch-size,schedule,recompute,sequence-parallel,"
                  "state-memory\nx,gpt3-1.3b,a100-80g,1,2,1,8,1,1f1b,none,false,12 parsecs\n"}},
       "$P fit --measurements r.csv --hardware a100-80g --evaluate", {}, 2, "r.csv:2: column 'state-memory': "},
      {"runs_file_is_a_fifo", "inputs", {}, "mkfifo r.csv && $P fit --measurements r.csv --hardware a100-80g --evaluate",
       {}, 2, "cannot read runs file 'r.csv': a FIFO (named pipe)"},
      // Config files: the checks and messages of flags, with file and key.
      // Values checked after parsing are named where they were written, not as the flag.
      {"config_duration_without_unit", "config", {{"c.json", "{\"fwd\": 5}"}}, "$P simulate --config c.json", {}, 2,
       "c.json: /fwd: expected a duration with a unit such as 1ms, 250us, 2.5s; got '5' (missing unit)"},
      {"config_size_not_a_size", "config", {{"c.json", "{\"max-memory\": \"lots\"}"}}, "$P simulate --config c.json",
       {}, 2, "c.json: /max-memory: expected a size with a unit"},
      {"config_switch_not_a_boolean", "config", {{"c.json", "{\"json\": \"yes\"}"}}, "$P simulate --config c.json", {},
       2, "c.json: /json: expected true or false, got \"yes\""},
      {"config_duplicate_key", "config", {{"c.json", "{\"tp\": 2, \"tp\": 4}"}}, "$P simulate --config c.json", {}, 2,
       "c.json: /tp: the key 'tp' is given twice in one object"},
      // A schedule file's header must agree with its ops: its word would scale the throughput.
      {"schedule_file_claims_more_microbatches", "inputs",
       {{"s.json", "{\"microbatches\": 2000000000, \"ops\": [[\"0F0\", \"0B0\"]]}"}},
       "$P simulate --schedule-file s.json --trace t.json", {"t.json"}, 2,
       "s.json: the forwards cover 1 distinct micro-batch ids, but microbatches 2000000000 x iterations 1 says "
       "2000000000"},
      {"schedule_file_split_too_fine", "inputs",
       {{"s.json", "{\"microbatch_split\": 2147483647, \"ops\": [[\"0F0\", \"0B0\"]]}"}},
       "$P simulate --schedule-file s.json", {}, 2, "s.json: microbatch_split 2147483647 does not divide microbatches 1"},
      // Invisible characters are shown escaped: a stray byte-order mark, a bidirectional override.
      {"invisible_characters_escaped", "inputs", {{"s.csv", "0F0,\xef\xbb\xbf" "0F1\xe2\x80\xae\n"}},
       "$P check --schedule-file s.csv", {}, 2, "s.csv:1: cell 2: '\\xef\\xbb\\xbf0F1\\xe2\\x80\\xae': no stage number"},
      {"schedule_duplicate_key", "config", {{"s.json", "{\"ops\": [[\"0F0\", \"0B0\"]], \"ops\": [[\"0F0\"]]}"}},
       "$P check --schedule-file s.json", {}, 2, "s.json: /ops: the key 'ops' is given twice in one object"},
      {"catalog_duplicate_key", "config",
       {{"g.json", "{\"links\": [{\"name\": \"a\", \"name\": \"b\", \"bandwidth\": \"1GB/s\", \"latency\": \"1us\"}]}"}},
       "$P catalog --file g.json", {}, 2, "g.json: /links/0/name: the key 'name' is given twice in one object"},
      {"profile_duplicate_key", "config", {{"p.json", "{\"format\": \"a\", \"format\": \"b\"}"}},
       "$P simulate --cost p.json", {}, 2, "p.json: /format: the key 'format' is given twice"},
      {"config_excludes", "config", {{"c.json", "{\"schedule\": \"gpipe\", \"schedule-file\": \"s.csv\"}"}, {"s.csv", kValidCsv}},
       "$P simulate --config c.json", {}, 2, "c.json: /schedule: cannot be used with --schedule-file (set too)"},
      {"config_needs", "config", {{"c.json", "{\"report-capacity\": \"80GiB\"}"}}, "$P simulate --config c.json", {}, 2,
       "c.json: /report-capacity: needs --report too"},
      {"config_combination_against_the_command_line", "config", {{"c.json", "{\"schedule\": \"gpipe\"}"}, {"s.csv", kValidCsv}},
       "$P simulate --config c.json --schedule-file s.csv", {}, 2,
       "c.json: /schedule: cannot be used with --schedule-file (set too)"},
      {"config_not_an_object", "config", {{"c.json", "[1, 2]"}}, "$P simulate --config c.json", {}, 2,
       "c.json: expected a JSON object of settings"},
      // Semantics.
      {"duplicate_gradsync", "semantics", {{"s.csv", "0F0,0B0,0GRADSYNC,0GRADSYNC,0OPT\n"}},
       "$P simulate --schedule-file s.csv", {}, 2, "device 0 op 3: duplicate 0GRADSYNC"},
      {"duplicate_opt", "semantics", {{"s.csv", "0F0,0B0,0OPT,0OPT\n"}}, "$P simulate --schedule-file s.csv", {}, 2,
       "device 0 op 3: duplicate 0OPT"},
      {"price_not_a_number", "semantics", {}, "$P compare --model gpt3-1.3b -p 4 --price-per-hour cheap --report r.html",
       {"r.html"}, 2, "--price-per-hour: expected a positive price per GPU-hour such as 2.99 (US dollars), at most 1000000; got 'cheap'"},
      {"price_without_a_model", "semantics", {}, "$P simulate --price-per-hour 2 --trace t.json", {"t.json"}, 2,
       "--price-per-hour: used only with --model"},
      {"catalog_price_source_alone", "config",
       {{"g.json", "{\"gpus\": [{\"name\": \"g\", \"peak_flops\": {\"bf16\": \"1TFLOP/s\"}, \"hbm_bandwidth\": \"1TB/s\", "
                   "\"memory\": \"1GiB\", \"intra_node_link\": \"nvlink4\", \"inter_node_link\": \"ib-ndr\", "
                   "\"price_source\": \"my invoice\", \"source\": \"t\"}]}"}},
       "$P compare --model gpt3-1.3b --hardware g.json -p 4 --report r.html", {"r.html"}, 2,
       "g.json: /gpus/0/price_source: given without a price_per_hour"},
      {"report_capacity_with_a_model", "semantics", {},
       "$P compare --model gpt3-1.3b -p 4 --report r.html --report-capacity 40GiB", {"r.html"}, 2,
       "--report-capacity: not with --model (the report draws each run against its GPU's own memory)"},
      {"unknown_schedule_suggests", "semantics", {}, "$P compare --schedules 1f1b,zbh1 --report r.html", {"r.html"}, 2,
       "unknown schedule 'zbh1' (did you mean 'zb-h1'? known: gpipe"},
      {"config_unknown_schedule", "config", {{"c.json", "{\"schedule\": \"zbh1\", \"stages\": 4}"}},
       "$P simulate --config c.json --report r.html", {"r.html"}, 2,
       "c.json: /schedule: unknown schedule 'zbh1' (did you mean 'zb-h1'? known: gpipe"},
      {"unknown_cost_model_suggests", "semantics", {}, "$P simulate --cost-model analytcal --report r.html", {"r.html"}, 2,
       "--cost-model: unknown cost model 'analytcal' (did you mean 'analytical'? known: uniform, analytical, profiled)"},
      {"cost_model_against_the_flags", "semantics", {}, "$P compare --cost-model analytical --report r.html", {"r.html"},
       2, "--cost-model analytical: needs --model"},
      {"more_stages_than_layers", "semantics", {}, "$P simulate --model gpt-tiny --nodes 8 -p 64", {}, 2,
       "1f1b has 64 stages per pipeline, but gpt-tiny has 8 layers"},
      {"uniform_cost_with_model", "semantics", {}, "$P simulate --model gpt3-1.3b --fwd 5ms", {}, 2,
       "--fwd: not used with --model"},
      {"gpu_flag_without_model", "semantics", {}, "$P simulate --tp 2", {}, 2, "--tp: used only with --model"},
      {"profiled_flag_without_cost", "semantics", {}, "$P simulate --cost-fit line", {}, 2,
       "--cost-fit: used only with --cost"},
      {"cost_hardware_for_a_cpu_profile", "semantics", {}, "$P simulate -p 2 --cost " + profile + " --cost-hardware h200 --report r.html",
       {"r.html"}, 2, "was measured on the CPU (Intel(R) Xeon(R) Processor), not on a GPU: there is no catalog machine to price it on"},
      {"cost_hardware_unknown_gpu", "semantics", {}, "$P compare -p 2 --cost " + profile + " --cost-hardware h300", {}, 2,
       "--cost-hardware: unknown gpu 'h300' (did you mean 'h200'?"},
      {"profile_virtual_devices_of_one", "inputs", {{"p.json", version2_profile([](nlohmann::json& j) {
                                                      j["machine"]["virtual_devices"] = 1;
                                                      j["machine"]["sms"] = 32;
                                                    })}},
       "$P simulate --cost p.json -p 2", {}, 2, "p.json: /machine/virtual_devices: "},
      {"profile_sms_without_virtual_devices", "inputs", {{"p.json", version2_profile([](nlohmann::json& j) {
                                                         j["machine"]["sms"] = 32;
                                                       })}},
       "$P simulate --cost p.json -p 2", {}, 2, "p.json: /machine: missing field 'virtual_devices'"},
      {"shape_flag_against_the_file", "semantics", {{"s.csv", kValidCsv}}, "$P simulate --schedule-file s.csv -p 8", {},
       2, "-p/--stages 8: 's.csv' has 1 devices (drop -p/--stages, or give 1)"},
      {"generator_flag_with_a_file", "semantics", {{"s.csv", kValidCsv}},
       "$P simulate --schedule-file s.csv --pipelines 4", {}, 2,
       "--pipelines: a setting of the generators; the schedule file (--schedule-file) fixes the schedule"},
      {"stage_cost_beyond_the_stages", "semantics", {}, "$P simulate --stage-cost 9:1ms:2ms", {}, 2,
       "--stage-cost: stage 9 does not exist (1f1b has 4 stages, 0..3)"},
      // --backend cuda where it cannot run (executor/cuda_plugin.hpp): exit code 6. The plugin
      // is looked for where there is none; a build without CUDA says so instead.
      {"cuda_plugin_missing", "environment", {},
       "PIPESIM_CUDA_PLUGIN=/nonexistent/libpipesim_cuda.so $P run --backend cuda --trace t.json", {"t.json"}, 6,
       "--backend cuda: "},
      {"validate_repeats_with_cost", "semantics", {{"p.json", "{}"}}, "$P validate --cost p.json --repeats 3", {}, 2,
       "--repeats: used only when profiling now (without --cost)"},
      {"validate_min_time_with_cost", "semantics", {{"p.json", "{}"}}, "$P validate --cost p.json --min-time 5ms", {}, 2,
       "--min-time: used only when profiling now (without --cost)"},
      // --samples (prediction intervals): a number of simulations, and a profile to draw from.
      {"samples_zero", "outputs", {}, "$P simulate --cost '" + profile + "' -p 2 -m 2 --samples 0 --trace t.json --report r.html",
       {"t.json", "r.html"}, 2, "--samples: expected a number of simulations in 1..100000, got 0"},
      {"samples_too_many", "numbers", {}, "$P compare --cost '" + profile + "' -p 2 -m 2 --samples 100001 --report r.html",
       {"r.html"}, 2, "--samples: expected a number of simulations in 1..100000, got 100001"},
      {"samples_not_an_integer", "numbers", {}, "$P simulate --cost '" + profile + "' --samples 1e3", {}, 2, "--samples"},
      {"samples_without_distributions", "semantics", {}, "$P simulate --samples 10 --report r.html", {"r.html"}, 2,
       "--samples: needs measured distributions, a profile from `pipesim profile` (--cost FILE); the uniform cost "
       "model has none"},
      {"samples_with_the_analytical_model", "semantics", {}, "$P compare --model gpt3-1.3b --samples 10 --trace-dir tr",
       {}, 2, "the analytical cost model has none"},
      {"seed_without_samples", "semantics", {}, "$P simulate --seed 3 --trace t.json", {"t.json"}, 2,
       "--seed requires --samples"},
      {"validate_tolerance_negative", "outputs", {}, "$P validate --tolerance -1 --report r.html", {"r.html"}, 2,
       "--tolerance: expected a percentage above 0, got -1.00"},
      {"validate_samples_zero", "outputs", {}, "$P validate --samples 0 --report r.html --trace t.json",
       {"r.html", "t.json"}, 2, "--samples: expected a number of simulations in 1..100000, got 0"},
      // --calibration (tools/validate_calibration.hpp): past validate --json outputs, read
      // before any profiling.
      {"validate_calibration_missing", "inputs", {}, "$P validate --calibration past --report r.html", {"r.html"}, 2,
       "--calibration: 'past': no such file or folder (past validate --json outputs)"},
      {"validate_calibration_not_validate_json", "inputs", {{"p.json", "{\"traceEvents\": []}"}},
       "$P validate --calibration p.json --report r.html", {"r.html"}, 2,
       "p.json: expected validate --json output (a schedule's object, or {\"schedules\": [...]})"},
      {"validate_calibration_bad_field", "config",
       {{"d/v.json", "{\"schedules\": [{\"schedule\": \"1f1b\", \"measured\": {}, \"time_per_iteration_error\": 0}]}"}},
       "$P validate --calibration d --report r.html", {"r.html"}, 2, "d/v.json: /schedules/0: missing field 'backend'"},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class HostileInput : public testing::TestWithParam<Case> {};

TEST_P(HostileInput, OneLineExitCodeAndNothingLost) {
  const Case& c = GetParam();
  const Sandbox box(c.name);
  for (const auto& [name, bytes] : c.inputs) box.write(name, bytes);
  for (const std::string& out : c.outputs) box.write(out, sentinel(out));
  std::string command = c.command;
  if (const std::size_t at = command.find("SOCKET "); at != std::string::npos) {  // a UNIX socket file
    const std::size_t end = command.find(' ', at + 7);
    const std::string name = command.substr(at + 7, end - at - 7);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string where = box.path(name).string();
    ASSERT_LT(where.size(), sizeof addr.sun_path);
    where.copy(addr.sun_path, where.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
    command.replace(at, end - at, "true");
  }
  const Result r = box.run(command);
  EXPECT_EQ(r.code, c.code) << c.klass << ": " << r.out;
  EXPECT_THAT(r.out, HasSubstr(c.message)) << c.klass;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "not one line: " << r.out;
  EXPECT_THAT(r.out, testing::StartsWith("pipesim: error: ")) << r.out;
  EXPECT_LT(r.out.size(), 2200u);
  for (const std::string& out : c.outputs) EXPECT_EQ(box.read(out), sentinel(out)) << out << " was changed";
  EXPECT_THAT(box.temporaries(), testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileInput, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

// ---- what must work ----------------------------------------------------------------------

TEST(HostileInputAccepted, LeadingZerosAreDecimal) {
  const Sandbox box("decimal");
  const Result r = box.run("$P simulate -p 010 -m 016 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"], 10);
  EXPECT_EQ(j["microbatches"], 16);
}

TEST(HostileInputAccepted, FileNamesThatAreNotUtf8StillGiveValidJson) {
  const Sandbox box("utf8");
  box.write("x\xff.csv", kValidCsv);
  const Result r = box.run("$P simulate --schedule-file \"$(printf 'x\\377.csv')\" --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // throws on invalid UTF-8
  EXPECT_EQ(j["schedule"], "x\\xff");
  const Result text = box.run("$P simulate --schedule-file \"$(printf 'x\\377.csv')\"");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_EQ(text.out.find('\xff'), std::string::npos);
}

// Strings inside files (a profile's machine description) reach the terminal escaped and the
// JSON output as valid JSON.
TEST(HostileInputAccepted, ControlCharactersInsideAProfileAreEscaped) {
  const Sandbox box("profile_strings");
  std::ifstream in(std::string(PIPESIM_EXAMPLES) + "/../docs/validation/gpt-small-cpu-profile.json");
  nlohmann::json profile = nlohmann::json::parse(in);
  profile["machine"]["cpu"] = "evil\x1b[31mCPU\x07";
  box.write("p.json", profile.dump());
  const Result text = box.run("$P simulate --cost p.json -p 2 -m 2");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("evil\\x1b[31mCPU\\x07"));
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);
  const Result json = box.run("$P simulate --cost p.json -p 2 -m 2 --json");
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_THAT(nlohmann::json::parse(json.out)["cost_model"].get<std::string>(), HasSubstr("evil\x1b[31mCPU"));
}

TEST(HostileInputAccepted, SuccessfulRunsReplaceTheirOutputsWhole) {
  const Sandbox box("replace");
  box.write("t.json", sentinel("t.json"));
  box.write("c.json", sentinel("c.json"));
  ::chmod(box.path("t.json").c_str(), 0640);
  const Result r = box.run("$P simulate --trace t.json --save-config c.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(box.read("t.json"))["otherData"]["generator"].get<std::string>().rfind("pipesim", 0),
            0u);
  EXPECT_EQ(nlohmann::json::parse(box.read("c.json"))["schedule"], "1f1b");
  EXPECT_EQ(fs::status(box.path("t.json")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_THAT(box.temporaries(), testing::IsEmpty());
  // Through a symbolic link: the file it names is replaced, the link stays.
  fs::create_symlink("t.json", box.path("link.json"));
  ASSERT_EQ(box.run("$P simulate -p 2 -m 2 --trace link.json").code, 0);
  EXPECT_TRUE(fs::is_symlink(box.path("link.json")));
  EXPECT_EQ(nlohmann::json::parse(box.read("t.json"))["otherData"]["title"], "1f1b");
}

TEST(HostileInputAccepted, SpecialFilesAreWrittenDirectly) {
  const Sandbox box("special");
  const Result r = box.run("$P simulate --trace /dev/null --report /dev/null");
  EXPECT_EQ(r.code, 0) << r.out;
  const Result pipe = box.run("$P schedule --format csv -p 2 -m 2 -o /dev/stdout | cat");
  EXPECT_EQ(pipe.code, 0) << pipe.out;
  EXPECT_THAT(pipe.out, testing::StartsWith("0F0,"));
}

// A reader that goes away: the write fails with EPIPE, which is exit code 4, not a silent 0.
TEST(HostileInputAccepted, AClosedPipeIsAnError) {
  const Sandbox box("pipe");
  const Result r = box.run("{ $P schedule --format csv -p 64 -m 8192 2>err.txt; echo \"rc=$?\" >rc.txt; } | head -c 1");
  EXPECT_EQ(box.read("rc.txt"), "rc=4\n");
  EXPECT_EQ(box.read("err.txt"), "pipesim: error: cannot write to standard output: Broken pipe\n");
}

#if !defined(__SANITIZE_ADDRESS__)
// Out of memory is its own exit code with one line naming what was being done. (Not under
// AddressSanitizer, which needs far more address space than any small limit.) 67 M ops:
// their lists alone take 1 GiB; since the ready pass (sim/ready_pass.hpp) the 33 M ops of
// m = 65536 fit in the 1.4 GiB.
TEST(HostileInputAccepted, OutOfMemoryIsExitCode3) {
  const Sandbox box("oom");
  const Result r = box.run("(ulimit -v 1500000; exec $P simulate -p 256 -m 131072 --max-memory 1TiB)");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: out of memory while "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}
#endif

}  // namespace
