// Executor faults (issue 7): a device that throws, a kernel error on a bad shape, a hung
// op and a deadlocked schedule end the run with one line naming the device and the op,
// keep the partial measurement, and leave no thread behind (the test returning is the
// proof: run_schedule joins every thread). Also the Channel on its own.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/units.hpp"
#include "executor/channel.hpp"
#include "executor/cpu_backend.hpp"
#include "executor_helpers.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

using namespace testing_executor;

enum class Fault { Throw, Hang, BadShape };

// The CPU backend, except on one op.
class FaultyBackend final : public CpuBackend {
 public:
  FaultyBackend(const ModelSetup& setup, const StopFlag& stop, Op target, Fault fault)
      : CpuBackend(setup), stop_(stop), target_(target), fault_(fault) {}

  std::unique_ptr<Payload> forward(const OpArgs& a, const Payload* input, double* loss) override {
    if (a.op == target_) {
      if (fault_ == Fault::Throw) throw InputError("injected fault");
      if (fault_ == Fault::Hang) {
        while (!stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        throw InputError("gave up after the abort");
      }
      CpuBackend::forward(a, input, loss);
      return std::make_unique<CpuPayload>(KMat<float>::Zero(3, 5));  // not n x h
    }
    return CpuBackend::forward(a, input, loss);
  }

 private:
  const StopFlag& stop_;
  Op target_;
  Fault fault_;
};

RunOptions faulty(Op target, Fault fault, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  RunOptions o = quick();
  o.timeout = timeout;
  o.backend = [=](int, const ModelSetup& setup, const StopFlag& stop) {
    return std::make_unique<FaultyBackend>(setup, stop, target, fault);
  };
  return o;
}

ExecutionError failure(const Schedule& s, const RunOptions& o) {
  try {
    run_schedule(s, tiny(), o);
  } catch (const ExecutionError& e) {
    return e;
  }
  ADD_FAILURE() << "the run did not fail";
  return ExecutionError("none", -1, -1, std::make_shared<MeasuredRun>());
}

TEST(ExecutorFaults, ThrowingDeviceNamesDeviceAndOp) {
  const Schedule s = make("1f1b", 4, 4);
  // 1F1B p=4 rank 2: 2F0 2F1 2B0 2F2 ...: op 3 is 2F2.
  ASSERT_EQ(s.ops[2][3], make_op(OpKind::F, 2, 2));
  const ExecutionError e = failure(s, faulty(make_op(OpKind::F, 2, 2), Fault::Throw));
  EXPECT_STREQ(e.what(), "device 2 op 3 (2F2): injected fault");
  EXPECT_EQ(e.device(), 2);
  EXPECT_EQ(e.index(), 3);
  // The partial measurement holds what finished before, and not the failed op.
  const MeasuredRun& partial = e.partial();
  EXPECT_FALSE(partial.complete);
  EXPECT_FALSE(partial.timeline.ops.empty());
  EXPECT_LT(partial.timeline.ops.size(), s.total_ops());
  for (const OpRecord& r : partial.timeline.ops) EXPECT_FALSE(r.ref.device == 2 && r.ref.index >= 3);
}

TEST(ExecutorFaults, KernelErrorOnABadShape) {
  // Device 0 sends a 3 x 5 "activation"; device 1's first block rejects it.
  const ExecutionError e = failure(make("gpipe", 2, 2), faulty(make_op(OpKind::F, 0, 1), Fault::BadShape));
  const std::string what = e.what();
  EXPECT_EQ(what.rfind("device 1 op 1 (1F1): ", 0), 0u) << what;
  EXPECT_NE(what.find("kernels"), std::string::npos) << what;
}

// The timeouts below must outlast one real op: in the Debug + sanitizer builds of CI an op
// of gpt-tiny takes 10-100x longer than in Release.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(NDEBUG)
constexpr int kTimeoutScale = 20;
#else
constexpr int kTimeoutScale = 1;
#endif

std::string timeout_text(std::chrono::milliseconds t) {
  return "no op finished and no message moved for " +
         format_duration(std::chrono::duration_cast<std::chrono::nanoseconds>(t).count()) + " (--timeout)";
}

TEST(ExecutorFaults, HungOpTimesOut) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto timeout = std::chrono::milliseconds(200 * kTimeoutScale);
  const ExecutionError e = failure(make("1f1b", 2, 4), faulty(make_op(OpKind::F, 1, 2), Fault::Hang, timeout));
  const std::string what = e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10 * kTimeoutScale));
  // Device 0 is the first one not done: it waits for 1B1 (or later) while device 1 hangs.
  EXPECT_NE(what.find(timeout_text(timeout)), std::string::npos) << what;
  EXPECT_NE(what.find("device 1 op"), std::string::npos) << what;
  EXPECT_NE(what.find("(1F2) is running"), std::string::npos) << what;
}

