#include "cosmos/workloads.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/rng.hpp"
#include "core/worker_pool.hpp"
#include "ssd/sequential_write.hpp"

namespace bitline::cosmos {
namespace {

/// nbits random bits, each 1 with probability p (exact for p = 0.5, 1/65536 resolution otherwise).
BitVector random_bits(Rng& rng, size_t nbits, double p) {
  BitVector v(nbits);
  if (p == 0.5) {
    for (auto& w : v.words()) w = rng.next();
  } else if (p > 0) {
    const uint32_t thr = uint32_t(std::llround(p * 65536.0));
    uint64_t* w = v.data();
    for (size_t i = 0; i < v.word_count(); ++i) {
      uint64_t word = 0;
      for (int k = 0; k < 64; k += 4) {
        uint64_t r = rng.next();
        for (int j = 0; j < 4; ++j)
          if (uint32_t((r >> (16 * j)) & 0xFFFF) < thr) word |= uint64_t(1) << (k + j);
      }
      w[i] = word;
    }
  }
  BitVector ones(nbits, true);
  v &= ones;
  return v;
}

int64_t bytes_of_bits(int64_t bits, const char* what) {
  if (bits % 8) throw ModelError(fmt::format("{}: {} bits is not a whole number of bytes", what, bits));
  return bits / 8;
}

}  // namespace

namespace {

/// Most runs (points x systems) of a `cosmos eval` experiment (docs/commands.md, "Hardened inputs").
constexpr size_t kMaxEvalRuns = 10000;

System system_at(const ConfigNode& n, const std::string& path) {
  if (n.kind != ConfigNode::Kind::Scalar) experiment_error(n, path, "expected a system name (" + systems().joined(", ") + ")");
  const int64_t i = systems().find(n.scalar);
  if (i < 0) experiment_error(n, path, systems().unknown_message(n.scalar));
  return systems().value(size_t(i));
}

}  // namespace

EvalMatrix load_eval_matrix(const std::filesystem::path& file) {
  const ConfigNode root = read_experiment_file(file);
  ExperimentMap top(root, "");
  EvalMatrix m;
  top.accept_header();
  {
    const std::vector<std::string> names = top.strings("systems");
    const ConfigNode& n = *top.optional("systems");
    for (size_t i = 0; i < names.size(); ++i) m.systems.push_back(system_at(n.items[i], fmt::format("systems[{}]", i)));
  }
  {
    const ConfigNode& n = top.required("sweep");
    ExperimentMap sweep(n, "sweep");
    for (const auto& [key, value] : n.keys) {
      const WorkloadKind* k = nullptr;
      std::string_view name;
      for (size_t i = 0; i < workloads().size(); ++i)
        if (key == workloads().value(i).sweep_key) k = &workloads().value(i), name = workloads().names()[i];
      if (!k) continue;  // finish() names it
      for (int64_t v : sweep.integers(key, 1)) {
        if (v > k->max_value)
          experiment_error(value, fmt::format("sweep.{}", key), fmt::format("{} is above the maximum {}", v, k->max_value));
        m.points.push_back({std::string(name), std::string(k->param), v});
      }
    }
    for (size_t i = 0; i < workloads().size(); ++i) sweep.optional(std::string(workloads().value(i).sweep_key));
    sweep.finish();
    if (m.points.empty()) experiment_error(n, "sweep", "no points: give months (bmi), images (ims) and/or clique_sizes (kcs)");
    // The work, bounded before anything runs: every point runs on every system, each run tens of milliseconds at the
    // paper's sizes (its 56 take ~2.7 s on two cores) and up to seconds at the largest points.
    const size_t runs = m.points.size() * m.systems.size();
    if (runs > kMaxEvalRuns)
      experiment_error(n, "sweep",
                       fmt::format("{} runs ({} points x {} systems), more than the {} one evaluation may run (about {:.0f} "
                                   "minutes or more at ~50 ms a run); split it into several experiments",
                                   runs, m.points.size(), m.systems.size(), kMaxEvalRuns, double(runs) * 0.05 / 60));
  }
  if (const ConfigNode* n = top.optional("compare")) {
    const std::vector<std::string> pairs = top.strings("compare");
    for (size_t i = 0; i < pairs.size(); ++i) {
      const std::string path = fmt::format("compare[{}]", i);
      const auto slash = pairs[i].find('/');
      if (slash == std::string::npos || pairs[i].find('/', slash + 1) != std::string::npos)
        experiment_error(n->items[i], path,
                         fmt::format("'{}': a comparison is exactly two systems A/B (A's speedup over B, e.g. fc/osp)", pairs[i]));
      ConfigNode a = n->items[i], b = n->items[i];
      a.scalar = pairs[i].substr(0, slash);
      b.scalar = pairs[i].substr(slash + 1);
      const System sa = system_at(a, path), sb = system_at(b, path);
      // The summary divides B's points by A's: both must run (a missing one used to end in an internal error
      // after the points had run, with a result file left behind).
      for (const auto& [sys, name] : {std::pair{sa, a.scalar}, std::pair{sb, b.scalar}})
        if (std::find(m.systems.begin(), m.systems.end(), sys) == m.systems.end()) {
          std::vector<std::string> listed;
          for (System s : m.systems) listed.emplace_back(to_string(s));
          experiment_error(
              n->items[i], path,
              fmt::format("'{}' compares system '{}', which is not in systems: [{}]", pairs[i], name, fmt::join(listed, ", ")));
        }
      if (sa == sb) experiment_error(n->items[i], path, fmt::format("'{}' compares a system with itself", pairs[i]));
      m.compare.emplace_back(sa, sb);
    }
  }
  if (const ConfigNode* n = top.optional("reliability")) {
    ExperimentMap r(*n, "reliability");
    m.reliability_months = r.integer("months", 1);
    m.reliability_trials = r.integer("trials", 1);
    if (m.reliability_months > 1200) experiment_error(*n, "reliability.months", "at most 1200 (100 years)");
    if (m.reliability_trials > 10000) experiment_error(*n, "reliability.trials", "at most 10000 (each writes and reads fresh data)");
    r.finish();
  }
  m.set = top.overrides("set");
  top.finish();
  return m;
}

Json EvalMatrix::sweep_json() const {
  Json j = Json::object();
  for (size_t i = 0; i < workloads().size(); ++i)
    for (const Point& p : points)
      if (p.workload == workloads().names()[i]) j[std::string(workloads().value(i).sweep_key)].push_back(p.value);
  return j;
}

const Point& EvalMatrix::first(const std::string& workload) const {
  for (const Point& p : points)
    if (p.workload == workload) return p;
  throw ConfigError(fmt::format("the experiment has no {} point (its sweep has no {})", workload, workload_kind(workload).sweep_key));
}

namespace {

/// Everything a workload's preparation needs: the SSD, the point, the parameters, the system, the data stream.
struct Prep {
  CosmosSsd& ssd;
  const Point& p;
  const WorkloadParams& w;
  System s;
  Rng& rng;
  PreparedPoint& out;
  bool fn;  // functional: store synthetic data and compute the CPU reference
  void put(const std::string& name, int64_t bytes, const BitVector* data, const WriteOptions& o) const {
    if (fn)
      ssd.write(name, *data, o);
    else
      ssd.write(name, bytes, o);
  }
};

/// Functional data: every operand is generated, stored in the dies and folded into the CPU reference, so the
/// data a run keeps is bounded before anything is allocated.
void check_functional_size(const Point& p, int64_t operands, int64_t bits, const char* keys) {
  const double need = 2.0 * double(operands + 1) * double(bits) / 8;
  if (need > double(nand::kMaxFunctionalBytes))
    throw ConfigError(
        fmt::format("functional {} {}={}: {} operands of {} bits need about {:.3g} GB of data, more than the {} MiB a "
                    "functional run may keep; reduce {} (a timing-only run has no such limit)",
                    p.workload, p.param, p.value, operands, bits, need * 1e-9, nand::kMaxFunctionalBytes >> 20, keys));
}

void prepare_bmi(CosmosSsd& ssd, const Point& p, const WorkloadParams& wp, System s, Rng& rng, PreparedPoint& out) {
  const Prep x{ssd, p, wp, s, rng, out, ssd.functional()};
  const WorkloadParams& w = x.w;
  const bool fn = x.fn;
  const int64_t days = checked_mul(x.p.value, w.days_per_month, "BMI days");
  if (fn) check_functional_size(x.p, days, w.users, "workload.users, months");
  const int64_t bytes = bytes_of_bits(w.users, "workload.users");
  x.ssd.declare_group("bmi", uint32_t(days));
  std::vector<Expr> kids;
  BitVector loyal, ref;
  if (fn) {
    loyal = random_bits(x.rng, size_t(w.users), w.bmi_loyal_fraction);
    ref = BitVector(size_t(w.users), true);
  }
  for (int64_t d = 0; d < days; ++d) {
    std::string name = fmt::format("day{}", d);
    BitVector v;
    if (fn) {
      v = random_bits(x.rng, size_t(w.users), w.bmi_activity);
      v |= loyal;
      ref &= v;
    }
    x.put(name, bytes, &v, write_options_for(x.s, "bmi"));
    kids.push_back(Expr::var(name));
  }
  x.out.queries.push_back(Expr::make(Expr::Op::And, std::move(kids)));
  x.out.popcount = true;
  if (fn) x.out.reference.push_back(std::move(ref));
}

void prepare_ims(CosmosSsd& ssd, const Point& p, const WorkloadParams& wp, System s, Rng& rng, PreparedPoint& out) {
  const Prep x{ssd, p, wp, s, rng, out, ssd.functional()};
  const WorkloadParams& w = x.w;
  const bool fn = x.fn;
  const int64_t bits =
      checked_mul(checked_mul(checked_mul(x.p.value, w.image_width, "IMS bits"), w.image_height, "IMS bits"), w.colors, "IMS bits");
  if (fn) check_functional_size(x.p, 3, bits, "images, workload.image_width/height/colors");
  const int64_t bytes = bytes_of_bits(bits, "IMS plane");
  x.ssd.declare_group("ims", 3);
  BitVector ref;
  if (fn) ref = BitVector(size_t(bits), true);
  for (const char* n : {"Y", "U", "V"}) {
    BitVector v;
    if (fn) v = random_bits(x.rng, size_t(bits), w.ims_density), ref &= v;
    x.put(n, bytes, &v, write_options_for(x.s, "ims"));
  }
  x.out.queries.push_back(parse_expr("AND(Y, U, V)"));
  if (fn) x.out.reference.push_back(std::move(ref));
}

void prepare_kcs(CosmosSsd& ssd, const Point& p, const WorkloadParams& wp, System s, Rng& rng, PreparedPoint& out) {
  const Prep x{ssd, p, wp, s, rng, out, ssd.functional()};
  const WorkloadParams& w = x.w;
  const bool fn = x.fn;
  const int64_t k = x.p.value;
  if (fn) check_functional_size(x.p, checked_mul(w.cliques, k, "KCS operands"), w.vertices, "workload.vertices, cliques, k");
  const int64_t bytes = bytes_of_bits(w.vertices, "workload.vertices");
  x.ssd.declare_group("cliques", uint32_t(std::min<int64_t>(w.cliques, 1 << 20)));
  for (int64_t q = 0; q < w.cliques; ++q) {
    std::string g = fmt::format("adj{}", q);
    x.ssd.declare_group(g, uint32_t(k));
    std::vector<Expr> members;
    BitVector term;
    if (fn) term = BitVector(size_t(w.vertices), true);
    for (int64_t i = 0; i < k; ++i) {
      std::string name = fmt::format("a{}_{}", q, i);
      BitVector v;
      if (fn) v = random_bits(x.rng, size_t(w.vertices), w.kcs_density), term &= v;
      x.put(name, bytes, &v, write_options_for(x.s, g));
      members.push_back(Expr::var(name));
    }
    std::string cname = fmt::format("c{}", q);
    BitVector c;
    if (fn) c = random_bits(x.rng, size_t(w.vertices), 1.0 / 64), term |= c;
    x.put(cname, bytes, &c, write_options_for(x.s, "cliques"));
    x.out.queries.push_back(Expr::make(Expr::Op::Or, {Expr::make(Expr::Op::And, std::move(members)), Expr::var(cname)}));
    if (fn) x.out.reference.push_back(std::move(term));
  }
}

// Each workload's operands, as its prepare function writes them (the work estimate of a run, before it runs).
PointOperands operands_bmi(const Point& p, const WorkloadParams& w) {
  return {double(p.value) * double(w.days_per_month), double(w.users), "months x workload.days_per_month operands of workload.users bits"};
}
PointOperands operands_ims(const Point& p, const WorkloadParams& w) {
  return {3, double(p.value) * double(w.image_width) * double(w.image_height) * double(w.colors),
          "3 planes of images x workload.image_width x image_height x colors bits"};
}
PointOperands operands_kcs(const Point& p, const WorkloadParams& w) {
  return {double(w.cliques) * double(p.value + 1), double(w.vertices), "workload.cliques x (k + 1) operands of workload.vertices bits"};
}

}  // namespace

// Each point's value is capped so that a sweep's work stays within reach (as the workload parameters are): 100
// years of days, 16 M images (44 GiB-class results x 2^8), cliques of at most 4,096 vertices.
const Registry<WorkloadKind>& workloads() {
  static const Registry<WorkloadKind> r("workload",
                                        {{"bmi",
                                          "bitmap index: AND of days(m) daily user vectors, bit count on the host (points: months)",
                                          {prepare_bmi, operands_bmi, "months", "months", 1200}},
                                         {"ims",
                                          "image segmentation: AND of the Y, U, V planes (points: images)",
                                          {prepare_ims, operands_ims, "images", "images", int64_t(1) << 24}},
                                         {"kcs",
                                          "k-clique star listing: per clique OR(AND(k adjacency vectors), clique vector) (points: k)",
                                          {prepare_kcs, operands_kcs, "clique_sizes", "k", 4096}}});
  return r;
}

const WorkloadKind& workload_kind(const std::string& name) {
  const int64_t i = workloads().find(name);
  if (i < 0) throw ModelError(fmt::format("unknown workload: {}", workloads().unknown_message(name)));
  return workloads().value(size_t(i));
}

PreparedPoint prepare(CosmosSsd& ssd, const Point& p, const WorkloadParams& w, System s, uint64_t seed) {
  const WorkloadKind& kind = workload_kind(p.workload);
  PreparedPoint out;
  Rng rng = Rng::derive(seed, "workload." + p.workload);
  try {
    kind.prepare(ssd, p, w, s, rng, out);
  } catch (const ModelError& e) {  // e.g. an SSD too small for the point: say which point, on which system
    throw ModelError(fmt::format("{}: {}", run_label(p, s), e.what()));
  }
  return out;
}

double PointOperands::page_reads(int64_t page_bytes) const {
  return operands * std::ceil(std::ceil(bits / 8) / double(std::max<int64_t>(page_bytes, 1)));
}

double operand_page_reads(const Point& p, const WorkloadParams& w, int64_t page_bytes) {
  return workload_kind(p.workload).operands(p, w).page_reads(page_bytes);
}

double check_run_work(const Point& p, const WorkloadParams& w, int64_t page_bytes) {
  const PointOperands o = workload_kind(p.workload).operands(p, w);
  if (o.operands > kMaxRunOperands)
    throw ConfigError(
        fmt::format("{} {}={}: {:.4g} operands, more than the {:.4g} one run may write (2^22, ~400 B each while it "
                    "runs; {}); reduce them",
                    p.workload, p.param, p.value, o.operands, kMaxRunOperands, o.keys));
  const double reads = o.page_reads(page_bytes);
  if (reads > kMaxRunPageReads)
    throw ConfigError(
        fmt::format("{} {}={}: {:.4g} operands of {:.4g} bits are {:.4g} pages of {} B to read, more than the {:.4g} one run "
                    "may read (2^28, ~25 s of OSP; {}); reduce them",
                    p.workload, p.param, p.value, o.operands, o.bits, reads, page_bytes, kMaxRunPageReads, o.keys));
  return reads;
}

void check_eval_work(const EvalMatrix& m, const WorkloadParams& w, int64_t page_bytes) {
  double total = 0;
  for (const Point& p : m.points) total += check_run_work(p, w, page_bytes) * double(m.systems.size());
  if (total > kMaxEvalPageReads)
    throw ConfigError(
        fmt::format("the experiment's {} runs read {:.4g} operand pages ({} points x {} systems), more than the {:.4g} one "
                    "evaluation may read (2^30, a few minutes); split it or reduce the workload sizes",
                    m.points.size() * m.systems.size(), total, m.points.size(), m.systems.size(), kMaxEvalPageReads));
}

size_t eval_job_count(const EvalMatrix& matrix) { return matrix.points.size() * matrix.systems.size(); }

EvalJob eval_job(const EvalMatrix& matrix, size_t i) {
  return {matrix.points[i / matrix.systems.size()], matrix.systems[i % matrix.systems.size()]};
}

std::string run_label(const Point& p, System s) { return fmt::format("{} {}={} on {}", p.workload, p.param, p.value, to_string(s)); }

void check_eval_placement(const EvalConfig& cfg, const EvalMatrix& matrix, int threads) {
  // Every job placed on the pool; the error of the first job (in matrix order) that fails is the one thrown, whatever
  // the threads' timing.
  const std::vector<std::exception_ptr> errors =
      WorkerPool(threads).map<std::exception_ptr>(eval_job_count(matrix), [&](size_t i) -> std::exception_ptr {
        try {
          const EvalJob job = eval_job(matrix, i);
          CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, cfg.seed);
          prepare(ssd, job.point, cfg.workload, job.system, cfg.seed);
          return nullptr;
        } catch (...) {
          return std::current_exception();
        }
      });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

PointResult run_eval_job(const EvalConfig& cfg, const EvalMatrix& matrix, size_t i) {
  const auto [point, system] = eval_job(matrix, i);
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, cfg.seed);
  if (cfg.general_device) ssd.time_on_device(true, *cfg.general_device);
  PreparedPoint pp = prepare(ssd, point, cfg.workload, system, cfg.seed);
  return PointResult{point, system, ssd.read(pp.queries, system, pp.popcount)};
}

