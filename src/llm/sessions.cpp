#include "llm/sessions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <list>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "core/rng.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

namespace {

/// Calls `record(j, line)` for each non-blank line of JSONL text (lines numbered from 1), each parsed with the
/// trace's bounds (depth, kMaxTraceLineValues values) and required to be an object; at most kMaxTraceTurns records.
template <class F>
void for_each_record(std::string_view text, const std::string& origin, F&& record) {
  int64_t n = 0, records = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (records == kMaxTraceTurns)
      throw ConfigError(fmt::format("{}:{}: more than {} records (turns or requests) in a trace", origin, n, kMaxTraceTurns));
    const nlohmann::json j = parse_input_json(line, fmt::format("{}:{}", origin, n), kMaxTraceLineValues);
    if (!j.is_object()) throw ConfigError(fmt::format("{}:{}: expected a JSON object per line", origin, n));
    record(j, n);
    ++records;
  }
  if (records == 0) throw ConfigError(fmt::format("{}: the trace has no turns", origin));
}

/// The fields of one trace record, each checked; errors name the origin, the line and the field.
struct Record {
  const nlohmann::json& j;
  const std::string& origin;
  int64_t line;

  [[noreturn]] void fail(std::string_view f, const std::string& why) const {
    throw ConfigError(fmt::format("{}:{}: field '{}': {}", origin, line, f, why));
  }
  const nlohmann::json& get(const char* f) const {
    if (!j.contains(f)) fail(f, "missing");
    return j[f];
  }
  int64_t integer(const char* f, int64_t min, int64_t max, const char* why_max) const {
    const nlohmann::json& v = get(f);
    if (!v.is_number_integer()) fail(f, fmt::format("expected an integer, got {}", json_brief(v)));
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(max))
      fail(f, fmt::format("{} is above the maximum {} ({})", v.get<uint64_t>(), max, why_max));
    const int64_t x = v.get<int64_t>();
    if (x < min) fail(f, fmt::format("{} is below the minimum {}", x, min));
    if (x > max) fail(f, fmt::format("{} is above the maximum {} ({})", x, max, why_max));
    return x;
  }
  /// A time in [0, kMaxTraceSeconds] (`unit_s`: seconds per unit of the field), in seconds.
  double seconds(const char* f, double unit_s, const char* unit) const {
    const nlohmann::json& v = get(f);
    if (!v.is_number()) fail(f, fmt::format("expected a number of {}, got {}", unit, json_brief(v)));
    const double x = v.get<double>();
    if (x < 0) fail(f, fmt::format("{} is negative", json_brief(v)));
    if (x * unit_s > kMaxTraceSeconds)
      fail(f, fmt::format("{} {} is past the latest time a trace may have ({:g} s)", json_brief(v), unit, kMaxTraceSeconds));
    return x * unit_s;
  }
};

