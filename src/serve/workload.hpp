// Workloads of the serving simulation: the requests (arrival time, prompt and output tokens) an engine is offered.
//   open loop    arrivals at a rate: poisson (exponential gaps), gamma (gaps of a given coefficient of variation),
//                constant (evenly spaced); the clients do not wait for answers
//   closed loop  N users, each sending its next request the moment its previous one finishes (how the benchmark
//                clients of vLLM and NVIDIA measure at a concurrency); arrival times then come out of the simulation
//   trace        the Azure LLM inference trace CSV (TIMESTAMP,ContextTokens,GeneratedTokens): arrivals and lengths
// Lengths: fixed N, uniform:LO:HI, lognormal:MEAN:SIGMA (the mean in tokens, sigma of the log), csv:FILE:COLUMN (a trace's
// values drawn uniformly with replacement). All draws come from
// seeded streams (core/rng.hpp) with their own distributions, so a seed gives the same requests everywhere.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/units.hpp"
#include "llm/sessions.hpp"

namespace bitline::serve {

struct Request {
  int64_t id = 0;
  Time arrival{};  // open loop and traces; closed loop: set when its user sends it
  int64_t input = 0, output = 0;
  /// Prefix keys (traces only): prefix[k] names the first (k + 1) x prefix_unit tokens of the request's context (its
  /// prompt, then the output that a later turn of its session takes as its prompt's head); two requests with the
  /// same prefix[k] share those tokens' KV (serve.prefix_caching, docs/serving.md).
  std::vector<uint64_t> prefix;
  int64_t prefix_unit = 0;  // tokens per prefix key
  /// Session traces (bitline's): the index (in the workload) of the same session's next turn, -1 for none. A turn is
  /// sent at its trace time, but not before its previous turn's last token: a user answers what they have read.
  int64_t next_turn = -1;
  bool follows = false;  // a later turn of its session (sent when the previous one has finished, or at its time)
};

/// A distribution of token counts: fixed, uniform (inclusive), lognormal (mean tokens, sigma of ln), or the values of
/// a CSV file's column drawn uniformly with replacement (the empirical distribution of a trace's lengths).
struct LengthSpec {
  enum class Kind { Fixed, Uniform, Lognormal, Sampled } kind = Kind::Fixed;
  int64_t fixed = 0, lo = 0, hi = 0;
  double mean = 0, sigma = 0;
  std::string file, column;                            // Sampled: where the values come from
  std::shared_ptr<const std::vector<int64_t>> values;  // Sampled: the column's values, in file order
  /// "N", "uniform:LO:HI", "lognormal:MEAN:SIGMA" or "csv:FILE:COLUMN" (COLUMN named in the file's header; every
  /// value a whole number of tokens, at least 1); ConfigError naming `option` and the text otherwise (a length of 0
  /// tokens is refused: every request has at least one prompt and one output token), or the file, line and column.
  static LengthSpec parse(const std::string& text, const std::string& option);
  int64_t draw(Rng& rng) const;  // >= 1, at most kMaxTokens
  double expected() const;       // mean tokens (before clamping)
  std::string describe() const;
};

/// Longest prompt or output a request may have (the simulator's bound; any model's context is shorter).
inline constexpr int64_t kMaxTokens = int64_t(1) << 22;
/// Tokens per prefix key of a trace's requests (Request::prefix): Mooncake's hash-id block (its traces' 512), and the
/// same unit for bitline's session traces.
inline constexpr int64_t kTracePrefixUnit = 512;
/// Most requests one simulation holds: 2^22 (4.2 M, the most rows a trace may have, llm::kMaxTraceTurns). A request
/// holds ~330 B while it is simulated and summarised (a closed loop of 1 M one-token requests peaked at 338 MB), so
/// ~1.4 GB at the limit; a sweep runs min(--threads, rates) of them at once and is held to the same number in all
/// (docs/serving.md, "Work budget").
inline constexpr int64_t kMaxRequests = int64_t(1) << 22;

enum class ArrivalKind { Poisson, Gamma, Constant };
/// "poisson", "gamma", "constant"; ConfigError otherwise.
ArrivalKind parse_arrival(const std::string& text);
const char* to_string(ArrivalKind k);

/// Standard normal, exponential (mean 1) and gamma (shape k, scale 1) draws from `rng` (Box-Muller; inversion;
/// Marsaglia and Tsang 2000, with the k < 1 boost).
double draw_normal(Rng& rng);
double draw_exponential(Rng& rng);
double draw_gamma(Rng& rng, double shape);

/// `count` requests with lengths from `in` and `out` (one stream each, from `seed`); arrivals 0 (closed loop).
std::vector<Request> make_requests(int64_t count, const LengthSpec& in, const LengthSpec& out, uint64_t seed);
/// `count` requests whose (prompt, output) pairs are drawn uniformly with replacement from those of `pairs` (a trace's
/// requests: the lengths keep their joint distribution), from `seed`; arrivals 0.
std::vector<Request> sample_lengths(int64_t count, const std::vector<Request>& pairs, uint64_t seed);
/// Sets the arrivals of `reqs` for an open loop at `rate` requests per second (cv: gamma's coefficient of
/// variation of the gaps; 1 = Poisson). The first request arrives after one gap. ConfigError for a rate that is not
/// finite and positive, or a cv that is not.
void set_open_loop_arrivals(std::vector<Request>& reqs, double rate, ArrivalKind kind, double cv, uint64_t seed);
/// Replays a trace `speed` times as fast (2: every arrival at half its trace time, twice the rate; 0.5: half the
/// rate); the lengths and the order stay. ConfigError unless 1e-3 <= speed <= 1e3.
void scale_trace_speed(std::vector<Request>& reqs, double speed);

/// The prompt tokens each request of `reqs` could take from a prefix cache that never evicts: its leading prefix units
/// (at most up to its last prompt token, which the engine always computes) that an earlier request of the list computed
/// (its prompt and its output but the last token), in list order. What a prefix cache's hits are measured against
/// (`summary.prefix_cache.reuse_rate`); 0 for requests without prefixes.
std::vector<int64_t> reusable_prefix_tokens(const std::vector<Request>& reqs);

/// The requests of a sessions trace: each turn (or Mooncake request) a request, sorted by time (ties in trace order),
/// arrivals relative to the first, with its prefix keys (serve.prefix_caching) and, for session turns, the link to
/// the session's next turn (Request::next_turn). At most `limit` (0: all). ConfigError naming `origin` for a request
/// of 0 or too many tokens, or a trace of no requests or spanning more than 4e6 s.
std::vector<Request> requests_from_trace(const llm::Trace& trace, int64_t limit, const std::string& origin);

/// The CSV trace formats `read_csv_trace` knows, by their header.
enum class CsvTraceFormat { Azure, BurstGpt };
const char* to_string(CsvTraceFormat f);  // "azure", "burstgpt"

/// What a CSV trace held beside its requests.
struct CsvTraceInfo {
  CsvTraceFormat format = CsvTraceFormat::Azure;
  int64_t skipped_failed = 0;  // BurstGPT rows of failed requests (0 response tokens), not served
};

/// Reads a CSV trace, its format known by the columns its header names (any order, other columns ignored):
/// the Azure LLM inference trace (TIMESTAMP, ContextTokens, GeneratedTokens; TIMESTAMP in seconds from the start or
/// as "YYYY-MM-DD HH:MM:SS[.ffffff]") or BurstGPT (Timestamp in seconds, Request tokens, Response tokens; its rows
/// of failed requests, with 0 response tokens, are skipped and counted in `info`): arrivals relative to the first
/// row, at most `limit` requests (0: all). ConfigError naming the file, line, column and reason for a missing
/// column, a value that is not a number, a zero length, a negative or decreasing time.
std::vector<Request> read_csv_trace(const std::filesystem::path& file, int64_t limit, CsvTraceInfo* info = nullptr);
/// A trace by its format: a .csv file by read_csv_trace; otherwise a JSON Lines trace read by the sessions' reader
/// (llm/sessions.hpp: bitline's sessions, whose turns become requests, or Mooncake's), its requests sorted by time
/// (ties in file order), arrivals relative to the first, at most `limit` (0: all). The readers' errors name the file,
/// line and field. `info` is set for a CSV trace.
std::vector<Request> read_trace(const std::filesystem::path& file, int64_t limit, CsvTraceInfo* info = nullptr);

/// Output tokens one simulation of a serve command may decode: 2^26 (67 M; the capacity experiment's probes decode
/// ~51 M). A step decodes one token of each running request, ~0.25 us of CPU per step and ~30 B of latency records
/// per token at batch 1: at most ~17 s and ~2 GB (docs/serving.md, "Work budget"). A serve command checks them with
/// check_decode_work before anything is simulated.
inline constexpr double kMaxOutputTokensPerRun = double(int64_t(1) << 26);
/// ... and a sweep over all its rates: 2^28.
inline constexpr double kMaxSweepOutputTokens = double(int64_t(1) << 28);

/// Refuses (ConfigError naming `what`) `runs` simulations of `requests` requests that decode `tokens` output tokens
/// each when they pass the budgets; `estimated`: the tokens are the lengths' mean, before the requests are drawn.
void check_decode_work(double tokens, size_t requests, size_t runs, const std::string& what, bool estimated = false);
/// The same for the requests `reqs` (their output tokens).
void check_decode_work(const std::vector<Request>& reqs, size_t runs, const std::string& what);

}  // namespace bitline::serve
