// cosmos eval on the one worker pool: the results do not depend on the thread count.
#include "cosmos_test_util.hpp"

namespace bitline::cosmos::test {
namespace {

TEST(EvalThreads, SameResultsBitForBitWithOneOrThreeThreads) {
  EvalConfig c = paper_config();
  c.workload.users = 8'000'000;
  c.workload.vertices = 1 << 20;
  c.workload.cliques = 16;
  const EvalMatrix m = matrix_of({{"bmi", "months", 1}, {"bmi", "months", 3}, {"ims", "images", 100}, {"kcs", "k", 8}, {"kcs", "k", 16}});
  const auto one = run_eval(c, m, nullptr, 1);
  size_t progress_calls = 0;
  const auto three = run_eval(
      c, m, [&](size_t, size_t, const std::string&) { ++progress_calls; }, 3);
  ASSERT_EQ(one.size(), m.points.size() * std::size(kAllSystems));
  EXPECT_EQ(progress_calls, one.size());
  EXPECT_EQ(eval_json(one, m, Json::object()).dump(), eval_json(three, m, Json::object()).dump());
  // The points come in (point, system) order whatever finished first.
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i].system, kAllSystems[i % std::size(kAllSystems)]);
}

}  // namespace
}  // namespace bitline::cosmos::test
