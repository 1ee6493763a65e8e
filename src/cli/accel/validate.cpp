// `bitline accel validate`: the fast step model against the event-driven memory simulation, per model and system.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "llm/experiment.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct ValidateOpts {
  std::string json, context;
  std::vector<std::string> models, systems;
  int64_t batch = 0;
  double slo = 0;
};

/// One model on one system: the comparison at --batch (else the batch the SLO search finds), printed; nothing
/// where the system cannot serve the model.
std::optional<ValidationPoint> validate_one(const ModelConfig& m, const std::string& mn, const std::string& sysname,
                                            const std::map<std::string, KindParams>& kinds, const ContextSpec& c, double slo,
                                            int64_t batch) {
  const SystemName sn = parse_system(sysname);
  std::unique_ptr<Server> s;
  try {
    s = std::make_unique<Server>(m, kinds.at(sn.kind), sn.gpus);
  } catch (const ConfigError& e) {
    fmt::print("{:<18} {:<8} skipped: {}\n", mn, sysname, e.what());
    return std::nullopt;
  }
  int64_t r = batch;
  if (r <= 0) {
    const PointResult p = s->search(c, bitline::ms(slo));
    r = p.feasible ? p.step.requests_per_rank : 1;
  }
  if (!s->capacity(r, c).fits && s->max_requests(c) == 0) {
    fmt::print("{:<18} {:<8} skipped: nothing fits\n", mn, sysname);
    return std::nullopt;
  }
  const ValidationPoint v = validate_step(*s, r, c);
  fmt::print(
      "{:<18} {:<8} r={:<4} fast {:>9.3f} ms (all layers {:>9.3f})  event {:>9.3f} ms  error {:+.2f}% "
      "({:+.2f}%)  wall {:.3f} s vs {:.2f} s\n",
      mn, sysname, r, v.fast_ms, v.fast_all_layers_ms, v.event_ms, 100 * v.error(), 100 * v.error_all_layers(), v.fast_wall_s,
      v.event_wall_s);
  return v;
}

void run_validate(const KindOptions& k, const ValidateOpts& o, const std::string& file) {
  check_json_output(o.json);
  const EvalExperiment ex = load_eval_experiment(file);
  const ContextSpec c = o.context.empty() ? ex.contexts.front() : parse_context(o.context, ex.contexts);
  const double slo = o.slo > 0 ? o.slo : *std::max_element(ex.slos_ms.begin(), ex.slos_ms.end());
  const auto models = o.models.empty() ? ex.models : list_option(o.models, "--models");
  const auto systems = o.systems.empty() ? ex.systems : list_option(o.systems, "--systems");
  check_distinct_files({{"--json", o.json}}, input_files(k, models, systems, {{"--experiment", file}}));
  const auto kinds = k.load_all(systems, ex.set);
  Json out = Json::array();
  double worst = 0;
  fmt::print(
      "r = requests per attention rank in the step ({}); fast = the fast step model on its sampled layers (all "
      "layers in parentheses), event = the event-driven memory simulation; error = fast / event - 1; wall = the "
      "time each took\n",
      o.batch > 0 ? "--batch" : fmt::format("the batch the search finds under the {:g} ms SLO", slo));
  for (const auto& mn : models) {
    const ModelConfig m = load_model(mn);
    for (const auto& sysname : systems) {
      const auto v = validate_one(m, mn, sysname, kinds, c, slo, o.batch);
      if (!v) continue;
      worst = std::max(worst, std::abs(v->error()));
      out.push_back(v->json());
    }
  }
  // Nothing compared is no result (exit 1, as a search without a feasible batch), not "0.00% error".
  if (out.empty())
    throw ModelError(
        fmt::format("accel validate: none of the {} model x system pairs could be compared (each skipped above); "
                    "nothing validated, no result written",
                    models.size() * systems.size()));
  fmt::print("largest |error| of the fast model: {:.2f}%\n", 100 * worst);
  if (!o.json.empty()) {
    write_json_file(o.json, {{"points", out}, {"max_abs_error", worst}, {"config", config_json(kinds, &k, ex.set)}});
    fmt::print("wrote {}\n", o.json);
  }
}

}  // namespace

void add_validate(CLI::App& accel) {
  auto* cmd = accel.add_subcommand("validate", "fast step model vs the event-driven HBF memory simulation, per model and system");
  auto k = std::make_shared<KindOptions>();
  auto x = std::make_shared<ExperimentOption>();
  auto o = std::make_shared<ValidateOpts>();
  k->add_to(*cmd);
  x->add_to(*cmd, "flashaccel-eval", "its models, systems, first context and largest SLO are the defaults");
  cmd->add_option("--json", o->json, "write the comparisons to this file");
  cmd->add_option("--models", o->models, "models, comma-separated or repeated (default: the experiment's)");
  cmd->add_option("--systems", o->systems, "systems, comma-separated or repeated (default: the experiment's)");
  cmd->add_option("--context", o->context, "a context named in the experiment or IN:OUT (default: its first)");
  cmd->add_option("--batch", o->batch, "requests per rank (default: the batch the --slo search finds)")
      ->check(whole_range(1, kMaxBatchOption, "requests per rank"));
  cmd->add_option("--slo", o->slo, "SLO of the batch search, ms (default: the experiment's largest)")->check(slo_ms());
  cmd->callback([k, o, x] { run_validate(*k, *o, x->file); });
}

}  // namespace bitline::cli::accel
