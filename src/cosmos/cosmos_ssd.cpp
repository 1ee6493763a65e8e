#include "cosmos/cosmos_ssd.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace bitline::cosmos {

const Registry<System>& systems() {
  static const Registry<System> r(
      "Flash-Cosmos system",
      {{"osp", "outside-storage processing: every operand over PCIe to the host CPU", System::Osp},
       {"isp", "in-storage processing: operands over the channels to the SSD controller's accelerator", System::Isp},
       {"parabit", "ParaBit: in-flash bitwise operations, one sensing per operand, latch logic between sensings",
        System::ParaBit},
       {"fc", "Flash-Cosmos: multi-wordline sensing (intra- and inter-block) of ESP-programmed operands", System::Fc}});
  return r;
}

const char* to_string(System s) {
  // The names are string literals in the table, so the view is null-terminated.
  return Choice<System, systems>(s).name().data();
}

System system_from(const std::string& s) {
  const int64_t i = systems().find(s);
  if (i < 0) throw ModelError(fmt::format("unknown system: {}", systems().unknown_message(s)));
  return systems().value(size_t(i));
}

CosmosSsd::CosmosSsd(const nand::NandParams& nand, const ssd::SsdParams& ssd, const ssd::HostParams& host, bool functional,
                     uint64_t seed)
    : nand_(nand), ssd_(ssd), host_(host), functional_(functional), fw_(nand, ssd), cost_(nand.timing, nand.energy, nand.geometry.page_size) {
  if (nand.geometry.planes_per_die > 65535) throw ModelError("too many planes per die");
  die_planes_.resize(size_t(ssd.dies()));
  for (int64_t p = 0; p < fw_.planes(); ++p) die_planes_[fw_.plane_loc(p).die].push_back(uint32_t(p));
  if (functional)
    for (int64_t d = 0; d < ssd.dies(); ++d)
      dies_.push_back(std::make_unique<nand::Die>(nand, seed + uint64_t(d) * 0x9E3779B97F4A7C15ull, true));
}

PlanLimits CosmosSsd::limits(System s) const {
  if (s == System::ParaBit) return {1, 1};
  return {int(nand_.geometry.wordlines_per_string), int(nand_.command.max_inter_block)};
}

const Operand& CosmosSsd::write(const std::string& name, int64_t bytes, const WriteOptions& opt) {
  if (functional_) throw ModelError(fmt::format("operand '{}': a functional SSD needs the data, not only its size", name));
  return fw_.write(name, bytes, opt);
}

const Operand& CosmosSsd::write(const std::string& name, const BitVector& data, const WriteOptions& opt) {
  if (!functional_) return write(name, int64_t((data.size() + 7) / 8), opt);
  if (data.size() % 8) throw ModelError(fmt::format("operand '{}': size must be a whole number of bytes", name));
  const Operand& op = fw_.write(name, int64_t(data.size() / 8), opt);
  const int64_t page = nand_.geometry.page_size.raw();
  const int64_t pages = fw_.pages_of(op.bytes);
  std::vector<uint8_t> bytes = data.to_bytes();
  auto program = [&](const CopyRef& c, bool invert) {
    for (int64_t i = 0; i < pages; ++i) {
      std::vector<uint8_t> buf(static_cast<size_t>(page), 0);
      const size_t off = size_t(i * page);
      const size_t n = std::min(size_t(page), bytes.size() - off);  // the last page may be partial
      std::memcpy(buf.data(), bytes.data() + off, n);
      if (invert)
        for (auto& b : buf) b = uint8_t(~b);
      PageLoc l = fw_.locate(c, i);
      dies_[l.die]->execute(nand::ProgramCmd{{l.plane, l.block, l.subblock, l.wordline, 0}, opt.mode, opt.randomize, std::move(buf)});
    }
  };
  if (op.normal) program(*op.normal, false);
  if (op.inverted) program(*op.inverted, true);
  return op;
}

BitVector CosmosSsd::run_functional(const Expr& q, const Plan* plan, System s, uint64_t& commands, uint64_t& errors) {
  const int64_t bytes = operand_bytes(q, fw_);
  const int64_t page = nand_.geometry.page_size.raw();
  const int64_t pages = fw_.pages_of(bytes);
  BitVector result(size_t(bytes) * 8);
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  const auto names = q.operands();
  for (int64_t i = 0; i < pages; ++i) {
    BitVector page_bits(size_t(page) * 8);
    if (plan) {
      ColumnCommands cc = resolve(*plan, fw_, i);
      nand::Die& die = *dies_[cc.die];
      for (const auto& c : cc.commands) errors += die.execute(c).bit_errors;
      auto r = die.execute(nand::DataOutCmd{cc.plane, 0, uint32_t(page)});
      commands += cc.commands.size() + 1;
      page_bits.from_bytes(r.data);
      if (plan->invert_output) page_bits.invert();
    } else {
      // OSP / ISP: read every operand page through ECC, combine outside the dies.
      std::map<std::string, BitVector> vals;
      for (const auto& n : names) {
        const Operand& op = fw_.operand(n);
        bool inv = !op.normal;
        PageLoc l = fw_.locate(inv ? *op.inverted : *op.normal, i);
        auto r = dies_[l.die]->read_page({l.plane, l.block, l.subblock, l.wordline, 0});
        commands += 2;
        errors += r.raw_bit_errors;
        BitVector v(size_t(page) * 8);
        v.from_bytes(r.data);
        if (inv) v.invert();
        vals.emplace(n, std::move(v));
      }
      page_bits = evaluate(q, vals);
    }
    auto pb = page_bits.to_bytes();
    const size_t off = size_t(i * page);
    std::memcpy(out.data() + off, pb.data(), std::min(pb.size(), out.size() - off));
  }
  (void)s;
  result.from_bytes(out);
  return result;
}

