// Multi-turn sessions: the JSONL trace formats and the synthetic agentic generator (their KV reuse is the serving
// simulation's: tests/serve/test_sessions.cpp).
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

// ---- Offered load ------------------------------------------------------------------------------------

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

TEST(LlmSessions, ThinkTimesAreCutAtTheirMaximum) {
  // A median of 10 minutes with the agentic tail: ~3% of the draws are above a day; they are cut to it.
  SessionParams p = default_params<SessionParams>();
  p.sessions = 2000;
  p.think_time = sec(600);
  p.think_time_p90 = sec(16500);
  const std::vector<Turn> trace = synthetic_trace(p);
  std::map<std::string, size_t> prev;
  double longest = 0;
  int64_t at_max = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    const Turn& t = trace[i];
    if (auto it = prev.find(t.session); it != prev.end()) {
      const double gap = t.timestamp - trace[it->second].timestamp - double(trace[it->second].output) / p.user_tokens_per_s;
      longest = std::max(longest, gap);
      if (gap > 86400 - 1e-6) ++at_max;
    }
    prev[t.session] = i;
  }
  EXPECT_LE(longest, 86400 + 1e-6);
  EXPECT_GT(at_max, 0);  // the cut is reached: without it the longest gap would be weeks
}
