// `bitline hbf ...`: High-Bandwidth Flash beside HBM, one GPU.
//   info      the memory system of a preset: stacks, megaplanes, capacities, rates
//   stream    read a weight object once (layout, prefetch, granularity) and time it
//   write-bw  write KV a hyperpage at a time and time it
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/param_dump.hpp"
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

}  // namespace

void add_hbf(CLI::App& app) {
  auto* hbf = app.add_subcommand("hbf", "High-Bandwidth Flash beside HBM: one GPU's memory system (FlashAccel)");
  hbf->require_subcommand(1);

  // ---- info
  {
    auto* cmd = hbf->add_subcommand("info", "the memory system of a preset: stacks, megaplanes, capacities, rates");
    auto cfg = std::make_shared<ConfigOptions>();
    auto json = std::make_shared<std::string>();
    cfg->add_to(*cmd);
    cmd->add_option("--json", *json, "write the figures (and the resolved config) to this JSON file");
    cmd->callback([cfg, json] {
      check_json_output(*json);
      ConfigTree tree = cfg->load();
      System s = load_system(tree, false);
      print_info(s);
      if (!json->empty()) {
        Json j = info(s);
        j["config"] = config_json(tree, s.params());
        write_json_file(*json, j);
      }
    });
  }

  // ---- stream
  {
    auto* cmd = hbf->add_subcommand("stream", "read a weight object once, tile by tile in execution order, and time it");
    auto cfg = std::make_shared<ConfigOptions>();
    struct Opts {
      std::string bytes = "1GiB", tensor = "12MiB", layout, granularity, json;
      bool no_prefetch = false;
      int64_t distance = -1;
    };
    auto o = std::make_shared<Opts>();
    cfg->add_to(*cmd);
    cmd->add_option("--bytes", o->bytes, "size of the weight object, e.g. 100GiB")->capture_default_str();
    cmd->add_option("--tensor", o->tensor, "size of each tensor (spec: a 12 MB Qwen3-235B expert matrix)")->capture_default_str();
    cmd->add_option("--layout", o->layout, "weight layout (hbf.runtime.weight_layout)")->check(CLI::IsMember(names_of(weight_layouts())));
    cmd->add_flag("--no-prefetch", o->no_prefetch, "read every tile from flash on demand (hbf.runtime.prefetch=false)");
    cmd->add_option("--distance", o->distance, "tiles prefetched ahead (hbf.runtime.prefetch_distance)")
        ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
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
      System s = load_system(tree, true);
      const Bytes total = bytes_option("--bytes", o->bytes), tensor = bytes_option("--tensor", o->tensor);
      auto t0 = std::chrono::steady_clock::now();
      StreamRun r = run_stream(s, synthetic_weights(total, tensor));
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print("stream {} ({} tensors of {}, {} tiles): layout {}, prefetch {}, granularity {}\n", format(total), r.tensors,
                 format(tensor), r.tiles, r.layout, r.options.prefetch ? fmt::format("on (distance {})", r.options.distance) : "off",
                 to_string(r.options.granularity));
      fmt::print("  {:.6g} s simulated, {:.5g} GB/s = {:.5g} GB/s per stack ({:.2f}% of the interface), planes busy {:.1f}%\n",
                 to_s(r.result.elapsed), r.result.gb_per_s(), r.result.gb_per_s() / double(s.stacks()),
                 100.0 * r.json(s)["fraction_of_interface"].get<double>(), 100.0 * r.result.plane_busy_fraction);
      fmt::print("  plane load max {} mean {:.4g}; energy {}; {} events in {:.3f} s wall\n", r.result.max_plane_load,
                 r.result.mean_plane_load, format(r.result.energy), r.result.events, wall);
      if (!o->json.empty()) {
        Json j = r.json(s);
        j["config"] = config_json(tree, s.params());
        write_json_file(o->json, j);
        fmt::print("wrote {}\n", o->json);
      }
    });
  }

  // ---- write-bw
  {
    auto* cmd = hbf->add_subcommand("write-bw", "write KV a hyperpage at a time (GroupWrite) and time it");
    auto cfg = std::make_shared<ConfigOptions>();
    struct Opts {
      std::string bytes = "4GiB", granularity, json;
      int64_t requests = 16;
    };
    auto o = std::make_shared<Opts>();
    cfg->add_to(*cmd);
    cmd->add_option("--bytes", o->bytes, "KV bytes to write (rounded down to whole hyperpages)")->capture_default_str();
    cmd->add_option("--requests", o->requests, "requests the KV belongs to")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--granularity", o->granularity, "timing granularity (hbf.runtime.granularity)")
        ->check(CLI::IsMember(names_of(granularities())));
    cmd->add_option("--json", o->json, "write the result (and the resolved config) to this JSON file");
    cmd->callback([cfg, o] {
      check_json_output(o->json);
      ConfigOptions c = *cfg;
      if (!o->granularity.empty()) c.sets.push_back("hbf.runtime.granularity=" + o->granularity);
      ConfigTree tree = c.load();
      System s = load_system(tree, true);
      const Bytes total = bytes_option("--bytes", o->bytes);
      WriteBwRun r = run_write_bw(s, total, o->requests, *s.hbf().runtime.granularity);
      fmt::print(
          "write-bw: {} hyperpages ({}) of KV from {} requests: {:.6g} s, {:.5g} GB/s ({:.5g} GB/s per stack), planes busy {:.1f}%\n",
          r.hyperpages, format(Bytes(r.result.bytes)), r.requests, to_s(r.result.elapsed), r.result.gb_per_s(),
          r.result.gb_per_s() / double(s.stacks()), 100.0 * r.result.plane_busy_fraction);
      if (!o->json.empty()) {
        Json j = r.json(s);
        j["config"] = config_json(tree, s.params());
        write_json_file(o->json, j);
        fmt::print("wrote {}\n", o->json);
      }
    });
  }
}

}  // namespace bitline::cli
