#include "cosmos/ssb/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/worker_pool.hpp"
#include "cosmos/ssb/answer.hpp"
#include "cosmos/ssb/index.hpp"
#include "cosmos/ssb/roaring_engine.hpp"
#include "ssd/sequential_write.hpp"

namespace bitline::cosmos::ssb {

const Registry<HostEngine>& host_engines() {
  static const Registry<HostEngine> r(
      "SSB host engine",
      {{"roaring", "the same bitmap plan on the host CPU with CRoaring (bitmaps in DRAM), timed on this machine", HostEngine::Roaring},
       {"row", "the row-at-a-time reference engine (joins by key, SQL comparisons), timed on this machine", HostEngine::Row}});
  return r;
}

namespace {

/// Wall time the measured host engines (the row engine, CRoaring) may take in one run, --host-repeat runs included:
/// 60 s. Their time is measured, not estimated, so the run stops (no result) when the next run would start past it.
constexpr double kMaxHostSeconds = 60;

/// Estimated die jobs a run may simulate: 1.5e8, about a minute of CPU on this project's machine at the ~0.4 us a job
/// of a host-aggregated query takes (SF 10, all 13 queries, 4 systems: 472 k jobs in 0.2 s). A read of a
/// flash-aggregated query costs kFlashJobWeight jobs: its die jobs run ~5 operations each (~2.3 us: Q4.3 at SF 1, 6.2 M
/// jobs in 14 s of CPU).
constexpr double kMaxJobs = 1.5e8;
constexpr double kFlashJobWeight = 6;

/// Groups the answers of a functional run may hold, over all its queries: 2^19 (524,288: every city pair of a year,
/// 250 x 250 x 7, fits). Each group is held by the reference's, the functional systems' and CRoaring's answers and by
/// the result while they are checked and written: ~1.6 KB a group (measured: 294,871 groups at SF 0.05 took 470 MB over
/// the same run of Q1.1), so ~0.85 GB at the limit.
constexpr int64_t kMaxAnswerGroups = int64_t(1) << 19;

using Clock = std::chrono::steady_clock;

/// The most groups query plan `p` can answer with over `rows` rows: min(rows, the product of the values each group-by
/// column may take under the filter); 1 without a group-by.
double groups_bound(const QueryPlan& p, int64_t rows) {
  double g = 1;
  for (const auto& c : p.candidates) g *= double(c.size());
  return std::min(g, double(rows));
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool has(const std::vector<System>& v, System s) { return std::find(v.begin(), v.end(), s) != v.end(); }

/// The measured host engines' energy: measured time x (CPU package power while computing + host DRAM background),
/// the powers the model charges the host while it computes (host.cpu_power, host.dram_background_power).
double host_energy(const ssd::HostParams& h, double seconds) { return seconds * (h.cpu_power.raw() + h.dram_background_power.raw()); }

/// Refuses (before the rows are generated) queries whose answers may hold more than kMaxAnswerGroups groups in all,
/// naming the query with the most.
void check_answer_groups(const std::vector<QuerySpec>& queries, const std::vector<QueryPlan>& plans, int64_t rows) {
  double groups = 0;
  size_t largest = 0;
  for (size_t qi = 0; qi < plans.size(); ++qi) {
    groups += groups_bound(plans[qi], rows);
    if (groups_bound(plans[qi], rows) > groups_bound(plans[largest], rows)) largest = qi;
  }
  if (groups <= double(kMaxAnswerGroups)) return;
  const QueryPlan& p = plans[largest];
  std::vector<std::string> values;
  for (size_t k = 0; k < p.candidates.size(); ++k)
    values.push_back(fmt::format("{} {}", p.candidates[k].size(), p.spec->group_by[k]->name));
  throw ConfigError(fmt::format(
      "{}: query {}: its answer may have {:.4g} groups (min of the {} rows and {}), and the queries' answers {:.4g} in "
      "all, more than the {} groups a run with rows may hold (~1.6 KB each while the answers are checked); group "
      "by fewer or coarser columns, filter them, or use --timing-only",
      queries[largest].file, queries[largest].name, groups_bound(p, rows), rows, fmt::join(values, " x "), groups, kMaxAnswerGroups));
}

struct QueryOnSystem {
  Json j;
  std::optional<Answer> answer;
  int64_t die_ops = 0;  // die operations per page column over the query's reads (in-flash systems: the plans')
  std::vector<std::string> explain;
};

struct SystemResult {
  Json index;
  std::vector<QueryOnSystem> queries;
};

const char* use_name(FlashOp::Use u) {
  switch (u) {
    case FlashOp::Use::Filter:
      return "filter";
    case FlashOp::Use::Count:
      return "group count";
    case FlashOp::Use::Sum:
      return "slice sum";
    case FlashOp::Use::Fetch:
      return "slice fetch";
  }
  return "";
}

/// The index's bitmaps built once (for the layout that holds them all: fc's bitmaps, one lane).
struct Store {
  IndexLayout layout;
  IndexData bits;
};

SystemResult run_system(System s, const std::vector<QueryPlan>& plans, const IndexLayout& layout, const Store* store, const SsbOptions& o,
                        const Progress& progress, size_t& step, size_t steps) {
  const EvalConfig& c = o.config;
  const bool functional = store && has(o.functional_systems, s);
  CosmosSsd ssd(c.nand, c.ssd, c.host, c.cosmos, functional, c.seed);
  if (functional && layout.bitmaps == store->layout.bitmaps) {
    write_index(ssd, layout, &store->bits);
  } else if (functional) {
    const IndexData bits = pick_bitmaps(store->layout, store->bits, layout);
    write_index(ssd, layout, &bits);
  } else {
    write_index(ssd, layout, nullptr);
  }
  SystemResult out;
  const nand::ProgramMode mode = s == System::Fc ? nand::ProgramMode::Esp : nand::ProgramMode::Slc;
  const ssd::WriteResult w = ssd::run_sequential_write(c.ssd, c.nand, mode, Bytes(std::max<int64_t>(1, layout.bytes_stored())));
  Json codes_json = Json::array();
  for (size_t k = 0; k < codes().size(); ++k)
    if (layout.lanes[k])
      codes_json.push_back({{"code", codes()[k].name},
                            {"bits", codes()[k].bits},
                            {"bitmaps_per_lane", layout.bitmaps[k].size()},
                            {"lanes", layout.lanes[k]}});
  out.index = {{"bitmaps", layout.bitmaps_stored()},
               {"bytes", layout.bytes_stored()},
               {"blocks_per_plane", ssd.firmware().blocks_in_use()},
               {"program_mode", nand::to_string(mode)},
               {"write_time_s", to_s(w.total)},
               {"write_gb_per_s", w.gb_per_s()},
               {"codes", codes_json}};
  for (size_t qi = 0; qi < plans.size(); ++qi) {
    const QueryPlan& p = plans[qi];
    if (progress) progress(++step, steps, fmt::format("{} on {}", p.spec->name, to_string(s)));
    QueryOnSystem r;
    std::vector<Expr> reads;
    for (const auto& op : p.ops) reads.push_back(layout.render(op.expr));
    const bool in_flash = s == System::Fc || s == System::ParaBit;
    for (size_t i = 0; i < reads.size(); ++i) {
      if (in_flash) {
        const Plan plan = plan_expression(reads[i], ssd.firmware(), ssd.limits(s));
        r.die_ops += int64_t(plan.ops.size());
        const bool first_of_kind =
            std::none_of(p.ops.begin(), p.ops.begin() + long(i), [&](const FlashOp& x) { return x.use == p.ops[i].use; });
        if (o.explain && first_of_kind)
          r.explain.push_back(
              fmt::format("    {} read {} of {} ({}): {}", to_string(s), i + 1, reads.size(), use_name(p.ops[i].use), plan.describe()));
      } else {
        r.die_ops += int64_t(reads[i].operands().size());  // a READ of every operand page
      }
    }
    if (reads.empty()) {
      r.j = {{"time_s", 0.0}, {"energy_j", 0.0}, {"reads", 0}, {"die_ops_per_column", 0}};
      if (functional) r.answer = assemble_answer(p, OpResults{}, layout.rows);
    } else {
      ReadResult rr = ssd.read(reads, s, true);
      const auto& t = rr.timing;
      r.j = {{"time_s", to_s(t.total)},
             {"energy_j", rr.energy.total().raw()},
             {"reads", reads.size()},
             {"die_ops_per_column", r.die_ops},
             {"sensings", t.sensings},
             {"bytes_over_pcie", t.pcie_bytes},
             {"bytes_over_channels", t.channel_bytes},
             {"bottleneck", ssd::to_string(t.bottleneck)}};
      if (functional) {
        r.answer = assemble_answer(p, results_of(rr.results, layout.rows), layout.rows);
        r.j["bit_errors"] = rr.bit_errors;
      }
    }
    out.queries.push_back(std::move(r));
  }
  return out;
}

/// The geometric mean over queries of a[q] / b[q] (where both are positive).
/// The geometric mean of num / den over the queries where both are positive; null where there is none (fc answers
/// every query without reading flash, e.g. contradictory predicates: no ratio, not 0).
Json geomean_ratio(const std::vector<double>& num, const std::vector<double>& den) {
  double s = 0;
  int n = 0;
  for (size_t i = 0; i < num.size(); ++i)
    if (num[i] > 0 && den[i] > 0) s += std::log(num[i] / den[i]), ++n;
  return n ? Json(std::exp(s / n)) : Json(nullptr);
}

Json config_json(const SsbOptions& o) {
  const EvalConfig& c = o.config;
  const CompileOptions co = compile_options(o);
  return {{"sim", {{"seed", c.seed}}},
          {"nand", dump_params(c.nand)},
          {"ssd", dump_params(c.ssd)},
          {"host", dump_params(c.host)},
          {"workload",
           {{"reliability_pe_cycles", c.workload.reliability_pe_cycles},
            {"reliability_retention_days", c.workload.reliability_retention_days}}},
          {"ssb",
           {{"sf", o.sf},
            {"aggregation", aggregations().names()[size_t(o.aggregation)]},
            {"max_terms_per_sensing", co.max_terms},
            {"equality_max_values", co.equality_max_values},
            {"functional", o.functional}}}};
}

/// The answers with and without ESP at the stress condition (workload.reliability_*): FC functional with errors.
Json reliability_json(const std::vector<QueryPlan>& plans, const IndexLayout& layout, const Store& store, const std::vector<Answer>& ref,
                      const SsbOptions& o) {
  EvalConfig c = o.config;
  const CompileOptions co = compile_options(o);
  c.nand.reliability.initial_pe_cycles = c.workload.reliability_pe_cycles;
  c.nand.reliability.retention_days = c.workload.reliability_retention_days;
  const IndexData& bits = store.bits;
  // Each read's exact result, on the CPU: the same conjunction over one copy of the slices (NOT for an inverse).
  const IndexLayout host = plan_layout(System::Osp, plans, layout.rows, co);
  std::map<std::string, BitVector> values;
  {
    const IndexData hb = pick_bitmaps(store.layout, store.bits, host);
    for (size_t k = 0; k < codes().size(); ++k)
      for (size_t i = 0; i < host.bitmaps[k].size(); ++i) values.emplace(host.name(int(k), 0, host.bitmaps[k][i]), hb[k][i]);
  }
  BitVector valid(size_t(layout.bitmap_bytes()) * 8);
  for (int64_t r = 0; r < layout.rows; ++r) valid.set(size_t(r), true);
  Json j = {{"pe_cycles", c.nand.reliability.initial_pe_cycles}, {"retention_days", c.nand.reliability.retention_days}};
  for (bool esp : {false, true}) {
    CosmosSsd ssd(c.nand, c.ssd, c.host, c.cosmos, true, c.seed + (esp ? 1 : 0));
    write_index(ssd, layout, &bits, esp ? nand::ProgramMode::Esp : nand::ProgramMode::Slc);
    int64_t exact = 0, reads = 0;
    uint64_t wrong_bits = 0, filter_rows = 0, bit_errors = 0, wrong_filter_rows = 0;
    Json per = Json::array();
    for (size_t qi = 0; qi < plans.size(); ++qi) {
      const QueryPlan& p = plans[qi];
      std::vector<Expr> exprs;
      for (const auto& op : p.ops) exprs.push_back(layout.render(op.expr));
      uint64_t q_wrong = 0, q_filter_wrong = 0;
      Answer a;
      if (exprs.empty()) {
        a = assemble_answer(p, OpResults{}, layout.rows);
      } else {
        ReadResult rr = ssd.read(exprs, System::Fc, true);
        bit_errors += rr.bit_errors;
        for (size_t i = 0; i < exprs.size(); ++i) {
          BitVector d = evaluate(normalize(host.render(p.ops[i].expr)), values);
          d ^= rr.results[i];
          d &= valid;  // the rows of the table (a NOT on the CPU sets the bits past them)
          const uint64_t wrong = d.popcount();
          q_wrong += wrong;
          if (p.ops[i].use == FlashOp::Use::Filter) q_filter_wrong += wrong, filter_rows += layout.rows;
        }
        reads += int64_t(exprs.size());
        a = assemble_answer(p, results_of(rr.results, layout.rows), layout.rows);
      }
      const bool ok = a == ref[qi];
      exact += ok;
      wrong_bits += q_wrong;
      wrong_filter_rows += q_filter_wrong;
      per.push_back({{"name", p.spec->name}, {"exact", ok}, {"wrong_result_bits", q_wrong}, {"wrong_filter_rows", q_filter_wrong}});
    }
    uint64_t cells = 0;
    for (size_t d = 0; d < ssd.die_count(); ++d) cells += ssd.die(d).stats().cells_sensed;
    const double rber = cells ? double(bit_errors) / double(cells) : 0.0;
    j[esp ? "esp" : "slc_no_esp"] = {
        {"queries", plans.size()},
        {"exact", exact},
        {"fraction_exact", plans.empty() ? 0.0 : double(exact) / double(plans.size())},
        {"cells_sensed", cells},
        {"bit_errors", bit_errors},
        {"rber_sensed", rber},
        {"wrong_result_bits", wrong_bits},
        {"wrong_filter_rows", wrong_filter_rows},
        {"wrong_filter_rows_per_query", plans.empty() ? 0.0 : double(wrong_filter_rows) / double(plans.size())},
        {"reads", reads},
        {"per_query", per}};
  }
  return j;
}

}  // namespace

CompileOptions compile_options(const SsbOptions& o) {
  CompileOptions co;
  co.max_terms = int(std::min(o.config.nand.command.max_inter_block, o.config.nand.command.max_mws_slots));
  co.equality_max_values = o.equality_max_values;
  return co;
}

namespace {

/// One run of the evaluation as its stages, each handing its results on in the members: the queries compiled and the
/// work bounded (before any rows are generated or anything runs), the indexes laid out and checked, the reference
/// answers (the row engine), the simulated systems, CRoaring, then the result.
class SsbRun {
 public:
  SsbRun(const std::vector<QuerySpec>& queries, const SsbOptions& o, const Progress& progress)
      : queries_(queries), o_(o), c_(o.config), co_(compile_options(o)), card_(cardinalities(o.sf)), progress_(progress) {}

