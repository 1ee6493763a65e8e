#include "cli/accel/common.hpp"
#include "core/param_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "llm/experiment.hpp"
#include "llm/serving.hpp"
#include "llm/sessions.hpp"
#include "serve/engine_profile.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

void KindOptions::add_to(CLI::App& app) {
  app.add_option("--preset", preset,
                 "a preset of configs/ merged over each GPU kind; a GPU kind's name (e.g. csi) names the kind to run, as --system "
                 "does");
  app.add_option("--config", file, "YAML file merged over each GPU kind's file (configs/gpus/KIND.yaml)");
  app.add_option("--set", sets,
                 "override one parameter for every GPU kind: key.path=value (repeatable), e.g. llm.compute.kernel_overhead=3us");
}

std::string KindOptions::preset_kind() const {
  if (preset.empty()) return {};
  const auto kinds = available_kinds();
  return std::find(kinds.begin(), kinds.end(), preset) != kinds.end() ? preset : std::string();
}

namespace {

/// The tree of the kind alone: its file (by name from configs/gpus/, or by path).
ConfigTree kind_tree(const std::string& kind) {
  check_kind(kind);
  ConfigTree t;
  if (kind_is_path(kind))
    t.load_file(kind);
  else
    t.load_preset(kind);
  return t;
}

/// Whether the files a tree loaded make it a GPU kind of its own: a file of configs/gpus/ among them, or a top file
/// with a `description:` (every kind has one).
std::string kind_identity(const ConfigTree& t) {
  std::error_code ec;
  const auto dir = std::filesystem::weakly_canonical(kinds_dir(), ec);
  for (const auto& f : t.loaded_files())
    if (f.parent_path() == dir) return f.stem().string();
  return t.root().find(kDescriptionKey) ? "its own" : "";
}

/// Refuses an override file that is a GPU kind of its own merged over a different kind.
void check_identity(const std::string& kind, const std::string& what, const ConfigTree& overlay) {
  const std::string id = kind_identity(overlay);
  if (id.empty() || id == kind) return;
  std::error_code ec;
  const bool same_file =
      kind_is_path(kind) && !overlay.loaded_files().empty() && std::filesystem::weakly_canonical(kind, ec) == overlay.loaded_files().back();
  if (same_file) return;
  throw ConfigError(fmt::format(
      "{} is a GPU kind of its own ({}); merged over kind '{}' it would run that kind's hardware under the name '{}'. Run it as "
      "the kind (--system {}x N, or --system FILE --gpus N), or give only the parameters to change",
      what, id == "its own" ? "it has a description:" : "it is or inherits configs/gpus/" + id + ".yaml", kind, kind,
      id == "its own" ? "FILE" : id));
}

}  // namespace

ConfigTree KindOptions::tree(const std::string& kind, const std::vector<Override>& experiment) const {
  ConfigTree t = kind_tree(kind);
  if (!engine.empty()) serve::load_engine_profile(t, engine);
  apply_overrides(t, experiment);
  if (!preset.empty() && preset_kind().empty()) {
    ConfigTree overlay;
    overlay.load_preset(preset);
    check_identity(kind, "--preset " + preset, overlay);
    t.load_preset(preset);
  }
  if (!file.empty()) {
    ConfigTree overlay;
    overlay.load_file(file);
    check_identity(kind, "--config " + file, overlay);
    t.load_file(file);
  }
  for (const auto& s : sets) t.apply_set(s);
  check_top_level(t);
  return t;
}

namespace {
/// Flattens a dumped parameter tree into "a.b.c" -> value.
void flatten(const Json& j, const std::string& prefix, std::map<std::string, Json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out[prefix] = j;
}
}  // namespace

Json KindValue::json() const { return {{"key", key}, {"value", value}, {"from", origin.value_or("default")}}; }

std::vector<KindValue> kind_provenance(const std::string& kind) {
  const ConfigTree t = kind_tree(kind);
  std::map<std::string, Json> values;
  flatten(kind_json(load_kind_params(t, kind)), "", values);
  std::vector<KindValue> out;
  for (const auto& [key, value] : values) {
    const ConfigNode* at = t.at(key);
    out.push_back({key, value, at ? std::optional<std::string>(at->origin) : std::nullopt});
  }
  return out;
}

