// The paper's workloads (spec "Workloads"), their evaluation on the four
// systems, and the reliability experiment.
//   bmi  bitmap index: AND of days(m) daily user vectors, bit count on the host
//   ims  image segmentation: AND of the Y, U, V planes
//   kcs  k-clique star listing: per clique OR(AND(k adjacency vectors), clique vector)
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "cosmos/cosmos_ssd.hpp"
#include "ssd/params.hpp"

namespace bitline::cosmos {

struct WorkloadParams {
  int64_t users = 0, days_per_month = 0;
  int64_t image_width = 0, image_height = 0, colors = 0;
  int64_t vertices = 0, cliques = 0;
  double bmi_activity = 0, bmi_loyal_fraction = 0, ims_density = 0, kcs_density = 0;
  int64_t reliability_pe_cycles = 0;
  double reliability_retention_days = 0;

  template <class V>
  void visit(V& v) {
    v(users, {.name = "users",
              .def = "800000000",
              .desc = "BMI: users tracked (bits per daily vector)",
              .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads, BMI): u = 800 million",
              .min = 8,
              .max = double(int64_t(1) << 40)});
    v(days_per_month, {.name = "days_per_month",
                       .def = "30",
                       .desc = "BMI: days in a month",
                       .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads)",
                       .min = 1,
                       .max = 31});
    v(image_width, {.name = "image_width",
                    .def = "800",
                    .desc = "IMS: pixels per row",
                    .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads)",
                    .min = 1,
                    .max = 1 << 16});
    v(image_height, {.name = "image_height",
                     .def = "600",
                     .desc = "IMS: rows per image",
                     .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads)",
                     .min = 1,
                     .max = 1 << 16});
    v(colors, {.name = "colors",
               .def = "4",
               .desc = "IMS: colours segmented",
               .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads)",
               .min = 1,
               .max = 1024});
    v(vertices, {.name = "vertices",
                 .def = "33554432",
                 .desc = "KCS: graph vertices (bits per vector)",
                 .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads, KCS): 32 million vertices, 4 MB vectors",
                 .min = 8,
                 .max = double(int64_t(1) << 40)});
    v(cliques, {.name = "cliques",
                .def = "1024",
                .desc = "KCS: cliques listed",
                .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (workloads)",
                .min = 1,
                .max = 1 << 16});
    v(bmi_activity, {.name = "bmi_activity",
                     .def = "0.5",
                     .desc = "synthetic BMI data: chance an ordinary user is active on a day",
                     .source = "assumption",
                     .min = 0,
                     .max = 1});
    v(bmi_loyal_fraction, {.name = "bmi_loyal_fraction",
                           .def = "0.001",
                           .desc = "synthetic BMI data: fraction of users active every day",
                           .source = "assumption",
                           .min = 0,
                           .max = 1});
    v(ims_density, {.name = "ims_density",
                    .def = "0.5",
                    .desc = "synthetic IMS data: fraction of set bits per plane",
                    .source = "assumption",
                    .min = 0,
                    .max = 1});
    v(kcs_density, {.name = "kcs_density",
                    .def = "0.9",
                    .desc = "synthetic KCS data: adjacency density among clique members' vectors",
                    .source = "assumption: dense, so the AND of k vectors is not trivially empty",
                    .min = 0,
                    .max = 1});
    v(reliability_pe_cycles, {.name = "reliability_pe_cycles",
                              .def = "10000",
                              .desc = "reliability experiment, stress condition: P/E cycles of every block",
                              .source = "Flash-Cosmos (MICRO 2022), ESP characterisation: the worst condition, 10K P/E cycles",
                              .min = 0,
                              .max = 1e7});
    v(reliability_retention_days,
      {.name = "reliability_retention_days",
       .def = "365",
       .desc = "reliability experiment, stress condition: retention age of the data when sensed",
       .source = "Flash-Cosmos (MICRO 2022), ESP characterisation: the worst condition, 1 year retention (at 30 C)",
       .min = 0,
       .max = 36500});
  }
};

struct Point {
  std::string workload;  // a name in workloads()
  std::string param;     // months | images | k
  int64_t value = 0;
};

/// An evaluation matrix: the points (the sweeps of the workloads), the systems each runs on and the pairs
/// the summary compares. The paper's is configs/experiments/flash-cosmos-eval.yaml; the format is in
/// docs/experiments.md.
struct EvalMatrix {
  std::vector<Point> points;                               // in the file's order
  std::vector<System> systems;                             // every point runs on each, in this order
  std::vector<std::pair<System, System>> compare;          // summary pairs A/B: A's speedup and energy efficiency over B
  std::vector<Override> set;                               // overrides of component parameters (as --set)
  int64_t reliability_months = 0, reliability_trials = 0;  // `cosmos reliability` defaults
  /// The sweeps as {"months": [...], "images": [...], "clique_sizes": [...]} (those the matrix has).
  Json sweep_json() const;
  /// The first point of a workload; ConfigError when the matrix has none.
  const Point& first(const std::string& workload) const;
};
/// Reads an experiment file of `cosmos eval`; ConfigError naming the file, the line and the key.
EvalMatrix load_eval_matrix(const std::filesystem::path& file);

struct PreparedPoint;

