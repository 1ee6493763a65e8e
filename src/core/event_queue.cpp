#include "core/event_queue.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bitline {

void EventQueue::at(Time t, Action a) {
  if (t < now_)
    throw std::logic_error(fmt::format("event scheduled in the past ({} < now {})", format(t), format(now_)));
  q_.push(Event{t, seq_++, std::move(a)});
}

uint64_t EventQueue::run() { return run_until(Time(INT64_MAX)); }

uint64_t EventQueue::run_until(Time until) {
  uint64_t n = 0;
  while (!q_.empty() && q_.top().t <= until) {
    Event e = std::move(const_cast<Event&>(q_.top()));
    q_.pop();
    now_ = e.t;
    e.a();
    ++n;
    ++executed_;
  }
  return n;
}

}  // namespace bitline
