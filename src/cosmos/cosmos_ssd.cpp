#include "cosmos/cosmos_ssd.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.hpp"
#include "core/overloaded.hpp"

namespace bitline::cosmos {

WriteOptions write_options_for(System s, const std::string& group, uint32_t lane) {
  WriteOptions o;
  o.group = group;
  o.lane = lane;
  switch (s) {
    case System::Fc:
      o.mode = nand::ProgramMode::Esp, o.randomize = false;
      break;
    case System::ParaBit:
      o.mode = nand::ProgramMode::Slc, o.randomize = false;  // raw cells: sensed without ECC
      break;
    case System::Osp:
    case System::Isp:
      o.mode = nand::ProgramMode::Slc, o.randomize = true;  // ordinary data: randomiser and ECC
      break;
  }
  return o;
}

const Registry<System>& systems() {
  static const Registry<System> r(
      "Flash-Cosmos system",
      {{"osp", "outside-storage processing: every operand over PCIe to the host CPU", System::Osp},
       {"isp", "in-storage processing: operands over the channels to the SSD controller's accelerator", System::Isp},
       {"parabit", "ParaBit: in-flash bitwise operations, one sensing per operand, latch logic between sensings", System::ParaBit},
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

CosmosSsd::CosmosSsd(const nand::NandParams& nand, const ssd::SsdParams& ssd, const ssd::HostParams& host, const CosmosParams& cosmos,
                     bool functional, uint64_t seed)
    : nand_(nand),
      ssd_(ssd),
      host_(host),
      cosmos_(cosmos),
      functional_(functional),
      fw_(nand, ssd),
      cost_(nand.timing, nand.energy, nand.geometry.page_size) {
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

void CommandStream::add(size_t die, std::span<const uint8_t> bytes) {
  uint64_t h = fnv1a.at(die);
  for (uint8_t b : bytes) h = (h ^ b) * kFnvPrime;
  fnv1a[die] = h;
  ++commands[die];
}

namespace {

/// What a die command is to a job's steps: a sensing, other die work (latch op, program, erase), or the
/// data-out that sends what the previous step left in the C-latch over the channel.
enum class Role { Sensing, DieWork, DataOut };

Role role_of(const nand::Command& cmd) {
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  return std::visit(overloaded{
                        [](const nand::ReadCmd&) { return Role::Sensing; },
                        [](const nand::ProgramCmd&) { return Role::DieWork; },
                        [](const nand::EraseCmd&) { return Role::DieWork; },
                        [](const nand::MwsCmd&) { return Role::Sensing; },
                        [](const nand::XorCmd&) { return Role::DieWork; },
                        [](const nand::LatchCopyCmd&) { return Role::DieWork; },
                        [](const nand::DataOutCmd&) { return Role::DataOut; },
                    },
                    cmd);
}

/// Appends command `c` costing (`latency`, `energy`) to a page's steps. A DATA-OUT adds no die step: it
/// routes the previous step's page along `out`, and the device times the transfer on the channel
/// (page / channel rate and the I/O energy per bit: what the cost model charges a whole-page DATA-OUT).
void add_step(std::vector<ssd::Step>& steps, const nand::Command& c, Time latency, Energy energy, ssd::Route out, Bytes page) {
  switch (role_of(c)) {
    case Role::Sensing:
      steps.push_back({latency, energy, ssd::Route::None, true});
      return;
    case Role::DieWork:
      steps.push_back({latency, energy, ssd::Route::None, false});
      return;
    case Role::DataOut: {
      const auto& d = std::get<nand::DataOutCmd>(c);
      if (steps.empty() || steps.back().route != ssd::Route::None || d.column != 0 || int64_t(d.length) != page.raw())
        throw ModelError(fmt::format("internal: {} does not move out one whole page left by the step before it", nand::describe(c)));
      steps.back().route = out;
      return;
    }
  }
}

bool same_steps(const std::vector<ssd::Step>& a, const std::vector<ssd::Step>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const ssd::Step& x, const ssd::Step& y) {
    return x.die_time == y.die_time && x.energy == y.energy && x.route == y.route && x.sensing == y.sensing;
  });
}

}  // namespace

CosmosSsd::QueryProgram CosmosSsd::program(const Expr& q, System s) const {
  QueryProgram qp;
  qp.query = q;
  qp.bytes = operand_bytes(q, fw_);
  if (s == System::Fc || s == System::ParaBit) {
    qp.plan = plan_expression(q, fw_, limits(s));
    return qp;
  }
  // OSP / ISP: a read of every operand page through ECC; the combining happens outside the dies.
  for (const auto& n : q.operands()) {
    const Operand& op = fw_.operand(n);
    const bool inv = !op.normal;
    qp.reads.push_back(OperandRead{n, inv ? *op.inverted : *op.normal, inv, op.options.mode});
  }
  return qp;
}

CosmosSsd::PageCommands CosmosSsd::page_commands(const QueryProgram& qp, int64_t page) const {
  PageCommands pc;
  const uint32_t page_bytes = uint32_t(nand_.geometry.page_size.raw());
  if (qp.plan) {
    // In flash: the plan's commands at this page's addresses, then the result page out.
    ColumnCommands cc = resolve(*qp.plan, fw_, page);
    pc.die = cc.die;
    pc.plane = cc.plane;
    pc.commands = std::move(cc.commands);
    pc.commands.push_back(nand::DataOutCmd{cc.plane, 0, page_bytes});
    pc.sensed.assign(pc.commands.size(), nand::ProgramMode::Slc);  // MWS senses SLC/ESP cells
    return pc;
  }
  const PlaneLoc pl = fw_.plane_loc(page % fw_.planes());
  pc.die = pl.die;
  pc.plane = pl.plane;
  for (const auto& r : qp.reads) {
    const PageLoc l = fw_.locate(r.copy, page);
    if (l.die != pc.die || l.plane != pc.plane)
      throw ModelError(fmt::format("internal: page {} of operand '{}' is not on the plane of page {} of the query", page, r.name, page));
    pc.commands.push_back(nand::ReadCmd{{l.plane, l.block, l.subblock, l.wordline, 0}});
    pc.commands.push_back(nand::DataOutCmd{l.plane, 0, page_bytes});
    pc.sensed.insert(pc.sensed.end(), 2, r.mode);
  }
  return pc;
}

std::vector<uint8_t> CosmosSsd::issue(uint32_t die, const nand::Command& c, CommandStream* stream) const {
  std::vector<uint8_t> bytes = nand::encode(c, nand_.geometry);
  if (stream) stream->add(die, bytes);
  return bytes;
}

std::vector<ssd::Step> CosmosSsd::steps_of(const PageCommands& pc, ssd::Route out, CommandStream* stream) const {
  std::vector<ssd::Step> steps;
  for (size_t k = 0; k < pc.commands.size(); ++k) {
    // Priced as the die would receive it: from its bytes, decoded and checked.
    const nand::Command c = nand::decode(issue(pc.die, pc.commands[k], stream), nand_.geometry, nand_.command);
    nand::check(c, nand_.geometry, nand_.command);
    const nand::OpCost cost = cost_.command(c, pc.sensed[k]);
    add_step(steps, c, cost.latency, cost.energy, out, nand_.geometry.page_size);
  }
  if (steps.empty() || steps.back().route == ssd::Route::None)
    throw ModelError("internal: a page's commands do not end by moving a page out");
  return steps;
}

BitVector CosmosSsd::run_functional(const QueryProgram& qp, const std::vector<ssd::Step>& tmpl, ssd::Route out, ReadResult& rr) {
  const int64_t page = nand_.geometry.page_size.raw();
  const int64_t pages = fw_.pages_of(qp.bytes);
  BitVector result(size_t(qp.bytes) * 8);
  std::vector<uint8_t> out_bytes(static_cast<size_t>(qp.bytes));
  std::vector<nand::CommandResult> res;
  std::vector<ssd::Step> charged;
  for (int64_t i = 0; i < pages; ++i) {
    const PageCommands pc = page_commands(qp, i);
    nand::Die& die = *dies_[pc.die];
    res.clear();
    charged.clear();
    for (const auto& c : pc.commands) {
      res.push_back(die.execute_bytes(issue(pc.die, c, trace_ ? &rr.stream : nullptr)));
      rr.bit_errors += res.back().bit_errors;
      add_step(charged, c, res.back().latency, res.back().energy, out, nand_.geometry.page_size);
    }
    rr.die_commands += pc.commands.size();
    if (!same_steps(charged, tmpl))
      throw ModelError(
          fmt::format("internal: the dies charged page {} of '{}' other costs than its timing template", i, qp.query.to_string()));
    BitVector page_bits(size_t(page) * 8);
    if (qp.plan) {
      page_bits.from_bytes(res.back().data);
      if (qp.plan->invert_output) page_bits.invert();
    } else {
      // OSP / ISP: each operand page READ + DATA-OUT, derandomised and corrected by the controller, combined outside the dies.
      std::map<std::string, BitVector> vals;
      for (size_t k = 0; k < qp.reads.size(); ++k) {
        const auto& addr = std::get<nand::ReadCmd>(pc.commands[2 * k]).addr;
        nand::PageRead r = die.correct_read(addr, res[2 * k], res[2 * k + 1]);
        BitVector v(size_t(page) * 8);
        v.from_bytes(r.data);
        if (qp.reads[k].inverted) v.invert();
        vals.emplace(qp.reads[k].name, std::move(v));
      }
      page_bits = evaluate(qp.query, vals);
    }
    auto pb = page_bits.to_bytes();
    const size_t off = size_t(i * page);
    std::memcpy(out_bytes.data() + off, pb.data(), std::min(pb.size(), out_bytes.size() - off));
  }
  result.from_bytes(out_bytes);
  return result;
}

ReadResult CosmosSsd::read(const std::vector<Expr>& queries, System system, bool popcount) {
  if (queries.empty()) throw ModelError("fc_read: no query");
  ReadResult rr;
  rr.system = system;
  if (trace_) rr.stream = CommandStream(size_t(ssd_.dies()));
  // Timing-only mode records the stream here, job by job; functional mode as it executes.
  CommandStream* stream = trace_ && !functional_ ? &rr.stream : nullptr;
  const ssd::Route out = system == System::Osp ? ssd::Route::ToHost : system == System::Isp ? ssd::Route::ToIsp : ssd::Route::Result;
  ssd::JobSpec spec;
  spec.host.combine_operands = system == System::Osp;
  spec.host.popcount_result = popcount;
  spec.die_jobs.resize(size_t(ssd_.dies()));
  std::vector<QueryProgram> programs;
  std::vector<size_t> template_of;
  for (const auto& raw : queries) {
    QueryProgram qp = program(normalize(raw), system);
    if (rr.plan.empty() && qp.plan) rr.plan = qp.plan->describe();
    const int64_t pages = fw_.pages_of(qp.bytes);
    const int64_t cols = fw_.columns_of(qp.bytes);
    // The query's step template: the commands of its first page, encoded, checked and priced. Every page
    // runs the same commands at its own addresses, so it must price the same: checked for the last page
    // here, and for every page when tracing (timing-only) or executing (functional).
    const PageCommands first = page_commands(qp, 0);
    std::vector<ssd::Step> steps = steps_of(first, out, nullptr);
    if (pages > 1 && !same_steps(steps_of(page_commands(qp, pages - 1), out, nullptr), steps))
      throw ModelError(fmt::format("internal: the last page of '{}' prices differently from its first", qp.query.to_string()));
    size_t tmpl = 0;
    while (tmpl < spec.templates.size() && !same_steps(spec.templates[tmpl], steps)) ++tmpl;
    if (tmpl == spec.templates.size()) spec.templates.push_back(steps);
    if (tmpl > 65535) throw ModelError("too many distinct query shapes in one read");
    // Jobs: every page column of this query, on every die that holds part of it (a die's pages in plane order).
    for (int64_t j = 0; j < cols; ++j)
      for (size_t d = 0; d < die_planes_.size(); ++d) {
        uint16_t active = 0;
        for (uint32_t p : die_planes_[d]) {
          const int64_t i = j * fw_.planes() + p;
          if (i >= pages) continue;
          ++active;
          if (stream && !same_steps(steps_of(page_commands(qp, i), out, stream), steps))
            throw ModelError(fmt::format("internal: page {} of '{}' prices differently from its template", i, qp.query.to_string()));
        }
        if (active) spec.die_jobs[d].push_back(ssd::Job{active, uint16_t(tmpl)});
      }
    rr.die_commands += uint64_t(pages) * first.commands.size();
    if (functional_) template_of.push_back(tmpl), programs.push_back(std::move(qp));
  }
  if (functional_) {
    rr.die_commands = 0;
    for (size_t k = 0; k < programs.size(); ++k) {
      BitVector r = run_functional(programs[k], spec.templates[template_of[k]], out, rr);
      rr.popcounts.push_back(r.popcount());
      rr.results.push_back(std::move(r));
    }
  }
  rr.timing = ssd::run_jobs(spec, ssd_, host_, nand_);
  rr.energy = account(rr.timing, ssd_, host_, *cosmos_.energy_accounting);
  if (on_device_) rr.device = ssd::run_compute(spec, ssd::device_of(ssd_, nand_), device_model_, ssd::ComputeRates::of(ssd_, host_, nand_));
  return rr;
}

Json ReadResult::to_json() const {
  StatsTree stats;
  timing.register_stats(stats);
  energy.register_stats(stats);
  Json j = stats.dump();
  j["system"] = to_string(system);
  j["die_commands"] = die_commands;
  if (!plan.empty()) j["plan"] = plan;
  if (!popcounts.empty()) j["popcounts"] = popcounts;
  if (!results.empty()) j["bit_errors"] = bit_errors;
  if (device) {
    StatsTree other;
    device->register_stats(other);
    j["general_device"] = other.dump();
  }
  return j;
}

}  // namespace bitline::cosmos
