// `bitline hbf ...`: High-Bandwidth Flash beside HBM, one GPU.
//   info      the memory system of a preset: stacks, megaplanes, capacities, rates
//   stream    read a weight object once (layout, prefetch, granularity) and time it
//   write-bw  write KV a hyperpage at a time and time it
//   area      silicon area and density of one stack, by component, beside HBM3e (optionally over a --vary grid)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/param_dump.hpp"
#include "hbf/area.hpp"
#include "hbf/experiments.hpp"
#include "hbf/params.hpp"
#include "hbf/system.hpp"

namespace bitline::cli {
namespace {

using namespace bitline::hbf;

Bytes bytes_option(const std::string& flag, const std::string& v) {
  Bytes b;
  try {
    b = parse_bytes(v);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("{}: {}", flag, e.what()));
  }
  if (b.raw() <= 0) throw ConfigError(fmt::format("{} {}: must be positive", flag, v));
  return b;
}

Json config_json(const ConfigTree& tree, const SystemParams& p) {
  return {{"sim", dump_params(load_params<SimParams>(tree, "sim"))},
          {"gpu", dump_params(p.gpu)},
          {"hbm", dump_params(p.hbm)},
          {"hbf", dump_params(p.hbf)},
          {"nand", {{"timing", dump_params(p.cell.timing)}, {"energy", dump_params(p.cell.energy)}}}};  // the planes' cell
}

System load_system(const ConfigTree& tree, bool need_hbf) {
  SystemParams p = load_system_params(tree);
  if (need_hbf && p.hbf.stacks == 0)
    throw ConfigError("hbf.stacks = 0: this GPU has no HBF (the h200 preset?); use --preset csi or --preset cli");
  return System(p);
}

Json info(const System& s) {
  Json j;
  j["hbf"] = {{"stacks", s.stacks()},
              {"dies_per_stack", s.dies_per_stack()},
              {"planes", s.planes()},
              {"planes_per_megaplane", s.lanes()},
              {"megaplanes", s.megaplanes()},
              {"megapage_bytes", s.megapage().raw()},
              {"hyperpage_bytes", s.hyperpage().raw()},
              {"capacity_bytes", s.flash_capacity().raw()},
              {"sram_per_stack_bytes", s.hbf().sram.plane_sram.raw() * s.planes_per_stack() + s.hbf().sram.base_sram.raw()},
              {"sense_gb_per_s_per_stack", s.stack_sense_bandwidth().raw() * 1e-9},
              {"interface_gb_per_s_per_stack", s.hbf().timing.interface_bandwidth.raw() * 1e-9},
              {"program_gb_per_s", s.program_bandwidth().raw() * 1e-9}};
  j["hbm"] = {{"stacks", s.hbm().stacks}, {"capacity_bytes", s.hbm_capacity().raw()}, {"gb_per_s", s.hbm_bandwidth().raw() * 1e-9}};
  return j;
}

void print_info(const System& s) {
  fmt::print("HBM : {} stacks, {:.4g} GB, {:.4g} TB/s\n", s.hbm().stacks, s.hbm_capacity().raw() * 1e-9, s.hbm_bandwidth().raw() * 1e-12);
  if (s.stacks() == 0) {
    fmt::print("HBF : none\n");
    return;
  }
  fmt::print("HBF : {} stacks x {} dies x {} planes = {} planes; M = {} -> {} megaplanes\n", s.stacks(), s.dies_per_stack(),
             s.planes_per_die(), s.planes(), s.lanes(), s.megaplanes());
  fmt::print("      megapage {}, hyperpage {}, capacity {} ({:.4g} GB)\n", format(s.megapage()), format(s.hyperpage()),
             format(s.flash_capacity()), s.flash_capacity().raw() * 1e-9);
  fmt::print("      per stack: sensing {:.4g} GB/s (all planes per tR), interface {:.4g} GB/s\n", s.stack_sense_bandwidth().raw() * 1e-9,
             s.hbf().timing.interface_bandwidth.raw() * 1e-9);
  fmt::print("      write (all planes programming): {:.4g} GB/s\n", s.program_bandwidth().raw() * 1e-9);
}

/// One stack's capacity and rates (the existing model's), printed and written beside its area.
Json stack_rates(const System& s) {
  return {{"capacity_bytes", s.flash_capacity().raw() / s.stacks()},
          {"sense_gb_per_s", s.stack_sense_bandwidth().raw() * 1e-9},
          {"interface_gb_per_s", s.hbf().timing.interface_bandwidth.raw() * 1e-9},
          {"program_gb_per_s", s.program_bandwidth().raw() * 1e-9 / double(s.stacks())}};
}

double gib(Bytes b) { return double(b.raw()) / double(int64_t(1) << 30); }
double gib_per_mm2(double bytes_per_m2) { return bytes_per_m2 * 1e-6 / double(int64_t(1) << 30); }

void print_area(const System& s, const AreaReport& r) {
  const HbfStackArea& h = r.hbf;
  const FlashDie& f = h.flash;
  const bool bonded = h.periphery == Periphery::Bonded;
  fmt::print("HBF stack: {} flash dies + 1 base die, {} layers, circuits {}\n", h.dies, h.layers,
             bonded ? "bonded over the array (footprint = the larger die)" : "beside the array (footprint = their sum)");
  fmt::print("  cells: {:.4g} M per mm2 per layer (hbf.area.cell) x {} layers = {:.4g} G per mm2\n", h.cells_per_m2_per_layer * 1e-12,
             h.layers, h.cells_per_m2_per_layer * double(h.layers) * 1e-15);
  fmt::print("  flash die  array   {:8.2f} mm2 = cells {:.2f} + TSVs {:.2f}\n", to_mm2(f.array_die()), to_mm2(f.cells), to_mm2(f.tsv));
  fmt::print(
      "             circuit {:8.2f} mm2 = page buffers {:.2f} + word-line switches {:.2f} + plane SRAM {:.2f} + megaplane logic "
      "{:.2f} + periphery {:.2f} + TSVs {:.2f}\n",
      to_mm2(f.circuit_die()), to_mm2(f.page_buffers), to_mm2(f.wl_switches), to_mm2(f.plane_sram), to_mm2(f.megaplane_logic),
      to_mm2(f.periphery), to_mm2(f.tsv));
  fmt::print("             die     {:8.2f} mm2\n", to_mm2(h.flash_die));
  fmt::print("  base die           {:8.2f} mm2 = SRAM {:.2f} + PHY {:.2f} + controller {:.2f} + TSVs {:.2f}\n", to_mm2(h.base.total()),
             to_mm2(h.base.sram), to_mm2(h.base.phy), to_mm2(h.base.controller), to_mm2(h.base.tsv));
  fmt::print("  stack footprint {:.2f} mm2 (the {}); {:.4g} GiB -> {:.4g} GiB/mm2\n", to_mm2(h.footprint), to_string(h.limited_by),
             gib(h.capacity), gib_per_mm2(h.density()));
  fmt::print("  per stack: sensing {:.4g} GB/s, interface {:.4g} GB/s, write {:.4g} GB/s\n", s.stack_sense_bandwidth().raw() * 1e-9,
             s.hbf().timing.interface_bandwidth.raw() * 1e-9, s.program_bandwidth().raw() * 1e-9 / double(s.stacks()));
  const Hbm3eStackArea& m = r.hbm3e;
  fmt::print("HBM3e stack: core die {:.2f} mm2, base die {:.2f} mm2 -> footprint {:.2f} mm2 (the {}); {:.4g} GiB -> {:.4g} GiB/mm2\n",
             to_mm2(m.core_die), to_mm2(m.base_die), to_mm2(m.footprint), to_string(m.limited_by), gib(m.capacity),
             gib_per_mm2(m.density()));
  fmt::print("HBF / HBM3e: area {:.3f}x, density {:.3f}x (FlashAccel's figures beside these: docs/hbf.md, \"Area and density\")\n",
             r.area_ratio(), r.density_ratio());
}

/// `hbf area --vary`: one row per point, the varied values first.
void print_area_table(const std::vector<Vary>& vary, const std::vector<std::vector<std::string>>& combos, const std::vector<Json>& pts) {
  const VaryColumns cols = vary_columns(vary);
  const std::string& head = cols.head;
  fmt::print("{}{:>9} {:>9} {:>8} {:>8} {:>8} {:>10} {:>12} {:>9} {:>7} {:>8}\n", head, "GiB/stk", "sense GB/s", "array", "circuit", "base",
             "footprint", "limited by", "GiB/mm2", "area x", "dens. x");
  for (size_t i = 0; i < combos.size(); ++i) {
    const std::string row = cols.row(combos[i]);
    const Json& a = pts[i]["area"];
    const Json& f = a["hbf_stack"]["flash_die_mm2"];
    fmt::print("{}{:>9.4g} {:>10.5g} {:>8.2f} {:>8.2f} {:>8.2f} {:>10.2f} {:>12} {:>9.4g} {:>7.3f} {:>8.3f}\n", row,
               gib(Bytes(pts[i]["per_stack"]["capacity_bytes"].get<int64_t>())), pts[i]["per_stack"]["sense_gb_per_s"].get<double>(),
               f["array_die"].get<double>(), f["circuit_die"].get<double>(), a["hbf_stack"]["base_die_mm2"]["total"].get<double>(),
               a["hbf_stack"]["footprint_mm2"].get<double>(), a["hbf_stack"]["limited_by"].get<std::string>(),
               a["hbf_stack"]["density_gib_per_mm2"].get<double>(), a["comparison"]["area_ratio"].get<double>(),
               a["comparison"]["density_ratio"].get<double>());
  }
}

/// Writes `j` with the resolved config of `s` (from `tree`) to `path`, saying so; nothing when `path` is empty.
void write_result(const std::string& path, Json j, const ConfigTree& tree, const System& s) {
  if (path.empty()) return;
  j["config"] = config_json(tree, s.params());
  write_json_file(path, j);
  fmt::print("wrote {}\n", path);
}

/// `bitline hbf info`.
void add_info(CLI::App& hbf) {
  auto* cmd = hbf.add_subcommand("info", "the memory system of a preset: stacks, megaplanes, capacities, rates");
  auto cfg = std::make_shared<ConfigOptions>();
  auto json = std::make_shared<std::string>();
  cfg->add_to(*cmd);
  cmd->add_option("--json", *json, "write the figures (and the resolved config) to this JSON file");
  cmd->callback([cfg, json] {
    check_json_output(*json);
    ConfigTree tree = cfg->load();
    check_outputs({{"--json", *json}}, tree);
    System s = load_system(tree, false);
    print_info(s);
    if (!json->empty()) {
      Json j = info(s);
      j["config"] = config_json(tree, s.params());
      write_json_file(*json, j);
    }
  });
}

/// `bitline hbf stream`.
void add_stream(CLI::App& hbf) {
  auto* cmd = hbf.add_subcommand("stream", "read a weight object once, tile by tile in execution order, and time it");
  auto cfg = std::make_shared<ConfigOptions>();
  struct Opts {
    std::string bytes = "1GiB", tensor = "12MiB", layout, granularity, json;
    bool no_prefetch = false;
    int64_t distance = -1;
  };
  auto o = std::make_shared<Opts>();
  cfg->add_to(*cmd);
  cmd->add_option("--bytes", o->bytes, "size of the weight object, e.g. 100GiB")->capture_default_str();
  cmd->add_option("--tensor", o->tensor, "size of each tensor (FlashAccel, Data layout: a 12 MB Qwen3-235B expert matrix)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layout, "weight layout (hbf.runtime.weight_layout)")->check(CLI::IsMember(names_of(weight_layouts())));
  cmd->add_flag("--no-prefetch", o->no_prefetch, "read every tile from flash on demand (hbf.runtime.prefetch=false)");
  cmd->add_option("--distance", o->distance, "tiles prefetched ahead (hbf.runtime.prefetch_distance)")
      ->check(whole_range(0, int64_t(1) << 20, "tiles"));
  cmd->add_option("--granularity", o->granularity, "timing granularity (hbf.runtime.granularity)")
      ->check(CLI::IsMember(names_of(granularities())));
  cmd->add_option("--json", o->json, "write the result (and the resolved config) to this JSON file");
  cmd->callback([cfg, o] {
    check_json_output(o->json);
    ConfigOptions c = *cfg;
    if (!o->layout.empty()) c.sets.push_back("hbf.runtime.weight_layout=" + o->layout);
    if (!o->granularity.empty()) c.sets.push_back("hbf.runtime.granularity=" + o->granularity);
    if (o->no_prefetch) c.sets.push_back("hbf.runtime.prefetch=false");
    if (o->distance >= 0) c.sets.push_back(fmt::format("hbf.runtime.prefetch_distance={}", o->distance));
    ConfigTree tree = c.load();
    check_outputs({{"--json", o->json}}, tree);
    System s = load_system(tree, true);
    // A prefetch distance means nothing without prefetch (--no-prefetch, a --set or a config): refused, not ignored.
    if (o->distance >= 0 && !s.params().hbf.runtime.prefetch)
      throw ConfigError(
          fmt::format("--distance {}: prefetch is off (--no-prefetch or hbf.runtime.prefetch = false), so no tile "
                      "is read ahead",
                      o->distance));
    const Bytes total = bytes_option("--bytes", o->bytes), tensor = bytes_option("--tensor", o->tensor);
    if (tensor > total)
      throw ConfigError(fmt::format("--tensor {} is larger than the object (--bytes {}): a tensor is a part of the object", format(tensor),
                                    format(total)));
    auto t0 = std::chrono::steady_clock::now();
    StreamRun r = run_stream(s, synthetic_weights(total, tensor));
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("stream {} ({} tensors of {}, {} tiles): layout {}, prefetch {}, granularity {}\n", format(total), r.tensors, format(tensor),
               r.tiles, r.layout, r.options.prefetch ? fmt::format("on (distance {})", r.options.distance) : "off",
               to_string(r.options.granularity));
    fmt::print("  {:.6g} s simulated, {:.5g} GB/s = {:.5g} GB/s per stack ({:.2f}% of the interface), planes busy {:.1f}%\n",
               to_s(r.result.elapsed), r.result.gb_per_s(), r.result.gb_per_s() / double(s.stacks()),
               100.0 * r.json(s)["fraction_of_interface"].get<double>(), 100.0 * r.result.plane_busy_fraction);
    fmt::print("  plane load max {} mean {:.4g}; energy {}; {} events in {:.3f} s wall\n", r.result.max_plane_load,
               r.result.mean_plane_load, format(r.result.energy), r.result.events, wall);
    write_result(o->json, r.json(s), tree, s);
  });
}

/// `bitline hbf write-bw`.
void add_write_bw(CLI::App& hbf) {
  auto* cmd = hbf.add_subcommand("write-bw", "write KV a hyperpage at a time (GroupWrite) and time it");
  auto cfg = std::make_shared<ConfigOptions>();
  struct Opts {
    std::string bytes = "4GiB", granularity, json;
    int64_t requests = 16;
  };
  auto o = std::make_shared<Opts>();
  cfg->add_to(*cmd);
  cmd->add_option("--bytes", o->bytes, "KV bytes to write (rounded down to whole hyperpages)")->capture_default_str();
  cmd->add_option("--requests", o->requests, "requests the KV belongs to")
      ->capture_default_str()
      ->check(whole_range(1, hbf::kMaxExperimentUnits, "requests"));
  cmd->add_option("--granularity", o->granularity, "timing granularity (hbf.runtime.granularity)")
      ->check(CLI::IsMember(names_of(granularities())));
  cmd->add_option("--json", o->json, "write the result (and the resolved config) to this JSON file");
  cmd->callback([cfg, o] {
    check_json_output(o->json);
    ConfigOptions c = *cfg;
    if (!o->granularity.empty()) c.sets.push_back("hbf.runtime.granularity=" + o->granularity);
    ConfigTree tree = c.load();
    check_outputs({{"--json", o->json}}, tree);
    System s = load_system(tree, true);
    const Bytes total = bytes_option("--bytes", o->bytes);
    WriteBwRun r = run_write_bw(s, total, o->requests, *s.hbf().runtime.granularity);
    fmt::print("write-bw: {} hyperpages ({}) of KV from {} requests: {:.6g} s, {:.5g} GB/s ({:.5g} GB/s per stack), planes busy {:.1f}%\n",
               r.hyperpages, format(Bytes(r.result.bytes)), r.requests, to_s(r.result.elapsed), r.result.gb_per_s(),
               r.result.gb_per_s() / double(s.stacks()), 100.0 * r.result.plane_busy_fraction);
    write_result(o->json, r.json(s), tree, s);
  });
}

/// `bitline hbf area`.
void add_area(CLI::App& hbf) {
  auto* cmd = hbf.add_subcommand("area", "silicon area and density of one HBF stack by component, beside HBM3e (docs/hbf.md)");
  auto cfg = std::make_shared<ConfigOptions>();
  struct Opts {
    std::vector<std::string> vary;
    std::string json;
  };
  auto o = std::make_shared<Opts>();
  cfg->add_to(*cmd);
  cmd->add_option("--vary", o->vary,
                  "a parameter and its values, KEY=V1,V2,... (repeatable: one row per combination), e.g. hbf.area.layers=96,232");
  cmd->add_option("--json", o->json, "write the breakdown (or the points) and the resolved config to this JSON file");
  cmd->callback([cfg, o] {
    check_json_output(o->json);
    if (o->vary.empty()) {
      ConfigTree tree = cfg->load();
      check_outputs({{"--json", o->json}}, tree);
      System s = load_system(tree, true);
      const AreaReport r = stack_area(s.hbf());
      print_area(s, r);
      if (!o->json.empty()) {
        Json j = r.json();
        j["per_stack"] = stack_rates(s);
        j["config"] = config_json(tree, s.params());
        write_json_file(o->json, j);
        fmt::print("wrote {}\n", o->json);
      }
      return;
    }
    // A grid: every point is loaded and its area computed (so checked) before anything is printed.
    check_outputs({{"--json", o->json}}, cfg->load());
    const std::vector<Vary> vary = parse_grid(o->vary, kMaxSweepPoints, "split it", cfg->sets);
    const auto combos = combinations(vary);
    std::vector<Json> points;
    for (const auto& combo : combos) {
      ConfigOptions c = *cfg;
      for (size_t i = 0; i < vary.size(); ++i) c.sets.push_back(vary[i].key + "=" + combo[i]);
      try {
        System s = load_system(c.load(), true);
        Json values = Json::object();
        for (size_t v = 0; v < vary.size(); ++v) values[vary[v].key] = combo[v];
        points.push_back({{"values", values}, {"area", stack_area(s.hbf()).json()}, {"per_stack", stack_rates(s)}});
      } catch (const ConfigError& e) {
        throw ConfigError(fmt::format("--vary ({}): {}", vary_label(vary, combo), e.what()));
      }
    }
    print_area_table(vary, combos, points);
    if (o->json.empty()) return;
    ConfigTree tree = cfg->load();
    System base = load_system(tree, true);
    Json vj = Json::object();
    for (const auto& v : vary) vj[v.key] = v.values;
    write_json_file(o->json, {{"vary", vj}, {"points", points}, {"config", config_json(tree, base.params())}});
    fmt::print("wrote {}\n", o->json);
  });
}

}  // namespace

void add_hbf(CLI::App& app) {
  auto* hbf = app.add_subcommand("hbf", "High-Bandwidth Flash beside HBM: one GPU's memory system (FlashAccel)");
  hbf->require_subcommand(1);
  add_info(*hbf);
  add_stream(*hbf);
  add_write_bw(*hbf);
  add_area(*hbf);
}

}  // namespace bitline::cli