std::vector<PointResult> run_eval(const EvalConfig& cfg, const EvalMatrix& matrix,
                                  const std::function<void(size_t, size_t, const std::string&)>& progress, int threads) {
  check_eval_placement(cfg, matrix, threads);
  return WorkerPool(threads).map<PointResult>(
      eval_job_count(matrix), [&](size_t i) { return run_eval_job(cfg, matrix, i); },
      [&](size_t done, size_t n, size_t i) {
        if (progress) {
          const EvalJob job = eval_job(matrix, i);
          progress(done, n, run_label(job.point, job.system));
        }
      });
}

Json point_json(const PointResult& r) {
  StatsTree stats;
  r.read.energy.register_stats(stats);
  Json j = {{"workload", r.point.workload},
            {"param", {{r.point.param, r.point.value}}},
            {"system", to_string(r.system)},
            {"time_s", to_s(r.read.timing.total)},
            {"energy_j", r.read.energy.total().raw()},
            {"energy_breakdown_j", stats.dump()["energy_j"]},
            {"bytes_over_pcie", r.read.timing.pcie_bytes},
            {"bytes_over_channels", r.read.timing.channel_bytes},
            {"sensings", r.read.timing.sensings},
            {"bottleneck", ssd::to_string(r.read.timing.bottleneck)},
            {"events", r.read.timing.events}};
  if (r.read.device) j["general_device_time_s"] = to_s(r.read.device->total);
  return j;
}

