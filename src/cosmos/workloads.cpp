#include "cosmos/workloads.hpp"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <queue>

#include "core/error.hpp"
#include "core/rng.hpp"

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

WriteOptions options_for(System s, const std::string& group, uint32_t lane = 0) {
  WriteOptions o;
  o.group = group;
  o.lane = lane;
  switch (s) {
    case System::Fc: o.mode = nand::ProgramMode::Esp, o.randomize = false; break;
    case System::ParaBit: o.mode = nand::ProgramMode::Slc, o.randomize = false; break;  // raw cells, no ECC
    default: o.mode = nand::ProgramMode::Slc, o.randomize = true; break;                 // ordinary data: ECC + randomiser
  }
  return o;
}

int64_t bytes_of_bits(int64_t bits, const char* what) {
  if (bits % 8) throw ModelError(fmt::format("{}: {} bits is not a whole number of bytes", what, bits));
  return bits / 8;
}

}  // namespace

std::vector<Point> eval_points(const WorkloadParams& w) {
  std::vector<Point> pts;
  for (auto m : w.months) pts.push_back({"bmi", "months", m});
  for (auto i : w.images) pts.push_back({"ims", "images", i});
  for (auto k : w.clique_sizes) pts.push_back({"kcs", "k", k});
  return pts;
}

PreparedPoint prepare(CosmosSsd& ssd, const Point& p, const WorkloadParams& w, System s, uint64_t seed) {
  PreparedPoint out;
  const bool fn = ssd.functional();
  if (fn) {
    // Functional data: every operand is generated, stored in the dies and folded into the CPU reference.
    int64_t operands = 0, bits = 0;
    std::string keys;
    if (p.workload == "bmi") operands = checked_mul(p.value, w.days_per_month, "BMI operands"), bits = w.users, keys = "workload.users, months";
    else if (p.workload == "ims")
      operands = 3, bits = checked_mul(checked_mul(checked_mul(p.value, w.image_width, "IMS bits"), w.image_height, "IMS bits"), w.colors, "IMS bits"),
      keys = "images, workload.image_width/height/colors";
    else operands = checked_mul(w.cliques, p.value, "KCS operands"), bits = w.vertices, keys = "workload.vertices, cliques, k";
    const double need = 2.0 * double(operands + 1) * double(bits) / 8;
    if (need > double(nand::kMaxFunctionalBytes))
      throw ConfigError(fmt::format("functional {} {}={}: {} operands of {} bits need about {:.3g} GB of data, more than the {} MiB a "
                                    "functional run may keep; reduce {} (a timing-only run has no such limit)",
                                    p.workload, p.param, p.value, operands, bits, need * 1e-9, nand::kMaxFunctionalBytes >> 20, keys));
  }
  Rng rng = Rng::derive(seed, "workload." + p.workload);
  auto put = [&](const std::string& name, int64_t bytes, const BitVector* data, const WriteOptions& o) {
    if (fn) ssd.write(name, *data, o);
    else ssd.write(name, bytes, o);
  };
  if (p.workload == "bmi") {
    const int64_t days = checked_mul(p.value, w.days_per_month, "BMI days");
    const int64_t bytes = bytes_of_bits(w.users, "workload.users");
    ssd.declare_group("bmi", uint32_t(days));
    std::vector<Expr> kids;
    BitVector loyal, ref;
    if (fn) {
      loyal = random_bits(rng, size_t(w.users), w.bmi_loyal_fraction);
      ref = BitVector(size_t(w.users), true);
    }
    for (int64_t d = 0; d < days; ++d) {
      std::string name = fmt::format("day{}", d);
      BitVector v;
      if (fn) {
        v = random_bits(rng, size_t(w.users), w.bmi_activity);
        v |= loyal;
        ref &= v;
      }
      put(name, bytes, &v, options_for(s, "bmi"));
      kids.push_back(Expr::var(name));
    }
    out.queries.push_back(Expr::make(Expr::Op::And, std::move(kids)));
    out.popcount = true;
    if (fn) out.reference.push_back(std::move(ref));
  } else if (p.workload == "ims") {
    const int64_t bits = checked_mul(checked_mul(checked_mul(p.value, w.image_width, "IMS bits"), w.image_height, "IMS bits"), w.colors, "IMS bits");
    const int64_t bytes = bytes_of_bits(bits, "IMS plane");
    ssd.declare_group("ims", 3);
    BitVector ref;
    if (fn) ref = BitVector(size_t(bits), true);
    for (const char* n : {"Y", "U", "V"}) {
      BitVector v;
      if (fn) v = random_bits(rng, size_t(bits), w.ims_density), ref &= v;
      put(n, bytes, &v, options_for(s, "ims"));
    }
    out.queries.push_back(parse_expr("AND(Y, U, V)"));
    if (fn) out.reference.push_back(std::move(ref));
  } else if (p.workload == "kcs") {
    const int64_t k = p.value;
    const int64_t bytes = bytes_of_bits(w.vertices, "workload.vertices");
    ssd.declare_group("cliques", uint32_t(std::min<int64_t>(w.cliques, 1 << 20)));
    for (int64_t q = 0; q < w.cliques; ++q) {
      std::string g = fmt::format("adj{}", q);
      ssd.declare_group(g, uint32_t(k));
      std::vector<Expr> members;
      BitVector term;
      if (fn) term = BitVector(size_t(w.vertices), true);
      for (int64_t i = 0; i < k; ++i) {
        std::string name = fmt::format("a{}_{}", q, i);
        BitVector v;
        if (fn) v = random_bits(rng, size_t(w.vertices), w.kcs_density), term &= v;
        put(name, bytes, &v, options_for(s, g));
        members.push_back(Expr::var(name));
      }
      std::string cname = fmt::format("c{}", q);
      BitVector c;
      if (fn) c = random_bits(rng, size_t(w.vertices), 1.0 / 64), term |= c;
      put(cname, bytes, &c, options_for(s, "cliques"));
      out.queries.push_back(Expr::make(Expr::Op::Or, {Expr::make(Expr::Op::And, std::move(members)), Expr::var(cname)}));
      if (fn) out.reference.push_back(std::move(term));
    }
  } else {
    throw ModelError(fmt::format("unknown workload '{}' (bmi, ims, kcs)", p.workload));
  }
  return out;
}