  Json run(const std::function<void(const std::string&)>& explain_out) {
    compile();
    bound_work();
    lay_out();
    reference();
    simulate_systems();
    run_roaring();
    return result(explain_out);
  }

 private:
  /// Every query compiled once (the plans are the same on every system), the answers' groups bounded, then the rows.
  void compile() {
    if (queries_.empty()) throw ConfigError("no queries to run");
    if (o_.reliability && !o_.functional) throw ConfigError("--reliability needs the rows: a functional run (SF <= 1)");
    rows_ = lineorder_rows(card_, c_.seed);
    if (rows_ >= (int64_t(1) << 32))
      throw ConfigError(fmt::format("--sf {:g}: {} LINEORDER rows (at most 2^32 - 1: row numbers are 32-bit)", o_.sf, rows_));
    for (const auto& q : queries_) plans_.push_back(plan_query(q, o_.aggregation, co_));
    if (o_.functional) check_answer_groups(queries_, plans_, rows_);  // before the rows are generated
    if (o_.functional) data_ = generate(card_, c_.seed);
    if (data_ && int64_t(data_->lineorder.size()) != rows_) throw std::logic_error("ssb: the generated rows are not the rows counted");
    want_row_ = std::find(o_.engines.begin(), o_.engines.end(), HostEngine::Row) != o_.engines.end();
    want_roaring_ = std::find(o_.engines.begin(), o_.engines.end(), HostEngine::Roaring) != o_.engines.end();
    steps_ = queries_.size() * (o_.systems.size() + (data_ ? 1 : 0) + (data_ && want_roaring_ ? 1 : 0));
  }

