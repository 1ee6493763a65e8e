#include "llm/experiment.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/worker_pool.hpp"
#include "llm/deployment.hpp"

namespace bitline::llm {

namespace {

/// Most points of an `accel eval` experiment (the paper's has 128) and variants of an `accel ablation` (the paper's 6):
/// the work is bounded before it starts (docs/commands.md, "Work budgets").
constexpr size_t kMaxEvalPoints = 10000;
constexpr size_t kMaxAblationVariants = 1000;

/// A context: a map {name, input, output} (tokens) or a string "IN:OUT".
ContextSpec read_context(const ConfigNode& n, const std::string& path) {
  if (n.kind == ConfigNode::Kind::Scalar) {
    try {
      return parse_context(n.scalar);
    } catch (const ConfigError& e) {
      experiment_error(n, path, e.what());
    }
  }
  ExperimentMap m(n, path);
  ContextSpec c;
  c.name = m.string("name");
  c.input = m.integer("input", 1);  // a prompt needs at least one token (as --context)
  c.output = m.integer("output", 1);
  m.finish();
  return c;
}

/// A path written in an experiment file is relative to the file's folder, not to where the command runs (so an
/// experiment and the model or kind files beside it move together); names and absolute paths are kept.
std::string beside(const std::filesystem::path& file, const std::string& path) {
  if (std::filesystem::path(path).is_absolute()) return path;
  return (file.parent_path() / path).lexically_normal().string();
}
/// A model named in an experiment: a name of configs/models/, or a config.json path.
std::string model_beside(const std::filesystem::path& file, const std::string& model) {
  return model_is_path(model) ? beside(file, model) : model;
}
/// A kind named in an experiment: a name of configs/gpus/, or a kind file's path.
std::string kind_beside(const std::filesystem::path& file, const std::string& kind) {
  return kind_is_path(kind) ? beside(file, kind) : kind;
}
/// A system KIND x N named in an experiment, its kind as kind_beside (without an x: as it is, for parse_system to refuse).
std::string system_beside(const std::filesystem::path& file, const std::string& system) {
  const size_t x = system.rfind('x');
  return x == std::string::npos ? system : kind_beside(file, system.substr(0, x)) + system.substr(x);
}

std::vector<std::string> read_systems(ExperimentMap& top, std::string_view key, const std::filesystem::path& file) {
  std::vector<std::string> systems = top.strings(key);
  const ConfigNode& n = *top.optional(key);
  for (size_t i = 0; i < systems.size(); ++i) {
    try {
      systems[i] = system_beside(file, systems[i]);
      parse_system(systems[i]);
    } catch (const ConfigError& e) {
      experiment_error(n.items[i], fmt::format("{}[{}]", top.key_path(key), i), e.what());
    }
  }
  try {
    check_distinct_labels(systems);
  } catch (const ConfigError& e) {
    experiment_error(n, top.key_path(key), e.what());
  }
  return systems;
}

}  // namespace

EvalExperiment load_eval_experiment(const std::filesystem::path& file) {
  const ConfigNode root = read_experiment_file(file);
  ExperimentMap top(root, "");
  EvalExperiment e;
  top.accept_header();
  e.models = top.strings("models");
  for (std::string& m : e.models) m = model_beside(file, m);
  {
    const ConfigNode& n = top.required("contexts");
    if (n.kind != ConfigNode::Kind::Sequence || n.items.empty()) experiment_error(n, "contexts", "expected a non-empty list of contexts");
    for (size_t i = 0; i < n.items.size(); ++i) {
      ContextSpec c = read_context(n.items[i], fmt::format("contexts[{}]", i));
      for (const auto& o : e.contexts)
        if (o.name == c.name)
          experiment_error(n.items[i], fmt::format("contexts[{}]", i), fmt::format("context '{}' appears twice", c.name));
      e.contexts.push_back(std::move(c));
    }
  }
  e.slos_ms = top.numbers("slos_ms", 0);
  e.systems = read_systems(top, "systems", file);
  // The work, estimated before anything runs: each point (model x context x SLO x system) is a batch search of
  // tens of milliseconds (a few hundred steps), so 10,000 points are several minutes on two threads (as accel sweep).
  const size_t points = e.models.size() * e.contexts.size() * e.slos_ms.size() * e.systems.size();
  if (points > kMaxEvalPoints)
    experiment_error(root, "(top level)",
                     fmt::format("{} points (models x contexts x slos_ms x systems = {} x {} x {} x {}), more than the {} one "
                                 "evaluation may run (each a batch search of tens of ms: this one would run for about {:.0f} "
                                 "minutes); split it into several experiments",
                                 points, e.models.size(), e.contexts.size(), e.slos_ms.size(), e.systems.size(), kMaxEvalPoints,
                                 double(points) * 0.05 / 60));
  e.baseline = top.string("baseline");
  e.baseline = system_beside(file, e.baseline);  // as systems: are read
  if (std::find(e.systems.begin(), e.systems.end(), e.baseline) == e.systems.end())
    experiment_error(top.required("baseline"), "baseline", fmt::format("'{}' is not one of the systems", e.baseline));
  e.set = top.overrides("set");
  top.finish();
  return e;
}

AblationExperiment load_ablation_experiment(const std::filesystem::path& file) {
  const ConfigNode root = read_experiment_file(file);
  ExperimentMap top(root, "");
  AblationExperiment e;
  top.accept_header();
  e.model = model_beside(file, top.string("model"));
  e.gpus = top.integer("gpus", 1);
  e.batch_per_rank = top.integer("batch_per_rank", 1);
  e.context = read_context(top.required("context"), "context");
  e.slo_ms = top.number("slo_ms", 0);
  {
    const ConfigNode& n = top.required("variants");
    if (n.kind != ConfigNode::Kind::Sequence || n.items.empty()) experiment_error(n, "variants", "expected a non-empty list of variants");
    // Each variant loads its kind and runs a step and a batch search (tens of ms to a second with a large model).
    if (n.items.size() > kMaxAblationVariants)
      experiment_error(n, "variants",
                       fmt::format("{} variants, more than the {} one ablation may run (each a step and a batch search); "
                                   "split it into several experiments",
                                   n.items.size(), kMaxAblationVariants));
    for (size_t i = 0; i < n.items.size(); ++i) {
      ExperimentMap m(n.items[i], fmt::format("variants[{}]", i));
      AblationVariant v;
      v.name = m.string("name");
      v.description = m.string("description");
      v.kind = kind_beside(file, m.string("kind"));
      try {
        check_kind(v.kind);
      } catch (const ConfigError& err) {
        experiment_error(m.required("kind"), m.key_path("kind"), err.what());
      }
      v.set = m.overrides("set");
      m.finish();
      for (const auto& o : e.variants)
        if (o.name == v.name) experiment_error(n.items[i], m.key_path("name"), fmt::format("variant '{}' appears twice", v.name));
      e.variants.push_back(std::move(v));
    }
  }
  e.set = top.overrides("set");
  top.finish();
  return e;
}

SessionsExperiment load_sessions_experiment(const std::filesystem::path& file) {
  const ConfigNode root = read_experiment_file(file);
  ExperimentMap top(root, "");
  SessionsExperiment e;
  top.accept_header();
  e.model = model_beside(file, top.string("model"));
  e.systems = read_systems(top, "systems", file);
  e.set = top.overrides("set");
  if (const ConfigNode* n = top.optional("loads")) {
    if (n->kind != ConfigNode::Kind::Sequence) experiment_error(*n, "loads", "expected a list of loads ({name, set})");
    for (size_t i = 0; i < n->items.size(); ++i) {
      ExperimentMap m(n->items[i], fmt::format("loads[{}]", i));
      SessionsLoadSpec l;
      l.name = m.string("name");
      l.set = m.overrides("set");
      for (size_t k = 0; k < l.set.size(); ++k)
        if (l.set[k].assignment.rfind("sessions.", 0) != 0)
          experiment_error(
              m.optional("set")->items[k], fmt::format("{}[{}]", m.key_path("set"), k),
              fmt::format("'{}': a load varies only sessions.* parameters (the systems stay as `set` makes them)", l.set[k].assignment));
      m.finish();
      for (const auto& o : e.loads)
        if (o.name == l.name) experiment_error(n->items[i], m.key_path("name"), fmt::format("load '{}' appears twice", l.name));
      e.loads.push_back(std::move(l));
    }
  }
  top.finish();
  return e;
}

std::vector<KindParams> ablation_params(const AblationExperiment& e, const std::function<ConfigTree(const std::string& kind)>& base) {
  std::vector<KindParams> out;
  for (const AblationVariant& v : e.variants) {
    try {
      ConfigTree t = base(v.kind);
      apply_overrides(t, v.set);
      out.push_back(load_kind_params(t, v.kind));
    } catch (const ConfigError& err) {
      throw ConfigError(fmt::format("ablation variant '{}': {}", v.name, err.what()));
    }
  }
  return out;
}

// ---- the evaluation -----------------------------------------------------------------

size_t eval_job_count(const EvalExperiment& e) { return e.models.size() * e.systems.size(); }

Json run_eval_job(const ModelSet& models, const std::map<std::string, KindParams>& kinds, const EvalExperiment& e, size_t i) {
  const std::string& model = e.models[i / e.systems.size()];
  const std::string& system = e.systems[i % e.systems.size()];
  try {
    const SystemName sn = parse_system(system);
    const ModelConfig& m = models.models.at(model);
    // The deployment is searched per point (llm.deployment_search): the preferred one, or the smallest change
    // that has a feasible batch; an unbuildable deployment is a result with its reason.
    DeploymentSearch ds(m, kinds.at(sn.kind), sn.gpus);
    Json out = Json::array();
    for (const auto& c : e.contexts)
      for (double slo : e.slos_ms) {
        PointResult p = ds.search(c, bitline::ms(slo));
        p.system = sn.label;
        p.slo_ms = slo;
        out.push_back(p.json());
      }
    return out;
  } catch (const std::exception& err) {
    throw ModelError(fmt::format("{} on {}: {}", model, system, err.what()));
  }
}

Json eval_summary(const Json& points, const EvalExperiment& e) {
  // Points and summary keys name each system by its label (a kind file's stem, not its path).
  const std::string bl = parse_system(e.baseline).label;
  const auto key_of = [](const Json& p) {
    return fmt::format("{}|{}|{}", p["model"].get<std::string>(), p["context"].get<std::string>(), p["slo_ms"].get<double>());
  };
  std::map<std::string, const Json*> base;
  for (const auto& p : points)
    if (p["system"] == bl) base[key_of(p)] = &p;
  Json thr = Json::object(), tpj = Json::object(), pwr = Json::object(), tpjb = Json::object();
  for (const std::string& sys : system_labels(e.systems)) {
    if (sys == bl) continue;
    for (double slo : e.slos_ms) {
      const std::string key = fmt::format("{}@{:g}", sys, slo);
      std::vector<double> r1, r2, r3, r4;                 // throughput, tokens/J (activity), board power, tokens/J (board power)
      std::map<std::string, std::vector<double>> m1, m2;  // throughput, tokens/J (activity) per model
      Json miss = Json::array();
      for (const auto& p : points) {
        if (p["system"] != sys || p["slo_ms"].get<double>() != slo) continue;
        const auto it = base.find(key_of(p));
        const Json* b = it == base.end() ? nullptr : it->second;
        const bool feasible = p["feasible"].get<bool>();
        if (!b || !(*b)["feasible"].get<bool>() || !feasible) {
          miss.push_back(fmt::format("{}/{}: {}", p["model"].get<std::string>(), p["context"].get<std::string>(),
                                     !feasible ? sys + " infeasible" : (b ? bl + " infeasible" : "no " + bl + " point")));
          continue;
        }
        r1.push_back(p["tokens_per_s_per_gpu"].get<double>() / (*b)["tokens_per_s_per_gpu"].get<double>());
        r2.push_back(p["tokens_per_j"].get<double>() / (*b)["tokens_per_j"].get<double>());
        m1[p["model"].get<std::string>()].push_back(r1.back());
        m2[p["model"].get<std::string>()].push_back(r2.back());
        // Board power of the whole system (GPUs x board power per GPU) relative to the baseline system's.
        if (p.contains("board_power_w") && b->contains("board_power_w") && (*b)["board_power_w"]["system"].get<double>() > 0 &&
            (*b)["tokens_per_j_board"].get<double>() > 0) {
          r3.push_back(p["board_power_w"]["system"].get<double>() / (*b)["board_power_w"]["system"].get<double>());
          r4.push_back(p["tokens_per_j_board"].get<double>() / (*b)["tokens_per_j_board"].get<double>());
        }
      }
      auto stats = [&](const std::vector<double>& v) {
        Json j = {{"points", v.size()}, {"excluded", miss}};
        if (v.empty()) {
          j["mean"] = nullptr;
          j["geomean"] = nullptr;
          return j;
        }
        double s = 0, l = 0;
        for (double x : v) s += x, l += std::log(x);
        j["mean"] = s / double(v.size());
        j["geomean"] = std::exp(l / double(v.size()));
        return j;
      };
      // Per model too (the mean and geometric mean of its points' ratios), so that one model cannot hide in the mean.
      auto per_model = [&](const std::map<std::string, std::vector<double>>& m) {
        Json j = Json::object();
        for (const auto& [name, v] : m) {
          Json one = stats(v);
          one.erase("excluded");
          j[name] = one;
        }
        return j;
      };
      thr[key] = stats(r1);
      thr[key]["per_model"] = per_model(m1);
      tpj[key] = stats(r2);
      tpj[key]["per_model"] = per_model(m2);
      pwr[key] = stats(r3);
      tpjb[key] = stats(r4);
    }
  }
  // Energy both ways: activity-based tokens/J, and the paper's way, tokens/J at board power (with the board power).
  return {
      {"throughput_vs_" + bl, thr}, {"tokens_per_j_vs_" + bl, tpj}, {"board_power_vs_" + bl, pwr}, {"tokens_per_j_board_vs_" + bl, tpjb}};
}

// ---- the ablation -------------------------------------------------------------------

Json run_ablation(const ModelConfig& m, const AblationExperiment& e, const std::vector<KindParams>& params, int threads) {
  if (params.size() != e.variants.size()) throw ModelError("run_ablation: one KindParams per variant expected");
  const double slo_ms = e.slo_ms;
  const ContextSpec& c = e.context;
  const auto variants = WorkerPool(threads).map<Json>(e.variants.size(), [&](size_t i) {
    const KindParams& k = params[i];
    Server s(m, k, e.gpus);
    const StepReport r = s.step(e.batch_per_rank, c);
    const PointResult p = s.search(c, bitline::ms(slo_ms));
    Json j;
    j["description"] = e.variants[i].description;
    j["system"] = system_label(k.kind, e.gpus);
    j["step_ms"] = to_s(r.step) * 1e3;
    j["breakdown_ms"] = r.breakdown.json_ms();
    j["fits"] = r.capacity.fits;
    if (!r.capacity.fits) j["capacity_limit"] = r.capacity.limit;
    j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
    j[fmt::format("tokens_per_s_per_gpu_at_{:g}ms", slo_ms)] = p.feasible ? p.step.tokens_per_s_per_gpu : 0.0;
    j[fmt::format("batch_at_{:g}ms", slo_ms)] = p.feasible ? p.step.batch : 0;
    j[fmt::format("bound_by_at_{:g}ms", slo_ms)] = p.feasible ? to_string(p.bound_by) : p.reason;
    return j;
  });
  Json out;
  out["model"] = m.name;
  out["gpus"] = e.gpus;
  out["batch_per_rank"] = e.batch_per_rank;
  out["context"] = {{"name", c.name}, {"input", c.input}, {"output", c.output}};
  out["slo_ms"] = slo_ms;
  for (size_t i = 0; i < e.variants.size(); ++i) out["variants"][e.variants[i].name] = variants[i];
  return out;
}

}  // namespace bitline::llm
