// Multi-turn sessions and KV reuse (on the prefill side): each session's KV
// is kept for its next turn while capacity allows, least recently used first
// out. A turn whose session's KV is still held reuses it (only the new part
// of the prompt is prefilled); otherwise the whole prompt is recomputed.
//
// Trace format (JSON Lines, one turn per line, any order; docs/llm.md):
//   {"session": "s17", "turn": 2, "input_tokens": 15340, "output_tokens": 5900, "timestamp": 812.5}
// session: string or integer id; turn: 1, 2, ... within the session;
// input_tokens: the whole prompt of the turn, history included; output_tokens:
// tokens generated; timestamp: seconds when the turn arrives. The reusable
// prefix of turn k is the previous turn's prompt + output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

struct KindParams;

/// Most turns of a trace, read or synthetic: 2^22 (4.2M). A turn costs ~200 B while it is replayed, so a
/// full trace stays well under 1 GB; a trace file is also capped at kMaxTraceFileBytes (core/input.hpp).
inline constexpr int64_t kMaxTraceTurns = int64_t(1) << 22;

struct Turn {
  std::string session;
  int64_t turn = 1;
  int64_t input = 0, output = 0;
  double timestamp = 0;
};

/// Reads a JSONL trace; ConfigError naming the file, the line and the field for bad input.
std::vector<Turn> read_trace(const std::filesystem::path& file);
/// Parses JSONL text (`origin` names it in messages).
std::vector<Turn> parse_trace(const std::string& text, const std::string& origin);
/// Synthetic agentic sessions (sessions.* parameters): Poisson arrivals, 2-6 turns, prompts that grow by the
/// previous output and new input, turns separated by the decode time of the output and a think time.
std::vector<Turn> synthetic_trace(const SessionParams& p);

struct SessionResult {
  double hit_rate = 0;       // reused tokens / reusable tokens (turns after the first)
  double turn_hit_rate = 0;  // turns that found their KV / turns with a reusable prefix
  double recomputed_tokens = 0, prompt_tokens = 0, reusable_tokens = 0, reused_tokens = 0;
  int64_t evictions = 0, turns = 0;
  Bytes capacity{};
  Json json() const;
};

/// Replays `trace` against an LRU KV store of `capacity` bytes; `footprint(tokens)` is the bytes a session's KV occupies.
SessionResult simulate_sessions(const std::vector<Turn>& trace, Bytes capacity, const std::function<Bytes(int64_t)>& footprint);

/// Sessions on each of `systems` (KIND x GPUS): {"systems": {name: {hit_rate, recomputed_tokens, ...}}, "trace": {...}}.
Json run_sessions(const ModelConfig& m, const std::map<std::string, KindParams>& kinds, const std::vector<Turn>& trace,
                  const SessionParams& p, const std::vector<std::string>& systems);

}  // namespace bitline::llm
