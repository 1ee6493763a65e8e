#include "llm/sessions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <list>
#include <sstream>
#include <unordered_map>

#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "core/rng.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

std::vector<Turn> parse_trace(const std::string& text, const std::string& origin) {
  std::vector<Turn> out;
  std::istringstream in(text);
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = parse_input_json(line, fmt::format("{}:{}", origin, n));
    auto fail = [&](const char* f, const std::string& why) { throw ConfigError(fmt::format("{}:{}: field '{}': {}", origin, n, f, why)); };
    if (!j.is_object()) throw ConfigError(fmt::format("{}:{}: expected a JSON object per line", origin, n));
    Turn t;
    if (!j.contains("session")) fail("session", "missing");
    if (j["session"].is_string())
      t.session = j["session"].get<std::string>();
    else if (j["session"].is_number_unsigned())
      t.session = std::to_string(j["session"].get<uint64_t>());
    else if (j["session"].is_number_integer())
      t.session = std::to_string(j["session"].get<int64_t>());
    else
      fail("session", "expected a string or an integer");
    auto integer = [&](const char* f, int64_t min, int64_t max, const char* why_max) {
      if (!j.contains(f)) fail(f, "missing");
      if (!j[f].is_number_integer()) fail(f, fmt::format("expected an integer, got {}", json_brief(j[f])));
      if (j[f].is_number_unsigned() && j[f].get<uint64_t>() > uint64_t(max))
        fail(f, fmt::format("{} is above the maximum {} ({})", j[f].get<uint64_t>(), max, why_max));
      const int64_t v = j[f].get<int64_t>();
      if (v < min) fail(f, fmt::format("{} is below the minimum {}", v, min));
      if (v > max) fail(f, fmt::format("{} is above the maximum {} ({})", v, max, why_max));
      return v;
    };
    t.turn = integer("turn", 1, int64_t(1) << 30, "turns of one session");
    t.input = integer("input_tokens", 0, kMaxContextTokens, "the context limit");
    t.output = integer("output_tokens", 0, kMaxContextTokens, "the context limit");
    if (!j.contains("timestamp")) fail("timestamp", "missing");
    if (!j["timestamp"].is_number()) fail("timestamp", "expected a number of seconds");
    t.timestamp = j["timestamp"].get<double>();
    if (int64_t(out.size()) == kMaxTraceTurns)
      throw ConfigError(fmt::format("{}:{}: more than {} turns in a trace", origin, n, kMaxTraceTurns));
    out.push_back(std::move(t));
  }
  if (out.empty()) throw ConfigError(fmt::format("{}: the trace has no turns", origin));
  return out;
}

std::vector<Turn> read_trace(const std::filesystem::path& file) {
  return parse_trace(read_input_file(file, kMaxTraceFileBytes, "trace"), file.string());
}

std::vector<Turn> synthetic_trace(const SessionParams& p) {
  if (p.turns_max < p.turns_min) throw ConfigError("sessions.turns_max is below sessions.turns_min");
  if (p.sessions * p.turns_max > kMaxTraceTurns)
    throw ConfigError(
        fmt::format("sessions.sessions x sessions.turns_max = {} x {}: up to {} turns, more than the {} a trace may "
                    "have (about 200 B each while replayed)",
                    p.sessions, p.turns_max, p.sessions * p.turns_max, kMaxTraceTurns));
  Rng rng = Rng::derive(uint64_t(p.seed), "llm.sessions");
  auto around = [&](double mean) { return int64_t(std::llround(mean * (0.5 + rng.uniform()))); };  // uniform in [0.5, 1.5] x mean
  auto exponential = [&](double mean) { return -std::log(1.0 - rng.uniform()) * mean; };
  std::vector<Turn> out;
  double t = 0;
  for (int64_t s = 0; s < p.sessions; ++s) {
    t += exponential(1.0 / p.arrival_per_s);
    const int64_t turns = p.turns_min + int64_t(rng.below(uint64_t(p.turns_max - p.turns_min + 1)));
    int64_t prompt = std::max<int64_t>(1, around(double(p.first_input)));
    double ts = t;
    for (int64_t k = 1; k <= turns; ++k) {
      const int64_t out_tokens = std::max<int64_t>(1, around(double(p.output)));
      out.push_back(Turn{fmt::format("s{}", s), k, prompt, out_tokens, ts});
      ts += double(out_tokens) / p.user_tokens_per_s + exponential(to_s(p.think_time));
      prompt += out_tokens + around(double(p.new_input));
    }
  }
  return out;
}

Json SessionResult::json() const {
  return {{"hit_rate", hit_rate},
          {"turn_hit_rate", turn_hit_rate},
          {"recomputed_tokens", recomputed_tokens},
          {"recomputed_fraction", prompt_tokens > 0 ? recomputed_tokens / prompt_tokens : 0.0},
          {"prompt_tokens", prompt_tokens},
          {"reusable_tokens", reusable_tokens},
          {"reused_tokens", reused_tokens},
          {"evictions", evictions},
          {"turns", turns},
          {"retention_bytes", double(capacity.raw())}};
}