/// Mixes a block id into the key of the prefix before it (splitmix64's finaliser): equal keys = equal prefixes.
uint64_t prefix_key(uint64_t before, uint64_t id) {
  uint64_t z = before ^ (id + 0x9e3779b97f4a7c15ULL + (before << 6) + (before >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<Turn> parse_trace(const std::string& text, const std::string& origin) {
  std::vector<Turn> out;
  std::vector<int64_t> lines;  // of each turn, for the messages
  // Each session's name as first written (a string or an integer) and its line: 7 and "7" are two spellings, and
  // merging them would join two sessions' turns without a word.
  std::unordered_map<std::string, std::pair<bool, int64_t>> spelt;
  for_each_record(text, origin, [&](const nlohmann::json& j, int64_t n) {
    const Record r{j, origin, n};
    Turn t;
    const nlohmann::json& s = r.get("session");
    if (s.is_string())
      t.session = s.get<std::string>();
    else if (s.is_number_unsigned())
      t.session = std::to_string(s.get<uint64_t>());
    else if (s.is_number_integer())
      t.session = std::to_string(s.get<int64_t>());
    else
      r.fail("session", "expected a string or an integer");
    t.turn = r.integer("turn", 1, int64_t(1) << 30, "turns of one session");
    t.input = r.integer("input_tokens", 0, kMaxContextTokens, "the context limit");
    t.output = r.integer("output_tokens", 0, kMaxContextTokens, "the context limit");
    t.timestamp = r.seconds("timestamp", 1.0, "seconds");
    t.line = n;
    if (t.session.empty()) r.fail("session", "an empty name (a session needs one to link its turns)");
    const auto [it, fresh] = spelt.try_emplace(t.session, s.is_string(), n);
    if (!fresh && it->second.first != s.is_string())
      r.fail("session", fmt::format("{} names the session that line {} names {} (a string and an integer); write every "
                                    "session's name one way",
                                    json_brief(s), it->second.second,
                                    it->second.first ? json_brief(nlohmann::json(t.session)) : text_brief(t.session)));
    out.push_back(std::move(t));
    lines.push_back(n);
  });
  // A session is turns 1, 2, ..., n, in time order, each prompt starting with the previous turn's prompt and output:
  // what linking its turns (their shared prefix, the previous turn's last token before the next is sent) assumes.
  std::unordered_map<std::string, size_t> slot;  // sessions in the order they first appear (deterministic messages)
  std::vector<std::vector<size_t>> by_session;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto [it, fresh] = slot.try_emplace(out[i].session, by_session.size());
    if (fresh) by_session.emplace_back();
    by_session[it->second].push_back(i);
  }
  for (auto& idx : by_session) {
    const std::string& name = out[idx.front()].session;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return out[a].turn < out[b].turn; });
    for (size_t k = 0; k < idx.size(); ++k) {
      const Turn& t = out[idx[k]];
      const std::string at = fmt::format("{}:{}: session '{}'", origin, lines[idx[k]], name.substr(0, 80));
      if (t.turn != int64_t(k) + 1)
        throw ConfigError(fmt::format("{} turn {}: {} (a session's turns are 1, 2, 3, ... once each)", at, t.turn,
                                      k == 0 ? "its first turn must be turn 1"
                                             : (out[idx[k - 1]].turn == t.turn ? fmt::format("turn {} appears twice", t.turn)
                                                                               : fmt::format("turn {} is missing", k + 1))));
      if (k == 0) continue;
      const Turn& p = out[idx[k - 1]];
      if (t.timestamp < p.timestamp)
        throw ConfigError(fmt::format("{} turn {}: timestamp {:g} s is before turn {}'s {:g} s (a turn follows the one before it)", at,
                                      t.turn, t.timestamp, p.turn, p.timestamp));
      if (t.input < p.input + p.output)
        throw ConfigError(
            fmt::format("{} turn {}: input_tokens {} is less than turn {}'s input + output ({} + {} = {}): a turn's "
                        "prompt starts with the previous turn's prompt and output",
                        at, t.turn, t.input, p.turn, p.input, p.output, p.input + p.output));
    }
  }
  return out;
}

std::vector<Turn> read_trace(const std::filesystem::path& file) {
  return parse_trace(read_input_file(file, kMaxTraceFileBytes, "trace"), file.string());
}

