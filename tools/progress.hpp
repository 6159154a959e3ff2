#pragma once
// Progress of a long step (a simulation, writing a trace, a sweep) on standard error, and
// only there: never on standard output or in an output file, so reruns stay byte-identical.
// The one place that formats progress; simulate, compare and sweep all use it.
//
//   On a terminal: one line redrawn in place about 10 times a second, erased when the step
//   ends (the command then prints its results):
//     [########............]  41 %  52.4 M/128.0 M ops  12 s, 4.4 M ops/s, ETA 17 s  simulating 1f1b
//   shown for steps of at least `min_total` units (simulate: 10^7 ops), or for every step
//   with --progress.
//   Not on a terminal (a log file, CI): nothing, unless --progress[=INTERVAL] asks for a
//   line every INTERVAL (default 5 s), and one when the step ends if any was printed:
//     pipesim: progress: simulating 1f1b: 41.0 % (52.4 M of 128.0 M ops), 12 s elapsed, 4.4 M ops/s, ETA 17 s
//     pipesim: progress: simulating 1f1b: done, 128.0 M ops in 29 s (4.4 M ops/s)
//
// Rate and ETA are measured from the step's first update on, so that set-up before it (the
// engine builds its graph before the first op ends) does not count: rate = (done - done at
// the first update) / (time since it), ETA = (total - done) / rate; "ETA --" until there is
// a rate. The closing line's rate is the whole step's (total / elapsed).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "cost_models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "tools/cli_app.hpp"

namespace CLI {
class Option;
}  // namespace CLI

namespace pipesim {

// Seconds on a monotonic clock (any origin). Tests inject their own; empty: steady_clock.
using ProgressClock = std::function<double()>;

struct ProgressOptions {
  bool asked = false;        // --progress given
  double interval_s = 5.0;   // between log lines
  bool terminal = false;     // standard error is a terminal
  ProgressClock clock;       // empty: std::chrono::steady_clock
};

// Adds --progress[=INTERVAL] to a subcommand; its value goes to `value`.
CLI::Option* add_progress_flag(CLI::App& cmd, std::string& value);
// The options the flag gave (InputError for a bad interval), with `terminal` from isatty.
ProgressOptions progress_options(const CLI::Option* flag, const std::string& value);

class Progress {
 public:
  // Shows nothing when the options do not call for it (see above). `unit` is plural ("ops").
  Progress(const ProgressOptions& options, std::string what, std::uint64_t total, std::string unit,
           std::uint64_t min_total = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool shown() const { return mode_ != Mode::Off; }
  // `done` of `total` units so far. Cheap when nothing is due (one clock read). Lines are
  // due at start + k x interval; a late call prints one line, not one per missed interval.
  void update(std::uint64_t done);
  // What the step is, from the next line on ("sweep, 2 of 4 ranks working").
  void set_what(std::string what) { what_ = std::move(what); }
  // Erases the bar, or prints the closing log line. Called by the destructor too, unless an
  // exception ends the step (then the bar is erased and no "done" line printed).
  void finish();

 private:
  enum class Mode { Off, Bar, Lines };
  double now() const;

  Mode mode_ = Mode::Off;
  std::string what_;
  std::string unit_;
  std::uint64_t total_ = 0;
  double interval_s_ = 0;
  ProgressClock clock_;
  double start_ = 0;  // clock_'s reading when the step began
  double next_ = 0;   // when the next line is due
  std::optional<std::pair<double, std::uint64_t>> first_;  // the first update: time, done
  bool printed_ = false;
  bool finished_ = false;
  int exceptions_ = 0;
};

// A simulation shows a bar on a terminal from this many ops (~1 s of engine time).
inline constexpr std::uint64_t kSimulateProgressOps = 10'000'000;

// simulate() with its progress shown as `what` ("simulating 1f1b"), over the schedule's ops,
// on `hardware` (null: nothing shared).
SimResult simulate_with_progress(const Schedule& schedule, const CostModel& model, SimObserver* observer,
                                 const ProgressOptions& options, const std::string& what,
                                 const SharedHardware* hardware = nullptr);

// The texts, as pure functions of their numbers (tests/progress_test.cpp).
// `rate_per_s` <= 0: not known yet ("ETA --").
std::string progress_bar_text(const std::string& what, std::uint64_t done, std::uint64_t total,
                              const std::string& unit, double elapsed_s, double rate_per_s);
std::string progress_line_text(const std::string& what, std::uint64_t done, std::uint64_t total,
                               const std::string& unit, double elapsed_s, double rate_per_s);
std::string progress_done_text(const std::string& what, std::uint64_t total, const std::string& unit,
                               double elapsed_s);
// "950", "12.3 k", "52.4 M", "1.2 G": a count, 3 significant digits from 10^4 on.
std::string compact_count(double n);
// "0.4 s", "12 s", "3 min 05 s", "2 h 07 min".
std::string format_seconds(double s);

}  // namespace pipesim