/// A workload of the evaluation: sets up a point's operands (sizes, or synthetic data in functional mode) and queries.
using PrepareWorkload = void (*)(CosmosSsd& ssd, const Point& p, const WorkloadParams& w, System s, Rng& rng, PreparedPoint& out);
/// A point's operands, the bits of each, and the keys that size them (for messages).
struct PointOperands {
  double operands = 0, bits = 0;
  const char* keys = "";
  /// Every page of every operand once, at `page_bytes` per page (operand_page_reads below).
  double page_reads(int64_t page_bytes) const;
};
using WorkloadOperands = PointOperands (*)(const Point& p, const WorkloadParams& w);
/// A workload: how to prepare a point, and how its points are named in an experiment file and on the command line.
struct WorkloadKind {
  PrepareWorkload prepare;
  WorkloadOperands operands;   // what prepare writes, known before it runs (the work estimate)
  std::string_view sweep_key;  // its sweep's key in an experiment file (and in the resolved config): months | images | clique_sizes
  std::string_view param;      // a point's parameter (Point::param, `cosmos run --param NAME=N`): months | images | k
  int64_t max_value;           // the largest point value (keeps one point's work within reach)
};
/// The workloads by name (Point::workload; table in cosmos/workloads.cpp, beside them).
const Registry<WorkloadKind>& workloads();
/// The workload named `name` (a name in workloads(); ModelError otherwise).
const WorkloadKind& workload_kind(const std::string& name);

/// Writes a point's operands (sizes only, or synthetic data in functional mode)
/// and returns the queries and whether the host counts result bits.
struct PreparedPoint {
  std::vector<Expr> queries;
  bool popcount = false;
  std::vector<BitVector> reference;  // functional mode: CPU reference result per query
};
PreparedPoint prepare(CosmosSsd& ssd, const Point& p, const WorkloadParams& w, System s, uint64_t seed);

struct EvalConfig {
  nand::NandParams nand;
  ssd::SsdParams ssd;
  ssd::HostParams host;
  CosmosParams cosmos;
  WorkloadParams workload;
  uint64_t seed = 1;
  // Also time every point on the general SSD with these scheduling options (cosmos eval --general-device).
  std::optional<ssd::SsdModelOptions> general_device;
};

struct PointResult {
  Point point;
  System system;
  ReadResult read;
};

/// The work of a run, known before anything is written: the operand pages its read fetches at most (every page of
/// every operand of every query once, as OSP ships them to the host; the in-flash systems sense several per command),
/// at `page_bytes` per page. A run's time grows with it (OSP: ~10 M pages a second on one core).
double operand_page_reads(const Point& p, const WorkloadParams& w, int64_t page_bytes);
/// Most operand page reads of one run (`cosmos run`, each run of `cosmos eval`): 2^28, 16x the paper's largest point
/// (KCS k = 64: 17 M); and of one evaluation, over all its runs: 2^30, 4x the paper's (docs/commands.md, "Hardened inputs").
inline constexpr double kMaxRunPageReads = double(int64_t(1) << 28), kMaxEvalPageReads = double(int64_t(1) << 30);
/// Most operands of one run: 2^22 (~400 B each while it runs: ~1.7 GB), 63x the paper's largest point (66,560).
inline constexpr double kMaxRunOperands = double(int64_t(1) << 22);
/// Refuses (ConfigError naming the point, its operands and the keys that size them) a point above kMaxRunPageReads or
/// kMaxRunOperands; returns its operand page reads.
double check_run_work(const Point& p, const WorkloadParams& w, int64_t page_bytes);
/// check_run_work for every point of the matrix, then the sum over its runs (points x systems) against kMaxEvalPageReads.
void check_eval_work(const EvalMatrix& m, const WorkloadParams& w, int64_t page_bytes);

/// Runs every point of the matrix on every system of it (timing-only); `progress` is told each point.
/// Every point x system, on `threads` workers; the results (in point, system order) do not depend on `threads`.
std::vector<PointResult> run_eval(const EvalConfig& cfg, const EvalMatrix& matrix,
                                  const std::function<void(size_t, size_t, const std::string&)>& progress, int threads = 1);
/// Job `i` of the matrix: point i / systems on system i % systems.
struct EvalJob {
  const Point& point;
  System system;
};
EvalJob eval_job(const EvalMatrix& matrix, size_t i);
/// How progress lines and errors name a run: "bmi months=36 on osp".
std::string run_label(const Point& p, System s);
/// Job `i` of the matrix (eval_job): one timing-only run.
PointResult run_eval_job(const EvalConfig& cfg, const EvalMatrix& matrix, size_t i);
size_t eval_job_count(const EvalMatrix& matrix);
/// Places every job's operands (timing-only: the firmware's placement, no NAND work; ~1 ms a job at paper scale)
/// before any job runs, so that an SSD too small for a later point fails at once (ModelError naming the point and the
/// system), not after the points before it have run. On `threads` threads (0: the machine's); the first failing job's error.
void check_eval_placement(const EvalConfig& cfg, const EvalMatrix& matrix, int threads);
/// One result as a point of the evaluation JSON.
Json point_json(const PointResult& r);
/// The JSON of the issue: points, summary (speedup, energy efficiency over the matrix's pairs), config.
Json eval_json(const std::vector<PointResult>& results, const EvalMatrix& matrix, const Json& config);
/// The same from the points' JSON (point_json, in job order).
Json eval_json(Json points, const EvalMatrix& matrix, const Json& config);

/// BMI reliability: fraction of BMI queries answered exactly over `trials`
/// functional runs on raw SLC (no ESP) or ESP data, with errors injected.
struct ReliabilityResult {
  int64_t trials = 0, exact = 0;
  uint64_t cells_sensed = 0, bit_errors = 0, wrong_result_bits = 0;
  double fraction_exact() const { return trials ? double(exact) / double(trials) : 0.0; }
};
ReliabilityResult run_reliability(const EvalConfig& cfg, int64_t months, bool esp, int64_t trials);

/// Sequential write bandwidth of the SSD in one program mode (event-driven).
double write_bandwidth(const EvalConfig& cfg, nand::ProgramMode mode, Bytes total);

}  // namespace bitline::cosmos