SessionResult simulate_sessions(const std::vector<Turn>& trace, Bytes capacity, const std::function<Bytes(int64_t)>& footprint) {
  SessionResult r;
  r.capacity = capacity;
  std::vector<size_t> order(trace.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (trace[a].timestamp != trace[b].timestamp) return trace[a].timestamp < trace[b].timestamp;
    if (trace[a].session != trace[b].session) return trace[a].session < trace[b].session;
    return trace[a].turn < trace[b].turn;
  });
  struct Held {
    int64_t tokens = 0;
    Bytes bytes{};
    std::list<std::string>::iterator lru;
  };
  std::list<std::string> lru;  // front: most recently used
  std::unordered_map<std::string, Held> held;
  std::unordered_map<std::string, int64_t> history;  // tokens of the session's previous turn (prompt + output)
  int64_t used = 0, with_prefix = 0;
  int64_t hit_turns = 0;
  for (size_t i : order) {
    const Turn& t = trace[i];
    ++r.turns;
    r.prompt_tokens += double(t.input);
    int64_t reusable = 0;
    if (auto h = history.find(t.session); h != history.end()) reusable = std::min(h->second, t.input);
    int64_t reused = 0;
    if (auto it = held.find(t.session); it != held.end()) {
      reused = std::min({it->second.tokens, t.input, reusable});
      used -= it->second.bytes.raw();
      lru.erase(it->second.lru);
      held.erase(it);
    }
    if (reusable > 0) {
      ++with_prefix;
      if (reused > 0) ++hit_turns;
    }
    r.reusable_tokens += double(reusable);
    r.reused_tokens += double(reused);
    r.recomputed_tokens += double(t.input - reused);
    history[t.session] = t.input + t.output;
    // Keep this turn's KV (prompt + output) for the next turn, evicting the least recently used sessions.
    const Bytes b = footprint(t.input + t.output);
    if (b <= capacity) {
      while (used + b.raw() > capacity.raw() && !lru.empty()) {
        const std::string victim = lru.back();
        lru.pop_back();
        used -= held[victim].bytes.raw();
        held.erase(victim);
        ++r.evictions;
      }
      lru.push_front(t.session);
      held[t.session] = Held{t.input + t.output, b, lru.begin()};
      used += b.raw();
    }
  }
  r.hit_rate = r.reusable_tokens > 0 ? r.reused_tokens / r.reusable_tokens : 0.0;
  r.turn_hit_rate = with_prefix > 0 ? double(hit_turns) / double(with_prefix) : 0.0;
  return r;
}

Json run_sessions(const ModelConfig& m, const std::map<std::string, KindParams>& kinds, const std::vector<Turn>& trace,
                  const SessionParams& p, const std::vector<std::string>& systems) {
  Json out;
  double in_sum = 0, out_sum = 0;
  std::map<std::string, int> sessions;
  for (const Turn& t : trace) in_sum += double(t.input), out_sum += double(t.output), ++sessions[t.session];
  out["trace"] = {{"sessions", sessions.size()},
                  {"turns", trace.size()},
                  {"mean_input_tokens", in_sum / double(trace.size())},
                  {"mean_output_tokens", out_sum / double(trace.size())}};
  const int64_t mean_prompt = int64_t(in_sum / double(trace.size()));
  for (const std::string& name : systems) {
    const SystemName sn = parse_system(name);
    Server s(m, kinds.at(sn.kind), sn.gpus);
    const Deployment& d = s.deployment();
    const hbf::System& sys = s.system();
    const bool mla = m.attention == AttentionKind::Mla;
    const int64_t tok_layer_gpu = mla ? m.kv_bytes_per_token_layer() : 2 * d.kv_heads * m.head_dim * m.kv_value_bytes;
    const int64_t per_token = checked_mul(checked_mul(tok_layer_gpu, m.layers, "KV bytes per token"), d.tp,
                                          "KV bytes per token");  // the system's bytes per token (TP: all shards)
    std::function<Bytes(int64_t)> footprint;
    Bytes capacity;
    const ContextSpec none{"none", 0, 1};
    const Capacity c0 = s.capacity(0, none);
    if (!s.has_hbf()) {
      footprint = [per_token](int64_t tokens) { return Bytes(checked_mul(tokens, per_token, "KV bytes of a session")); };
      capacity = (c0.hbm_capacity - c0.hbm_used) * double(d.gpus);
    } else {
      // Isolated blocks: a session's KV object holds whole megablocks on every megaplane of its window (all of them,
      // or the fewest that fit it: hbf.runtime.kv_span), on each of its tp GPUs.
      const int64_t k = sys.megaplanes(), megablock = sys.megapage().raw() * sys.pages_per_block();
      const int64_t tps = s.memory().tokens_per_slice(tok_layer_gpu);
      const int64_t tp = d.tp, layers = m.layers;
      footprint = [=, &sys](int64_t tokens) {
        const int64_t slices = checked_mul(layers, (tokens + tps - 1) / tps, "KV slices of a session");
        return Bytes(checked_mul(checked_mul(sys.kv_megablocks(slices), megablock, "KV bytes of a session"), tp, "KV bytes of a session"));
      };
      capacity = Bytes((c0.blocks_per_megaplane - c0.blocks_used) * k * megablock) * double(d.gpus);
    }
    const Bytes working = footprint(mean_prompt) * double(p.working_requests);
    capacity = capacity > working ? capacity - working : Bytes{};
    SessionResult r = simulate_sessions(trace, capacity, footprint);
    Json j = r.json();
    j["gpus"] = sn.gpus;
    j["footprint_bytes_at_mean_prompt"] = footprint(mean_prompt).raw();
    out["systems"][name] = j;
  }
  return out;
}

}  // namespace bitline::llm