TEST(ExecutorFaults, DeadlockedScheduleTimesOutNamingTheWait) {
  // Each device waits for what the other produces only after its own wait.
  Schedule s;
  s.name = "deadlock";
  s.num_devices = 2;
  s.num_stages = 2;
  s.microbatches = 2;
  s.placement = {{0, 1}};
  s.ops = {{make_op(OpKind::F, 0, 0), make_op(OpKind::B, 0, 0), make_op(OpKind::F, 0, 1), make_op(OpKind::B, 0, 1)},
           {make_op(OpKind::F, 1, 1), make_op(OpKind::B, 1, 1), make_op(OpKind::F, 1, 0), make_op(OpKind::B, 1, 0)}};
  RunOptions o = quick();
  const auto timeout = std::chrono::milliseconds(100 * kTimeoutScale);
  o.timeout = timeout;
  const ExecutionError e = failure(s, o);
  EXPECT_EQ(std::string(e.what()), "device 0 op 1 (0B0): " + timeout_text(timeout) +
                                       "; it waits for 1B0 from device 1; device 1 op 0 (1F1) waits for 0F1 from device 0");
  EXPECT_EQ(e.partial().timeline.ops.size(), 1u);  // 0F0
}

TEST(ExecutorFaults, OpBeforeItsProducerOnTheSameDevice) {
  Schedule s = make("1f1b", 1, 1);
  std::swap(s.ops[0][0], s.ops[0][1]);  // 0B0 before 0F0
  const ExecutionError e = failure(s, quick());
  EXPECT_STREQ(e.what(), "device 0 op 0 (0B0): needs 0F0, which comes later on the same device");
}

TEST(ExecutorFaults, BadInputBeforeStarting) {
  auto message = [](const Schedule& s, const ModelSpec& m, const RunOptions& o) -> std::string {
    try {
      run_schedule(s, m, o);
    } catch (const ExecutionError& e) {
      return std::string("ExecutionError: ") + e.what();
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  ScheduleParams halving;
  halving.p = 4;
  halving.m = 4;
  halving.set("concat", "halving");
  EXPECT_EQ(message(generate("chimera", halving), tiny(), quick()),
            "--micro-batch-size: the schedule splits each micro-batch into 2 parts (microbatch_split), which must divide "
            "the micro-batch size 1");
  EXPECT_EQ(message(make("1f1b", 2, 2), find_model("llama2-7b"), quick()),
            "model 'llama2-7b': the CPU executor computes GPT-style blocks only (GELU MLP, biases, LayerNorm, learned "
            "positions); use a gpt-* model such as gpt-tiny");
  EXPECT_EQ(message(make("interleaved", 4, 4), tiny(), [] {
              RunOptions o = quick();
              o.micro_batch_size = 1;
              return o;
            }()),
            "(no error)");  // 8 stages of 8 layers fit
  ScheduleParams deep;
  deep.p = 8;
  deep.m = 8;
  deep.v = 2;
  EXPECT_EQ(message(generate("interleaved", deep), tiny(), quick()),
            "schedule has 16 stages per pipeline, but model 'gpt-tiny' has only 8 layers to cut into stages");
  RunOptions zero = quick();
  zero.timeout = std::chrono::nanoseconds(0);
  EXPECT_EQ(message(make("1f1b", 2, 2), tiny(), zero), "--timeout: must be positive");
  RunOptions small = quick();
  small.max_memory_bytes = 1000;
  EXPECT_EQ(message(make("1f1b", 2, 2), tiny(), small).rfind("model 'gpt-tiny' at micro-batch size 1: the replicas' weights", 0), 0u);
}

TEST(Channel, FifoBoundedAndAbortable) {
  Channel<int> c(2);
  c.push(1);
  c.push(2);
  // A third push blocks until a pop makes room.
  auto pusher = std::async(std::launch::async, [&] { c.push(3); });
  EXPECT_EQ(pusher.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  EXPECT_EQ(c.pop(), 1);
  pusher.get();
  EXPECT_EQ(c.pop(), 2);
  EXPECT_EQ(c.pop(), 3);
  EXPECT_EQ(c.try_pop(), std::nullopt);
  // A pop waiting on an empty channel wakes up on abort, and so does everything later.
  auto popper = std::async(std::launch::async, [&] { return c.pop(); });
  EXPECT_EQ(popper.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  c.abort();
  EXPECT_THROW(popper.get(), ChannelAborted);
  EXPECT_THROW(c.push(4), ChannelAborted);
}

TEST(Channel, CloseDrainsThenEnds) {
  Channel<int> c(4);
  c.push(7);
  c.close();
  EXPECT_EQ(c.pop(), 7);
  EXPECT_EQ(c.pop(), std::nullopt);
}

}  // namespace
}  // namespace pipesim
