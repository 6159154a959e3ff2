// The `cli` fuzz target: the whole command line (run_cli, every subcommand that does not run
// real kernels: simulate, compare, schedule, check, catalog, sweep, fit) in-process, in a folder of its own holding one input file and three outputs
// that exist before the run. The contract of issue #17 end to end:
//   - the exit code is documented (0 success, 1 a disagreement, 2 bad input, 3 out of
//     memory, 4 an output that could not be written); 5 (an internal error: an exception that
//     was not an InputError reached main) is a violation, and so is a crash or an abort;
//   - a run that fails leaves the pre-existing outputs byte for byte as they were;
//   - no run leaves a temporary file behind.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/check.hpp"
#include "tools/cli_main.hpp"
#include "tools/exit_codes.hpp"

namespace pipesim::fuzz {
namespace {

namespace fs = std::filesystem;

// The outputs an input can name; each holds this before the run.
constexpr const char* kOutputs[] = {"out.json", "out.html", "out.csv"};
std::string sentinel(const char* name) { return std::string("pre-existing ") + name + "\n"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A process-wide folder; the target enters it for one run and goes back.
const fs::path& folder() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("pipesim_fuzz_cli_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Standard output goes to /dev/null while run_cli runs (the tables are not the point; a
// closed fd would make every run fail at its end), and the working folder is the sandbox.
class Enter {
 public:
  Enter() : cwd_(::open(".", O_RDONLY | O_CLOEXEC)), stdout_(::dup(STDOUT_FILENO)) {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
    fs::current_path(folder());
  }
  ~Enter() {
    if (fchdir(cwd_) != 0) std::abort();
    ::dup2(stdout_, STDOUT_FILENO);
    ::close(stdout_);
    ::close(cwd_);
  }

 private:
  int cwd_, stdout_;
};

// Subcommands that only read, generate, simulate and write; run, validate and profile run
// real kernels and threads for seconds (their inputs have the other targets and tests).
bool fast_subcommand(const std::string& s) {
  return s == "simulate" || s == "compare" || s == "schedule" || s == "check" || s == "catalog" || s == "sweep" ||
         s == "fit";
}

}  // namespace

void cli(std::string_view bytes) {
  // Arguments one per line, then after a NUL byte the contents of in.csv and in.json.
  const std::size_t nul = bytes.find('\0');
  const std::string_view args_text = bytes.substr(0, nul);
  const std::string_view file = nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1);
  std::vector<std::string> args;
  for (std::size_t start = 0; start <= args_text.size() && args.size() < 40;) {
    const std::size_t nl = std::min(args_text.find('\n', start), args_text.size());
    args.emplace_back(args_text.substr(start, nl - start));
    start = nl + 1;
  }
  if (args.empty() || !fast_subcommand(args.front())) return;
  // Small runs only: a limit the memory guard enforces (catalog takes no --max-memory).
  if (args.front() != "catalog") args.insert(args.begin() + 1, {"--max-memory", "256MiB"});

  const Enter enter;
  for (const auto& e : fs::directory_iterator(fs::current_path())) fs::remove_all(e.path());
  std::ofstream("in.csv", std::ios::binary) << file;
  std::ofstream("in.json", std::ios::binary) << file;
  for (const char* out : kOutputs) std::ofstream(out, std::ios::binary) << sentinel(out);

  std::vector<const char*> argv{"pipesim"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int code = run_cli(static_cast<int>(argv.size()), argv.data());

  require(code >= exit_code::kOk && code <= exit_code::kOutputFailed,
          "exit code " + std::to_string(code) + (code == exit_code::kInternalError ? " (internal error)" : ""));
  if (code != exit_code::kOk)
    for (const char* out : kOutputs)
      require(slurp(out) == sentinel(out), std::string("a failed run changed ") + out);
  for (const auto& e : fs::recursive_directory_iterator(fs::current_path()))
    require(e.path().filename().string().find(".pipesim-") == std::string::npos,
            "a temporary file was left behind: " + e.path().filename().string());
}

}  // namespace pipesim::fuzz
