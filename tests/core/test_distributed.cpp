// core::Distributed in one process (no mpirun): the same code path the MPI ranks take, so its
// ordering and error rules are the ones a multi-rank run has (tests/mpi checks those end to end).
#include "core/distributed.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "core/error.hpp"

namespace bitline {
namespace {

TEST(Distributed, OneProcessWithoutMpirun) {
  const Distributed& w = Distributed::world();
  EXPECT_EQ(w.rank(), 0);
  EXPECT_EQ(w.size(), 1);
  EXPECT_TRUE(w.root());
  EXPECT_EQ(&w, &Distributed::world());
}

TEST(Distributed, ResultsInIndexOrderForAnyThreadCount) {
  for (int threads : {1, 3}) {
    std::atomic<int> done_calls{0};
    const auto r = Distributed::world().map(
        17, [](size_t i) { return std::string(i % 4, 'x') + std::to_string(i); }, threads,
        [&](size_t, size_t total, size_t) {
          EXPECT_EQ(total, 17u);
          ++done_calls;
        });
    ASSERT_EQ(r.size(), 17u);
    for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i], std::string(i % 4, 'x') + std::to_string(i));
    EXPECT_EQ(done_calls, 17);
  }
}

TEST(Distributed, TheLowestFailingJobsErrorKeepsItsClass) {
  const auto job = [](size_t i) -> std::string {
    if (i == 9) throw std::runtime_error("nine");
    if (i == 5) throw ConfigError("five");
    if (i == 7) throw ModelError("seven");
    return "ok";
  };
  try {
    Distributed::world().map(12, job, 3);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "five");
  }
  EXPECT_THROW(Distributed::world().map(
                   12, [](size_t i) -> std::string { return i == 3 ? throw ModelError("m"), "" : ""; }, 2),
               ModelError);
  EXPECT_TRUE(Distributed::world()
                  .map(
                      0, [](size_t) { return std::string("never"); }, 2)
                  .empty());
}

}  // namespace
}  // namespace bitline
