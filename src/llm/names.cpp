// Names of the serving model: GPU kinds (configs/gpus/), systems ("csix8"), contexts ("8192:1024"), and the models
// of a run.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/input.hpp"
#include "core/text.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

std::filesystem::path kinds_dir() { return default_preset_dir() / "gpus"; }

std::vector<std::string> available_kinds() {
  std::vector<std::string> out;
  file_stems(kinds_dir(), ".yaml", out);
  std::sort(out.begin(), out.end());
  return out;
}

bool kind_is_path(const std::string& kind) {
  const auto ends = [&](std::string_view suffix) {
    return kind.size() >= suffix.size() && kind.compare(kind.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return kind.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

void check_kind(const std::string& kind) {
  if (kind_is_path(kind)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(kind, ec))
      throw ConfigError(fmt::format("GPU kind file '{}' does not exist or is not a regular file", kind));
    return;
  }
  const auto kinds = available_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return;
  std::string known;
  for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
  throw ConfigError(
      fmt::format("unknown GPU kind '{}' (kinds, the files of {}: {}; or give the path of a kind's YAML file, e.g. "
                  "./mine.yaml)",
                  kind, kinds_dir().string(), known.empty() ? "none" : known));
}

const std::vector<RequiredKindKey>& required_kind_keys() {
  static const std::vector<RequiredKindKey> keys = {
      {"gpu.bf16_flops", "dense BF16 tensor throughput, FLOP/s"},
      {"gpu.onchip_sram", "on-chip SRAM (L2) size"},
      {"hbm.stacks", "HBM stacks"},
      {"hbm.capacity_per_stack", "HBM capacity per stack"},
      {"hbm.bandwidth_per_stack", "HBM bandwidth per stack"},
      {"hbm.energy", "HBM access energy per bit"},
      {"llm.compute.sms", "streaming multiprocessors (GEMM tiles run in waves over them)"},
      {"llm.compute.l2_bandwidth", "L2 bandwidth (GEMM tiles' operand loads)"},
      {"llm.compute.fp8_speedup", "FP8 tensor throughput over BF16"},
      {"llm.network.nvlink", "NVLink (scale-up link) bandwidth per GPU and direction"},
      {"llm.network.nvlink_sharp", "whether the node's switches reduce in the switch (NVLink SHARP)"},
      {"llm.energy.gpu_tdp", "board power (TDP)"},
      {"llm.energy.tdp_hbm_stacks", "HBM stacks inside that board power"},
  };
  return keys;
}

void check_required_kind_keys(const ConfigTree& tree, const std::string& kind, const KindParams& k) {
  std::vector<std::string> missing;
  const auto need = [&](std::string_view key, std::string_view what) {
    if (!tree.at(key)) missing.push_back(fmt::format("{} ({})", key, what));
  };
  for (const RequiredKindKey& r : required_kind_keys()) need(r.key, r.what);
  if (*k.llm.network.collectives == CollectiveModel::Measured)
    need("llm.network.busbw", "the measured all-reduce curve that llm.network.collectives = measured reads");
  if (k.llm.network.nvlink_sharp)
    need("llm.network.nvls_busbw", "the all-reduce curve with NVLink SHARP, as llm.network.nvlink_sharp = true says");
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  const std::string file = kind_is_path(kind) ? kind : (kinds_dir() / (kind + ".yaml")).string();
  throw ConfigError(
      fmt::format("GPU kind '{}' ({}): {} key{} that every kind gives {} missing:{}\nGive {} in the file (docs/kinds.md says what each "
                  "is and has a template), or build on a shipped kind with a first line `base: h100` (or another of `bitline accel "
                  "kinds`), whose values then stand for the keys the file does not give; `bitline describe --kind FILE` shows where "
                  "each value comes from",
                  kind, file, missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "is" : "are", list,
                  missing.size() == 1 ? "it" : "them"));
}

SystemName parse_system(const std::string& name) {
  const auto x = name.rfind('x');
  SystemName s;
  s.name = name;
  if (x != std::string::npos && x > 0 && x + 1 < name.size()) {
    s.kind = name.substr(0, x);
    const std::string n = name.substr(x + 1);
    if (n.size() >= 6 || !parse_decimal_integer(n, s.gpus)) s.gpus = 0;
  }
  if (s.kind.empty() || s.gpus < 1)
    throw ConfigError(
        fmt::format("unknown system '{}': expected KIND x GPUS, GPUS 1 to 99999 in decimal (e.g. csix8, b200x8, ./mine.yamlx8)", name));
  try {
    check_kind(s.kind);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("system '{}': {}", name, e.what()));
  }
  s.label = system_label(s.kind, s.gpus);
  return s;
}

std::string kind_label(const std::string& kind) { return kind_is_path(kind) ? std::filesystem::path(kind).stem().string() : kind; }

std::string system_label(const std::string& kind, int64_t gpus) { return fmt::format("{}x{}", kind_label(kind), gpus); }

std::vector<std::string> system_labels(const std::vector<std::string>& systems) {
  std::vector<std::string> out;
  for (const std::string& s : systems) out.push_back(parse_system(s).label);
  return out;
}

void check_distinct_labels(const std::vector<std::string>& systems) {
  std::map<std::string, std::string> seen;  // label -> the system that printed as it first
  for (const std::string& s : systems) {
    const SystemName sn = parse_system(s);
    const auto [it, fresh] = seen.emplace(sn.label, s);
    if (!fresh && it->second != s)
      throw ConfigError(
          fmt::format("systems '{}' and '{}' would both print as '{}' in the results: a kind given by path prints "
                      "as its file's name without .yaml; rename one of the files",
                      it->second, s, sn.label));
  }
}

ContextSpec parse_context(const std::string& s, const std::vector<ContextSpec>& named) {
  for (const auto& c : named)
    if (c.name == s) return c;
  const auto colon = s.find(':');
  if (colon != std::string::npos) {
    int64_t in = 0, out = 0;
    if (parse_decimal_integer(s.substr(0, colon), in) && parse_decimal_integer(s.substr(colon + 1), out) && in >= 0 && out >= 1) {
      if (in > kMaxContextTokens || out > kMaxContextTokens)
        throw ConfigError(
            fmt::format("context '{}': at most {} tokens of input and of output (the longest context "
                        "windows today are about 10M)",
                        s, kMaxContextTokens));
      return ContextSpec{s, in, out};
    }
  }
  std::string names;
  for (const auto& c : named) names += c.name + (&c == &named.back() ? " or " : ", ");
  throw ConfigError(fmt::format("context '{}': expected {}INPUT:OUTPUT tokens in decimal (e.g. 2000:500, output >= 1)", s, names));
}

const ModelConfig& ModelSet::get(const std::string& name) {
  auto it = models.find(name);
  if (it == models.end()) it = models.emplace(name, load_model(name)).first;
  return it->second;
}

void check_precision(Precision p, const KindParams& k) {
  if (p == Precision::Fp4 && !(k.llm.compute.fp4_speedup > 0))
    throw ConfigError(
        fmt::format("llm.precision = fp4: GPU kind '{}' has no FP4 tensor cores (llm.compute.fp4_speedup = {}); FP4 "
                    "needs e.g. b200",
                    k.kind, k.llm.compute.fp4_speedup));
}

}  // namespace bitline::llm
