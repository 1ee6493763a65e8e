// Paper-scale validation against the figures the Flash-Cosmos paper reports
// (spec "Reported results usable for validation"), on the paper's SSD (every
// parameter at its default), timing-only.
//
// A figure the model reproduces within the tolerance is asserted. A figure it
// does not reproduce is a KNOWN GAP: it is asserted at the model's current
// value within a narrow band (never skipped, never tuned), so any change that
// moves it fails until docs/validation-gaps.md says why. The paper's figures
// are read from scripts/paper_figures.json.
//
// ctest runs every test in a process of its own (gtest_discover_tests), so a
// suite-level set-up would repeat the ~15 s evaluation for every test: the
// checks on the full run_eval are therefore one test, and the known-gap figure
// (which needs only fc and parabit) runs its own smaller evaluation.
#include "../support/paper_figures.hpp"
#include "cosmos_test_util.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace bitline::cosmos::test {
namespace {

struct Eval {
  EvalConfig cfg = paper_config();
  EvalMatrix matrix = paper_matrix();
  std::vector<PointResult> results;
  Json summary;

  double speedup(const std::string& pair, const std::string& w = "overall") const { return summary["speedup"][pair][w].get<double>(); }
  double efficiency(const std::string& pair, const std::string& w = "overall") const {
    return summary["energy_efficiency"][pair][w].get<double>();
  }
  const PointResult& find(const std::string& workload, int64_t value, System s) const {
    for (const auto& r : results)
      if (r.point.workload == workload && r.point.value == value && r.system == s) return r;
    throw std::runtime_error(fmt::format("no point {} {} on {}", workload, value, to_string(s)));
  }
};

/// The paper's evaluation on every system (run_eval), summarised by eval_json.
Eval full_eval() {
  Eval e;
  e.results = run_eval(e.cfg, e.matrix, nullptr);
  e.summary = eval_json(e.results, e.matrix, Json::object())["summary"];
  return e;
}

/// The same evaluation restricted to some systems (every point, as run_eval does it).
Eval partial_eval(std::initializer_list<System> systems) {
  Eval e;
  for (const auto& p : e.matrix.points)
    for (System s : systems) {
      CosmosSsd ssd(e.cfg.nand, e.cfg.ssd, e.cfg.host, e.cfg.cosmos, false, e.cfg.seed);
      PreparedPoint pp = prepare(ssd, p, e.cfg.workload, s, e.cfg.seed);
      e.results.push_back({p, s, ssd.read(pp.queries, s, pp.popcount)});
    }
  e.summary = eval_json(e.results, e.matrix, Json::object())["summary"];
  return e;
}

/// The evaluation's summary with every point's energy counted under the whole_system accounting (the runs' activity
/// is the same; only what is charged differs).
Json whole_system_summary(const Eval& e) {
  std::vector<PointResult> results = e.results;
  for (auto& r : results) r.read.energy = account(r.read.timing, e.cfg.ssd, e.cfg.host, EnergyAccounting::WholeSystem);
  return eval_json(results, e.matrix, Json::object())["summary"];
}

double paper(const std::string& pointer) { return bitline::test::paper_figure("flash_cosmos", pointer); }
const double kTolerance = paper("/tolerance");

bool within(double model, double paper, double tol) { return std::fabs(model / paper - 1.0) <= tol; }

#define EXPECT_WITHIN(what, model, paper, tol)                                                                                        \
  EXPECT_TRUE(within(model, paper, tol)) << what << ": model " << (model) << " vs paper " << (paper) << " (tolerance +-" << (tol)*100 \
                                         << "%)"

TEST(Validation, PaperEvaluation) {
  const Eval e = full_eval();
  const EvalConfig& cfg = e.cfg;

  // Every point ran on every system.
  ASSERT_EQ(e.results.size(), e.matrix.points.size() * std::size(kAllSystems));
  for (const auto& r : e.results) {
    EXPECT_GT(r.read.timing.total.raw(), 0);
    EXPECT_GT(r.read.energy.total().raw(), 0);
  }

  // The paper's averages (per-workload mean of per-point ratios, geometric mean over the workloads).
  for (auto [key, value] : {std::pair{"fc_over_osp_speedup", e.speedup("fc/osp")},
                            {"fc_over_isp_speedup", e.speedup("fc/isp")},
                            {"fc_over_parabit_speedup", e.speedup("fc/parabit")},
                            {"fc_over_osp_energy", e.efficiency("fc/osp")},
                            {"fc_over_parabit_energy", e.efficiency("fc/parabit")}})
    RecordProperty(key, fmt::format("{:.3f}", value));
  EXPECT_WITHIN("speedup fc/osp", e.speedup("fc/osp"), paper("/speedup/fc~1osp"), kTolerance);
  EXPECT_WITHIN("speedup fc/isp", e.speedup("fc/isp"), paper("/speedup/fc~1isp"), kTolerance);
  EXPECT_WITHIN("speedup fc/parabit", e.speedup("fc/parabit"), paper("/speedup/fc~1parabit"), kTolerance);
  // (energy efficiency fc/parabit: see EnergyEfficiencyOverParaBitIs3point3x)
  EXPECT_WITHIN("energy efficiency fc/osp", e.efficiency("fc/osp"), paper("/energy_efficiency/fc~1osp"), kTolerance);
  {
    // The paper's figure is ~3x its speedup: the host is charged its computation (OSP combines every operand), not
    // an idle floor while the SSD works. Under the whole_system accounting (every floor over the run) the ratio
    // follows the run time instead: pinned at the model's value (docs/cosmos.md, "Energy").
    EXPECT_GT(e.efficiency("fc/osp"), 2.0 * e.speedup("fc/osp"));
    const double whole = whole_system_summary(e)["energy_efficiency"]["fc/osp"]["overall"].get<double>();
    RecordProperty("fc_over_osp_energy_whole_system", fmt::format("{:.3f}", whole));
    EXPECT_NEAR(whole, 43.35, 0.2);
    EXPECT_LT(whole, 1.5 * e.speedup("fc/osp"));
  }

  {
    SCOPED_TRACE("FC gains grow with the operand count (BMI)");
    // The per-point speedup of FC over OSP and over ParaBit grows with the
    // window. OSP and ParaBit take time in proportion to the d = days operands;
    // FC in proportion to its ceil(d / 48) sensings (once sensing, not PCIe,
    // binds). So from one window to the next the speedup may fall only where
    // the sensings grow faster than the operands, by at most that rounding:
    // 720 days are 15 full strings, 1,080 days 22.5 strings and so 23 sensings.
    const double wl = double(cfg.nand.geometry.wordlines_per_string);
    double prev_osp = 0, prev_pb = 0, prev_d = 0, prev_sens = 0, first_osp = 0, first_pb = 0;
    for (auto m : sweep_of(e.matrix, "bmi")) {
      SCOPED_TRACE(fmt::format("bmi months={}", m));
      const double d = double(m * cfg.workload.days_per_month), sens = std::ceil(d / wl);
      const double fc = to_s(e.find("bmi", m, System::Fc).read.timing.total);
      const double osp = to_s(e.find("bmi", m, System::Osp).read.timing.total) / fc;
      const double pb = to_s(e.find("bmi", m, System::ParaBit).read.timing.total) / fc;
      if (prev_d > 0) {
        const double rounding = std::min(1.0, (d / prev_d) / (sens / prev_sens));
        EXPECT_GT(osp, prev_osp * rounding * 0.99);
        EXPECT_GT(pb, prev_pb * rounding * 0.99);
      } else {
        first_osp = osp;
        first_pb = pb;
      }
      prev_osp = osp, prev_pb = pb, prev_d = d, prev_sens = sens;
    }
    EXPECT_GT(prev_osp, 10 * first_osp);  // 1,080 vs 30 operands
    EXPECT_GT(prev_pb, 10 * first_pb);
    // Energy efficiency grows at every step against every baseline: a baseline's energy follows the operands it
    // senses and moves, FC's follows its sensings and the results it moves (the paper's accounting).
    for (System base : {System::Osp, System::Isp, System::ParaBit}) {
      double prev = 0;
      for (auto m : sweep_of(e.matrix, "bmi")) {
        const double r = e.find("bmi", m, base).read.energy.total().raw() / e.find("bmi", m, System::Fc).read.energy.total().raw();
        EXPECT_GT(r, prev) << "bmi months=" << m << " over " << to_string(base);
        prev = r;
      }
    }
  }
  {
    SCOPED_TRACE("BMI (most operands) gains most, IMS (3 operands, moving results dominates) least");
    for (const char* pair : {"fc/osp", "fc/isp", "fc/parabit"}) {
      SCOPED_TRACE(pair);
      EXPECT_GT(e.speedup(pair, "bmi"), e.speedup(pair, "kcs"));
      EXPECT_GT(e.speedup(pair, "kcs"), e.speedup(pair, "ims"));
      // FC is never slower (at IMS ParaBit's 3 sensings hide behind PCIe: ~1x).
      EXPECT_GE(e.speedup(pair, "ims"), 0.999);
      EXPECT_GT(e.efficiency(pair, "bmi"), e.efficiency(pair, "ims"));
      EXPECT_GT(e.efficiency(pair, "kcs"), e.efficiency(pair, "ims"));
    }
  }
  {
    SCOPED_TRACE("bottlenecks (spec, Fig. 7)");
    // OSP is bound by external I/O, ISP by the channels, ParaBit by its serial sensings.
    const int64_t images = sweep_of(e.matrix, "ims").front();
    EXPECT_EQ(e.find("ims", images, System::Osp).read.timing.bottleneck, ssd::Bottleneck::Pcie);
    EXPECT_EQ(e.find("ims", images, System::Isp).read.timing.bottleneck, ssd::Bottleneck::Channels);
    EXPECT_EQ(e.find("bmi", sweep_of(e.matrix, "bmi").back(), System::ParaBit).read.timing.bottleneck, ssd::Bottleneck::Dies);
    // The ISP moves only results over PCIe and keeps the channels busy (SRAM slots taken at the first
    // transfer, not the first sensing): faster than OSP on every workload, as in the paper.
    for (const char* w : {"bmi", "ims", "kcs"}) EXPECT_GT(e.speedup("isp/osp", w), 1.1) << w;
  }
  {
    SCOPED_TRACE("energy breakdown (the paper's accounting): the host's computation, NAND per operation");
    const int64_t images = sweep_of(e.matrix, "ims").front();
    const auto& pb_ims = e.find("ims", images, System::ParaBit).read;
    const auto& fc_ims = e.find("ims", images, System::Fc).read;
    EXPECT_EQ(pb_ims.timing.sensings, 3 * fc_ims.timing.sensings);
    EXPECT_NEAR(to_s(pb_ims.timing.total) / to_s(fc_ims.timing.total), 1.0, 0.01);
    // No host floor is charged while the host waits for the SSD.
    for (const auto& r : e.results) EXPECT_EQ(r.read.energy.host_package_idle.raw(), 0.0);
    // BMI m=36: ParaBit's 1,080 sensings per column make NAND a large share; FC's 23 do not.
    const auto& pb = e.find("bmi", sweep_of(e.matrix, "bmi").back(), System::ParaBit).read;
    const auto& fc = e.find("bmi", sweep_of(e.matrix, "bmi").back(), System::Fc).read;
    EXPECT_GT(pb.timing.sensings, 40 * fc.timing.sensings);
    EXPECT_GT(pb.energy.nand_sense.raw() / pb.energy.total().raw(), 0.15);
    // OSP: the host computes (combines every operand) for most of what it is charged.
    const auto& osp = e.find("bmi", sweep_of(e.matrix, "bmi").back(), System::Osp).read;
    EXPECT_GT(osp.energy.host_package_compute.raw(), 0.3 * osp.energy.total().raw());
  }
}

TEST(Validation, EnergyEfficiencyOverParaBitIs3point3x) {
  // The paper's accounting (docs/cosmos.md, "Energy"): the host's computation, DRAM while it computes, the SSD's
  // active power while busy, NAND per die operation. Where moving results to the host binds both in-flash systems
  // to the same time (IMS), FC saves the energy of two sensings of three; where sensing binds ParaBit (BMI, KCS),
  // FC saves both time and energy. The ratio lands within the paper's tolerance.
  const Eval e = partial_eval({System::Fc, System::ParaBit});
  const double model = e.efficiency("fc/parabit");
  RecordProperty("fc_over_parabit_energy", fmt::format("{:.3f}", model));
  ASSERT_GT(model, 1.0);
  EXPECT_WITHIN("energy efficiency fc/parabit", model, paper("/energy_efficiency/fc~1parabit"), kTolerance);
  // Energy saved grows with the sensings saved: least at IMS (3 operands, where both take the same time and FC
  // saves two sensings of three), most at BMI.
  EXPECT_GT(e.efficiency("fc/parabit", "ims"), 1.0);
  EXPECT_GT(e.efficiency("fc/parabit", "bmi"), e.efficiency("fc/parabit", "kcs"));
  EXPECT_GT(e.efficiency("fc/parabit", "kcs"), e.efficiency("fc/parabit", "ims"));
}

// ---- Write bandwidth and reliability (not part of run_eval) -----------------

TEST(ValidationWrite, EspSequentialWriteBandwidthIs4point7GBps) {
  EvalConfig cfg = paper_config();
  const double esp = write_bandwidth(cfg, nand::ProgramMode::Esp, GiB(1)) / 1e9;
  const double slc = write_bandwidth(cfg, nand::ProgramMode::Slc, GiB(1)) / 1e9;
  RecordProperty("esp_write_gbps", fmt::format("{:.3f}", esp));
  EXPECT_WITHIN("ESP write bandwidth (GB/s)", esp, paper("/esp_write_gb_per_s"), paper("/esp_write_tolerance"));
  // ESP doubles tPROG: slower than SLC, which is bound by the 8 GB/s host link.
  EXPECT_LT(esp, slc);
  EXPECT_LE(slc, 8.0 * 1.0001);
}

EvalConfig reliability_config() {
  EvalConfig cfg = paper_config();
  cfg.workload.users = 1'000'000;  // 125 KB vectors: a functional run per trial in ~0.2 s
  return cfg;
}

TEST(ValidationReliability, EspAnswersEveryQueryExactlyAtTheStressCondition) {
  // The paper's condition: 10K P/E cycles and 1 year of retention (workload.reliability_*).
  EvalConfig cfg = reliability_config();
  cfg.nand.reliability.initial_pe_cycles = cfg.workload.reliability_pe_cycles;
  cfg.nand.reliability.retention_days = cfg.workload.reliability_retention_days;
  EXPECT_EQ(cfg.nand.reliability.initial_pe_cycles, 10000);
  EXPECT_EQ(cfg.nand.reliability.retention_days, 365.0);
  ReliabilityResult r = run_reliability(cfg, 36, true, 3);
  EXPECT_EQ(r.trials, 3);
  EXPECT_EQ(r.exact, r.trials);
  EXPECT_EQ(r.wrong_result_bits, 0u);
  EXPECT_GT(r.cells_sensed, uint64_t(3) * 1080 * 1'000'000);  // every operand of every trial was sensed
  // The same data without ESP at that condition (RBER 1.9e-3): hundreds of wrong result bits per query.
  ReliabilityResult raw = run_reliability(cfg, 36, false, 1);
  EXPECT_EQ(raw.exact, 0);
  EXPECT_NEAR(double(raw.bit_errors) / double(raw.cells_sensed), 1.91e-3, 1e-4);
  EXPECT_GT(raw.wrong_result_bits, 500u);
}

TEST(ValidationReliability, RawSlcBmiOver36MonthsIsRarelyExact) {
  // The "about 0.42 exact without ESP" figure is not in the paper (spec, ESP section): it is not a target. What
  // the paper shows is that without ESP results go wrong at realistic RBERs. Here the query is the 36-month window
  // (1,080 operands): nearly all result errors come from users active every day (a 1 in every operand, so any
  // flipped cell flips the result), so exactness depends on the number of always-active users (an assumption:
  // workload.bmi_loyal_fraction). The model's value is pinned so that a change that moves it is noticed.
  const int64_t trials = 5;
  ReliabilityResult r = run_reliability(reliability_config(), 36, false, trials);
  EXPECT_EQ(r.trials, trials);
  // Raw SLC without randomisation or ECC: cells do sense wrong, and results are wrong.
  EXPECT_GT(r.bit_errors, 0u);
  EXPECT_GT(r.wrong_result_bits, 0u);
  const double f = r.fraction_exact();
  RecordProperty("bmi36_no_esp_fraction_exact", fmt::format("{:.3f}", f));
  RecordProperty("bmi36_no_esp_wrong_bits_per_query", fmt::format("{:.2f}", double(r.wrong_result_bits) / double(r.trials)));
  EXPECT_EQ(f, 0.0) << "wrong result bits per query: " << double(r.wrong_result_bits) / double(r.trials);
}

}  // namespace
}  // namespace bitline::cosmos::test
