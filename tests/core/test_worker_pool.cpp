// The one worker pool: every job runs once, results by index, errors deterministic.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/worker_pool.hpp"

using namespace bitline;

TEST(WorkerPool, EveryJobRunsExactlyOnceForAnyThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> runs(100);
    WorkerPool(threads).run(runs.size(), [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i << " with " << threads << " threads";
  }
}

TEST(WorkerPool, MapKeepsIndexOrder) {
  const auto squares = WorkerPool(3).map<long>(50, [](size_t i) { return long(i * i); });
  ASSERT_EQ(squares.size(), 50u);
  for (size_t i = 0; i < squares.size(); ++i) EXPECT_EQ(squares[i], long(i * i));
}

TEST(WorkerPool, ProgressIsCountedOncePerJobInOrderOfCompletion) {
  std::vector<size_t> done_counts;
  WorkerPool(3).run(
      20, [](size_t) {},
      [&](size_t done, size_t total, size_t) {
        EXPECT_EQ(total, 20u);
        done_counts.push_back(done);  // serialised by the pool: no lock needed here
      });
  ASSERT_EQ(done_counts.size(), 20u);
  for (size_t i = 0; i < done_counts.size(); ++i) EXPECT_EQ(done_counts[i], i + 1);
}

TEST(WorkerPool, RethrowsTheErrorOfTheLowestIndexAfterAllJobsRan) {
  for (int threads : {1, 4}) {
    std::atomic<int> ran{0};
    try {
      WorkerPool(threads).run(30, [&](size_t i) {
        ++ran;
        if (i == 7 || i == 21) throw std::runtime_error("job " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "job 7");
    }
    EXPECT_EQ(ran.load(), 30);
  }
}

// A progress callback that throws (the Python module's, when the caller's raised) stops the pool: no job starts after
// it, and its exception is the one rethrown, from the calling thread, whichever worker reported.
TEST(WorkerPool, AThrowingProgressCallbackStopsThePoolAndIsRethrown) {
  struct Stop : std::exception {};
  for (int threads : {1, 4}) {
    std::atomic<int> ran{0};
    int reports = 0;
    EXPECT_THROW(WorkerPool(threads).run(
                     100, [&](size_t) { ++ran; },
                     [&](size_t, size_t, size_t) {
                       if (++reports == 3) throw Stop{};
                     }),
                 Stop);
    EXPECT_LE(ran.load(), 3 + threads - 1) << threads << " threads";  // those running when it threw finish
    EXPECT_EQ(reports, ran.load());
  }
}

TEST(WorkerPool, NoJobsAndNonPositiveThreadCounts) {
  int calls = 0;
  WorkerPool(0).run(0, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(WorkerPool(-3).threads(), 1);
  EXPECT_GE(WorkerPool::hardware_threads(), 1);
}
