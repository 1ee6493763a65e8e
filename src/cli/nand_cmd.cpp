// `bitline nand ...`: the chip on its own.
//   demo  runs each kind of in-flash operation once on random data, checks it
//         against a CPU reference and prints latency, energy and correctness.
//   rber  prints the RBER model over program modes and conditions.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/param_dump.hpp"
#include "core/rng.hpp"
#include "nand/die.hpp"
#include "nand/sequences.hpp"

namespace bitline::cli {
namespace {

using namespace bitline::nand;

BitVector random_page(Rng& rng, size_t bits) {
  BitVector v(bits);
  for (auto& w : v.words()) w = rng.next();
  BitVector ones(bits, true);
  v &= ones;
  return v;
}

struct DemoOp {
  std::string name;
  int commands = 0;
  Time latency{};
  Energy energy{};
  uint64_t mismatched_bits = 0;
  uint64_t bits = 0;
};

Json run_demo(const ConfigTree& tree) {
  const SimParams sim = load_params<SimParams>(tree, "sim");
  const NandParams p = load_nand_params(tree);
  Die die(p, uint64_t(sim.seed));
  Rng data_rng = Rng::derive(uint64_t(sim.seed), "demo.data");
  const size_t bits = size_t(p.geometry.page_bits());
  const uint32_t wls = uint32_t(p.geometry.wordlines_per_string);
  const uint32_t blocks = uint32_t(std::min<int64_t>(4, std::min(p.command.max_inter_block, p.geometry.blocks_per_plane)));
  const uint32_t per_block = std::min<uint32_t>(8, wls);
  if (wls < 2)  // its XOR senses two wordlines of one string
    throw ConfigError(
        fmt::format("nand demo needs at least 2 wordlines per string (its XOR of 2 wordlines): "
                    "nand.geometry.wordlines_per_string = {}",
                    wls));
  // Every programmed page is kept by the die and as the CPU reference.
  const double need = 2.0 * double(wls + (blocks - 1) * per_block) * double(p.geometry.page_size.raw());
  if (need > double(kMaxFunctionalBytes))
    throw ConfigError(
        fmt::format("nand demo programs {} pages of {}: about {:.3g} GB of page data, more than the {} MiB a functional "
                    "run may keep; reduce nand.geometry.page_size or nand.geometry.wordlines_per_string",
                    wls + (blocks - 1) * per_block, format(p.geometry.page_size), need * 1e-9, kMaxFunctionalBytes >> 20));

  // Operands: all wordlines of block 0, and `per_block` wordlines of blocks 1.. ; ESP, not randomised.
  std::vector<std::vector<BitVector>> data(blocks);
  auto program = [&](uint32_t block, uint32_t wl) {
    BitVector v = random_page(data_rng, bits);
    die.execute(ProgramCmd{{0, block, 0, wl, 0}, ProgramMode::Esp, false, v.to_bytes()});
    data[block].push_back(std::move(v));
  };
  for (uint32_t w = 0; w < wls; ++w) program(0, w);
  for (uint32_t b = 1; b < blocks; ++b)
    for (uint32_t w = 0; w < per_block; ++w) program(b, w);

  std::vector<DemoOp> ops;
  auto run = [&](const std::string& name, const std::vector<Command>& cmds, const BitVector& ref) {
    DemoOp op{name, int(cmds.size())};
    for (const auto& c : cmds) {
      auto r = die.execute(c);
      op.latency += r.latency;
      op.energy += r.energy;
    }
    BitVector got = die.latch(0, Latch::C);
    got ^= ref;
    op.mismatched_bits = got.popcount();
    op.bits = bits;
    ops.push_back(op);
  };
  std::vector<uint32_t> all(wls);
  for (uint32_t w = 0; w < wls; ++w) all[w] = w;

  BitVector and_ref(bits, true);
  for (const auto& v : data[0]) and_ref &= v;
  run(fmt::format("AND of {} wordlines (intra-block MWS)", wls), {intra_block(0, 0, 0, all)}, and_ref);
  run(fmt::format("NAND of {} wordlines (inverse MWS)", wls), {intra_block(0, 0, 0, all, Iscm{.inverse = true})}, ~and_ref);

  MwsCmd or_cmd{0, Iscm{}, {}};
  BitVector or_ref(bits, false);
  for (uint32_t b = 0; b < blocks; ++b) {
    MwsSlot s{b, 0, {}};
    s.pbm.set(0);
    or_cmd.slots.push_back(s);
    or_ref |= data[b][0];
  }
  run(fmt::format("OR of {} blocks (inter-block MWS)", blocks), {or_cmd}, or_ref);

  MwsCmd ooa{0, Iscm{}, {}};
  BitVector ooa_ref(bits, false);
  for (uint32_t b = 0; b < blocks; ++b) {
    MwsSlot s{b, 0, {}};
    BitVector a(bits, true);
    for (uint32_t w = 0; w < per_block; ++w) s.pbm.set(w), a &= data[b][w];
    ooa.slots.push_back(s);
    ooa_ref |= a;
  }
  run(fmt::format("OR of {} ANDs of {} wordlines", blocks, per_block), {ooa}, ooa_ref);

  BitVector x_ref = data[0][0];
  x_ref ^= data[0][1];
  run("XOR of 2 wordlines (sense, sense, XOR)",
      {single_wordline(0, {0, 0, 1}, Iscm{}),
       single_wordline(0, {0, 0, 0}, Iscm{.inverse = false, .init_s = true, .init_c = false, .transfer = false}), XorCmd{0}},
      x_ref);

  std::vector<WordlineRef> serial;
  BitVector pb_ref(bits, true);
  for (uint32_t w = 0; w < per_block; ++w) serial.push_back({0, 0, w}), pb_ref &= data[0][w];
  run(fmt::format("ParaBit AND of {} wordlines (serial sensing)", per_block), parabit_and(0, serial), pb_ref);

  Time t_read = die.cost().t_read(ProgramMode::Slc);
  fmt::print("bitline nand demo: one die, {} planes x {} blocks x {} sub-blocks x {} wordlines, {} pages; error model: {}\n",
             p.geometry.planes_per_die, p.geometry.blocks_per_plane, p.geometry.subblocks_per_block, wls, format(p.geometry.page_size),
             p.reliability.model.name());
  fmt::print("{:<46} {:>4} {:>11} {:>7} {:>11} {:>10}\n", "operation", "cmds", "latency", "x tR", "energy", "wrong bits");
  Json jops = Json::array();
  for (const auto& o : ops) {
    fmt::print("{:<46} {:>4} {:>11} {:>7.3f} {:>11} {:>10}\n", o.name, o.commands, format(o.latency), o.latency / t_read, format(o.energy),
               o.mismatched_bits);
    jops.push_back({{"operation", o.name},
                    {"commands", o.commands},
                    {"latency_s", to_s(o.latency)},
                    {"latency_tr", o.latency / t_read},
                    {"energy_j", o.energy.raw()},
                    {"result_bits", o.bits},
                    {"mismatched_bits", o.mismatched_bits}});
  }
  Json out;
  out["operations"] = jops;
  StatsTree stats;
  die.register_stats(stats.group("die"));
  out.update(stats.dump());
  out["config"] = {{"sim", dump_params(sim)}, {"nand", dump_params(p)}};
  return out;
}

Json rber_table(const ConfigTree& tree) {
  const NandParams p = load_nand_params(tree);
  auto model = make_error_model(p.reliability);
  Json rows = Json::array();
  fmt::print("RBER model '{}' (nand.reliability)\n{:<6} {:>6} {:>8} {:>10} {:>12}\n", model->name(), "mode", "rand", "P/E", "days", "RBER");
  for (ProgramMode m : {ProgramMode::Slc, ProgramMode::Esp, ProgramMode::Mlc, ProgramMode::Tlc})
    for (bool rnd : {true, false}) {
      if (m == ProgramMode::Esp && rnd) continue;
      for (auto [pe, days] : {std::pair<int64_t, double>{0, 0}, {3000, 30}, {10000, 365}}) {
        CellCondition c{m, rnd, pe, days, p.timing.esp_prog_ratio};
        double r = model->rber(c);
        fmt::print("{:<6} {:>6} {:>8} {:>10} {:>12.3e}\n", to_string(m), rnd ? "on" : "off", pe, days, r);
        rows.push_back({{"mode", to_string(m)}, {"randomized", rnd}, {"pe_cycles", pe}, {"retention_days", days}, {"rber", r}});
      }
    }
  return {{"rber", rows}, {"config", {{"nand", dump_params(p)}}}};
}

}  // namespace

void add_nand(CLI::App& app) {
  auto* nand = app.add_subcommand("nand", "the NAND flash die on its own");
  nand->require_subcommand(1);

  auto* demo = nand->add_subcommand("demo", "run each in-flash operation once on random data, check it against a CPU reference");
  auto demo_cfg = std::make_shared<ConfigOptions>();
  auto demo_json = std::make_shared<std::string>();
  demo_cfg->add_to(*demo);
  demo->add_option("--json", *demo_json, "write the results (and the resolved config) to this JSON file");
  demo->callback([demo_cfg, demo_json] {
    check_json_output(*demo_json);
    const ConfigTree tree = demo_cfg->load();
    check_outputs({{"--json", *demo_json}}, tree);
    Json j = run_demo(tree);
    if (!demo_json->empty()) {
      write_json_file(*demo_json, j);
      fmt::print("wrote {}\n", *demo_json);
    }
  });

  auto* rber = nand->add_subcommand("rber", "print the RBER model over program modes, wear and retention");
  auto rber_cfg = std::make_shared<ConfigOptions>();
  auto rber_json = std::make_shared<std::string>();
  rber_cfg->add_to(*rber);
  rber->add_option("--json", *rber_json, "write the table to this JSON file");
  rber->callback([rber_cfg, rber_json] {
    check_json_output(*rber_json);
    const ConfigTree tree = rber_cfg->load();
    check_outputs({{"--json", *rber_json}}, tree);
    Json j = rber_table(tree);
    if (!rber_json->empty()) write_json_file(*rber_json, j);
  });
}

}  // namespace bitline::cli