Json eval_json(const std::vector<PointResult>& results, const EvalMatrix& matrix, const Json& config) {
  Json points = Json::array();
  for (const auto& r : results) points.push_back(point_json(r));
  return eval_json(std::move(points), matrix, config);
}

Json eval_json(Json points, const EvalMatrix& matrix, const Json& config) {
  // The summary: per pair A/B and workload, the mean over the workload's points of B's time (energy) / A's;
  // "overall" is the geometric mean over the workloads.
  auto find = [&](const Json& p, const std::string& system) -> const Json* {
    for (const auto& r : points)
      if (r["system"] == system && r["workload"] == p["workload"] && r["param"] == p["param"]) return &r;
    return nullptr;
  };
  Json speed, energy, device_speed;
  const bool on_device = !points.empty() && points[0].contains("general_device_time_s");
  for (auto [a, b] : matrix.compare) {
    std::string key = fmt::format("{}/{}", to_string(a), to_string(b));
    Json sp, en, dsp;
    double sp_log = 0, en_log = 0, dsp_log = 0;
    int n = 0;
    for (std::string_view name : workloads().names()) {
      const std::string w(name);
      double ssum = 0, esum = 0, dsum = 0;
      int cnt = 0;
      for (const auto& r : points) {
        if (r["system"] != to_string(a) || r["workload"] != w) continue;
        const Json* other = find(r, to_string(b));
        if (!other) continue;
        ssum += (*other)["time_s"].get<double>() / r["time_s"].get<double>();
        esum += (*other)["energy_j"].get<double>() / r["energy_j"].get<double>();
        if (on_device) dsum += (*other)["general_device_time_s"].get<double>() / r["general_device_time_s"].get<double>();
        ++cnt;
      }
      if (!cnt) continue;
      sp[w] = ssum / cnt;
      en[w] = esum / cnt;
      sp_log += std::log(ssum / cnt);
      en_log += std::log(esum / cnt);
      if (on_device) dsp[w] = dsum / cnt, dsp_log += std::log(dsum / cnt);
      ++n;
    }
    if (n) {
      sp["overall"] = std::exp(sp_log / n);
      en["overall"] = std::exp(en_log / n);
      if (on_device) dsp["overall"] = std::exp(dsp_log / n);
    }
    speed[key] = sp;
    energy[key] = en;
    if (on_device) device_speed[key] = dsp;
  }
  Json j;
  j["points"] = std::move(points);
  j["summary"] = {{"speedup", speed}, {"energy_efficiency", energy}};
  if (on_device) j["summary"]["speedup_on_general_device"] = device_speed;
  j["config"] = config;
  return j;
}

