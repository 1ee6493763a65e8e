#include "cli/accel/common.hpp"
#include "core/param_dump.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "llm/experiment.hpp"
#include "llm/sessions.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

void KindOptions::add_to(CLI::App& app) {
  app.add_option("--config", file, "YAML file merged over each GPU kind's file (configs/gpus/KIND.yaml)");
  app.add_option("--set", sets,
                 "override one parameter for every GPU kind: key.path=value (repeatable), e.g. llm.compute.kernel_overhead=3us");
}

ConfigTree KindOptions::tree(const std::string& kind, const std::vector<Override>& experiment) const {
  ConfigTree t;
  t.load_preset(kind);
  apply_overrides(t, experiment);
  if (!file.empty()) t.load_file(file);
  for (const auto& s : sets) t.apply_set(s);
  check_top_level(t);
  return t;
}

KindParams KindOptions::load(const std::string& kind, const std::vector<Override>& experiment) const {
  return load_kind_params(tree(kind, experiment), kind);
}

std::map<std::string, KindParams> KindOptions::load_all(const std::vector<std::string>& systems, const std::vector<Override>& experiment,
                                                        const std::vector<std::string>& kinds) const {
  std::map<std::string, KindParams> m;
  for (const auto& s : systems) {
    const std::string k = parse_system(s).kind;
    if (!m.count(k)) m.emplace(k, load(k, experiment));
  }
  for (const auto& k : kinds)
    if (!m.count(k)) m.emplace(k, load(k, experiment));
  return m;
}

SessionParams KindOptions::sessions(const std::string& kind, const std::vector<Override>& experiment) const {
  return load_params<SessionParams>(tree(kind, experiment), "sessions");
}

void ExperimentOption::add_to(CLI::App& app, const std::string& name, const std::string& what) {
  file = shipped_experiment(name).string();
  app.add_option("--experiment", file, fmt::format("experiment file: {} (default: the paper's, configs/experiments/{}.yaml)", what, name));
}

ContextSpec context_arg(const std::string& s) {
  if (s.find(':') != std::string::npos) return parse_context(s);
  return parse_context(s, load_eval_experiment(shipped_experiment("flashaccel-eval")).contexts);
}

void load_models(ModelSet& models, const std::vector<std::string>& names, const std::string& file) {
  for (const auto& n : names) {
    try {
      models.get(n);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: models: {}", file, e.what()));
    }
  }
}

Json kind_json(const KindParams& k) {
  Json j = {{"gpu", dump_params(k.system.gpu)},
            {"hbm", dump_params(k.system.hbm)},
            {"hbf", dump_params(k.system.hbf)},
            {"llm", dump_params(k.llm)},
            {"serving", dump_params(k.serving)}};
  if (k.system.hbf.stacks > 0)  // the cell of the HBF planes: the parts of `nand` the HBF reads
    j["nand"] = {{"timing", dump_params(k.system.cell.timing)}, {"energy", dump_params(k.system.cell.energy)}};
  return j;
}

Json config_json(const std::map<std::string, KindParams>& kinds) {
  Json j;
  for (const auto& [name, k] : kinds) j[name] = kind_json(k);
  return j;
}

}  // namespace bitline::cli::accel
