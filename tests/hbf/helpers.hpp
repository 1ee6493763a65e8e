// Shared helpers of the HBF tests: systems built from presets or from small YAML.
#pragma once

#include <string>

#include "core/config.hpp"
#include "hbf/params.hpp"
#include "hbf/system.hpp"

namespace bitline::hbf::test {

inline ConfigTree tree_of(const std::string& preset, const std::string& yaml = "") {
  ConfigTree t;
  t.set_preset_dir(std::string(BITLINE_SOURCE_DIR) + "/configs");
  if (!preset.empty()) t.load_preset(preset);
  if (!yaml.empty()) t.load_text(yaml, "test.yaml");
  return t;
}

inline System system_of(const std::string& preset, const std::string& yaml = "") {
  return System(load_system_params(tree_of(preset, yaml)));
}

/// A small HBF system written out in YAML (geometry first, then anything else), with the HBF presets' cell
/// (configs/nand/xl-flash.yaml: tR 4 us, tPROG 75 us).
inline System small_system(int stacks, int dies, int planes, int m, int blocks, int pages, const std::string& page,
                           const std::string& extra = "") {
  std::string y = "hbf:\n  stacks: " + std::to_string(stacks) + "\n  geometry:\n    dies_per_stack: " + std::to_string(dies) +
                  "\n    planes_per_die: " + std::to_string(planes) + "\n    planes_per_megaplane: " + std::to_string(m) +
                  "\n    blocks_per_plane: " + std::to_string(blocks) + "\n    pages_per_block: " + std::to_string(pages) +
                  "\n    page_size: " + page + "\n";
  ConfigTree t = tree_of("nand/xl-flash", y);
  if (!extra.empty()) t.load_text(extra, "extra.yaml");
  return System(load_system_params(t));
}

}  // namespace bitline::hbf::test
