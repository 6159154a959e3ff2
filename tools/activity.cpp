#include "tools/activity.hpp"

#include <exception>
#include <mutex>

namespace pipesim {
namespace {

std::mutex g_mutex;
std::string g_current;
// The activity an exception left (its destructor ran while unwinding): main's catch comes
// after every Activity on the way has ended.
std::string g_failed;

}  // namespace

Activity::Activity(std::string what) : exceptions_(std::uncaught_exceptions()) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  previous_ = std::move(g_current);
  g_current = std::move(what);
  g_failed.clear();
}

Activity::~Activity() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (std::uncaught_exceptions() > exceptions_ && g_failed.empty()) g_failed = g_current;
  g_current = std::move(previous_);
}

std::string Activity::current() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_current.empty() ? g_failed : g_current;
}

}  // namespace pipesim
