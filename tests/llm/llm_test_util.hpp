// Shared by the LLM tests: the shipped model descriptions and the GPU kinds'
// presets of this source tree.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "core/config.hpp"
#include "llm/experiment.hpp"
#include "llm/model.hpp"
#include "llm/serving.hpp"

namespace bitline::llm::test {

/// A model shipped in configs/models/NAME.json.
inline ModelConfig shipped(const std::string& name) {
  return load_model_file(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs" / "models" / (name + ".json"));
}

/// The cell of the HBF presets' planes: configs/nand/xl-flash.yaml's `nand` section.
inline nand::NandParams xl_flash_cell() {
  ConfigTree t;
  t.set_preset_dir(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs");
  t.load_preset("nand/xl-flash");
  return nand::load_nand_params(t);
}

/// One GPU kind's file (configs/gpus/KIND.yaml) loaded into KindParams.
inline KindParams preset_kind(const std::string& kind) {
  ConfigTree t;
  t.set_preset_dir(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs");
  t.load_preset(kind);
  return load_kind_params(t, kind);
}

/// The h200, csi and cli presets, each loaded into KindParams.
inline std::map<std::string, KindParams> preset_kinds() {
  std::map<std::string, KindParams> m;
  for (const char* kind : {"h200", "csi", "cli"}) m.emplace(kind, preset_kind(kind));
  return m;
}

/// The paper's evaluation matrix: configs/experiments/flashaccel-eval.yaml of this source tree.
inline const EvalExperiment& paper_eval() {
  static const EvalExperiment e =
      load_eval_experiment(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs" / "experiments" / "flashaccel-eval.yaml");
  return e;
}

/// A context of the paper's evaluation by name ("long", "agent"), or IN:OUT.
inline ContextSpec paper_context(const std::string& name) { return parse_context(name, paper_eval().contexts); }

}  // namespace bitline::llm::test
