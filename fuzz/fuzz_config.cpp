// libFuzzer harness: the YAML configuration loader with `--set` overrides.
//
// Input: the text of a config file, optionally followed by overrides, each
// introduced by a line starting with "--set " (the rest of the input up to the
// next such line is the assignment, exactly as given on the command line):
//
//   nand:
//     geometry: {page_size: 8KiB}
//   --set nand.timing.t_read_slc=30us
//   --set llm.tp_size=2
//
// The file goes through ConfigTree::load_file (the CLI's path, `base:` presets
// included), the overrides through apply_set, and then every section that the
// tree names is loaded into its parameter struct (units, ranges, cross-field
// checks) and dumped back (the resolved-config JSON written next to results).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/param_dump.hpp"
#include "core/params.hpp"
#include "cosmos/workloads.hpp"
#include "harness.hpp"
#include "hbf/params.hpp"
#include "llm/params.hpp"
#include "nand/params.hpp"
#include "ssd/params.hpp"

namespace {

using namespace bitline;

constexpr std::string_view kSetMarker = "\n--set ";

/// Splits the input into the file text and the `--set` assignments.
void split(std::string_view in, std::string& file, std::vector<std::string>& sets) {
  size_t at = in.find(kSetMarker);
  file.assign(in.substr(0, at));
  while (at != std::string_view::npos) {
    const size_t begin = at + kSetMarker.size();
    at = in.find(kSetMarker, begin);
    sets.emplace_back(in.substr(begin, at == std::string_view::npos ? std::string_view::npos : at - begin));
  }
}

/// Loads (and dumps) the parameter struct of every top-level section that the tree names.
void load_sections(const ConfigTree& tree) {
  auto has = [&](const char* s) { return tree.at(s) != nullptr; };
  if (has("nand")) (void)dump_params(nand::load_nand_params(tree, "nand"));
  if (has("ssd")) (void)dump_params(load_params<ssd::SsdParams>(tree, "ssd"));
  if (has("host")) (void)dump_params(load_params<ssd::HostParams>(tree, "host"));
  if (has("workload")) (void)dump_params(load_params<cosmos::WorkloadParams>(tree, "workload"));
  if (has("gpu") || has("hbm") || has("hbf")) {
    const hbf::SystemParams s = hbf::load_system_params(tree);
    (void)dump_params(s.gpu), (void)dump_params(s.hbm), (void)dump_params(s.hbf);
  }
  if (has("llm")) (void)dump_params(load_params<llm::LlmParams>(tree, "llm"));
  if (has("serving")) (void)dump_params(load_params<llm::ServingParams>(tree, "serving"));
  if (has("sessions")) (void)dump_params(load_params<llm::SessionParams>(tree, "sessions"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchFile scratch(".yaml");
  std::string file;
  std::vector<std::string> sets;
  split(std::string_view(reinterpret_cast<const char*>(data), size), file, sets);
  const auto& path = scratch.write(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  // Each step on its own: a refused file does not stop the overrides from being tried (as on an empty tree).
  ConfigTree tree;
  fuzz::expect_documented_errors([&] { tree.load_file(path); });
  scratch.remove();
  for (const std::string& s : sets) fuzz::expect_documented_errors([&] { tree.apply_set(s); });
  fuzz::expect_documented_errors([&] { load_sections(tree); });
  return 0;
}
