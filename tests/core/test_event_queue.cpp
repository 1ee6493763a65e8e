// The discrete-event engine: integer-picosecond time, stable order for equal times.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/event_queue.hpp"

using namespace bitline;

TEST(EventQueue, RunsInTimeOrder) {
  EventQueue q;
  std::vector<int64_t> seen;
  for (int64_t t : {50, 10, 40, 20, 30, 0})
    q.at(ps(double(t)), [&, t] {
      seen.push_back(t);
      EXPECT_EQ(q.now().raw(), t);
    });
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.run(), 6u);
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 10, 20, 30, 40, 50}));
  EXPECT_EQ(q.now(), ps(50));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.executed(), 6u);
  EXPECT_EQ(q.run(), 0u);  // nothing left
}

TEST(EventQueue, TimesOnePicosecondApartAreOrdered) {
  // Integer time: 1 ps apart is never "equal" (a double clock at 1 s would lose this).
  EventQueue q;
  std::vector<int> seen;
  q.at(sec(1) + ps(1), [&] { seen.push_back(2); });
  q.at(sec(1), [&] { seen.push_back(1); });
  q.run();
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  EXPECT_EQ(q.now().raw(), 1'000'000'000'001);
}

TEST(EventQueue, EqualTimesRunInSchedulingOrder) {
  EventQueue q;
  std::vector<int> seen;
  // Many events at the same time, interleaved with others: a heap without a
  // tie-breaker would not keep this order.
  for (int i = 0; i < 200; ++i) {
    q.at(us(5), [&, i] { seen.push_back(i); });
    q.at(us(1 + (i % 3) * 5), [] {});  // 1, 6 or 11 us
  }
  q.run();
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[size_t(i)], i);
}

