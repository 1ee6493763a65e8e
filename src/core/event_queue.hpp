// The one discrete-event engine. Time is integer picoseconds; events at the
// same time run in the order they were scheduled (a sequence number breaks
// ties), so a run is reproducible bit for bit. No global clock: each engine is
// an object, and several can live in one process.
//
// `EventHeap<Payload>` is the engine: models with a hot event loop (the SSD
// device with its compute jobs, the HBF read simulation) keep a small typed
// payload (an event kind and an index) and dispatch it with a switch, which is
// several times faster than a heap of std::function. `EventQueue` is the same
// engine with callbacks as payload, for models where convenience wins.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace bitline {

/// A payload may sort its events into lanes: `int event_lane(const Payload&)`, found by argument-dependent look-up,
/// returning a lane in [0, kEventLanes). An event no earlier than the last one of its lane joins the end of that lane
/// (a FIFO: no sifting); any other goes to the heap. Every lane stays in (time, sequence) order, so the earliest of the
/// lanes' fronts and the heap's is the earliest event, and events run in exactly the heap's order. Models whose events
/// of a kind mostly come in time order (a die's sensing ends at now + the same time, a channel's transfers) then pop
/// most of them from a lane. Payloads without event_lane use the heap alone.
inline constexpr int kEventLanes = 32;
template <class P>
concept LanedPayload = requires(const P& p) {
  { event_lane(p) } -> std::convertible_to<int>;
};

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
  bool empty() const { return !has_front_ && heap_.empty() && lanes_used_ == 0; }
  size_t size() const {
    size_t n = heap_.size() + (has_front_ ? 1 : 0);
    for (const Lane& l : lanes_) n += l.size;
    return n;
  }
  /// Events popped so far.
  uint64_t executed() const { return executed_; }

  /// Schedules `p` at absolute time `t`; an event in the past is a model bug.
  void push(Time t, Payload p) {
    if (t < now_) throw std::logic_error("event scheduled in the past (" + format(t) + " < now " + format(now_) + ")");
    const uint64_t seq = seq_++;
    if constexpr (LanedPayload<Payload>) {
      const int k = event_lane(p);
      Lane& l = lanes_[size_t(k)];
      if (l.size == 0 || !(t < l.back().t)) {
        if (l.size == 0) front_key_[size_t(k)] = key(t, seq);
        l.push_back(Event{t, seq, std::move(p)});
        lanes_used_ |= uint32_t(1) << k;
        return;
      }
    }
    // The front slot holds an event that runs before everything in the heap (it enters only sooner than the
    // heap's earliest, and whatever comes later goes to the heap): in a model's typical chain (an event schedules
    // a sooner one) that event neither climbs the heap nor sinks out of it. (A sorted buffer of four such events
    // ran more instructions on the SSD scenarios than this one slot.)
    // The event's fields travel separately into heap_push, not as one Event built here: a record stored field by
    // field and at once copied whole stalls the copy (its wide loads cannot forward from the narrow stores), which
    // cost a tenth of the SSD engine's time.
    if (!has_front_) {
      if (heap_.empty() || earlier(t, seq, heap_.front())) {
        front_ = Event{t, seq, std::move(p)};
        has_front_ = true;
      } else {
        heap_push(t, seq, std::move(p));
      }
    } else if (earlier(t, seq, front_)) {
      heap_push(front_.t, front_.seq, std::move(front_.payload));
      front_ = Event{t, seq, std::move(p)};
    } else {
      heap_push(t, seq, std::move(p));
    }
  }
  /// Time of the next event (the queue must not be empty).
  Time next_time() const {
    if constexpr (LanedPayload<Payload>) {
      if (const int k = earliest_lane(); k >= 0) return lanes_[size_t(k)].front().t;
    }
    return has_front_ ? front_.t : heap_.front().t;
  }
  /// Removes and returns the earliest event, and advances now() to its time.
  Event pop() {
    Event top;
    if constexpr (LanedPayload<Payload>) {
      if (const int k = earliest_lane(); k >= 0) {
        Lane& l = lanes_[size_t(k)];
        top = l.pop_front();
        if (l.size == 0)
          lanes_used_ &= ~(uint32_t(1) << k);
        else
          front_key_[size_t(k)] = key(l.front().t, l.front().seq);
        now_ = top.t;
        ++executed_;
        return top;
      }
    }
    if (has_front_) {  // the earliest of all
      top = std::move(front_);
      has_front_ = false;
    } else {
      top = heap_pop();
    }
    now_ = top.t;
    ++executed_;
    return top;
  }

 private:
  void heap_push(Time t, uint64_t seq, Payload p) {
    // sift a hole up from the end (a binary min-heap on (time, sequence))
    size_t i = heap_.size();
    heap_.emplace_back();
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!earlier(t, seq, heap_[parent])) break;
      heap_[i] = std::move(heap_[parent]);
      i = parent;
    }
    heap_[i] = Event{t, seq, std::move(p)};
  }

  Event heap_pop() {
    Event top = std::move(heap_.front());
    size_t n = heap_.size() - 1;
    if (n > 0) {
      // the last event refills the root's hole: the hole goes down to a leaf along the earlier children,
      // then the last event comes up from there (it usually belongs near the bottom)
      Event last = std::move(heap_[n]);
      size_t i = 0;
      for (size_t c = 1; c < n; c = 2 * i + 1) {
        if (c + 1 < n && earlier(heap_[c + 1], heap_[c])) ++c;
        heap_[i] = std::move(heap_[c]);
        i = c;
      }
      while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(last, heap_[parent])) break;
        heap_[i] = std::move(heap_[parent]);
        i = parent;
      }
      heap_[i] = std::move(last);
    }
    heap_.pop_back();
    return top;
  }

  /// Whether x runs before y: earlier time, then earlier scheduling. Times are never negative (nothing is
  /// scheduled before now(), which starts at zero), so (time, sequence) compares as one 128-bit number.
  using Key = unsigned __int128;
  static Key key(Time t, uint64_t seq) { return (Key(uint64_t(t.raw())) << 64) | seq; }
  static bool earlier(Time t, uint64_t seq, const Event& y) { return key(t, seq) < key(y.t, y.seq); }
  static bool earlier(const Event& x, const Event& y) { return earlier(x.t, x.seq, y); }

  /// A lane: a FIFO of events in (time, sequence) order, in a ring of a power-of-two capacity that doubles when full.
  struct Lane {
    std::vector<Event> ring;
    size_t head = 0, size = 0;
    const Event& front() const { return ring[head]; }
    const Event& back() const { return ring[(head + size - 1) & (ring.size() - 1)]; }
    void push_back(Event e) {
      if (size == ring.size()) {
        std::vector<Event> grown(std::max<size_t>(8, 2 * ring.size()));
        for (size_t i = 0; i < size; ++i) grown[i] = std::move(ring[(head + i) & (ring.size() - 1)]);
        ring.swap(grown);
        head = 0;
      }
      ring[(head + size) & (ring.size() - 1)] = std::move(e);
      ++size;
    }
    Event pop_front() {
      Event e = std::move(ring[head]);
      head = (head + 1) & (ring.size() - 1);
      --size;
      return e;
    }
  };
  /// The lane whose front runs before every other lane's front and the heap's earliest; -1 when the heap's runs first.
  /// (The lanes' front keys are kept side by side, so that the scan reads one or two cache lines, not every lane's
  /// ring.)
  int earliest_lane() const {
    int best = -1;
    Key b = has_front_ ? key(front_.t, front_.seq) : heap_.empty() ? ~Key(0) : key(heap_.front().t, heap_.front().seq);
    for (uint32_t m = lanes_used_; m != 0; m &= m - 1) {
      const int k = std::countr_zero(m);
      if (front_key_[size_t(k)] < b) b = front_key_[size_t(k)], best = k;
    }
    return best;
  }
  std::array<Key, LanedPayload<Payload> ? kEventLanes : 0> front_key_{};  // lane k's front's key while it holds events
  std::array<Lane, LanedPayload<Payload> ? kEventLanes : 0> lanes_{};
  uint32_t lanes_used_ = 0;  // bit k: lane k holds events
  std::vector<Event> heap_;
  Event front_{};
  bool has_front_ = false;
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