  /// The work bounded before any of it: die jobs (page columns x dies per read) and functional page data.
  void bound_work() const {
    const int64_t page = c_.nand.geometry.page_size.raw(), planes = c_.ssd.dies() * c_.nand.geometry.planes_per_die;
    const double pages = std::ceil(double((rows_ + 7) / 8) / double(page));
    const double jobs_per_read = std::ceil(pages / double(planes)) * double(std::min<int64_t>(c_.ssd.dies(), int64_t(pages)));
    double reads = 0, weighted = 0;
    for (const auto& p : plans_) {
      reads += double(p.ops.size());
      weighted += double(p.ops.size()) * (p.strategy == Aggregation::Flash ? kFlashJobWeight : 1.0);
    }
    // A functional read returns its result bitmap, and a query's reads are held together until its answer is assembled:
    // bounded as the functional index is (kMaxFunctionalBytes).
    if (data_ && !o_.functional_systems.empty())
      for (const auto& p : plans_) {
        const double held = double(p.ops.size()) * double((rows_ + 7) / 8);
        if (held > double(nand::kMaxFunctionalBytes))
          throw ConfigError(
              fmt::format("--sf {:g}: query {} makes {} functional reads whose result bitmaps ({} B each) hold "
                          "{:.3g} GB at once, more than the {} MiB a functional run may keep; use --timing-only, "
                          "--aggregation host or a smaller --sf",
                          o_.sf, p.spec->name, p.ops.size(), (rows_ + 7) / 8, held * 1e-9, nand::kMaxFunctionalBytes >> 20));
      }
    const double jobs = weighted * jobs_per_read * double(o_.systems.size());
    if (jobs > kMaxJobs)
      throw ConfigError(
          fmt::format("--sf {:g}: {:.3g} reads x {:.3g} die jobs each on {} systems is {:.3g} die jobs (a flash-aggregated "
                      "query's read counted {:g} times: its jobs take that much longer), more than the {:.3g} a run may "
                      "simulate (about a minute); reduce --sf, --systems or the queries_, or use --aggregation host",
                      o_.sf, reads, jobs_per_read, o_.systems.size(), jobs, kFlashJobWeight, kMaxJobs));
  }

