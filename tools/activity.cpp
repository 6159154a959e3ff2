#include "tools/activity.hpp"

#include <mutex>

namespace pipesim {
namespace {

std::mutex g_mutex;
std::string g_current;

}  // namespace

Activity::Activity(std::string what) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  previous_ = std::move(g_current);
  g_current = std::move(what);
}

Activity::~Activity() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_current = std::move(previous_);
}

std::string Activity::current() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_current;
}

}  // namespace pipesim