ReliabilityResult run_reliability(const EvalConfig& cfg, int64_t months, bool esp, int64_t trials) {
  ReliabilityResult rr;
  for (int64_t t = 0; t < trials; ++t) {
    uint64_t seed = cfg.seed + uint64_t(t) * 7919;
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, seed);
    // FC's data path either way: raw cells sensed by MWS; only the program mode differs.
    Point p{"bmi", "months", months};
    PreparedPoint pp = prepare(ssd, p, cfg.workload, esp ? System::Fc : System::ParaBit, seed);
    ReadResult r = ssd.read(pp.queries, System::Fc, true);
    BitVector diff = r.results[0];
    diff ^= pp.reference[0];
    uint64_t wrong = diff.popcount();
    rr.wrong_result_bits += wrong;
    rr.bit_errors += r.bit_errors;
    for (size_t d = 0; d < ssd.die_count(); ++d) rr.cells_sensed += ssd.die(d).stats().cells_sensed;
    if (r.popcounts[0] == pp.reference[0].popcount() && wrong == 0) ++rr.exact;
    ++rr.trials;
  }
  return rr;
}

double write_bandwidth(const EvalConfig& cfg, nand::ProgramMode mode, Bytes total) {
  return ssd::run_sequential_write(cfg.ssd, cfg.nand, mode, total).gb_per_s() * 1e9;
}

}  // namespace bitline::cosmos