  /// Each system's index, checked before anything runs with the option or query to blame.
  void lay_out() {
    for (System s : o_.systems) layouts_.push_back(plan_layout(s, plans_, rows_, co_));
    // Checked before anything runs, with the option or query to blame: a column's bitmaps must fit one string (an AND of
    // them is one sensing), and every read must render on every system.
    const int64_t wordlines = c_.nand.geometry.wordlines_per_string;
    for (const IndexLayout& L : layouts_)
      for (size_t k = 0; k < codes().size(); ++k)
        if (L.lanes[k] && int64_t(L.bitmaps[k].size()) > wordlines)
          throw ConfigError(
              fmt::format("the index of {} on {} has {} bitmaps, more than the {} wordlines of a string "
                          "(nand.geometry.wordlines_per_string) an AND of them must fit; use a smaller "
                          "--equality-max-values ({} now) or more wordlines",
                          codes()[k].name, to_string(L.system), L.bitmaps[k].size(), wordlines, o_.equality_max_values));
    for (const IndexLayout& L : layouts_)
      for (size_t qi = 0; qi < plans_.size(); ++qi)
        for (const auto& op : plans_[qi].ops) {
          try {
            (void)L.render(op.expr);
          } catch (const ModelError& e) {
            throw ConfigError(fmt::format("{}: query {}: {}", queries_[qi].file, queries_[qi].name, e.what()));
          }
        }
    if (data_)
      for (size_t i = 0; i < o_.systems.size(); ++i)
        if (has(o_.functional_systems, o_.systems[i]) && layouts_[i].bytes_stored() > nand::kMaxFunctionalBytes)
          throw ConfigError(
              fmt::format("--sf {:g}: the {} index holds {:.3g} MB of bitmaps, more than the {} MiB a functional system may "
                          "keep in its dies; reduce --sf or --functional-systems",
                          o_.sf, to_string(o_.systems[i]), double(layouts_[i].bytes_stored()) * 1e-6, nand::kMaxFunctionalBytes >> 20));
  }

