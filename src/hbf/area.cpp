#include "hbf/area.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "hbf/params.hpp"

namespace bitline::hbf {

const Registry<Periphery>& peripheries() {
  static const Registry<Periphery> r(
      "flash-die periphery",
      {{"bonded", "circuit die hybrid-bonded over the array die (as CMOS under the array): footprint = the larger of the two",
        Periphery::Bonded},
       {"beside", "circuits beside the array on one die (a planar layout): footprint = array + circuits", Periphery::Beside}});
  return r;
}

std::string to_string(Footprint f) {
  switch (f) {
    case Footprint::ArrayDie:
      return "array die";
    case Footprint::CircuitDie:
      return "circuit die";
    case Footprint::FlashDie:
      return "flash die";
    case Footprint::BaseDie:
      return "base die";
    case Footprint::CoreDie:
      return "core die";
  }
  return "?";
}

namespace {

/// One component of a die, for the reticle check's message: its area and the parameter that sizes it.
struct Part {
  const char* what;
  Area area;
  std::string key;
};

/// ConfigError when a die of `parts` needs more than one exposure field, naming its largest part and that part's key.
void check_reticle(const char* die, const std::vector<Part>& parts, Area limit) {
  Area total{};
  for (const Part& p : parts) total += p.area;
  if (total <= limit) return;
  const Part& big = *std::max_element(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.area < b.area; });
  throw ConfigError(
      fmt::format("hbf.area: the {} would need {:.4g} mm2, more than one exposure field (hbf.area.reticle_limit = {:.4g} mm2); its largest "
                  "part is the {} ({:.4g} mm2, set by {}): make it smaller",
                  die, to_mm2(total), to_mm2(limit), big.what, to_mm2(big.area), big.key));
}

double bits(Bytes b) { return 8.0 * double(b.raw()); }

}  // namespace

AreaReport stack_area(const HbfParams& hbf) {
  const AreaParams& a = hbf.area;
  const Geometry& g = hbf.geometry;
  const double planes = double(g.planes_per_die);
  const double plane_bits = double(g.blocks_per_plane) * double(g.pages_per_block) * bits(g.page_size);

  AreaReport r;
  HbfStackArea& s = r.hbf;
  s.periphery = *a.periphery;
  s.layers = a.layers;
  s.dies = g.dies_per_stack;
  // Cells per square metre of array per layer: the reference die's cells over its layers and its area.
  s.cells_per_m2_per_layer = bits(a.cell.capacity) / double(a.cell.bits_per_cell) / double(a.cell.layers) / a.cell.area.raw();

  FlashDie& f = s.flash;
  f.cells = Area(planes * plane_bits / (s.cells_per_m2_per_layer * double(a.layers)));  // SLC: one bit per cell
  const double bitlines = bits(g.page_size) * (1.0 + a.circuit.spare_fraction);
  f.page_buffers = planes * bitlines * (a.circuit.sense_amp + double(hbf.timing.page_buffers) * a.circuit.latch);
  const double wl_switches = double(g.blocks_per_plane) * double(g.pages_per_block) / double(a.circuit.strings_per_block);
  f.wl_switches = planes * wl_switches * a.circuit.wl_switch;
  f.plane_sram = planes * bits(hbf.sram.plane_sram) / a.circuit.sram_efficiency * a.circuit.sram_cell;
  f.megaplane_logic = double(g.planes_per_die / g.planes_per_megaplane) * a.circuit.megaplane_logic;
  f.periphery = a.circuit.die_periphery;
  f.tsv = double(a.tsv.per_die) * a.tsv.each;

  BaseDie& b = s.base;
  b.sram = bits(hbf.sram.base_sram) / a.base.sram_efficiency * a.base.sram_cell;
  b.phy = a.base.phy;
  b.controller = a.base.controller;
  b.tsv = f.tsv;

  const std::vector<Part> array_parts = {{"cell array", f.cells, "hbf.area.layers and the plane geometry (hbf.geometry)"},
                                         {"TSV field", f.tsv, "hbf.area.tsv"}};
  const std::vector<Part> circuit_parts = {
      {"page buffers and sense amplifiers", f.page_buffers, "hbf.geometry.page_size, hbf.area.circuit.sense_amp, latch"},
      {"word-line switches", f.wl_switches, "hbf.geometry.blocks_per_plane, pages_per_block, hbf.area.circuit.wl_switch"},
      {"plane SRAM", f.plane_sram, "hbf.sram.plane_sram"},
      {"megaplane command logic", f.megaplane_logic, "hbf.geometry.planes_per_megaplane, hbf.area.circuit.megaplane_logic"},
      {"die periphery", f.periphery, "hbf.area.circuit.die_periphery"},
      {"TSV field", f.tsv, "hbf.area.tsv"}};
  switch (s.periphery) {
    case Periphery::Bonded:
      check_reticle("array die of a flash die", array_parts, a.reticle_limit);
      check_reticle("circuit die of a flash die", circuit_parts, a.reticle_limit);
      s.flash_die = std::max(f.array_die(), f.circuit_die());
      s.limited_by = f.array_die() >= f.circuit_die() ? Footprint::ArrayDie : Footprint::CircuitDie;
      break;
    case Periphery::Beside: {
      std::vector<Part> parts = circuit_parts;
      parts.push_back(array_parts.front());
      check_reticle("flash die", parts, a.reticle_limit);
      s.flash_die = f.array_die() + f.circuit_die() - f.tsv;
      s.limited_by = Footprint::FlashDie;
      break;
    }
  }
  check_reticle("base die",
                {{"base-die SRAM", b.sram, "hbf.sram.base_sram"},
                 {"PHY", b.phy, "hbf.area.base.phy"},
                 {"controller", b.controller, "hbf.area.base.controller"},
                 {"TSV field", b.tsv, "hbf.area.tsv"}},
                a.reticle_limit);
  s.footprint = std::max(s.flash_die, b.total());
  if (b.total() > s.flash_die) s.limited_by = Footprint::BaseDie;
  const char* what = "HBF stack capacity";
  s.capacity = Bytes(checked_mul(checked_mul(g.dies_per_stack, g.planes_per_die, what),
                                 checked_mul(checked_mul(g.blocks_per_plane, g.pages_per_block, what), g.page_size.raw(), what), what));

  const Hbm3eArea& h = a.hbm3e;
  Hbm3eStackArea& m = r.hbm3e;
  m.core_die = (double(h.die_capacity.raw()) / double(h.ref_capacity.raw()) / h.node_density_gain * h.hbm_die_ratio) * h.ref_area;
  m.base_die = a.base.phy + b.tsv + h.base_logic;
  check_reticle("HBM3e core die", {{"DRAM core die", m.core_die, "hbf.area.hbm3e.die_capacity and its reference"}}, a.reticle_limit);
  check_reticle("HBM3e base die",
                {{"PHY", a.base.phy, "hbf.area.base.phy"},
                 {"TSV field", b.tsv, "hbf.area.tsv"},
                 {"base logic", h.base_logic, "hbf.area.hbm3e.base_logic"}},
                a.reticle_limit);
  m.footprint = std::max(m.core_die, m.base_die);
  m.limited_by = m.core_die >= m.base_die ? Footprint::CoreDie : Footprint::BaseDie;
  m.capacity = Bytes(checked_mul(h.dies_per_stack, h.die_capacity.raw(), "HBM3e stack capacity"));
  return r;
}

