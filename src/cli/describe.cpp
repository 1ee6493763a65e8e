// `bitline describe [component]`: every parameter with its type, default,
// range, description and the source of its default; a policy key lists its
// registered implementations (core/registry.hpp) with their descriptions.
// `bitline describe --impls` lists only the policies: every key chosen by name,
// from the config and from the other inputs (model files, command options).
#include <fmt/format.h>

#include <iostream>

#include "cli/accel/common.hpp"
#include "cli/common.hpp"
#include "core/json_io.hpp"
#include "cosmos/workloads.hpp"
#include "llm/model.hpp"
#include "serve/engine_profile.hpp"
#include "ssd/device.hpp"

namespace bitline::cli {
namespace {

/// A policy chosen by name outside the config sections: where its name comes from, and its table.
struct OtherPolicy {
  std::string where;
  const ImplList* impls;
};

std::vector<OtherPolicy> other_policies() {
  return {{"model config.json: model_type", &llm::architectures()},
          {"model config.json: torch_dtype", &llm::torch_dtypes()},
          {"model config.json: quantization_config.quant_method", &llm::quant_methods()},
          {"cosmos run --workload", &cosmos::workloads()},
          {"cosmos run --system", &cosmos::systems()},
          {"cosmos run --device-scheduling, cosmos eval --general-device", &ssd::device_schedulings()}};
}

/// The papers bitline implements: what a `source` naming one of them refers to (docs/papers.md has what comes from where).
struct Paper {
  const char* name;      // as sources cite it
  const char* citation;  // authors, title, venue
  const char* link;
};
constexpr Paper kPapers[] = {
    {"Flash-Cosmos (MICRO 2022)",
     "J. Park, R. Azizi, G. F. Oliveira, M. Sadrosadati, R. Nadig, D. Novo, J. Gomez-Luna, M. Kim, O. Mutlu: \"Flash-Cosmos: "
     "In-Flash Bulk Bitwise Operations Using Inherent Computation Capability of NAND Flash Memory\", MICRO 2022",
     "https://arxiv.org/abs/2209.05566"},
    {"FlashAccel (arXiv 2607.10186)",
     "Wang et al. (ICT, CAS): \"FlashAccel: Leveraging High-Bandwidth Flash (HBF) for High-Throughput LLM Inference\", 2026",
     "https://arxiv.org/abs/2607.10186"},
};

std::string papers_text() {
  std::string s = "Papers (sources cite them by the first name; what comes from where: docs/papers.md):\n";
  for (const auto& p : kPapers) s += fmt::format("  {}\n    {}\n    {}\n", p.name, p.citation, p.link);
  return s;
}

std::vector<ChoiceRow> rows_of(const ImplList& impls) {
  std::vector<ChoiceRow> out;
  for (size_t i = 0; i < impls.size(); ++i) out.push_back({std::string(impls.names()[i]), std::string(impls.descriptions()[i])});
  return out;
}

std::string choice_lines(const std::vector<ChoiceRow>& choices, std::string_view indent) {
  size_t width = 0;
  for (const auto& c : choices) width = std::max(width, c.name.size());
  std::string s;
  for (const auto& c : choices) s += fmt::format("{}{:<{}}  {}\n", indent, c.name, width, c.desc);
  return s;
}

nlohmann::json choices_json(const std::vector<ChoiceRow>& choices) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : choices) j.push_back({{"name", c.name}, {"description", c.desc}});
  return j;
}

}  // namespace

namespace {

/// describe --engines: the serving engine profiles of configs/engines/.
void print_engines(bool as_json) {
  const auto list = serve::list_engines();
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : list) {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, v] : e.options) o[k] = v;
      j.push_back({{"name", e.name},
                   {"file", e.file},
                   {"family", e.family},
                   {"version", e.version},
                   {"description", e.description},
                   {"options", o}});
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout
      << "Serving engines (bitline serve run|sweep|capacity --engine NAME; --set engine.OPTION=VALUE; docs/serving.md, \"Engines\"):\n";
  for (const auto& e : list) {
    std::cout << fmt::format("\n{}  (family {}, {}{})\n  {}\n  {}\n", e.name, e.family, e.version,
                             e.name == serve::kDefaultEngine ? ", the default" : "", e.description, e.file);
    for (const auto& [k, v] : e.options) std::cout << fmt::format("    {:<28} {}\n", k, v);
  }
}

/// describe --kind KIND: every parameter of the kind as it resolves, and where it comes from.
void print_kind(const std::string& kind, bool as_json) {
  const std::vector<accel::KindValue> rows = accel::kind_provenance(kind);
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) j.push_back(r.json());
    std::cout << j.dump(2) << "\n";
    return;
  }
  size_t own = 0, width = 0;
  for (const auto& r : rows) {
    own += r.origin.has_value();
    width = std::max(width, r.key.size());
  }
  std::cout << fmt::format("GPU kind {}: {} parameters, {} from its files, {} defaults\n", kind, rows.size(), own, rows.size() - own);
  for (const auto& r : rows)
    std::cout << fmt::format("{:<{}}  {:<16}  {}\n", r.key, width, r.value.is_string() ? r.value.get<std::string>() : r.value.dump(),
                             r.origin.value_or("default"));
}

