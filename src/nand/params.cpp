#include "nand/params.hpp"

#include <fmt/format.h>

namespace bitline::nand {

namespace {
void positive_table(const Table& t, const std::string& key) {
  for (auto [x, y] : t.points)
    if (!(y > 0)) throw ConfigError(fmt::format("{}: table values must be positive (row [{}, {}])", key, x, y));
}
}  // namespace

void validate(const NandParams& p, const std::string& path, const ConfigTree* tree) {
  const auto& g = p.geometry;
  // "file:line: nand.geometry.page_size" (or "built-in default: ...").
  auto key = [&](const char* k) {
    std::string full = path + "." + k;
    const ConfigNode* n = tree ? tree->at(full) : nullptr;
    return fmt::format("{}: {}", n ? n->origin : std::string("built-in default"), full);
  };
  if (g.page_size.raw() % 8 != 0)
    throw ConfigError(fmt::format("{}: impossible geometry: page size {} bytes is not a whole number of 64-bit words",
                                  key("geometry.page_size"), g.page_size.raw()));
  if (p.command.max_inter_block > g.blocks_per_plane)
    throw ConfigError(fmt::format("{}: impossible geometry: {} blocks sensed together but a plane has only {} blocks",
                                  key("command.max_inter_block"), p.command.max_inter_block, g.blocks_per_plane));
  if (p.command.max_mws_slots > g.blocks_per_plane)
    throw ConfigError(fmt::format("{}: impossible geometry: {} MWS slots but a plane has only {} blocks", key("command.max_mws_slots"),
                                  p.command.max_mws_slots, g.blocks_per_plane));
  if (p.ecc.codeword.raw() % 8 != 0 || p.ecc.codeword > g.page_size)
    throw ConfigError(fmt::format("{}: an ECC codeword must be a multiple of 8 bytes and fit in a page ({} > {}?)", key("ecc.codeword"),
                                  p.ecc.codeword.raw(), g.page_size.raw()));
  if (p.timing.t_read_slc.raw() <= 0) throw ConfigError(fmt::format("{}: tR must be positive", key("timing.t_read_slc")));
  positive_table(p.timing.mws_wordlines, key("timing.mws_wordlines"));
  positive_table(p.timing.mws_blocks, key("timing.mws_blocks"));
  positive_table(p.energy.mws_wordline_power, key("energy.mws_wordline_power"));
  positive_table(p.energy.mws_block_power, key("energy.mws_block_power"));
  positive_table(p.reliability.pe_factor, key("reliability.pe_factor"));
  positive_table(p.reliability.retention_factor, key("reliability.retention_factor"));
  positive_table(p.reliability.esp_factor, key("reliability.esp_factor"));
}

NandParams load_nand_params(const ConfigTree& tree, const std::string& path) {
  NandParams p = load_params<NandParams>(tree, path);
  validate(p, path, &tree);
  return p;
}

}  // namespace bitline::nand