namespace {

double mm2_of(Area a) { return to_mm2(a); }
/// Bytes per square metre -> GiB per mm2.
double gib_per_mm2(double bytes_per_m2) { return bytes_per_m2 * 1e-6 / double(int64_t(1) << 30); }

}  // namespace

nlohmann::json AreaReport::json() const {
  const FlashDie& f = hbf.flash;
  nlohmann::json j;
  j["hbf_stack"] = {{"layers", hbf.layers},
                    {"periphery", std::string(Choice<Periphery, peripheries>(hbf.periphery).name())},
                    {"flash_dies", hbf.dies},
                    {"cells_per_mm2_per_layer", hbf.cells_per_m2_per_layer * 1e-6},
                    {"flash_die_mm2",
                     {{"cells", mm2_of(f.cells)},
                      {"page_buffers", mm2_of(f.page_buffers)},
                      {"wl_switches", mm2_of(f.wl_switches)},
                      {"plane_sram", mm2_of(f.plane_sram)},
                      {"megaplane_logic", mm2_of(f.megaplane_logic)},
                      {"periphery", mm2_of(f.periphery)},
                      {"tsv", mm2_of(f.tsv)},
                      {"array_die", mm2_of(f.array_die())},
                      {"circuit_die", mm2_of(f.circuit_die())},
                      {"footprint", mm2_of(hbf.flash_die)}}},
                    {"base_die_mm2",
                     {{"sram", mm2_of(hbf.base.sram)},
                      {"phy", mm2_of(hbf.base.phy)},
                      {"controller", mm2_of(hbf.base.controller)},
                      {"tsv", mm2_of(hbf.base.tsv)},
                      {"total", mm2_of(hbf.base.total())}}},
                    {"footprint_mm2", mm2_of(hbf.footprint)},
                    {"limited_by", to_string(hbf.limited_by)},
                    {"capacity_bytes", hbf.capacity.raw()},
                    {"density_gib_per_mm2", gib_per_mm2(hbf.density())}};
  j["hbm3e_stack"] = {{"core_die_mm2", mm2_of(hbm3e.core_die)},   {"base_die_mm2", mm2_of(hbm3e.base_die)},
                      {"footprint_mm2", mm2_of(hbm3e.footprint)}, {"limited_by", to_string(hbm3e.limited_by)},
                      {"capacity_bytes", hbm3e.capacity.raw()},   {"density_gib_per_mm2", gib_per_mm2(hbm3e.density())}};
  j["comparison"] = {{"area_ratio", area_ratio()}, {"density_ratio", density_ratio()}};
  return j;
}

}  // namespace bitline::hbf