  /// The host engines' measured time so far, held to kMaxHostSeconds.
  void host_budget(size_t qi, const char* engine) const {
    if (host_seconds_ > kMaxHostSeconds)
      throw ConfigError(
          fmt::format("the measured host engines took {:.1f} s by query {} of {} ({}; --host-repeat {}), more than the "
                      "{:g} s a run may spend measuring them; use fewer queries, a smaller --host-repeat or --sf, or "
                      "--systems without roaring and row",
                      host_seconds_, qi + 1, queries_.size(), engine, repeat(), kMaxHostSeconds));
  }
  int repeat() const { return std::max(1, o_.host_repeat); }

  /// Runs `engine` --host-repeat times (once when it is not timed), keeping the first answer and the fastest time.
  template <class Engine>
  double timed(size_t qi, const char* name, int runs, Engine&& engine) {
    double best = 0;
    for (int k = 0; k < runs; ++k) {
      const auto t0 = Clock::now();
      host_budget(qi, name);
      engine(k);
      const double dt = seconds_since(t0);
      host_seconds_ += dt;
      best = k == 0 ? dt : std::min(best, dt);
    }
    return best;
  }

  /// The reference answers (and the row engine's time).
  void reference() {
    row_s_.assign(queries_.size(), 0);
    if (!data_) return;
    for (size_t qi = 0; qi < queries_.size(); ++qi) {
      if (progress_) progress_(++step_, steps_, fmt::format("{} on the reference engine", queries_[qi].name));
      row_s_[qi] = timed(qi, "the row engine", want_row_ ? repeat() : 1, [&](int k) {
        Answer a = reference_answer(*data_, queries_[qi]);
        if (k == 0) ref_.push_back(std::move(a));
      });
    }
  }