PrefixTrace parse_mooncake_trace(const std::string& text, const std::string& origin, int64_t block_tokens) {
  if (block_tokens < 1) throw ConfigError(fmt::format("{}: sessions.block_tokens must be at least 1", origin));
  PrefixTrace out;
  out.block_tokens = block_tokens;
  int64_t blocks = 0;
  for_each_record(text, origin, [&](const nlohmann::json& j, int64_t n) {
    const Record r{j, origin, n};
    PrefixRequest q;
    q.timestamp = r.seconds("timestamp", 1e-3, "milliseconds");
    q.input = r.integer("input_length", 0, kMaxContextTokens, "the context limit");
    q.output = r.integer("output_length", 0, kMaxContextTokens, "the context limit");
    q.line = n;
    const nlohmann::json& ids = r.get("hash_ids");
    if (!ids.is_array()) r.fail("hash_ids", fmt::format("expected a list of integers, got {}", json_brief(ids)));
    const int64_t most = (q.input + block_tokens - 1) / block_tokens;
    if (int64_t(ids.size()) > most)
      r.fail("hash_ids", fmt::format("{} ids for input_length {}: more than the {} blocks of {} tokens it has (sessions.block_tokens "
                                     "must be the trace's block size)",
                                     ids.size(), q.input, most, block_tokens));
    if (blocks + int64_t(ids.size()) > kMaxTraceBlocks)
      r.fail("hash_ids", fmt::format("more than {} hash ids in the trace (about 80 B each while replayed)", kMaxTraceBlocks));
    blocks += int64_t(ids.size());
    q.prefix.reserve(ids.size());
    uint64_t key = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const nlohmann::json& id = ids[i];
      if (!id.is_number_integer() || (!id.is_number_unsigned() && id.get<int64_t>() < 0))
        r.fail(fmt::format("hash_ids[{}]", i), fmt::format("expected a non-negative integer, got {}", json_brief(id)));
      key = prefix_key(key, id.get<uint64_t>());
      q.prefix.push_back(key);
    }
    out.requests.push_back(std::move(q));
  });
  return out;
}

Trace parse_any_trace(const std::string& text, const std::string& origin, int64_t block_tokens) {
  // The first record's keys tell the format; each parser then checks every record.
  std::string_view rest = text;
  int64_t n = 0;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const nlohmann::json j = parse_input_json(line, fmt::format("{}:{}", origin, n), kMaxTraceLineValues);
    if (j.is_object() && (j.contains("hash_ids") || j.contains("input_length"))) return parse_mooncake_trace(text, origin, block_tokens);
    break;
  }
  return parse_trace(text, origin);
}

Trace read_any_trace(const std::filesystem::path& file, int64_t block_tokens) {
  return parse_any_trace(read_input_file(file, kMaxTraceFileBytes, "trace"), file.string(), block_tokens);
}

int64_t synthetic_turns_max(const SessionParams& p) {
  if (p.turns_max < p.turns_min) throw ConfigError("sessions.turns_max is below sessions.turns_min");
  if (p.sessions * p.turns_max > kMaxTraceTurns)
    throw ConfigError(
        fmt::format("sessions.sessions x sessions.turns_max = {} x {}: up to {} turns, more than the {} a trace may "
                    "have (about 200 B each while replayed)",
                    p.sessions, p.turns_max, p.sessions * p.turns_max, kMaxTraceTurns));
  return p.sessions * p.turns_max;
}

const Registry<ThinkTime>& think_times() {
  static const Registry<ThinkTime> r(
      "think-time distribution",
      {{"lognormal", "heavy-tailed: median sessions.think_time, 90th percentile sessions.think_time_p90", ThinkTime::Lognormal},
       {"exponential", "memoryless: mean sessions.think_time", ThinkTime::Exponential}});
  return r;
}

double session_arrival_per_s(const SessionParams& p) {
  if (p.decoding == 0) return p.arrival_per_s;
  // Little's law on the decoding requests: decoding = turn rate x decode time of a turn
  // (mean output / user_tokens_per_s); turn rate = sessions per second x mean turns.
  const double mean_turns = 0.5 * double(p.turns_min + p.turns_max);
  return double(p.decoding) * p.user_tokens_per_s / (mean_turns * double(p.output));
}

