// Naming what runs: a GPU kind (a file of configs/gpus/, or a path) and its parameters, a system (KIND x GPUS), a
// context (IN:OUT tokens, or one an experiment names), and the models of an evaluation loaded once (llm/names.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "hbf/params.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

/// The parameters of one GPU kind (a preset with the user's overrides).
struct KindParams {
  std::string kind;  // a file of configs/gpus/ without .yaml (h200, csi, b200, ...), or the path of a kind's YAML file
  hbf::SystemParams system;
  LlmParams llm;
  ServingParams serving;
};

/// ConfigError for a number format kind `k` cannot run (FP4 without FP4 tensor cores).
void check_precision(Precision p, const KindParams& k);

/// The GPU kinds: the YAML files of kinds_dir() (configs/gpus/, or $BITLINE_CONFIG_DIR/gpus/), sorted, without .yaml.
std::filesystem::path kinds_dir();
std::vector<std::string> available_kinds();
/// A kind given as the path of its YAML file (it holds a '/' or ends in .yaml / .yml) rather than by name.
bool kind_is_path(const std::string& kind);
/// ConfigError naming the known kinds unless `kind` is one of available_kinds() or the path of a readable file.
void check_kind(const std::string& kind);

/// A key every GPU kind gives, in its file or in a kind it builds on (`base: h100`): the hardware that differs between
/// GPUs, so that a new kind never runs on another GPU's values unnoticed (docs/kinds.md lists them).
struct RequiredKindKey {
  std::string_view key, what;
};
const std::vector<RequiredKindKey>& required_kind_keys();
/// ConfigError naming every required key that kind `kind`'s tree (its file, its bases, the run's overrides) does not
/// give, with how to inherit them; `k` (the loaded parameters) decides the keys required only where they are used: the
/// measured collectives' curve (llm.network.collectives = measured) and NVLink SHARP's (llm.network.nvlink_sharp).
void check_required_kind_keys(const ConfigTree& tree, const std::string& kind, const KindParams& k);

/// "csix8" -> kind "csi", 8 GPUs; the kind is a file of configs/gpus/ or a path ("./mine.yamlx8").
/// The label the system prints as (results, tables, legends) is KIND x N with the kind as kind_label() prints it.
struct SystemName {
  std::string name, kind;
  int64_t gpus = 0;
  std::string label;
};
/// Parses KIND x N (csix8, ...); ConfigError listing the kinds for anything else.
SystemName parse_system(const std::string& name);

/// What a kind prints as in results, tables and legends: its name, or for a kind given by path its file's stem
/// (../study/kinds/mi300x.yaml -> mi300x), so that a study's results read the same wherever its files lie.
std::string kind_label(const std::string& kind);
/// kind_label(kind) x gpus ("mi300xx8").
std::string system_label(const std::string& kind, int64_t gpus);
/// The labels of systems KIND x N, in order (parse_system's, each parsed once).
std::vector<std::string> system_labels(const std::vector<std::string>& systems);
/// ConfigError when two of one run's systems would print as the same label (a kind file named like a shipped kind,
/// or two files of one stem in different folders): their results could not be told apart.
void check_distinct_labels(const std::vector<std::string>& systems);

struct ContextSpec {
  std::string name;
  int64_t input = 0, output = 0;
};
/// One of the `named` contexts (an experiment's, e.g. "long") or "IN:OUT" tokens; ConfigError otherwise.
ContextSpec parse_context(const std::string& s, const std::vector<ContextSpec>& named = {});

/// Loads the models of the evaluation once.
struct ModelSet {
  std::map<std::string, ModelConfig> models;
  const ModelConfig& get(const std::string& name);
};

}  // namespace bitline::llm