  /// The simulated systems, one job each (the results do not depend on the threads).
  void simulate_systems() {
    if (data_) {
      store_.emplace();
      store_->layout = plan_layout(System::Fc, plans_, rows_, co_);
      store_->bits = build_bitmaps(*data_, store_->layout);
    }
    sys_ = WorkerPool(o_.threads).map<SystemResult>(o_.systems.size(), [&](size_t i) {
      size_t local = 0;
      const Progress quiet;
      return run_system(o_.systems[i], plans_, layouts_[i], store_ ? &*store_ : nullptr, o_, o_.threads == 1 ? progress_ : quiet,
                        o_.threads == 1 ? step_ : local, steps_);
    });
    if (o_.threads != 1) step_ += queries_.size() * o_.systems.size();
  }

  /// CRoaring on the same plan.
  void run_roaring() {
    roaring_s_.assign(queries_.size(), 0);
    roaring_answer_.resize(queries_.size());
    if (!data_ || !want_roaring_) return;
    const IndexLayout host = plan_layout(System::Osp, plans_, rows_, co_);
    auto rix = std::make_unique<RoaringIndex>(store_->layout, store_->bits);
    measured_["roaring_index"] = {{"bitmaps", rix->size()}, {"bytes_in_memory", rix->bytes()}};
    for (size_t qi = 0; qi < plans_.size(); ++qi) {
      if (progress_) progress_(++step_, steps_, fmt::format("{} on CRoaring", queries_[qi].name));
      std::vector<Expr> reads;
      for (const auto& op : plans_[qi].ops) reads.push_back(host.render(op.expr));
      roaring_s_[qi] = timed(qi, "CRoaring", repeat(), [&](int k) {
        Answer a = rix->run(plans_[qi], reads);
        if (k == 0) roaring_answer_[qi] = std::move(a);
      });
    }
  }