TEST(EventQueue, SchedulingFromWithinEvents) {
  EventQueue q;
  std::vector<std::string> seen;
  q.at(us(1), [&] {
    seen.emplace_back("a@1");
    q.after(us(2), [&] { seen.emplace_back("c@3"); });
    q.after(Time{}, [&] { seen.emplace_back("b@1 (same time, after the ones already queued)"); });
  });
  q.at(us(1), [&] { seen.emplace_back("a2@1"); });
  q.at(us(3), [&] { seen.emplace_back("d@3 (queued first)"); });
  EXPECT_EQ(q.run(), 5u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a@1", "a2@1", "b@1 (same time, after the ones already queued)", "d@3 (queued first)", "c@3"}));
  EXPECT_EQ(q.now(), us(3));
}

TEST(EventQueue, ChainOfEventsAdvancesTime) {
  EventQueue q;
  int count = 0;
  std::function<void()> step = [&] {
    if (++count < 1000) q.after(ns(22.5), step);
  };
  q.at(Time{}, step);
  q.run();
  EXPECT_EQ(count, 1000);
  EXPECT_EQ(q.now().raw(), 999 * 22'500);
}

TEST(EventQueue, RunUntilStopsAtTheLimitInclusive) {
  EventQueue q;
  std::vector<int> seen;
  q.at(us(1), [&] { seen.push_back(1); });
  q.at(us(2), [&] { seen.push_back(2); });
  q.at(us(3), [&] { seen.push_back(3); });
  EXPECT_EQ(q.run_until(us(2)), 2u);  // events at exactly `until` run
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  EXPECT_FALSE(q.empty());
  EXPECT_LE(q.now(), us(2));
  EXPECT_EQ(q.run_until(us(2)), 0u);
  EXPECT_EQ(q.run_until(ns(2999)), 0u);
  EXPECT_EQ(q.run(), 1u);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.executed(), 3u);
}

TEST(EventQueue, RunUntilSeesEventsScheduledDuringTheRun) {
  EventQueue q;
  std::vector<int> seen;
  q.at(us(1), [&] {
    seen.push_back(1);
    q.at(us(2), [&] { seen.push_back(2); });    // inside the window: runs
    q.at(us(10), [&] { seen.push_back(10); });  // outside: waits
  });
  EXPECT_EQ(q.run_until(us(5)), 2u);
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  EXPECT_EQ(q.run(), 1u);
  EXPECT_EQ(seen.back(), 10);
}

TEST(EventQueue, SchedulingInThePastIsAnError) {
  EventQueue q;
  q.at(us(5), [] {});
  q.run();
  ASSERT_EQ(q.now(), us(5));
  EXPECT_THROW(q.at(us(4), [] {}), std::logic_error);
  EXPECT_THROW(q.after(ps(-1), [] {}), std::logic_error);
  try {
    q.at(ns(4999), [] {});
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("in the past"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(q.empty());  // the rejected events were not queued
  q.at(us(5), [] {});      // now itself is fine
  EXPECT_EQ(q.run(), 1u);
  // Also from within an event.
  EventQueue r;
  bool threw = false;
  r.at(us(2), [&] {
    try {
      r.at(us(1), [] {});
    } catch (const std::logic_error&) {
      threw = true;
    }
  });
  r.run();
  EXPECT_TRUE(threw);
}

TEST(EventQueue, IndependentEngines) {
  EventQueue a, b;
  a.at(us(7), [] {});
  b.at(us(3), [] {});
  a.run();
  EXPECT_EQ(a.now(), us(7));
  EXPECT_EQ(b.now(), Time{});
  b.run();
  EXPECT_EQ(b.now(), us(3));
}

// The typed engine that the SSD pipeline and the HBF timing use: same order rules.
TEST(EventHeap, TypedPayloadsPopInTimeThenSchedulingOrder) {
  struct Ev {
    int kind;
    uint32_t id;
  };
  EventHeap<Ev> h;
  h.push(us(3), Ev{0, 1});
  h.push(us(1), Ev{1, 2});
  h.push(us(3), Ev{2, 3});
  h.push(us(1), Ev{3, 4});
  EXPECT_EQ(h.size(), 4u);
  EXPECT_EQ(h.next_time(), us(1));
  std::vector<uint32_t> order;
  while (!h.empty()) {
    const auto e = h.pop();
    EXPECT_EQ(h.now(), e.t);
    order.push_back(e.payload.id);
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 4, 1, 3}));
  EXPECT_EQ(h.executed(), 4u);
  EXPECT_THROW(h.push(us(2), Ev{0, 9}), std::logic_error);  // before now() = 3 us
}

// The front slot (an event sooner than the whole heap waits beside it) must not change the order: pushes and
// pops interleaved as a model does them (sooner events scheduled from inside events, equal times, later ones)
// come out in exactly the (time, scheduling) order of a plain sort, and size/next_time count the slot.
TEST(EventHeap, InterleavedPushesAndPopsKeepTheExactOrder) {
  EventHeap<uint32_t> h;
  std::vector<std::pair<int64_t, uint32_t>> pending;  // (time, id) of every event not yet popped, in push order
  std::vector<uint32_t> got, want;
  uint64_t x = 12345;
  auto rnd = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, uint32_t(x >> 33); };
  uint32_t next_id = 0;
  auto push = [&](int64_t t) {
    h.push(Time(t), next_id);
    pending.push_back({t, next_id++});
  };
  for (int i = 0; i < 8; ++i) push(int64_t(rnd() % 1000));
  while (!h.empty() && next_id < 20000) {
    ASSERT_EQ(h.size(), pending.size());
    // the reference: the earliest time, then the earliest pushed
    auto best = pending.begin();
    for (auto it = pending.begin(); it != pending.end(); ++it)
      if (it->first < best->first) best = it;
    ASSERT_EQ(h.next_time(), Time(best->first));
    const auto e = h.pop();
    got.push_back(e.payload);
    want.push_back(best->second);
    pending.erase(best);
    const int64_t now = h.now().raw();
    switch (h.size() < 8 ? 1 + rnd() % 3 : rnd() % 4) {  // what the event schedules: nothing, a sooner chain, the same instant, or far away
      case 0:
        break;
      case 1:
        push(now + int64_t(rnd() % 5));
        push(now + int64_t(rnd() % 3));
        break;
      case 2:
        push(now);
        break;
      default:
        push(now + 500 + int64_t(rnd() % 1000));
        break;
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(got.size(), 5000u);
}

namespace laned {
// A payload with lanes (event_lane, found by argument-dependent look-up) and the same events in one without.
struct Tagged {
  int lane = 0;
  int id = 0;
};
inline int event_lane(const Tagged& p) { return p.lane; }
struct Plain {
  int lane = 0;
  int id = 0;
};
}  // namespace laned
static_assert(LanedPayload<laned::Tagged>);
static_assert(!LanedPayload<laned::Plain>);

// Lanes change where an event waits, never when it runs: the same pushes, mostly in time order per lane (as the SSD's
// events of a kind come) with some earlier ones (which must go to the heap) and many equal times, pop in the order of
// the heap alone, while events are pushed from within the run.
TEST(EventHeap, LanesPopInExactlyTheHeapsOrder) {
  EventHeap<laned::Tagged> lanes;
  EventHeap<laned::Plain> heap;
  uint64_t x = 88172645463325252ull;
  auto rnd = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  int next_id = 0;
  auto push_both = [&](int64_t t, int lane) {
    lanes.push(Time(t), {lane, next_id});
    heap.push(Time(t), {lane, next_id});
    ++next_id;
  };
  for (int i = 0; i < 40; ++i) push_both(int64_t(rnd() % 100), int(rnd() % 5));
  std::vector<int> got, want;
  while (!heap.empty()) {
    ASSERT_FALSE(lanes.empty());
    ASSERT_EQ(lanes.size(), heap.size());
    ASSERT_EQ(lanes.next_time(), heap.next_time());
    const auto a = lanes.pop();
    const auto b = heap.pop();
    got.push_back(a.payload.id);
    want.push_back(b.payload.id);
    ASSERT_EQ(a.t, b.t);
    ASSERT_EQ(lanes.now(), heap.now());
    if (next_id < 20000) {
      const int64_t now = a.t.raw();
      const int lane = int(rnd() % 5);
      switch (rnd() % 5) {
        case 0:  // an event earlier than its lane's last: the heap's
          push_both(now + int64_t(rnd() % 3), lane);
          break;
        case 1:  // equal times
          push_both(now, lane);
          push_both(now, lane);
          break;
        default:  // in time order for its lane, mostly
          push_both(now + 50 + int64_t(rnd() % 20), lane);
          push_both(now + 60 + int64_t(rnd() % 40), int(rnd() % 5));
          break;
      }
    }
  }
  EXPECT_TRUE(lanes.empty());
  EXPECT_EQ(got, want);
  EXPECT_GT(got.size(), 20000u);
  EXPECT_EQ(lanes.executed(), heap.executed());
}
