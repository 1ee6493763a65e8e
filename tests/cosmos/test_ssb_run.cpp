// The SSB evaluation end to end (cosmos/ssb/run): all 13 queries at a tiny scale factor answered through the chip
// model on every system and by CRoaring, equal to the reference engine's; both aggregation strategies; results
// independent of threads; timing-only runs; the reliability experiment with and without ESP.
#include "cosmos/ssb/run.hpp"
#include "cosmos_test_util.hpp"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace bitline::cosmos::ssb {
namespace {

std::vector<QuerySpec> shipped() { return load_query_dir(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb"); }

SsbOptions tiny(double sf = 0.002) {
  SsbOptions o;
  o.config = test::small_config(false);
  o.sf = sf;
  o.engines = {HostEngine::Roaring};
  o.host_repeat = 1;
  return o;
}

/// The JSON without what is measured on this machine (systems.roaring / systems.row and `measured`).
Json deterministic_part(Json j) {
  j.erase("measured");
  for (auto& q : j["queries"])
    for (const char* e : {"roaring", "row"}) q["systems"].erase(e);
  return j;
}

TEST(SsbRun, EveryQueryOnEverySystemEqualsTheReference) {
  SsbOptions o = tiny(0.01);
  o.functional_systems = {System::Osp, System::Isp, System::ParaBit, System::Fc};
  const std::vector<QuerySpec> qs = shipped();
  ASSERT_EQ(qs.size(), 13u);
  const Json j = run_ssb(qs, o, {});
  ASSERT_EQ(j["queries"].size(), 13u);
  int with_rows = 0;
  for (const auto& q : j["queries"]) {
    SCOPED_TRACE(q["name"].get<std::string>());
    EXPECT_TRUE(q["matches_reference"].get<bool>());
    for (const char* s : {"osp", "isp", "parabit", "fc", "roaring"}) {
      ASSERT_TRUE(q["systems"].contains(s)) << s;
      EXPECT_TRUE(q["systems"][s]["matches_reference"].get<bool>()) << s;
      EXPECT_GT(q["systems"][s]["time_s"].get<double>(), 0) << s;
      EXPECT_GT(q["systems"][s]["energy_j"].get<double>(), 0) << s;
    }
    EXPECT_GT(q["flash_ops"].get<int64_t>(), 0);
    with_rows += q["rows_selected"].get<int64_t>() > 0;
  }
  EXPECT_GE(with_rows, 10);  // the answers are not all empty (SF 0.01: 20 suppliers, so a few flights select nothing)
  EXPECT_EQ(j["summary"]["matches_reference"], "13/13");
  EXPECT_EQ(j["tables"]["lineorder"].get<int64_t>(), int64_t(lineorder_rows(cardinalities(0.01), 1)));
}

TEST(SsbRun, FlashAggregationGivesTheSameAnswers) {
  SsbOptions o = tiny(0.005);
  o.systems = {System::Fc};
  o.aggregation = Aggregation::Flash;
  std::vector<QuerySpec> qs;
  for (auto& q : shipped())
    if (q.name == "Q1.1" || q.name == "Q2.3" || q.name == "Q3.4" || q.name == "Q4.1") qs.push_back(q);
  const Json j = run_ssb(qs, o, {});
  for (const auto& q : j["queries"]) {
    SCOPED_TRACE(q["name"].get<std::string>());
    EXPECT_EQ(q["strategy"], "flash");
    EXPECT_TRUE(q["matches_reference"].get<bool>());
  }
  // Q4.1 groups by year and customer nation: 7 x 5 groups, each a count and 24 + 17 slice sums.
  EXPECT_EQ(j["queries"][3]["reads"].get<int64_t>(), 35 * (1 + 24 + 17));
}

TEST(SsbRun, ResultsDoNotDependOnThreadsAndOnlyMeasuredPartsVary) {
  SsbOptions o = tiny();
  o.threads = 1;
  const Json a = run_ssb(shipped(), o, {});
  o.threads = 2;
  const Json b = run_ssb(shipped(), o, {});
  EXPECT_EQ(deterministic_part(a).dump(), deterministic_part(b).dump());
  EXPECT_TRUE(a["queries"][0]["systems"]["roaring"]["measured"].get<bool>());
  EXPECT_TRUE(a.contains("measured"));
}

TEST(SsbRun, TimingOnlyRunsNeedNoRows) {
  SsbOptions o = tiny(3);  // above the largest generated SF
  o.functional = false;
  o.config = test::paper_config();
  const Json j = run_ssb(shipped(), o, {});
  for (const auto& q : j["queries"]) {
    EXPECT_TRUE(q["answer"].is_null());
    EXPECT_TRUE(q["matches_reference"].is_null());
    EXPECT_FALSE(q["systems"].contains("roaring"));
    EXPECT_GT(q["systems"]["fc"]["time_s"].get<double>(), 0);
  }
  EXPECT_FALSE(j.contains("measured"));
  // FC reads fewer operand pages than OSP for every query (its filter is computed in the dies).
  for (const auto& q : j["queries"])
    EXPECT_LT(q["systems"]["fc"]["bytes_over_pcie"].get<int64_t>(), q["systems"]["osp"]["bytes_over_pcie"].get<int64_t>());
}

TEST(SsbRun, WithoutEspAnswersAreWrongAtTheStressConditionAndWithEspExact) {
  SsbOptions o = tiny(0.001);
  o.config = test::small_config(true);  // the rber_table error model
  o.systems = {System::Fc};
  o.engines = {};
  o.reliability = true;
  const Json j = run_ssb(shipped(), o, {});
  const Json& r = j["reliability"];
  EXPECT_EQ(r["pe_cycles"].get<int64_t>(), 10000);
  EXPECT_EQ(r["esp"]["exact"].get<int64_t>(), 13);
  EXPECT_EQ(r["esp"]["wrong_result_bits"].get<int64_t>(), 0);
  EXPECT_LT(r["slc_no_esp"]["exact"].get<int64_t>(), 13);
  EXPECT_GT(r["slc_no_esp"]["wrong_filter_rows"].get<int64_t>(), 0);
  EXPECT_GT(r["slc_no_esp"]["rber_sensed"].get<double>(), 1e-4);
}

}  // namespace
}  // namespace bitline::cosmos::ssb

namespace bitline::cosmos::ssb {
namespace {

// Contradictory predicates select nothing: fc answers without reading flash, in no time, so there is no ratio to give
// (it was reported as a speedup of 0x with exit 0); the answer still equals the reference engine's.
TEST(SsbRun, AQueryFcAnswersWithoutFlashHasNoSpeedup) {
  const std::filesystem::path f = std::filesystem::temp_directory_path() / ("bitline-contra-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(f) << "query: contra\nwhere:\n  - d_year = 1993\n  - d_year = 1994\nsum: lo_extendedprice * lo_discount\nas: revenue\n";
  SsbOptions o = tiny(0.002);
  const Json j = run_ssb({load_query(f)}, o, {});
  std::filesystem::remove(f);
  EXPECT_EQ(j["summary"]["matches_reference"], "1/1");
  ASSERT_TRUE(j["summary"].contains("speedup"));
  for (const auto& [pair, v] : j["summary"]["speedup"].items()) {
    EXPECT_TRUE(v.is_null()) << pair << ": " << v;
    EXPECT_TRUE(j["summary"]["energy_efficiency"][pair].is_null()) << pair;
  }
}

}  // namespace
}  // namespace bitline::cosmos::ssb
