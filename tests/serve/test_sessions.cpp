// Multi-turn KV reuse on the serving simulation (serve/sessions.hpp, `accel sessions`): what a hit is measured
// against (reusable_prefix_tokens, by hand), that more KV memory keeps more of the sessions, that the hit rate falls
// as the offered load rises, the same bytes on any thread count, and the work budget.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../llm/llm_test_util.hpp"
#include "core/error.hpp"
#include "core/params.hpp"
#include "serve/scheduler.hpp"
#include "serve/sessions.hpp"

using namespace bitline;
using namespace bitline::serve;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

SessionSystem system_of(const std::string& name) {
  const std::string kind = llm::parse_system(name).kind;
  ConfigTree t;
  t.set_preset_dir(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs");
  t.load_preset(kind);
  return {name, llm::load_kind_params(t, kind), load_params<ServeParams>(t, "serve")};
}

/// The synthetic agentic trace of `sessions` sessions at `decoding` requests decoding at once (the experiment's loads).
llm::SessionLoad load(int64_t decoding, int64_t sessions) {
  llm::SessionParams p = default_params<llm::SessionParams>();
  p.decoding = decoding;
  p.sessions = sessions;
  return {std::to_string(decoding) + " decoding", p, llm::synthetic_trace(p)};
}

double hit(const Json& loads, size_t l, const std::string& sys) { return loads[l]["systems"][sys]["hit_rate"].get<double>(); }

}  // namespace

TEST(ServeSessions, ReusableTokensAreTheLeadingUnitsAnEarlierRequestComputed) {
  // Units of 10 tokens. r0 [a b c] 25 in + 6 out: computes 30 tokens = units a b c. r1 [a b d] 30 in: a b were
  // computed (c's key differs from d): 20 reusable (at most 2 units: its last prompt token is always computed).
  // r2 [e f] 20 in, 1 out: nothing. r3 [a b c] 31 in: a b c (3 units, at most (31 - 1) / 10 = 3): 30. r4 [e f g] 21 in:
  // e f computed by r2? r2 computed 20 tokens = units e f: 20. r5 [a] 10 in: at most (10 - 1) / 10 = 0 units: 0.
  const auto req = [](int64_t in, int64_t out, std::vector<uint64_t> keys) {
    Request r;
    r.input = in, r.output = out, r.prefix = std::move(keys), r.prefix_unit = 10;
    return r;
  };
  const std::vector<Request> reqs = {req(25, 6, {1, 2, 3}), req(30, 1, {1, 2, 4}), req(20, 1, {5, 6}),
                                     req(31, 1, {1, 2, 3}), req(21, 1, {5, 6, 7}), req(10, 1, {1})};
  EXPECT_EQ(reusable_prefix_tokens(reqs), (std::vector<int64_t>{0, 20, 0, 30, 20, 0}));
}

