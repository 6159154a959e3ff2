#include "tools/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/units.hpp"

namespace pipesim {
namespace {

constexpr double kBarInterval = 0.1;  // seconds between redraws on a terminal
constexpr int kBarWidth = 20;

std::string printf_text(const char* format, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

double share_of(std::uint64_t done, std::uint64_t total) {
  return total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
}

// "12 s, 4.4 M ops/s, ETA 17 s" (the bar) or "12 s elapsed, 4.4 M ops/s, ETA 17 s" (a line).
std::string timing(std::uint64_t done, std::uint64_t total, const std::string& unit, double elapsed_s, double rate,
                   const char* after_elapsed) {
  std::string text = format_seconds(elapsed_s) + after_elapsed;
  if (!(rate > 0)) return text + ", ETA --";
  text += ", " + compact_count(rate) + " " + unit + "/s";
  return text + ", ETA " + format_seconds(static_cast<double>(total > done ? total - done : 0) / rate);
}

}  // namespace

std::string compact_count(double n) {
  if (n < 10000) return printf_text("%.0f", n);
  static constexpr const char* kPrefix[] = {"k", "M", "G", "T", "P", "E"};
  int p = -1;
  while (n >= 999.5 && p < 5) n /= 1000, ++p;  // what "%.0f" would print as 1000: the next prefix
  return printf_text(n < 99.95 ? "%.1f" : "%.0f", n) + " " + kPrefix[p];
}

std::string format_seconds(double s) {
  if (s < 9.95) return printf_text("%.1f s", std::max(0.0, s));
  const auto whole = static_cast<long long>(std::llround(s));
  if (whole < 60) return std::to_string(whole) + " s";
  char buf[48];
  if (whole < 3600)
    std::snprintf(buf, sizeof buf, "%lld min %02lld s", whole / 60, whole % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", whole / 3600, whole / 60 % 60);
  return buf;
}

std::string progress_bar_text(const std::string& what, std::uint64_t done, std::uint64_t total,
                              const std::string& unit, double elapsed_s, double rate) {
  const double share = share_of(done, total);
  const int filled = static_cast<int>(share * kBarWidth);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(kBarWidth - filled), '.') + "] " +
         printf_text("%3.0f %%", std::floor(share * 100)) + "  " + compact_count(static_cast<double>(done)) + "/" +
         compact_count(static_cast<double>(total)) + " " + unit + "  " +
         timing(done, total, unit, elapsed_s, rate, "") + "  " + what;
}

std::string progress_line_text(const std::string& what, std::uint64_t done, std::uint64_t total,
                               const std::string& unit, double elapsed_s, double rate) {
  return "pipesim: progress: " + what + ": " + printf_text("%.1f %%", std::floor(share_of(done, total) * 1000) / 10) +
         " (" + compact_count(static_cast<double>(done)) + " of " + compact_count(static_cast<double>(total)) + " " +
         unit + "), " + timing(done, total, unit, elapsed_s, rate, " elapsed");
}

std::string progress_done_text(const std::string& what, std::uint64_t total, const std::string& unit,
                               double elapsed_s) {
  std::string text = "pipesim: progress: " + what + ": done, " + compact_count(static_cast<double>(total)) + " " +
                     unit + " in " + format_seconds(elapsed_s);
  if (elapsed_s > 0) text += " (" + compact_count(static_cast<double>(total) / elapsed_s) + " " + unit + "/s)";
  return text;
}

SimResult simulate_with_progress(const Schedule& schedule, const CostModel& model, SimObserver* observer,
                                 const ProgressOptions& options, const std::string& what, const SharedHardware* hardware) {
  Progress bar(options, what, schedule.total_ops(), "ops", kSimulateProgressOps);
  if (!bar.shown()) return simulate(schedule, model, observer, nullptr, hardware);
  SimProgress progress;
  progress.report = [&bar](std::uint64_t done) { bar.update(done); };
  SimResult result = simulate(schedule, model, observer, &progress, hardware);
  bar.finish();
  return result;
}

CLI::Option* add_progress_flag(CLI::App& cmd, std::string& value) {
  return cmd
      .add_option("--progress", value,
                  "Show progress on standard error for every step; without a terminal, one line every INTERVAL "
                  "(default 5s), for logs. On a terminal, long steps show a bar anyway")
      ->expected(0, 1)
      ->type_name("[INTERVAL]");
}

ProgressOptions progress_options(const CLI::Option* flag, const std::string& value) {
  ProgressOptions o;
  o.terminal = ::isatty(STDERR_FILENO) == 1;
  o.asked = flag != nullptr && flag->count() > 0;
  if (o.asked && !value.empty()) {
    const Tick interval = parse_duration(value, "--progress");
    if (interval <= 0) throw InputError("--progress: the interval must be positive, got " + quote(value));
    o.interval_s = static_cast<double>(interval) / 1e9;
  }
  return o;
}

Progress::Progress(const ProgressOptions& options, std::string what, std::uint64_t total, std::string unit,
                   std::uint64_t min_total)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      clock_(options.clock),
      exceptions_(std::uncaught_exceptions()) {
  if (options.terminal && (options.asked || total >= min_total)) {
    mode_ = Mode::Bar;
    interval_s_ = kBarInterval;
  } else if (options.asked && !options.terminal) {
    mode_ = Mode::Lines;
    interval_s_ = options.interval_s;
  }
  start_ = now();
  next_ = start_ + interval_s_;
}

Progress::~Progress() {
  if (std::uncaught_exceptions() > exceptions_ && !finished_) {  // the step failed: no "done" line
    finished_ = true;
    if (printed_ && mode_ == Mode::Bar) std::fputs("\r\033[K", stderr);
    return;
  }
  finish();
}

double Progress::now() const {
  if (clock_) return clock_();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Progress::update(std::uint64_t done) {
  if (mode_ == Mode::Off || finished_) return;
  const double t = now();
  if (!first_) first_ = {t, done};
  if (t < next_) return;
  const double elapsed = t - start_;
  next_ = start_ + (std::floor(elapsed / interval_s_) + 1) * interval_s_;
  const double rate = t > first_->first && done > first_->second
                          ? static_cast<double>(done - first_->second) / (t - first_->first)
                          : 0.0;
  if (mode_ == Mode::Bar)
    std::fprintf(stderr, "\r%s\033[K", progress_bar_text(what_, done, total_, unit_, elapsed, rate).c_str());
  else
    std::fprintf(stderr, "%s\n", progress_line_text(what_, done, total_, unit_, elapsed, rate).c_str());
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!printed_) return;
  if (mode_ == Mode::Bar)
    std::fputs("\r\033[K", stderr);
  else
    std::fprintf(stderr, "%s\n", progress_done_text(what_, total_, unit_, now() - start_).c_str());
  std::fflush(stderr);
}

}  // namespace pipesim
