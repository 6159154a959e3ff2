#pragma once
// What the command is doing, for the one line printed when memory runs out: "out of memory
// while simulating 1f1b with p=1024, m=65536 (134217728 ops)". Set by the commands around
// their large steps; the innermost one wins, and the outer one is back when it ends.
#include <string>

namespace pipesim {

class Activity {
 public:
  explicit Activity(std::string what);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  // The innermost activity; once an exception has ended them all, the one it ended first
  // (so that main can name it); "" if none.
  static std::string current();

 private:
  std::string previous_;
  int exceptions_;
};

}  // namespace pipesim