TEST(ServeSessions, MoreKvMemoryKeepsMoreOfTheSessions) {
  const llm::ModelConfig m = shipped("qwen3-235b");
  std::vector<SessionSystem> systems;
  for (const char* s : {"h200x8", "h200x16", "csix8"}) systems.push_back(system_of(s));
  // 128 requests decoding at once: 8 x H200 (547 GB of KV memory) cannot keep every session's KV between turns.
  const Json r = run_session_loads(m, systems, {load(128, 640)}, 2);
  const Json& s = r[0]["systems"];
  for (const char* sys : {"h200x8", "h200x16", "csix8"}) {
    ASSERT_TRUE(s.contains(sys)) << sys;
    EXPECT_GE(s[sys]["hit_rate"].get<double>(), 0.0);
    EXPECT_LE(s[sys]["hit_rate"].get<double>(), 1.0);
    EXPECT_EQ(s[sys]["turns"].get<int64_t>(), r[0]["trace"]["turns"].get<int64_t>());
    // Every prompt token is served from the cache or prefilled.
    EXPECT_DOUBLE_EQ(s[sys]["reused_tokens"].get<double>() + s[sys]["recomputed_tokens"].get<double>(),
                     s[sys]["prompt_tokens"].get<double>());
    EXPECT_GT(s[sys]["serve"]["ttft_ms"]["mean"].get<double>(), 0.0);
  }
  EXPECT_LT(s["h200x8"]["retention_bytes"].get<double>(), s["h200x16"]["retention_bytes"].get<double>());
  EXPECT_LT(s["h200x16"]["retention_bytes"].get<double>(), s["csix8"]["retention_bytes"].get<double>());
  EXPECT_LT(s["h200x8"]["hit_rate"].get<double>(), 0.9);
  EXPECT_GT(s["h200x16"]["hit_rate"].get<double>(), s["h200x8"]["hit_rate"].get<double>());
  EXPECT_GE(s["csix8"]["hit_rate"].get<double>(), s["h200x16"]["hit_rate"].get<double>());
  EXPECT_GT(s["csix8"]["hit_rate"].get<double>(), 0.99);
  EXPECT_LT(s["csix8"]["recomputed_tokens"].get<double>(), s["h200x8"]["recomputed_tokens"].get<double>());
}

TEST(ServeSessions, TheHitRateFallsAsTheOfferedLoadRisesAndIsTheSameOnAnyThreadCount) {
  // The mechanism: the cache keeps a session's KV until other sessions' turns (and the requests running) have taken
  // its blocks; more sessions waiting for a next turn push it out sooner. On 8 x H200, from ~1 (everything fits) down.
  const llm::ModelConfig m = shipped("qwen3-235b");
  const std::vector<SessionSystem> systems = {system_of("h200x8")};
  const std::vector<llm::SessionLoad> loads = {load(32, 160), load(128, 640), load(512, 2560)};
  const Json r = run_session_loads(m, systems, loads, 2);
  EXPECT_GT(hit(r, 0, "h200x8"), 0.99);
  EXPECT_LT(hit(r, 1, "h200x8"), hit(r, 0, "h200x8"));
  EXPECT_LT(hit(r, 2, "h200x8"), hit(r, 1, "h200x8"));
  EXPECT_LT(hit(r, 2, "h200x8"), 0.2);
  EXPECT_EQ(r.dump(), run_session_loads(m, systems, loads, 1).dump());
}

TEST(ServeSessions, AnExperimentOverItsWorkBudgetIsRefusedBeforeItRuns) {
  const llm::ModelConfig m = shipped("qwen3-235b");
  // 40,000 sessions of ~4 turns of ~6,000 output tokens: ~1e9 output tokens per system, x 8 systems.
  std::vector<SessionSystem> systems(8, system_of("h200x8"));
  for (size_t i = 0; i < systems.size(); ++i) systems[i].name = "h200x8";
  try {
    run_session_loads(m, systems, {load(128, 40000)}, 1);
    FAIL() << "not refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("output tokens to simulate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than the 4e+09"), std::string::npos) << e.what();
  }
}

TEST(ServeSessions, TheWaitingQueueIsInArrivalOrderNotRequestNumber) {
  // A session's later turn is numbered by its trace time but arrives when its previous turn is answered: request 1
  // (arrived at 5 s) waits behind request 3 (arrived at 2 s); equal times keep request number order.
  std::vector<Seq> seqs(5);
  const double at[] = {1, 5, 2, 2, 7};
  for (size_t i = 0; i < seqs.size(); ++i) seqs[i].arrived = sec(at[i]);
  EngineState st(seqs, BlockManager(100, 16, 0.0));
  for (int32_t i : {4, 1, 3, 0, 2}) enqueue_waiting(st, i);
  EXPECT_EQ(std::vector<int32_t>(st.waiting.begin(), st.waiting.end()), (std::vector<int32_t>{0, 2, 3, 1, 4}));
}
