// The one discrete-event engine. Time is integer picoseconds; events at the
// same time run in the order they were scheduled (a sequence number breaks
// ties), so a run is reproducible bit for bit. No global clock: each engine is
// an object, and several can live in one process.
//
// `EventHeap<Payload>` is the engine: models with a hot event loop (the SSD
// pipeline, the HBF read simulation, sequential writes) keep a small typed
// payload (an event kind and an index) and dispatch it with a switch, which is
// several times faster than a heap of std::function. `EventQueue` is the same
// engine with callbacks as payload, for models where convenience wins.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace bitline {

template <class Payload>
class EventHeap {
 public:
  struct Event {
    Time t;
    uint64_t seq;
    Payload payload;
  };

  /// The time of the event popped last (zero before the first).
  Time now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// Events popped so far.
  uint64_t executed() const { return executed_; }

  /// Schedules `p` at absolute time `t`; an event in the past is a model bug.
  void push(Time t, Payload p) {
    if (t < now_) throw std::logic_error("event scheduled in the past (" + format(t) + " < now " + format(now_) + ")");
    heap_.push_back(Event{t, seq_++, std::move(p)});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  /// Time of the next event (the heap must not be empty).
  Time next_time() const { return heap_.front().t; }
  /// Removes and returns the earliest event, and advances now() to its time.
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = std::move(heap_.back());
    heap_.pop_back();
    now_ = e.t;
    ++executed_;
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  };
  std::vector<Event> heap_;
  Time now_{};
  uint64_t seq_ = 0;
  uint64_t executed_ = 0;
};

/// The engine with callbacks: at(t, action) / after(delay, action), then run().
class EventQueue {
 public:
  using Action = std::function<void()>;

  Time now() const { return heap_.now(); }
  /// Schedules `a` at absolute time `t` (>= now()).
  void at(Time t, Action a) { heap_.push(t, std::move(a)); }
  /// Schedules `a` after a delay.
  void after(Time delay, Action a) { at(now() + delay, std::move(a)); }
  /// Runs events until none is left (or until `until`, if given). Returns the number run.
  uint64_t run() { return run_until(Time(INT64_MAX)); }
  uint64_t run_until(Time until) {
    uint64_t n = 0;
    while (!heap_.empty() && heap_.next_time() <= until) {
      heap_.pop().payload();
      ++n;
    }
    return n;
  }
  bool empty() const { return heap_.empty(); }
  uint64_t executed() const { return heap_.executed(); }

 private:
  EventHeap<Action> heap_;
};

}  // namespace bitline