Json KindOptions::overrides(const std::string& kind, const std::vector<Override>& experiment) const {
  std::map<std::string, Json> base, run;
  flatten(kind_json(load_kind_params(kind_tree(kind), kind)), "", base);
  flatten(kind_json(load(kind, experiment)), "", run);
  Json out = Json::object();
  for (const auto& [k, v] : run) {
    const auto it = base.find(k);
    if (it == base.end() || it->second != v) out[k] = {{"kind", it == base.end() ? Json() : it->second}, {"run", v}};
  }
  return out;
}

KindParams KindOptions::load(const std::string& kind, const std::vector<Override>& experiment) const {
  const std::string pk = preset_kind();
  if (!pk.empty() && pk != kind)
    throw ConfigError(
        fmt::format("--preset {} names a GPU kind, but this run's kind is '{}': a kind is chosen by the system "
                    "(--system, or an experiment's systems:), and merging one kind over another would run the "
                    "first under the second's name",
                    preset, kind));
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

Json config_json(const std::map<std::string, KindParams>& kinds, const KindOptions* opts, const std::vector<Override>& experiment) {
  Json j;
  for (const auto& [name, k] : kinds) {
    j[name] = kind_json(k);
    if (opts) {
      Json o = opts->overrides(name, experiment);
      if (!o.empty()) j[name]["overridden"] = std::move(o);
    }
  }
  return j;
}

std::string overrides_text(const std::map<std::string, KindParams>& kinds, const KindOptions& opts,
                           const std::vector<Override>& experiment) {
  std::string s;
  for (const auto& [name, k] : kinds) {
    const Json o = opts.overrides(name, experiment);
    if (o.empty()) continue;
    std::string list;
    size_t shown = 0;
    for (const auto& [key, v] : o.items()) {
      if (shown++ == 8) {
        list += fmt::format(", ... ({} in all, listed under config.{}.overridden in the JSON)", o.size(), name);
        break;
      }
      list += fmt::format("{}{} {} -> {}", list.empty() ? "" : ", ", key, v["kind"].dump(), v["run"].dump());
    }
    s += fmt::format("kind {}: {} parameter{} overridden: {}\n", name, o.size(), o.size() == 1 ? "" : "s", list);
  }
  return s;
}

void check_one_gpu_kind(const std::string& system, std::string_view what) {
  const auto kinds = llm::available_kinds();
  if (llm::kind_is_path(system) || std::find(kinds.begin(), kinds.end(), system) != kinds.end()) return;
  if (system.find('x') == std::string::npos) llm::check_kind(system);  // refused, naming the known kinds
  const llm::SystemName sn = llm::parse_system(system);                // a KIND x N name, or refused
  throw ConfigError(fmt::format("--system {}: {} runs on one GPU; give the kind alone (--system {})", system, what, sn.kind));
}

std::vector<int64_t> parse_dims(const std::string& arg, size_t count, const std::string& error) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t end = i + 1 < count ? arg.find('x', pos) : arg.size();
    const std::string part = end == std::string::npos ? std::string() : arg.substr(pos, end - pos);
    int64_t v = 0;
    if (part.size() > 8 || !parse_decimal_integer(part, v) || v < 0) throw ConfigError(error);
    dims.push_back(v);
    pos = end + 1;
  }
  return dims;
}

std::vector<NamedPath> input_files(const KindOptions& k, const std::vector<std::string>& models, const std::vector<std::string>& systems,
                                   std::vector<NamedPath> more) {
  std::vector<NamedPath> in = std::move(more);
  if (!k.file.empty()) in.push_back({"--config", k.file});
  for (const std::string& m : models)
    in.push_back({"--model", llm::model_is_path(m) ? std::filesystem::path(m) : llm::models_dir() / (m + ".json")});
  for (const std::string& s : systems) {
    std::string kind = s;  // (a kernel command's --system is a kind alone)
    try {
      kind = llm::parse_system(s).kind;
    } catch (const ConfigError&) {
    }
    // Every file the kind's tree merges: its file, the presets it inherits with `base:`, --preset and --config.
    try {
      add_config_inputs(in, k.tree(kind));
    } catch (const ConfigError&) {  // a malformed name or file is refused where it is used
    }
  }
  return in;
}

}  // namespace bitline::cli::accel
