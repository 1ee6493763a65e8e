#include "cli/common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text.hpp"
#include "cosmos/workloads.hpp"
#include "hbf/params.hpp"
#include "llm/params.hpp"
#include "nand/params.hpp"
#include "serve/engine_profile.hpp"
#include "serve/params.hpp"
#include "ssd/device.hpp"
#include "ssd/params.hpp"

namespace bitline::cli {

void ConfigOptions::add_to(CLI::App& app) {
  app.add_option("--preset", preset, "named preset from the configs/ folder (e.g. flash-cosmos)");
  app.add_option("--config", file, "YAML config file (may inherit a preset with 'base: NAME')");
  app.add_option("--set", sets, "override one parameter: key.path=value (repeatable), e.g. nand.timing.t_read_slc=30us");
}

ConfigTree ConfigOptions::load(const std::vector<Override>& experiment) const {
  ConfigTree t;
  if (!preset.empty()) t.load_preset(preset);
  apply_overrides(t, experiment);
  if (!file.empty()) t.load_file(file);
  for (const auto& s : sets) t.apply_set(s);
  check_top_level(t);
  return t;
}

namespace {
template <class P>
Component component(std::string path, std::string summary) {
  return {std::move(path), std::move(summary), [](const std::string& p) { return describe_params<P>(p); },
          [](const ConfigTree& t, const std::string& p) { (void)load_params<P>(t, p); }};
}
}  // namespace

const std::vector<Component>& catalogue() {
  static const std::vector<Component> c = {
      component<SimParams>("sim", "run-wide settings (seed)"),
      component<nand::NandParams>("nand",
                                  "NAND flash die: geometry, timing, energy, reliability, ECC, command limits; its SLC timing and "
                                  "energy are also the cell of the HBF planes (HBF presets: configs/nand/xl-flash.yaml)"),
      component<hbf::GpuParams>("gpu", "GPU around the memories (FlashAccel): compute, on-chip SRAM"),
      component<hbf::HbmParams>("hbm", "HBM stacks of the GPU: capacity, bandwidth, latency, energy"),
      component<hbf::HbfParams>(
          "hbf", "High-Bandwidth Flash stacks: geometry, megaplanes, interface, SRAM, endurance, runtime (the planes' cell: nand)"),
      component<ssd::SsdParams>("ssd", "SSD around the dies: channels, dies, PCIe, controller, ISP accelerator"),
      component<ssd::DeviceParams>("ssd_device",
                                   "the general SSD's device (bitline ssd run): MQSim's device file as typed parameters, its "
                                   "defaults MQSim's; --set ssd_device.KEY=VALUE overrides the file"),
      component<ssd::SsdModelOptions>("ssd_model", "the general SSD (bitline ssd run): which of MQSim's firmware mechanisms are modelled"),
      component<ssd::HostParams>("host", "host CPU and DRAM"),
      component<cosmos::CosmosParams>("cosmos", "Flash-Cosmos evaluation: how energy is accounted (the paper's way or the whole system)"),
      component<cosmos::WorkloadParams>("workload", "Flash-Cosmos workloads (BMI, IMS, KCS) and synthetic data"),
      component<llm::LlmParams>("llm", "LLM decode on GPUs (FlashAccel): compute model, network, parallelism, energy"),
      component<llm::ServingParams>("serving", "LLM serving: capacity policy, KV layout, routing, batch search, endurance"),
      component<llm::SessionParams>("sessions", "multi-turn KV reuse experiment and its synthetic agentic trace"),
      component<serve::ServeParams>("serve",
                                    "request-level serving (bitline serve): scheduler, batch limits, KV blocks, iteration-time memo"),
      {"engine", "the serving engine (bitline serve --engine NAME: configs/engines/NAME.yaml): its family, options and host costs",
       [](const std::string& p) { return serve::describe_engine_section(p); },
       [](const ConfigTree& t, const std::string&) { serve::check_engine_section(t); }},
  };
  return c;
}

std::vector<std::string> names_of(const ImplList& impls) { return std::vector<std::string>(impls.names().begin(), impls.names().end()); }

void check_top_level(const ConfigTree& tree) {
  std::string known;
  for (const auto& c : catalogue()) known += (known.empty() ? "" : ", ") + c.path;
  for (const auto& [k, v] : tree.root().keys) {
    // A preset's one-line `description:` (a GPU kind's is printed by `accel kinds`) is text, not a section.
    if (k == kDescriptionKey) {
      if (v.kind != ConfigNode::Kind::Scalar) throw ConfigError(fmt::format("{}: description: expected one line of text", v.origin));
      continue;
    }
    bool ok = false;
    for (const auto& c : catalogue()) ok |= c.path == k;
    if (!ok) throw ConfigError(fmt::format("{}: {}: unknown section (known sections: {})", v.origin, k, known));
  }
  for (const auto& c : catalogue()) c.check(tree, c.path);
}

void add_config_inputs(std::vector<NamedPath>& inputs, const ConfigTree& tree) {
  for (const auto& f : tree.loaded_files()) inputs.push_back({"config file", f});
}

void check_outputs(const std::vector<NamedPath>& outputs, const ConfigTree& tree, std::vector<NamedPath> more) {
  add_config_inputs(more, tree);
  check_distinct_files(outputs, more);
}

std::vector<std::string> list_option(const std::vector<std::string>& values, std::string_view flag) {
  std::vector<std::string> out;
  for (const auto& v : values)
    for (auto& item : split_list(v, ',', flag)) out.push_back(std::move(item));
  return out;
}

void check_sections(const ConfigTree& tree, std::span<const std::string_view> allowed, std::string_view command) {
  for (const auto& [k, v] : tree.root().keys)
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      throw ConfigError(fmt::format("{}: {}: unknown section ({} takes {})", v.origin, k, command, fmt::join(allowed, " and ")));
}

}  // namespace bitline::cli

