// Simulator and simulate() (sim/engine.hpp): which of the engine's two ways runs a
// schedule, the ready pass (sim/ready_pass.hpp) where it applies or the event loop
// (sim/event_loop.hpp) for everything, and the arrays each keeps between runs.
#include "sim/engine.hpp"

#include <memory>

#include "sim/event_loop.hpp"
#include "sim/ready_pass.hpp"

namespace pipesim {

struct Simulator::Workspace {
  EventLoopBuffers buffers;
  ReadyPassBuffers pass;
  bool always_event_loop = false;
  EnginePath last = EnginePath::EventLoop;
};

Simulator::Simulator(bool reuse_walks) : workspace_(std::make_unique<Workspace>()) {
  workspace_->buffers.reuse_walks = reuse_walks;
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

SimResult Simulator::run(const Schedule& schedule, const CostModel& costs, SimObserver* observer,
                         const SimProgress* progress, const SharedHardware* hardware) {
  Workspace& w = *workspace_;
  if (!w.always_event_loop) {
    SimResult out;
    if (ready_pass(schedule, costs, observer, progress, hardware, w.pass, out)) {
      w.last = EnginePath::ReadyPass;
      return out;
    }
  }
  w.last = EnginePath::EventLoop;
  return EventLoop(schedule, costs, observer, progress, hardware, w.buffers).run();
}

void Simulator::always_event_loop(bool on) { workspace_->always_event_loop = on; }
EnginePath Simulator::last_path() const { return workspace_->last; }

SimResult simulate(const Schedule& schedule, const CostModel& costs, SimObserver* observer,
                   const SimProgress* progress, const SharedHardware* hardware) {
  return Simulator().run(schedule, costs, observer, progress, hardware);
}

}  // namespace pipesim