/// describe --papers: the papers that sources cite.
void print_papers(bool as_json) {
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& p : kPapers) j.push_back({{"name", p.name}, {"citation", p.citation}, {"link", p.link}});
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << papers_text();
  }
}

/// describe [COMPONENT] [--impls]: the parameters of every component (or those under COMPONENT), or only the policies
/// chosen by name.
void print_components(const std::string& component, bool as_json, bool impls) {
  std::vector<ParamRow> rows;
  bool matched = component.empty();
  for (const auto& c : catalogue()) {
    for (auto& r : c.rows(c.path)) {
      if (component.empty() || r.path == component || r.path.rfind(component + ".", 0) == 0) {
        matched = true;
        if (!impls || !r.choices.empty()) rows.push_back(r);
      }
    }
  }
  if (!matched) {
    std::string known;
    for (const auto& c : catalogue()) known += (known.empty() ? "" : ", ") + c.path;
    throw CLI::ValidationError("describe", fmt::format("unknown component '{}' (components: {})", component, known));
  }
  const bool others = impls && component.empty();
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json e = {{"key", r.path},    {"type", r.type},        {"default", r.def},
                          {"range", r.range}, {"description", r.desc}, {"source", r.source}};
      if (!r.choices.empty()) e["kind"] = r.kind, e["choices"] = choices_json(r.choices);
      j.push_back(std::move(e));
    }
    if (others)
      for (const auto& o : other_policies())
        j.push_back({{"key", o.where}, {"kind", o.impls->kind()}, {"choices", choices_json(rows_of(*o.impls))}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (impls) {
    std::cout << "Policies chosen by name (core/registry.hpp): each key with its implementations\n\n";
    for (const auto& r : rows) std::cout << fmt::format("{}  ({}, default {})\n{}", r.path, r.kind, r.def, choice_lines(r.choices, "    "));
    if (others) {
      std::cout << "\nChosen outside the config sections:\n\n";
      for (const auto& o : other_policies())
        std::cout << fmt::format("{}  ({})\n{}", o.where, o.impls->kind(), choice_lines(rows_of(*o.impls), "    "));
    }
    return;
  }
  if (component.empty()) {
    std::cout << papers_text() << "\n";
    std::cout << "Components (bitline describe NAME for one; --impls for the policies chosen by name):\n";
    for (const auto& c : catalogue()) std::cout << fmt::format("  {:<10} {}\n", c.path, c.summary);
    std::cout << "\n";
  }
  for (const auto& r : rows) {
    std::cout << fmt::format("{}  ({}{}{})\n    default: {}\n    {}\n", r.path, r.kind.empty() ? r.type : "choice of " + r.kind,
                             r.range.empty() ? "" : ", ", r.range, r.def, r.desc);
    if (!r.choices.empty()) std::cout << "    choices:\n" << choice_lines(r.choices, "      ");
    std::cout << fmt::format("    source: {}\n", r.source);
  }
}

}  // namespace

void add_describe(CLI::App& app) {
  auto* cmd = app.add_subcommand("describe", "list components and their parameters (default, unit, source)");
  auto component = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto impls = std::make_shared<bool>(false);
  auto papers = std::make_shared<bool>(false);
  cmd->add_option("component", *component, "a component or a dotted prefix, e.g. nand or nand.timing; none lists all");
  cmd->add_flag("--json", *as_json, "print JSON instead of a table");
  cmd->add_flag("--impls", *impls,
                "list only the policies chosen by name (every key with its implementations), including those of model files "
                "and command options");
  cmd->add_flag("--papers", *papers, "print the papers that sources cite (title, authors, venue, link) and nothing else");
  auto kind = std::make_shared<std::string>();
  cmd->add_option("--kind", *kind,
                  "print GPU kind KIND (a name of configs/gpus/ or a kind's YAML file) as it resolves: every parameter's value and "
                  "where it comes from (the file and line that set it, the kind's own or a base's, or the default)");
  auto engines = std::make_shared<bool>(false);
  cmd->add_flag("--engines", *engines,
                "list the serving engine profiles of configs/engines/ (bitline serve --engine NAME): family, version and every "
                "option and host cost as the file gives it (its comments cite each)");
  cmd->callback([component, as_json, impls, papers, kind, engines] {
    if (*engines) {
      if (!component->empty() || *impls || *papers || !kind->empty())
        throw CLI::ValidationError("describe", "--engines lists the engine profiles: it takes no component nor --impls/--papers/--kind");
      print_engines(*as_json);
    } else if (!kind->empty()) {
      if (!component->empty() || *impls || *papers)
        throw CLI::ValidationError("describe", "--kind prints one GPU kind: it takes neither a component nor --impls/--papers");
      print_kind(*kind, *as_json);
    } else if (*papers) {
      print_papers(*as_json);
    } else {
      print_components(*component, *as_json, *impls);
    }
  });
}

}  // namespace bitline::cli
