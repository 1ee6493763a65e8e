// Multi-turn sessions: their traces and the synthetic agentic trace. The sessions are served, and their KV reused
// across turns, by the request-level simulation with prefix caching (serve/sessions.hpp, `bitline accel sessions`).
//
// Two trace formats (JSON Lines, one record per line; docs/llm.md), told apart
// by the keys of the first record:
// - bitline's sessions, one turn per line, any order:
//   {"session": "s17", "turn": 2, "input_tokens": 15340, "output_tokens": 5900, "timestamp": 812.5}
//   session: string or integer id; turn: 1, 2, ... within the session;
//   input_tokens: the whole prompt of the turn, history included; output_tokens:
//   tokens generated; timestamp: seconds when the turn arrives. The reusable
//   prefix of turn k is the previous turn's prompt + output.
// - Mooncake's public traces (FAST'25 release), one request per line:
//   {"timestamp": 3052, "input_length": 7234, "output_length": 794, "hash_ids": [0, 28, 29, 30]}
//   timestamp: milliseconds; hash_ids: one id per block of sessions.block_tokens
//   prompt tokens (512 in Mooncake's traces); two requests whose hash_ids start
//   with the same ids share that prefix.
//
// The offered load of the synthetic trace (sessions per second, think time,
// turns per session) is a set of sessions.* parameters; an experiment file
// sweeps it (configs/experiments/flashaccel-sessions.yaml, `loads:`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/stats.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

struct KindParams;

/// Most turns of a trace, read or synthetic: 2^22 (4.2M). A turn costs ~200 B while it is replayed, so a
/// full trace stays well under 1 GB; a trace file is also capped at kMaxTraceFileBytes (core/input.hpp).
inline constexpr int64_t kMaxTraceTurns = int64_t(1) << 22;
/// Most hash ids (prompt blocks) of a Mooncake trace, all lines together: 2^23 (8.4M). The replay keeps
/// a prefix key (8 B) per id and at most one cache entry (~70 B) per distinct block: under 1 GB.
inline constexpr int64_t kMaxTraceBlocks = int64_t(1) << 23;
/// Most JSON values on one trace line: 2^21 (2.1M), the hash ids of a 2^30-token prompt in 512-token
/// blocks. Checked while the line is parsed, so a line of millions of values fails before it is held.
inline constexpr int64_t kMaxTraceLineValues = int64_t(1) << 21;
/// Latest timestamp of a trace: 10^10 s (317 years; Mooncake: 10^13 ms), far past any real trace.
inline constexpr double kMaxTraceSeconds = 1e10;

struct Turn {
  std::string session;
  int64_t turn = 1;
  int64_t input = 0, output = 0;
  double timestamp = 0;
  int64_t line = 0;  // of the trace file (for messages)
};

/// One request of a Mooncake trace. prefix[i] identifies the first i + 1 blocks of the prompt (a hash of
/// hash_ids[0..i]): two requests with the same prefix[i] share blocks 0..i, whatever their ids mean.
struct PrefixRequest {
  double timestamp = 0;  // seconds
  int64_t input = 0, output = 0;
  std::vector<uint64_t> prefix;
  int64_t line = 0;  // of the trace file (for messages)
};
struct PrefixTrace {
  int64_t block_tokens = 512;  // prompt tokens per hash id
  std::vector<PrefixRequest> requests;
};
/// A trace: bitline's sessions or a Mooncake trace.
using Trace = std::variant<std::vector<Turn>, PrefixTrace>;

/// Reads a bitline JSONL trace; ConfigError naming the file, the line and the field for bad input.
std::vector<Turn> read_trace(const std::filesystem::path& file);
/// Parses bitline JSONL text (`origin` names it in messages).
std::vector<Turn> parse_trace(const std::string& text, const std::string& origin);
/// Parses a Mooncake JSONL trace whose hash ids stand for `block_tokens` prompt tokens each.
PrefixTrace parse_mooncake_trace(const std::string& text, const std::string& origin, int64_t block_tokens);
/// Reads a trace of either format (the first record's keys tell which: "hash_ids" or "input_length" = Mooncake).
Trace read_any_trace(const std::filesystem::path& file, int64_t block_tokens);
Trace parse_any_trace(const std::string& text, const std::string& origin, int64_t block_tokens);
/// Synthetic agentic sessions (sessions.* parameters): Poisson arrivals, 2-6 turns, prompts that grow by the
/// previous output and new input, turns separated by the decode time of the output and a think time.
std::vector<Turn> synthetic_trace(const SessionParams& p);
/// Sessions started per second of the synthetic trace: sessions.arrival_per_s, or with sessions.decoding > 0 the rate
/// at which that many requests decode at once (Little's law: decoding x user_tokens_per_s / (mean turns x output)).
double session_arrival_per_s(const SessionParams& p);
/// The most turns synthetic_trace(p) can make (sessions x turns_max); ConfigError past kMaxTraceTurns.
int64_t synthetic_turns_max(const SessionParams& p);

/// The trace's shape: {"format", "turns", "mean_input_tokens", "mean_output_tokens", and for bitline traces
/// "sessions", "session_arrival_per_s", "mean_session_s", "sessions_alive"; for Mooncake's "block_tokens",
/// "blocks"}. sessions_alive is the offered load the retention sees: the mean number of sessions waiting for a
/// next turn (whose KV is worth keeping), by Little's law the session arrival rate (over the span of first
/// turns) x the mean time from a session's first turn to its last.
Json trace_summary(const Trace& trace);

/// One offered load: a name, the sessions parameters it was made with, and its trace.
struct SessionLoad {
  std::string name;
  SessionParams params;
  Trace trace;
};

}  // namespace bitline::llm
