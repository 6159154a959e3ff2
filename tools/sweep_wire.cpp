#include "tools/sweep_wire.hpp"

#include <cstring>
#include <type_traits>

#include "core/error.hpp"

namespace pipesim {
namespace {

// Every field of a row that travels, in one order for both ends.
template <typename Row, typename F>
void row_fields(Row& r, F&& f) {
  f(r.index);
  f(r.tp), f(r.pp), f(r.dp), f(r.microbatches), f(r.micro_batch_size), f(r.gpus);
  f(r.global_batch), f(r.optimizer_steps), f(r.time_per_iteration);
  for (auto& part : r.time_parts) f(part);
  f(r.tokens_per_iteration), f(r.tokens_per_s), f(r.mfu), f(r.bubble_ratio);
  f(r.peak_memory), f(r.capacity), f(r.overshoot), f(r.fits);
  auto& d = r.peak_device;
  f(d.device), f(d.parameters), f(d.replicas), f(d.weight_copies), f(d.weights), f(d.gradients), f(d.optimizer);
  f(d.activations), f(d.workspace), f(d.comm_buffers), f(d.total), f(d.capacity), f(d.fits), f(d.overshoot);
  f(r.max_mismatch), f(r.max_delay), f(r.mean_mismatch), f(r.mismatched_fraction), f(r.mean_delay);
  f(r.cost_per_million_tokens);
}

class Writer {
 public:
  template <typename T>
  void operator()(const T& v) {
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      (*this)(v.has_value());
      if (v) (*this)(*v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      (*this)(static_cast<std::uint64_t>(v.size()));
      out_ += v;
    } else {
      static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
      char bytes[sizeof(T)];
      std::memcpy(bytes, &v, sizeof(T));
      out_.append(bytes, sizeof(T));
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  void operator()(T& v) {
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      bool present = false;
      (*this)(present);
      v.reset();
      if (present) (*this)(v.emplace());
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::uint64_t n = 0;
      (*this)(n);
      PIPESIM_ASSERT(n <= in_.size() - at_);
      v.assign(in_.substr(at_, n));
      at_ += n;
    } else {
      static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
      PIPESIM_ASSERT(sizeof(T) <= in_.size() - at_);
      std::memcpy(&v, in_.data() + at_, sizeof(T));
      at_ += sizeof(T);
    }
  }
  template <typename T>
  T get() {
    T v{};
    (*this)(v);
    return v;
  }
  bool at_end() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_request(const RankRequest& request) {
  Writer w;
  w(request.kind);
  if (request.kind == RequestKind::Failure) {
    w(static_cast<std::int32_t>(request.exit_code));
    w(static_cast<std::uint64_t>(request.index));
    w(request.message);
    return w.take();
  }
  w(static_cast<std::uint64_t>(request.outcomes.size()));
  for (const GroupOutcome& o : request.outcomes) {
    w(static_cast<std::uint64_t>(o.rows.size()));
    for (const SweepRow& row : o.rows) row_fields(row, w);
    w(static_cast<std::uint64_t>(o.skips.size()));
    for (const auto& [index, reason] : o.skips) w(static_cast<std::uint64_t>(index)), w(reason);
    for (const auto& e : o.examples) {
      w(e.has_value());
      if (e) w(static_cast<std::uint64_t>(e->index)), w(e->message);
    }
  }
  return w.take();
}

RankRequest decode_request(std::string_view bytes, const SweepGrid& grid) {
  Reader r(bytes);
  RankRequest request;
  r(request.kind);
  PIPESIM_ASSERT(request.kind == RequestKind::More || request.kind == RequestKind::Final ||
                 request.kind == RequestKind::Failure);
  if (request.kind == RequestKind::Failure) {
    request.exit_code = r.get<std::int32_t>();
    request.index = r.get<std::uint64_t>();
    r(request.message);
  } else {
    request.outcomes.resize(r.get<std::uint64_t>());
    for (GroupOutcome& o : request.outcomes) {
      o.rows.resize(r.get<std::uint64_t>());
      for (SweepRow& row : o.rows) {
        row_fields(row, r);
        PIPESIM_ASSERT(row.index < grid.size());
        row.point = grid_point(grid, row.index);
      }
      o.skips.resize(r.get<std::uint64_t>());
      for (auto& [index, reason] : o.skips) {
        index = r.get<std::uint64_t>();
        r(reason);
        PIPESIM_ASSERT(index < grid.size() && static_cast<int>(reason) < kNumSkipReasons);
      }
      for (auto& e : o.examples)
        if (r.get<bool>()) {
          e.emplace();
          e->index = r.get<std::uint64_t>();
          r(e->message);
        }
    }
  }
  PIPESIM_ASSERT(r.at_end());
  return request;
}

}  // namespace pipesim