std::vector<PointResult> run_eval(const EvalConfig& cfg, const std::function<void(size_t, size_t, const std::string&)>& progress) {
  std::vector<PointResult> out;
  auto pts = eval_points(cfg.workload);
  size_t total = pts.size() * std::size(kAllSystems), done = 0;
  for (const auto& p : pts)
    for (System s : kAllSystems) {
      if (progress) progress(done, total, fmt::format("{} {}={} on {}", p.workload, p.param, p.value, to_string(s)));
      CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, false, cfg.seed);
      PreparedPoint pp = prepare(ssd, p, cfg.workload, s, cfg.seed);
      out.push_back({p, s, ssd.read(pp.queries, s, pp.popcount)});
      ++done;
    }
  if (progress) progress(done, total, "done");
  return out;
}

Json eval_json(const std::vector<PointResult>& results, const Json& config) {
  Json j;
  j["points"] = Json::array();
  for (const auto& r : results) {
    j["points"].push_back({{"workload", r.point.workload},
                           {"param", {{r.point.param, r.point.value}}},
                           {"system", to_string(r.system)},
                           {"time_s", to_s(r.read.timing.total)},
                           {"energy_j", r.read.timing.total_energy().raw()},
                           {"bytes_over_pcie", r.read.timing.pcie_bytes},
                           {"bytes_over_channels", r.read.timing.channel_bytes},
                           {"sensings", r.read.timing.sensings},
                           {"bottleneck", r.read.timing.bottleneck},
                           {"events", r.read.timing.events}});
  }
  auto find = [&](const Point& p, System s) -> const PointResult* {
    for (const auto& r : results)
      if (r.system == s && r.point.workload == p.workload && r.point.value == p.value) return &r;
    return nullptr;
  };
  const std::pair<System, System> pairs[] = {{System::Fc, System::Osp},      {System::Fc, System::Isp},
                                             {System::Fc, System::ParaBit},  {System::ParaBit, System::Osp},
                                             {System::ParaBit, System::Isp}, {System::Isp, System::Osp}};
  Json speed, energy;
  for (auto [a, b] : pairs) {
    std::string key = fmt::format("{}/{}", to_string(a), to_string(b));
    Json sp, en;
    double sp_log = 0, en_log = 0;
    int n = 0;
    for (const char* w : {"bmi", "ims", "kcs"}) {
      double ssum = 0, esum = 0;
      int cnt = 0;
      for (const auto& r : results) {
        if (r.system != a || r.point.workload != w) continue;
        const PointResult* other = find(r.point, b);
        if (!other) continue;
        ssum += to_s(other->read.timing.total) / to_s(r.read.timing.total);
        esum += other->read.timing.total_energy().raw() / r.read.timing.total_energy().raw();
        ++cnt;
      }
      if (!cnt) continue;
      sp[w] = ssum / cnt;
      en[w] = esum / cnt;
      sp_log += std::log(ssum / cnt);
      en_log += std::log(esum / cnt);
      ++n;
    }
    if (n) {
      sp["overall"] = std::exp(sp_log / n);
      en["overall"] = std::exp(en_log / n);
    }
    speed[key] = sp;
    energy[key] = en;
  }
  j["summary"] = {{"speedup", speed}, {"energy_efficiency", energy}};
  j["config"] = config;
  return j;
}

