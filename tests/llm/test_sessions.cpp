// Multi-turn sessions: the JSONL trace format, LRU retention checked by hand,
// the synthetic agentic generator, and the four systems of the experiment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

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
  EXPECT_NEAR(in, 15000, 1500);  // FlashAccel, Evaluation setup: agentic 15K input
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

// ---- Mooncake traces ----------------------------------------------------------------------------------

namespace {

std::string mooncake_error(const std::string& text) {
  try {
    parse_any_trace(text, "m.jsonl", 512);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LlmSessions, MooncakeSampleParses) {
  const Trace any = read_any_trace(fs::path(BITLINE_SOURCE_DIR) / "configs" / "traces" / "mooncake-example.jsonl", 512);
  ASSERT_TRUE(std::holds_alternative<PrefixTrace>(any));
  const PrefixTrace& t = std::get<PrefixTrace>(any);
  ASSERT_EQ(t.requests.size(), 38u);
  EXPECT_EQ(t.block_tokens, 512);
  // Line 1: {"timestamp": 1326, "input_length": 2429, "output_length": 716, "hash_ids": [0, 1, 2, 3, 4]}
  EXPECT_DOUBLE_EQ(t.requests[0].timestamp, 1.326);
  EXPECT_EQ(t.requests[0].input, 2429);
  EXPECT_EQ(t.requests[0].output, 716);
  ASSERT_EQ(t.requests[0].prefix.size(), 5u);
  // Line 2 starts with the same block 0 (the shared system prompt), then differs: same key, then different keys.
  ASSERT_EQ(t.requests[1].prefix.size(), 3u);
  EXPECT_EQ(t.requests[1].prefix[0], t.requests[0].prefix[0]);
  EXPECT_NE(t.requests[1].prefix[1], t.requests[0].prefix[1]);
  // Every request has ceil(input / 512) blocks, as in Mooncake's release.
  for (const auto& q : t.requests) EXPECT_EQ(int64_t(q.prefix.size()), (q.input + 511) / 512);
  const Json s = trace_summary(any);
  EXPECT_EQ(s["format"], "mooncake");
  EXPECT_EQ(s["turns"], 38);
  // A bitline trace is told apart by its keys.
  EXPECT_TRUE(std::holds_alternative<std::vector<Turn>>(
      parse_any_trace("{\"session\": 1, \"turn\": 1, \"input_tokens\": 5, \"output_tokens\": 1, \"timestamp\": 0}\n", "t.jsonl", 512)));
}

TEST(LlmSessions, MooncakePrefixKeysFollowThePrefixNotTheId) {
  // The same id after a different prefix is a different block; the same ids in the same order are the same blocks.
  const PrefixTrace t = parse_mooncake_trace(
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 1, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [3, 2]}\n"
      "{\"timestamp\": 2, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2, 9]}\n",
      "m.jsonl", 512);
  EXPECT_NE(t.requests[0].prefix[1], t.requests[1].prefix[1]);
  EXPECT_EQ(t.requests[0].prefix[1], t.requests[2].prefix[1]);
}

TEST(LlmSessions, MooncakeMalformedTracesNameLineAndField) {
  const std::string ok = "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n";
  auto expect = [&](const std::string& line, std::initializer_list<const char*> parts) {
    const std::string e = mooncake_error(ok + line);
    EXPECT_FALSE(e.empty()) << line;
    for (const char* p : parts) EXPECT_NE(e.find(p), std::string::npos) << line << "\n  got: " << e;
  };
  expect("{\"timestamp\": 1, \"input_length\": 600", {"m.jsonl:2", "malformed JSON"});
  expect("{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5}", {"m.jsonl:2", "field 'hash_ids': missing"});
  expect("{\"timestamp\": 1, \"output_length\": 5, \"hash_ids\": [0]}", {"m.jsonl:2", "field 'input_length': missing"});
  expect("{\"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0]}", {"m.jsonl:2", "field 'timestamp': missing"});
  expect("{\"timestamp\": -5, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0]}",
         {"m.jsonl:2", "field 'timestamp'", "negative"});
  expect("{\"timestamp\": 1e300, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0]}",
         {"m.jsonl:2", "field 'timestamp'", "latest time"});
  expect("{\"timestamp\": 1, \"input_length\": -1, \"output_length\": 5, \"hash_ids\": []}",
         {"m.jsonl:2", "field 'input_length'", "below the minimum 0"});
  expect("{\"timestamp\": 1, \"input_length\": 9000000000000, \"output_length\": 5, \"hash_ids\": [0]}",
         {"m.jsonl:2", "field 'input_length'", "above the maximum"});
  expect("{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, -3]}",
         {"m.jsonl:2", "field 'hash_ids[1]'", "non-negative integer"});
  expect("{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, \"x\"]}", {"m.jsonl:2", "field 'hash_ids[1]'"});
  expect("{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": 7}", {"m.jsonl:2", "field 'hash_ids'", "list"});
  // 600 tokens are two 512-token blocks: three ids are one too many (a trace with another block size).
  expect("{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}",
         {"m.jsonl:2", "field 'hash_ids'", "3 ids for input_length 600", "sessions.block_tokens"});
  expect("[1, 2]", {"m.jsonl:2", "a JSON object per line"});
  // A line of millions of values fails while it is parsed (bounded memory), naming the line.
  std::string wide = "{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0";
  for (int64_t i = 0; i < kMaxTraceLineValues; ++i) wide += ",1";
  expect(wide + "]}", {"m.jsonl:2", "more than 2097152 JSON values"});
}

TEST(LlmSessions, PrefixCacheByHand) {
  // Blocks of 10 tokens, 1 byte each: capacity 4 blocks. LRU order after each request, most recent first:
  // r0 t=0: [a b c] (25 tokens): nothing seen.                                  a b c
  // r1 t=1: [a b d] (30 tokens): a b seen and held -> reuse 20 of 30.            a b d c
  // r2 t=2: [e f]   (20 tokens): nothing seen; evicts c, then d.                 e f a b
  // r3 t=3: [a b c] (25 tokens): a b c seen (reusable 25), a b held -> reuse 20;
  //         c needs room: evicts f.                                             a b c e
  PrefixTrace t;
  t.block_tokens = 10;
  const uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
  t.requests = {{0, 25, 1, {a, b, c}}, {1, 30, 1, {a, b, d}}, {2, 20, 1, {e, f}}, {3, 25, 1, {a, b, c}}};
  const SessionResult r = simulate_prefix_cache(t, Bytes(4), Bytes(1));
  EXPECT_DOUBLE_EQ(r.reusable_tokens, 20 + 25);
  EXPECT_DOUBLE_EQ(r.reused_tokens, 20 + 20);
  EXPECT_DOUBLE_EQ(r.recomputed_tokens, 25 + 10 + 20 + 5);
  EXPECT_DOUBLE_EQ(r.hit_rate, 40.0 / 45);
  EXPECT_DOUBLE_EQ(r.turn_hit_rate, 1.0);
  EXPECT_EQ(r.evictions, 3);  // c, d, f
  // Unbounded: every reusable token is reused.
  EXPECT_DOUBLE_EQ(simulate_prefix_cache(t, Bytes(100), Bytes(1)).hit_rate, 1.0);
  // No room: nothing is.
  EXPECT_DOUBLE_EQ(simulate_prefix_cache(t, Bytes(0), Bytes(1)).hit_rate, 0.0);
}

// ---- Offered load ------------------------------------------------------------------------------------

namespace {

/// Hit rate and sessions alive of the synthetic trace made with `p`, on a store of `capacity` tokens.
std::pair<double, double> hit_and_alive(const SessionParams& p, int64_t capacity) {
  const std::vector<Turn> t = synthetic_trace(p);
  return {simulate_sessions(t, Bytes(capacity), per_token).hit_rate, trace_summary(t)["sessions_alive"].get<double>()};
}

/// The mechanism: LRU retention of a fixed capacity keeps a session's KV until that many bytes of other
/// sessions' turns have come in; more sessions alive between a session's turns push it out sooner. So along
/// any sweep that raises the sessions alive, the hit rate must not rise; and it must fall from ~1 (everything
/// fits) to well under half over the sweep (with exponential think times some turns still follow closely).
void expect_falls(const std::vector<SessionParams>& sweep, int64_t capacity, const char* what) {
  double hit_before = 2, alive_before = -1;
  std::vector<double> hits;
  for (const SessionParams& p : sweep) {
    const auto [hit, alive] = hit_and_alive(p, capacity);
    EXPECT_GT(alive, alive_before) << what;
    EXPECT_LE(hit, hit_before) << what << ": sessions alive " << alive;
    hit_before = hit, alive_before = alive;
    hits.push_back(hit);
  }
  EXPECT_GT(hits.front(), 0.95) << what;
  EXPECT_LT(hits.back(), 0.3) << what;
}

}  // namespace

TEST(LlmSessions, HitRateFallsAsTheOfferedLoadRises) {
  // KV of 1 byte per token; the store holds ~150 sessions of the agentic setting (~20K tokens each).
  const int64_t capacity = 3'000'000;
  SessionParams base = default_params<SessionParams>();
  base.decoding = 0;                                                                      // the load set by sessions.arrival_per_s
  base.think_time_distribution = Choice<ThinkTime, think_times>(ThinkTime::Exponential);  // think_time is then the mean
  std::vector<SessionParams> rates, thinks, turns;
  for (double rate : {1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1.0}) {  // sessions per second
    SessionParams p = base;
    p.arrival_per_s = rate;
    p.sessions = int64_t(rate * 12000);  // the same 12,000 s of arrivals
    rates.push_back(p);
  }
  expect_falls(rates, capacity, "sessions per second");
  for (double think_s : {5.0, 300.0, 1200.0, 3600.0, 14400.0}) {  // at 1/32 session per second
    SessionParams p = base;
    p.arrival_per_s = 1.0 / 32;
    p.sessions = 1000;
    p.think_time = sec(think_s);
    thinks.push_back(p);
  }
  expect_falls(thinks, capacity, "think time");
  for (int64_t n : {2, 4, 8, 16, 32}) {  // turns per session, at 1/32 session per second
    SessionParams p = base;
    p.arrival_per_s = 1.0 / 32;
    p.sessions = 1000;
    p.turns_min = p.turns_max = n;
    turns.push_back(p);
  }
  expect_falls(turns, capacity, "turns per session");
}

// Item 7 of issue 28: the offered load as requests decoding at once (Little's law) and heavy-tailed think times.
TEST(LlmSessions, DecodingLoadIsLittlesLaw) {
  SessionParams p = default_params<SessionParams>();
  p.sessions = 20000;
  for (int64_t decoding : {64, 512}) {
    p.decoding = decoding;
    const std::vector<Turn> trace = synthetic_trace(p);
    double decode_s = 0, first = 1e300, last = 0;
    for (const Turn& t : trace) {
      decode_s += double(t.output) / p.user_tokens_per_s;
      if (t.turn == 1) first = std::min(first, t.timestamp), last = std::max(last, t.timestamp);
    }
    // requests decoding at once = decode seconds offered / seconds of arrivals
    EXPECT_NEAR(decode_s / (last - first), double(decoding), 0.03 * double(decoding));
    EXPECT_NEAR(session_arrival_per_s(p), double(decoding) * 10.0 / (4.0 * 6000.0), 1e-12);
  }
}

TEST(LlmSessions, ThinkTimesFollowTheirDistribution) {
  SessionParams p = default_params<SessionParams>();
  p.sessions = 20000;
  auto quantiles = [&](const SessionParams& q, double& median, double& p90, double& mean) {
    const std::vector<Turn> trace = synthetic_trace(q);
    std::map<std::string, size_t> prev;
    std::vector<double> g;
    for (size_t i = 0; i < trace.size(); ++i) {
      const Turn& t = trace[i];
      if (auto it = prev.find(t.session); it != prev.end())
        g.push_back(t.timestamp - trace[it->second].timestamp - double(trace[it->second].output) / q.user_tokens_per_s);
      prev[t.session] = i;
    }
    std::sort(g.begin(), g.end());
    median = g[g.size() / 2], p90 = g[g.size() * 9 / 10];
    mean = 0;
    for (double x : g) mean += x / double(g.size());
  };
  double median = 0, p90 = 0, mean = 0;
  quantiles(p, median, p90, mean);  // lognormal: median 1.6 s, p90 44 s (the agentic trace's)
  EXPECT_NEAR(median, 1.6, 0.08);
  EXPECT_NEAR(p90, 44.0, 3.0);
  EXPECT_GT(mean, 10 * median);  // heavy-tailed
  p.think_time_distribution = Choice<ThinkTime, think_times>(ThinkTime::Exponential);
  p.think_time = sec(5.0);
  quantiles(p, median, p90, mean);  // exponential: mean 5 s, median 5 ln 2
  EXPECT_NEAR(mean, 5.0, 0.15);
  EXPECT_NEAR(median, 5.0 * std::log(2.0), 0.15);
  p.think_time_distribution = Choice<ThinkTime, think_times>(ThinkTime::Lognormal);
  p.think_time_p90 = sec(1.0);  // below the median: refused
  EXPECT_THROW(synthetic_trace(p), ConfigError);
}