ReadResult CosmosSsd::read(const std::vector<Expr>& queries, System system, bool popcount) {
  if (queries.empty()) throw ModelError("fc_read: no query");
  ReadResult rr;
  rr.system = system;
  const bool in_flash = system == System::Fc || system == System::ParaBit;
  ssd::PipelineSpec spec;
  spec.host.combine_operands = system == System::Osp;
  spec.host.popcount_result = popcount;
  spec.die_jobs.resize(size_t(ssd_.dies()));
  std::vector<std::string> shapes;  // template signature -> index
  std::vector<Plan> plans;
  for (const auto& raw : queries) {
    Expr q = normalize(raw);
    const int64_t bytes = operand_bytes(q, fw_);
    std::vector<ssd::Step> steps;
    std::string sig;
    if (in_flash) {
      Plan p = plan_expression(q, fw_, limits(system));
      for (const auto& op : p.ops) {
        if (op.kind == OpPlan::Kind::Xor) {
          auto c = cost_.latch_op();
          steps.push_back({c.latency, c.energy, ssd::Route::None, false});
          sig += "x";
        } else {
          auto c = cost_.sense(nand::ProgramMode::Slc, op.wordlines(), int(op.slots.size()));
          steps.push_back({c.latency, c.energy, ssd::Route::None, true});
          sig += fmt::format("m{}.{};", op.wordlines(), op.slots.size());
        }
      }
      steps.back().route = ssd::Route::Result;
      if (rr.plan.empty()) rr.plan = p.describe();
      plans.push_back(std::move(p));
    } else {
      for (const auto& n : q.operands()) {
        const Operand& op = fw_.operand(n);
        auto c = cost_.sense(op.options.mode, 1, 1);
        steps.push_back({c.latency, c.energy, system == System::Osp ? ssd::Route::ToHost : ssd::Route::ToIsp, true});
        sig += "r";
      }
    }
    size_t tmpl = std::find(shapes.begin(), shapes.end(), sig) - shapes.begin();
    if (tmpl == shapes.size()) {
      shapes.push_back(sig);
      spec.templates.push_back(steps);
    }
    if (tmpl > 65535) throw ModelError("too many distinct query shapes in one read");
    // Jobs: every page column of this query, on every die that holds part of it.
    const int64_t pages = fw_.pages_of(bytes);
    const int64_t cols = fw_.columns_of(bytes);
    for (int64_t j = 0; j < cols; ++j)
      for (size_t d = 0; d < die_planes_.size(); ++d) {
        uint16_t active = 0;
        for (uint32_t p : die_planes_[d])
          if (j * fw_.planes() + p < pages) ++active;
        if (active) spec.die_jobs[d].push_back(ssd::Job{active, uint16_t(tmpl)});
      }
    // Per page: the plan's commands + one data-out (in flash), or a read + data-out per operand.
    rr.die_commands += uint64_t(pages) * (in_flash ? steps.size() + 1 : 2 * steps.size());
  }
  if (functional_) {
    rr.die_commands = 0;
    for (size_t k = 0; k < queries.size(); ++k) {
      Expr q = normalize(queries[k]);
      BitVector r = run_functional(q, in_flash ? &plans[k] : nullptr, system, rr.die_commands, rr.bit_errors);
      rr.popcounts.push_back(r.popcount());
      rr.results.push_back(std::move(r));
    }
  }
  rr.timing = ssd::run_pipeline(spec, ssd_, host_, nand_);
  return rr;
}

Json ReadResult::to_json() const {
  StatsTree stats;
  timing.register_stats(stats);
  Json j = stats.dump();
  j["system"] = to_string(system);
  j["die_commands"] = die_commands;
  if (!plan.empty()) j["plan"] = plan;
  if (!popcounts.empty()) j["popcounts"] = popcounts;
  if (!results.empty()) j["bit_errors"] = bit_errors;
  return j;
}

}  // namespace bitline::cosmos