  /// Each query's result: its plan, every system's time, energy and check, its answer; the tallies for the summary.
  Json query_results(const std::function<void(const std::string&)>& explain_out) {
    Json qs = Json::array();
    fc_time_.assign(queries_.size(), 0);
    fc_energy_.assign(queries_.size(), 0);
    for (size_t qi = 0; qi < queries_.size(); ++qi) {
      const QuerySpec& q = queries_[qi];
      const QueryPlan& p = plans_[qi];
      Json jq = {{"name", q.name}, {"file", q.file}, {"strategy", aggregations().names()[size_t(p.strategy)]}, {"reads", p.ops.size()}};
      Json systems = Json::object();
      std::optional<bool> all_match;
      int64_t flash_ops = -1;
      for (size_t i = 0; i < o_.systems.size(); ++i) {
        const System s = o_.systems[i];
        const QueryOnSystem& r = sys_[i].queries[qi];
        Json js = r.j;
        if (r.answer) {
          const bool ok = *r.answer == ref_[qi];
          js["matches_reference"] = ok;
          all_match = all_match.value_or(true) && ok;
        }
        if (s == System::Fc) flash_ops = r.die_ops;
        systems[to_string(s)] = js;
        times_[s].push_back(js["time_s"].get<double>());
        energies_[s].push_back(js["energy_j"].get<double>());
        if (s == System::Fc) fc_time_[qi] = js["time_s"].get<double>(), fc_energy_[qi] = js["energy_j"].get<double>();
      }
      if (data_ && want_roaring_) {
        const bool ok = *roaring_answer_[qi] == ref_[qi];
        systems["roaring"] = {
            {"time_s", roaring_s_[qi]}, {"energy_j", host_energy(c_.host, roaring_s_[qi])}, {"matches_reference", ok}, {"measured", true}};
        all_match = all_match.value_or(true) && ok;
      }
      if (data_ && want_row_) systems["row"] = {{"time_s", row_s_[qi]}, {"energy_j", host_energy(c_.host, row_s_[qi])}, {"measured", true}};
      jq["systems"] = systems;
      jq["flash_ops"] = flash_ops < 0 ? Json(nullptr) : Json(flash_ops);
      if (data_) {
        // The answer computed in flash when a functional in-flash system ran, else the reference's.
        const Answer* shown = nullptr;
        for (System s : {System::Fc, System::ParaBit, System::Isp, System::Osp})
          for (size_t i = 0; i < o_.systems.size() && !shown; ++i)
            if (o_.systems[i] == s && sys_[i].queries[qi].answer) shown = &*sys_[i].queries[qi].answer;
        jq["answer"] = answer_json(q, shown ? *shown : ref_[qi]);
        int64_t selected = 0;
        for (const auto& row : ref_[qi].rows) selected += row.count;
        jq["rows_selected"] = selected;
        jq["selectivity"] = double(selected) / double(rows_);
        jq["groups"] = q.group_by.empty() ? 0 : int64_t(ref_[qi].rows.size());
      } else {
        jq["answer"] = nullptr;
      }
      jq["matches_reference"] = all_match ? Json(*all_match) : Json(nullptr);
      if (all_match) ++checked_, matched_ += *all_match;
      if (o_.explain) {
        std::vector<std::string> lines = {fmt::format("{} ({}):", q.name, q.file)};
        for (auto& l : p.explain()) lines.push_back(l);
        for (size_t i = 0; i < o_.systems.size(); ++i)
          for (auto& l : sys_[i].queries[qi].explain) lines.push_back(l);
        jq["plan"] = lines;
        if (explain_out)
          for (auto& l : lines) explain_out(l);
      }
      qs.push_back(std::move(jq));
    }
    return qs;
  }