ReliabilityResult run_reliability(const EvalConfig& cfg, int64_t months, bool esp, int64_t trials) {
  ReliabilityResult rr;
  for (int64_t t = 0; t < trials; ++t) {
    uint64_t seed = cfg.seed + uint64_t(t) * 7919;
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, true, seed);
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
  // Event-driven sequential write: host -> PCIe -> controller -> channel -> die
  // cache latch -> program (cache program: the next data-in overlaps the program).
  const auto& g = cfg.nand.geometry;
  const int64_t dies = cfg.ssd.dies();
  const int64_t op_bytes = g.planes_per_die * nand::bits_per_cell(mode) * g.page_size.raw();
  const int64_t ops = (total.raw() + op_bytes - 1) / op_bytes;
  nand::CostModel cost(cfg.nand.timing, cfg.nand.energy);
  const Time t_prog = cost.t_prog(mode);
  const Time t_chan = Bytes(op_bytes) / cfg.nand.timing.channel_rate;
  const Time t_pcie = Bytes(op_bytes) / cfg.ssd.pcie_bandwidth;

  struct Ev {
    int64_t t;
    uint64_t seq;
    int kind;  // 0 pcie done(op), 1 channel done(op), 2 program done(die)
    int64_t id;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  uint64_t seq = 0;
  auto die_of = [&](int64_t op) {
    int64_t k = op % dies;  // channel-interleaved round robin
    int64_t ch = k % cfg.ssd.channels, dic = k / cfg.ssd.channels;
    return ch * cfg.ssd.dies_per_channel + dic;
  };
  // PCIe is a FIFO stream from the host.
  int64_t pcie_free = 0;
  for (int64_t op = 0; op < ops; ++op) {
    pcie_free += t_pcie.raw();
    q.push({pcie_free + cfg.ssd.pcie_latency.raw(), seq++, 0, op});
  }
  std::vector<std::deque<int64_t>> chan_q(size_t(cfg.ssd.channels));
  std::vector<bool> chan_busy(size_t(cfg.ssd.channels), false);
  std::vector<bool> cache_full(size_t(dies), false), die_busy(size_t(dies), false);
  int64_t now = 0, end = 0;
  auto try_channel = [&](int64_t ch) {
    if (chan_busy[size_t(ch)]) return;
    auto& cq = chan_q[size_t(ch)];
    for (auto it = cq.begin(); it != cq.end(); ++it) {
      int64_t d = die_of(*it);
      if (cache_full[size_t(d)]) continue;
      cache_full[size_t(d)] = true;  // reserved for this transfer
      chan_busy[size_t(ch)] = true;
      q.push({now + t_chan.raw(), seq++, 1, *it});
      cq.erase(it);
      return;
    }
  };
  auto try_program = [&](int64_t d) {
    if (die_busy[size_t(d)] || !cache_full[size_t(d)]) return false;
    die_busy[size_t(d)] = true;
    cache_full[size_t(d)] = false;  // data moves from the cache latch into the page buffer
    q.push({now + t_prog.raw(), seq++, 2, d});
    return true;
  };
  std::vector<bool> loaded(size_t(dies), false);
  while (!q.empty()) {
    Ev e = q.top();
    q.pop();
    now = e.t;
    if (e.kind == 0) {
      int64_t ch = die_of(e.id) / cfg.ssd.dies_per_channel;
      chan_q[size_t(ch)].push_back(e.id);
      try_channel(ch);
    } else if (e.kind == 1) {
      int64_t d = die_of(e.id), ch = d / cfg.ssd.dies_per_channel;
      chan_busy[size_t(ch)] = false;
      loaded[size_t(d)] = true;
      if (!die_busy[size_t(d)]) {
        loaded[size_t(d)] = false;
        try_program(d);
      }
      try_channel(ch);
    } else {
      int64_t d = e.id, ch = d / cfg.ssd.dies_per_channel;
      die_busy[size_t(d)] = false;
      end = std::max(end, now);
      if (loaded[size_t(d)]) {
        loaded[size_t(d)] = false;
        try_program(d);
      }
      try_channel(ch);
    }
  }
  return double(ops * op_bytes) / (double(end) * 1e-12);
}

}  // namespace bitline::cosmos