std::vector<Turn> synthetic_trace(const SessionParams& p) {
  synthetic_turns_max(p);
  if (p.think_time_distribution == ThinkTime::Lognormal && p.think_time_p90 < p.think_time)
    throw ConfigError(fmt::format("sessions.think_time_p90 = {}: below the median sessions.think_time = {}", format(p.think_time_p90),
                                  format(p.think_time)));
  Rng rng = Rng::derive(uint64_t(p.seed), "llm.sessions");
  auto around = [&](double mean) { return int64_t(std::llround(mean * (0.5 + rng.uniform()))); };  // uniform in [0.5, 1.5] x mean
  auto exponential = [&](double mean) { return -std::log(1.0 - rng.uniform()) * mean; };
  // Lognormal through two quantiles: mu = ln(median), sigma = ln(p90 / median) / z(0.9); a normal deviate by Box-Muller.
  const double median = to_s(p.think_time), z90 = 1.2815515655446004;
  const double sigma = median > 0 ? std::log(to_s(p.think_time_p90) / median) / z90 : 0.0;
  auto draw = [&]() {
    if (p.think_time_distribution == ThinkTime::Exponential) return exponential(median);
    if (median <= 0) return 0.0;
    const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    const double n = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
    return median * std::exp(sigma * n);
  };
  auto think = [&]() { return std::min(draw(), to_s(p.think_time_max)); };  // (the draw always happens: same stream)
  const double arrival_per_s = session_arrival_per_s(p);
  std::vector<Turn> out;
  double t = 0;
  for (int64_t s = 0; s < p.sessions; ++s) {
    t += exponential(1.0 / arrival_per_s);
    const int64_t turns = p.turns_min + int64_t(rng.below(uint64_t(p.turns_max - p.turns_min + 1)));
    int64_t prompt = std::max<int64_t>(1, around(double(p.first_input)));
    double ts = t;
    for (int64_t k = 1; k <= turns; ++k) {
      const int64_t out_tokens = std::max<int64_t>(1, around(double(p.output)));
      out.push_back(Turn{fmt::format("s{}", s), k, prompt, out_tokens, ts});
      ts += double(out_tokens) / p.user_tokens_per_s + think();
      prompt += out_tokens + around(double(p.new_input));
    }
  }
  return out;
}

namespace {

/// Sum of input and output tokens and the record count of a trace.
struct TraceTokens {
  double input = 0, output = 0;
  int64_t records = 0;
  int64_t mean_input() const { return records > 0 ? int64_t(input / double(records)) : 0; }
};
TraceTokens trace_tokens(const Trace& trace) {
  TraceTokens t;
  std::visit(
      [&](const auto& x) {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, PrefixTrace>) {
          for (const PrefixRequest& q : x.requests) t.input += double(q.input), t.output += double(q.output);
          t.records = int64_t(x.requests.size());
        } else {
          for (const Turn& q : x) t.input += double(q.input), t.output += double(q.output);
          t.records = int64_t(x.size());
        }
      },
      trace);
  return t;
}

}  // namespace

Json trace_summary(const Trace& trace) {
  const TraceTokens tt = trace_tokens(trace);
  Json out = {{"turns", tt.records},
              {"mean_input_tokens", tt.records > 0 ? tt.input / double(tt.records) : 0.0},
              {"mean_output_tokens", tt.records > 0 ? tt.output / double(tt.records) : 0.0}};
  if (const auto* pt = std::get_if<PrefixTrace>(&trace)) {
    out["format"] = "mooncake";
    out["block_tokens"] = pt->block_tokens;
    int64_t blocks = 0;
    for (const PrefixRequest& q : pt->requests) blocks += int64_t(q.prefix.size());
    out["blocks"] = blocks;
    return out;
  }
  const auto& turns = std::get<std::vector<Turn>>(trace);
  out["format"] = "bitline";
  if (turns.empty()) return out;
  std::map<std::string, std::pair<double, double>> span;  // session: first and last turn's timestamps
  for (const Turn& t : turns) {
    auto [it, fresh] = span.try_emplace(t.session, t.timestamp, t.timestamp);
    if (!fresh) it->second = {std::min(it->second.first, t.timestamp), std::max(it->second.second, t.timestamp)};
  }
  double waiting = 0, first = span.begin()->second.first, last = first;
  for (const auto& [name, fl] : span) {
    waiting += fl.second - fl.first;
    first = std::min(first, fl.first);
    last = std::max(last, fl.first);
  }
  const double n = double(span.size());
  out["sessions"] = span.size();
  // Little's law: sessions started per second (over the span of first turns) x mean time from first to last turn.
  out["session_arrival_per_s"] = last > first ? (n - 1) / (last - first) : 0.0;
  out["mean_session_s"] = waiting / n;
  out["sessions_alive"] = last > first ? (n - 1) / (last - first) * waiting / n : 0.0;
  return out;
}

}  // namespace bitline::llm
