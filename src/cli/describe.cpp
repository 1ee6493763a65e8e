// `bitline describe [component]`: every parameter with its type, default,
// range, description and the source of its default.
#include <fmt/format.h>

#include <iostream>

#include "cli/common.hpp"
#include "core/json_io.hpp"

namespace bitline::cli {

void add_describe(CLI::App& app) {
  auto* cmd = app.add_subcommand("describe", "list components and their parameters (default, unit, source)");
  auto component = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  cmd->add_option("component", *component, "a component or a dotted prefix, e.g. nand or nand.timing; none lists all");
  cmd->add_flag("--json", *as_json, "print JSON instead of a table");
  cmd->callback([component, as_json] {
    std::vector<ParamRow> rows;
    bool matched = component->empty();
    for (const auto& c : catalogue()) {
      for (auto& r : c.rows(c.path)) {
        if (component->empty() || r.path == *component || r.path.rfind(*component + ".", 0) == 0) {
          rows.push_back(r);
          matched = true;
        }
      }
    }
    if (!matched) {
      std::string known;
      for (const auto& c : catalogue()) known += (known.empty() ? "" : ", ") + c.path;
      throw CLI::ValidationError("describe", fmt::format("unknown component '{}' (components: {})", *component, known));
    }
    if (*as_json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"key", r.path}, {"type", r.type}, {"default", r.def}, {"range", r.range}, {"description", r.desc}, {"source", r.source}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    if (component->empty()) {
      std::cout << "Components (bitline describe NAME for one):\n";
      for (const auto& c : catalogue()) std::cout << fmt::format("  {:<10} {}\n", c.path, c.summary);
      std::cout << "\n";
    }
    for (const auto& r : rows) {
      std::cout << fmt::format("{}  ({}{}{})\n    default: {}\n    {}\n    source: {}\n", r.path, r.type, r.range.empty() ? "" : ", ",
                               r.range, r.def, r.desc, r.source);
    }
  });
}

}  // namespace bitline::cli
