// Multi-turn sessions: the JSONL trace format, LRU retention checked by hand,
// the synthetic agentic generator, and the four systems of the experiment.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/config.hpp"
#include "llm/serving.hpp"
#include "llm/sessions.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_trace(text, "t.jsonl");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Bytes per_token(int64_t tokens) { return Bytes(tokens); }

}  // namespace

TEST(LlmSessions, TraceFormat) {
  const auto t = parse_trace(
      "{\"session\": \"a\", \"turn\": 1, \"input_tokens\": 100, \"output_tokens\": 20, \"timestamp\": 0}\n\n"
      "{\"session\": 7, \"turn\": 1, \"input_tokens\": 50, \"output_tokens\": 5, \"timestamp\": 1.5}\n",
      "t.jsonl");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].session, "7");
  EXPECT_DOUBLE_EQ(t[1].timestamp, 1.5);
  EXPECT_NE(error_of("{\"session\": \"a\"\n").find("t.jsonl:1: malformed JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"session\": \"a\", \"turn\": 1, \"output_tokens\": 2, \"timestamp\": 0}")
                .find("t.jsonl:1: field 'input_tokens': missing"),
            std::string::npos);
  EXPECT_NE(error_of("\n{\"session\": \"a\", \"turn\": 0, \"input_tokens\": 1, \"output_tokens\": 2, \"timestamp\": 0}")
                .find("t.jsonl:2: field 'turn': 0 is below the minimum 1"),
            std::string::npos);
  EXPECT_NE(
      error_of("{\"session\": [1], \"turn\": 1, \"input_tokens\": 1, \"output_tokens\": 2, \"timestamp\": 0}").find("field 'session'"),
      std::string::npos);
  EXPECT_NE(error_of("").find("no turns"), std::string::npos);
}

TEST(LlmSessions, LruRetentionByHand) {
  // Footprint = tokens (bytes); capacity 250.
  // t=0 a1: prompt 100, out 20 -> keep a (120).   t=1 b1: 50+10 -> keep b (60), 180 used.
  // t=2 c1: 80+20 -> 100 more: evict a (LRU)   -> b, c (160).
  // t=3 a2: prompt 130 (a's 120 reusable): a was evicted -> recompute 130; keep a (130+10): evict b -> c, a (240).
  // t=4 c2: prompt 110 (100 reusable): hit -> recompute 10; keep c (115): a (140) + 115 > 250 -> evict a.
  const std::vector<Turn> trace = {
      {"a", 1, 100, 20, 0}, {"b", 1, 50, 10, 1}, {"c", 1, 80, 20, 2}, {"a", 2, 130, 10, 3}, {"c", 2, 110, 5, 4}};
  const SessionResult r = simulate_sessions(trace, Bytes(250), per_token);
  EXPECT_DOUBLE_EQ(r.reusable_tokens, 120 + 100);
  EXPECT_DOUBLE_EQ(r.reused_tokens, 100);
  EXPECT_DOUBLE_EQ(r.recomputed_tokens, 100 + 50 + 80 + 130 + 10);
  EXPECT_DOUBLE_EQ(r.hit_rate, 100.0 / 220);
  EXPECT_DOUBLE_EQ(r.turn_hit_rate, 0.5);
  EXPECT_EQ(r.evictions, 3);
  // With room for everything, every later turn hits.
  EXPECT_DOUBLE_EQ(simulate_sessions(trace, Bytes(10000), per_token).hit_rate, 1.0);
  // With no room, nothing is kept.
  EXPECT_DOUBLE_EQ(simulate_sessions(trace, Bytes(0), per_token).hit_rate, 0.0);
}

TEST(LlmSessions, SyntheticTraceMatchesTheAgenticSetting) {
  const SessionParams p = default_params<SessionParams>();
  const auto t = synthetic_trace(p);
  double in = 0, out = 0;
  for (const auto& x : t) in += double(x.input), out += double(x.output);
  in /= double(t.size());
  out /= double(t.size());
  EXPECT_NEAR(in, 15000, 1500);  // spec: agentic 15K input
  EXPECT_NEAR(out, 6000, 300);   // and 6K output
  // Deterministic for a seed.
  EXPECT_EQ(synthetic_trace(p).size(), t.size());
  EXPECT_EQ(synthetic_trace(p)[17].input, t[17].input);
}

TEST(LlmSessions, MoreCapacityKeepsMoreSessions) {
  std::map<std::string, KindParams> kinds;
  for (const char* kind : {"h200", "csi", "cli"}) {
    ConfigTree c;
    c.set_preset_dir(fs::path(BITLINE_SOURCE_DIR) / "configs");
    c.load_preset(kind);
    KindParams k = load_kind_params(c, kind);
    kinds.emplace(kind, k);
  }
  SessionParams p = default_params<SessionParams>();
  p.sessions = 600;
  const ModelConfig m = load_model_file(fs::path(BITLINE_SOURCE_DIR) / "configs" / "models" / "qwen3-235b.json");
  const Json j = run_sessions(m, kinds, synthetic_trace(p), p, {"h200x8", "h200x16", "csix8", "clix8"});
  const Json& s = j["systems"];
  for (const char* sys : {"h200x8", "h200x16", "csix8", "clix8"}) {
    ASSERT_TRUE(s.contains(sys)) << sys;
    EXPECT_GE(s[sys]["hit_rate"].get<double>(), 0.0);
    EXPECT_LE(s[sys]["hit_rate"].get<double>(), 1.0);
    EXPECT_GE(s[sys]["recomputed_tokens"].get<double>(), 0.0);
  }
  EXPECT_GE(s["h200x16"]["hit_rate"].get<double>(), s["h200x8"]["hit_rate"].get<double>());
  EXPECT_GT(s["csix8"]["hit_rate"].get<double>(), s["h200x16"]["hit_rate"].get<double>());
  EXPECT_LT(s["csix8"]["recomputed_tokens"].get<double>(), s["h200x8"]["recomputed_tokens"].get<double>());
}