namespace bitline::cli {

CLI::Validator finite_range(double lo, double hi, std::string_view unit) {
  return CLI::Validator(
      [lo, hi, unit = std::string(unit)](std::string& text) -> std::string {
        double v = 0;
        if (!parse_decimal_number(text, v) || v < lo || v > hi)
          return fmt::format("'{}' is not a number{} in [{:g}, {:g}]", text_brief(text), unit.empty() ? "" : " of " + unit, lo, hi);
        return {};
      },
      fmt::format("NUMBER{} in [{:g}, {:g}]", unit.empty() ? "" : " (" + std::string(unit) + ")", lo, hi));
}

CLI::Validator whole_range(int64_t lo, int64_t hi, std::string_view unit, std::string_view why) {
  return CLI::Validator(
      [lo, hi, unit = std::string(unit), why = std::string(why)](std::string& text) -> std::string {
        int64_t v = 0;
        if (!parse_decimal_integer(text, v) || v < lo || v > hi)
          return fmt::format("'{}' is not a whole number of {} in [{}, {}]{}", text_brief(text), unit, lo, hi,
                             why.empty() ? "" : "; " + why);
        return {};
      },
      fmt::format("INT ({}) in [{}, {}]", unit, lo, hi));
}

CLI::Validator slo_ms() { return finite_range(1e-6, 3.6e6, "ms"); }

void print_progress(size_t i, size_t n, const std::string& what) {
  const bool tty = isatty(fileno(stderr)) != 0;
  if (tty) {
    std::fprintf(stderr, "\r[%3zu/%zu] %-40s%s", i, n, what.c_str(), i == n ? "\n" : "");
  } else {
    const size_t step = std::max<size_t>(1, n / 10);
    if (i % step == 0 || i == n) std::fprintf(stderr, "[%3zu/%zu] %s\n", i, n, what.c_str());
  }
  std::fflush(stderr);
}

void RunContext::report(bool quiet, size_t done, size_t total, const std::string& what) const {
  if (progress)
    progress(ProgressReport{done, total, what});
  else if (!quiet)
    print_progress(done, total, what);
}

Vary parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw ConfigError(fmt::format("--vary '{}': expected KEY=V1,V2,... (e.g. nand.timing.t_read_slc=2us,4us)", text));
  return Vary{text.substr(0, eq), split_list(std::string_view(text).substr(eq + 1), ',', "--vary " + text.substr(0, eq))};
}

VaryColumns vary_columns(const std::vector<Vary>& vary) {
  VaryColumns c;
  for (const auto& v : vary) {
    size_t w = v.key.size();
    for (const auto& value : v.values) w = std::max(w, value.size());
    c.width.push_back(w);
    c.head += fmt::format("{:<{}} ", v.key, w);
  }
  return c;
}

std::string VaryColumns::row(const std::vector<std::string>& combo) const {
  std::string r;
  for (size_t v = 0; v < width.size(); ++v) r += fmt::format("{:<{}} ", combo[v], width[v]);
  return r;
}

std::vector<Vary> parse_grid(const std::vector<std::string>& texts, size_t max_points, std::string_view why,
                             const std::vector<std::string>& sets) {
  std::vector<Vary> vary;
  for (const auto& v : texts) {
    vary.push_back(parse_vary(v));
    for (const auto& set : sets)
      if (set.substr(0, set.find('=')) == vary.back().key)
        throw ConfigError(
            fmt::format("--vary {} and --set {}: the sweep sets {} at every point, so the --set would be dropped; give "
                        "its values in --vary only",
                        vary.back().key, text_brief(set), vary.back().key));
    for (size_t i = 0; i + 1 < vary.size(); ++i)
      if (vary[i].key == vary.back().key)
        throw ConfigError(fmt::format("--vary {}: the key is varied twice (give all its values in one --vary)", vary.back().key));
  }
  size_t grid = 1;
  for (const auto& v : vary) {
    grid *= v.values.size();
    if (grid > max_points)
      throw ConfigError(fmt::format("--vary: the grid has more than {} points (the product of the value counts, up to --vary {}); {}",
                                    max_points, v.key, why));
  }
  return vary;
}

std::vector<std::vector<std::string>> combinations(const std::vector<Vary>& vary) {
  std::vector<std::vector<std::string>> combos(1);
  for (const auto& v : vary) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c0 : combos)
      for (const auto& value : v.values) {
        next.push_back(c0);
        next.back().push_back(value);
      }
    combos = std::move(next);
  }
  return combos;
}

std::string vary_label(const std::vector<Vary>& vary, const std::vector<std::string>& combo) {
  std::string l;
  for (size_t i = 0; i < vary.size(); ++i) l += fmt::format("{}{}={}", i ? " " : "", vary[i].key, combo[i]);
  return l;
}

}  // namespace bitline::cli
