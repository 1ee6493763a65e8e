// Pieces shared by the `bitline serve ...` subcommands (src/cli/serve/*.cpp, one file per subcommand): the options,
// the system(s) a workload is served on, the workload they ask for, and the JSON header of every result.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/accel/common.hpp"
#include "cli/common.hpp"
#include "core/worker_pool.hpp"
#include "llm/deployment.hpp"
#include "serve/simulator.hpp"

namespace bitline::cli::serve_cli {

using namespace bitline::serve;

/// Every option of the three subcommands (each reads its own).
struct ServeOpts {
  std::string model, system, prefill_system, disaggregate, precision, scheduler, lengths, arrival = "poisson", input, output, json,
                                                                                          requests_out, trace, chrome_trace;
  std::string engine = kDefaultEngine;  // --engine: a profile of configs/engines/ or a path
  std::string percentiles;              // --percentiles P1,P2,... (0 < P < 100): more percentiles in the summary
  int64_t tp = 0, concurrency = 0, max_concurrency = 0, requests = 0;
  uint64_t seed = 1;
  bool seed_given = false;
  double rate = std::numeric_limits<double>::quiet_NaN(), cv = 1, trace_speed = 1;
  bool rate_given = false, prefix_caching = false;
  double slo_ttft_ms = 0, slo_tpot_ms = 0;
  // capacity
  double p90_ttft_ms = 0, p99_tpot_ms = 0, rate_lo = 0, tolerance = 0.02;
  // sweep
  std::string rates;          // R1,R2,... (requests/s)
  std::string concurrencies;  // C1,C2,... (users of a closed loop)
  std::string csv;
  int threads = WorkerPool::hardware_threads();
  bool quiet = false;
};

/// A sweep's points at most: the work budget of `serve sweep`.
inline constexpr size_t kMaxSweepPoints = 256;
/// Why --requests and --concurrency stop at kMaxRequests.
inline constexpr std::string_view kRequestsWhy = "a simulation holds ~330 B per request (docs/serving.md, \"Work budget\")";

/// The system, the server of its deployment (llm.tp_size from --tp) and the `serve` parameters.
struct Setup {
  llm::SystemName sn;
  llm::KindParams kp;
  ServeParams sp;
  EngineSetup engine;  // the serving engine (--engine), which set sp's scheduler and limits
  Json config;
  llm::ModelConfig model;
  std::unique_ptr<llm::DeploymentSearch> ds;
  const llm::Server* server = nullptr;
  std::string choice;  // why the deployment is not the preferred one ("" when it is)
  // --disaggregate P:D: this side decodes on `decode_instances` instances; `prefill` is the prefill side.
  std::unique_ptr<Setup> prefill;
  int64_t prefill_instances = 0, decode_instances = 0;
  std::vector<NamedPath> inputs;  // the files it read: the kind's config files and the model's description
};

/// The system(s) that serve workload `w` (its lengths): one colocated engine on --system, or with --disaggregate P:D
/// P prefill instances of --prefill-system (default: --system) and D decode instances of --system, each deployment
/// chosen to hold what it must (the prompt and first token on the prefill side, the whole context on the decode side).
std::unique_ptr<Setup> make_setup(const accel::KindOptions& k, const ServeOpts& o, const Workload& w, bool quiet = false);
/// Every file a serve command reads: its options' files (--trace, --lengths, csv:FILE:COLUMN lengths), the kinds'
/// config files and the model descriptions of both sides. No output may be one of them (checked before any work).
std::vector<NamedPath> input_files(const ServeOpts& o, const Setup& s);
/// The engines of `s` as the simulation takes them.
Cluster cluster(const Setup& s);

/// The requests of `o` with their lengths and no arrivals yet (they do not depend on the rate): drawn from --input and
/// --output or --lengths.
std::vector<Request> request_lengths(const ServeOpts& o);
/// `reqs` (their lengths) as the open-loop workload of `o` at `rate`.
Workload at_rate(const ServeOpts& o, std::vector<Request> reqs, double rate);
/// The workload of `o`: a trace, a closed loop, or an open loop at `rate`.
Workload make_workload(const ServeOpts& o, double rate, CsvTraceInfo* info = nullptr);
/// Refuses options the mode does not read (serve run: exactly one of --rate, --concurrency, --trace; capacity: none).
void check_mode(const ServeOpts& o, bool capacity);
/// The model, system(s), deployment(s), scheduler, seed and workload of a result.
Json header(const Setup& s, const ServeOpts& o);

/// --percentiles P1,P2,...: at most 16 numbers in (0, 100), in decimal (benchmark_serving's --metric-percentiles).
std::vector<double> percentile_list(const ServeOpts& o);

/// The options every serve subcommand takes.
void add_common(CLI::App& cmd, ServeOpts& o);

void add_run(CLI::App& serve, const RunContext& ctx);
void add_capacity(CLI::App& serve);
void add_sweep(CLI::App& serve, const RunContext& ctx);

}  // namespace bitline::cli::serve_cli
