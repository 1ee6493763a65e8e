#include "hbf/params.hpp"

#include <fmt/format.h>

#include "nand/cost_model.hpp"

namespace bitline::hbf {

void use_cell(HbfParams& hbf, const nand::NandParams& cell) {
  const nand::CostModel cost(cell.timing, cell.energy, hbf.geometry.page_size);
  const double page_bits = double(to_bits(hbf.geometry.page_size));
  hbf.timing.t_read = cost.t_read(nand::ProgramMode::Slc);
  hbf.timing.t_prog = cost.t_prog(nand::ProgramMode::Slc);
  hbf.timing.t_erase = cost.erase().latency;
  hbf.energy.read = EnergyPerBit(cost.sense(nand::ProgramMode::Slc, 1, 1).energy.raw() / page_bits);
  hbf.energy.program = EnergyPerBit(cost.program(nand::ProgramMode::Slc).energy.raw() / page_bits);
  hbf.energy.erase_block = cost.erase().energy;
}

void validate(const SystemParams& p, const ConfigTree* tree) {
  auto key = [&](const std::string& k) {
    const ConfigNode* n = tree ? tree->at(k) : nullptr;
    return fmt::format("{}: {}", n ? n->origin : std::string("built-in default"), k);
  };
  const Geometry& g = p.hbf.geometry;
  if (p.hbf.stacks > 0 && (p.hbf.timing.t_read.raw() <= 0 || p.hbf.timing.t_prog.raw() <= 0))
    throw ConfigError(
        fmt::format("{}, {}: the HBF planes' cell needs tR and tPROG above zero (got {} and {}; the HBF "
                    "presets take the cell from configs/nand/xl-flash.yaml)",
                    key("nand.timing.t_read_slc"), "nand.timing.t_prog_slc", format(p.hbf.timing.t_read), format(p.hbf.timing.t_prog)));
  if (g.planes_per_die % g.planes_per_megaplane != 0)
    throw ConfigError(fmt::format("{}: impossible geometry: {} planes per megaplane do not divide the {} planes of a die",
                                  key("hbf.geometry.planes_per_megaplane"), g.planes_per_megaplane, g.planes_per_die));
  const int64_t megaplanes = p.hbf.stacks * g.dies_per_stack * (g.planes_per_die / g.planes_per_megaplane);
  if (megaplanes >= (int64_t(1) << 24))
    throw ConfigError(fmt::format("{}: {} megaplanes in all; at most 2^24 are supported", key("hbf.stacks"), megaplanes));
  // The runtime keeps a few words per block of every megaplane (owner, write pointer, P/E count, free ring).
  if (megaplanes * g.blocks_per_plane > kMaxHbfBlocks)
    throw ConfigError(
        fmt::format("{}: {} megaplanes x {} blocks = {} blocks to track, more than {} (about 300 MB of block tables); "
                    "fewer stacks, dies, planes or blocks",
                    key("hbf.geometry.blocks_per_plane"), megaplanes, g.blocks_per_plane, megaplanes * g.blocks_per_plane, kMaxHbfBlocks));
  const double capacity = double(megaplanes) * double(g.blocks_per_plane) * double(g.pages_per_block) * double(g.page_size.raw()) *
                          double(g.planes_per_megaplane);
  if (capacity > double(kMaxHbfCapacity))
    throw ConfigError(fmt::format("{}: {:.3g} bytes of flash, more than {} (2^60 bytes: byte counts must stay within 64 bits)",
                                  key("hbf.geometry.pages_per_block"), capacity, kMaxHbfCapacity));
  if (g.page_size.raw() * g.planes_per_megaplane > (int64_t(1) << 31))
    throw ConfigError(fmt::format("{}: a megapage of {} x {} bytes exceeds 2 GiB", key("hbf.geometry.page_size"), g.planes_per_megaplane,
                                  g.page_size.raw()));
  if (p.hbf.sram.plane_sram.raw() > 0 && p.hbf.sram.plane_sram < g.page_size)
    throw ConfigError(fmt::format("{}: plane SRAM ({} B) smaller than one page ({} B) cannot hold a prefetched page",
                                  key("hbf.sram.plane_sram"), p.hbf.sram.plane_sram.raw(), g.page_size.raw()));
}

SystemParams load_system_params(const ConfigTree& tree) {
  SystemParams p;
  p.gpu = load_params<GpuParams>(tree, "gpu");
  p.hbm = load_params<HbmParams>(tree, "hbm");
  p.hbf = load_params<HbfParams>(tree, "hbf");
  p.cell = nand::load_nand_params(tree);
  use_cell(p.hbf, p.cell);
  validate(p, &tree);
  return p;
}

}  // namespace bitline::hbf
