// A deterministic discrete-event engine. Time is integer picoseconds; events at
// the same time run in the order they were scheduled (a sequence number breaks
// ties), so a run is reproducible bit for bit. No global clock: each engine is
// an object, and several can live in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/units.hpp"

namespace bitline {

class EventQueue {
 public:
  using Action = std::function<void()>;

  Time now() const { return now_; }
  /// Schedules `a` at absolute time `t` (>= now()).
  void at(Time t, Action a);
  /// Schedules `a` after a delay.
  void after(Time delay, Action a) { at(now_ + delay, std::move(a)); }
  /// Runs events until none is left (or until `until`, if given). Returns the number run.
  uint64_t run();
  uint64_t run_until(Time until);
  bool empty() const { return q_.empty(); }
  uint64_t executed() const { return executed_; }

 private:
  struct Event {
    Time t;
    uint64_t seq;
    Action a;
  };
  struct Later {
    bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, Later> q_;
  Time now_{};
  uint64_t seq_ = 0;
  uint64_t executed_ = 0;
};

}  // namespace bitline