  /// The JSON of the run.
  Json result(const std::function<void(const std::string&)>& explain_out) {
    const int repeat = this->repeat();
    const Json qs = query_results(explain_out);
    Json j;
    j["sf"] = o_.sf;
    j["seed"] = c_.seed;
    j["tables"] = {{"lineorder", rows_},          {"orders", card_.orders}, {"customer", card_.customers},
                   {"supplier", card_.suppliers}, {"part", card_.parts},    {"date", card_.dates}};
    j["functional"] = o_.functional;
    j["functional_systems"] = Json::array();
    for (System s : o_.functional_systems)
      if (has(o_.systems, s) && data_) j["functional_systems"].push_back(to_string(s));
    j["aggregation"] = aggregations().names()[size_t(o_.aggregation)];
    Json idx = {{"bitmap_bytes", (rows_ + 7) / 8}};
    for (size_t i = 0; i < o_.systems.size(); ++i) idx["systems"][to_string(o_.systems[i])] = sys_[i].index;
    j["index"] = idx;
    j["queries"] = qs;
    Json summary = {{"queries", queries_.size()}};
    if (checked_) summary["matches_reference"] = fmt::format("{}/{}", matched_, checked_);
    if (times_.count(System::Fc)) {
      for (System s : o_.systems) {
        if (s == System::Fc) continue;
        const std::string pair = fmt::format("fc/{}", to_string(s));
        summary["speedup"][pair] = geomean_ratio(times_[s], fc_time_);
        summary["energy_efficiency"][pair] = geomean_ratio(energies_[s], fc_energy_);
      }
      if (data_ && want_roaring_) {
        std::vector<double> re;
        for (double t : roaring_s_) re.push_back(host_energy(c_.host, t));
        measured_["summary"]["speedup"]["fc/roaring"] = geomean_ratio(roaring_s_, fc_time_);
        measured_["summary"]["energy_efficiency"]["fc/roaring"] = geomean_ratio(re, fc_energy_);
      }
      if (data_ && want_row_) {
        std::vector<double> re;
        for (double t : row_s_) re.push_back(host_energy(c_.host, t));
        measured_["summary"]["speedup"]["fc/row"] = geomean_ratio(row_s_, fc_time_);
        measured_["summary"]["energy_efficiency"]["fc/row"] = geomean_ratio(re, fc_energy_);
      }
    }
    summary["summary_is"] = "geometric mean over the queries of the other system's time (energy) / fc's";
    j["summary"] = summary;
    if (o_.reliability && data_) {
      const IndexLayout fc_layout = plan_layout(System::Fc, plans_, rows_, co_);
      j["reliability"] = reliability_json(plans_, fc_layout, *store_, ref_, o_);
    }
    if (!measured_.empty()) {
      measured_["note"] = "wall-clock measurements on this machine: not reproducible byte for byte";
      measured_["host_repeat"] = repeat;
      j["measured"] = measured_;
    }
    j["config"] = config_json(o_);
    return j;
  }

  const std::vector<QuerySpec>& queries_;
  const SsbOptions& o_;
  const EvalConfig& c_;
  const CompileOptions co_;
  const Cardinalities card_;
  const Progress& progress_;
  int64_t rows_ = 0;
  std::vector<QueryPlan> plans_;
  std::optional<Data> data_;
  std::vector<IndexLayout> layouts_;
  bool want_row_ = false, want_roaring_ = false;
  size_t steps_ = 0, step_ = 0;
  double host_seconds_ = 0;
  std::vector<Answer> ref_;
  std::vector<double> row_s_, roaring_s_;
  std::optional<Store> store_;
  std::vector<SystemResult> sys_;
  std::vector<std::optional<Answer>> roaring_answer_;
  Json measured_ = Json::object();
  // The tallies of query_results for the summary.
  std::map<System, std::vector<double>> times_, energies_;
  std::vector<double> fc_time_, fc_energy_;
  int matched_ = 0, checked_ = 0;
};

}  // namespace

Json run_ssb(const std::vector<QuerySpec>& queries, const SsbOptions& o, const Progress& progress,
             const std::function<void(const std::string&)>& explain_out) {
  return SsbRun(queries, o, progress).run(explain_out);
}

}  // namespace bitline::cosmos::ssb
