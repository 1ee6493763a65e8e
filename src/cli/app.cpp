// The `bitline` command line as one CLI11 app, shared by the program (main.cpp) and the Python module
// (src/python): the commands, and the checks of a command line before and after CLI11 reads it.
#include "cli/app.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"

namespace bitline::cli {
namespace {
/// A number written with a base prefix or a leading zero ("010", "0x10", "0b1"): the argument parser reads such
/// integers in octal, hexadecimal or binary, where bitline's own parsers (--system h100x010) read decimal.
bool non_decimal_integer(std::string_view v) {
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) v.remove_prefix(1);
  if (v.size() < 2 || v[0] != '0') return false;
  const std::string_view rest = v.substr(2);
  const auto only = [&](const char* digits) { return !rest.empty() && rest.find_first_not_of(digits) == std::string_view::npos; };
  if (v[1] == 'x' || v[1] == 'X') return only("0123456789abcdefABCDEF");  // not a shape such as 0x4096x4096
  if (v[1] == 'b' || v[1] == 'B') return only("01");                      // not a size such as 0B
  if (v[1] == 'o' || v[1] == 'O') return only("01234567");
  return v.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

void add_commands(CLI::App& app, const RunContext& ctx) {
  add_describe(app);
  add_nand(app);
  add_hbf(app);
  add_cosmos(app, ctx);
  add_accel(app, ctx);
  add_ssd(app, ctx);
  add_serve(app, ctx);
}

/// An option given an empty value (`--json ''`, `--systems=`) is refused: no option of bitline means anything by one,
/// and taking it as "not given" silently drops an output or an input (exit 2 before anything runs). So is an integer
/// that is not plainly decimal (`--gpus 010` was 8 GPUs).
void check_argument_values(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const bool option_value = i > 1 && std::string_view(argv[i - 1]).rfind("--", 0) == 0 && a.rfind("-", 0) != 0;
    const std::string value = a.rfind("--", 0) == 0 && eq != std::string::npos ? a.substr(eq + 1) : option_value ? a : std::string();
    if (non_decimal_integer(value))
      throw ConfigError(
          fmt::format("{}: '{}': write the number in decimal (a leading 0 or a 0x/0b prefix would be read in "
                      "another base)",
                      eq != std::string::npos && a.rfind("--", 0) == 0 ? a.substr(0, eq) : argv[i - 1], value));
    if (a.rfind("--", 0) == 0 && a.size() > 2 && a.back() == '=')
      throw ConfigError(fmt::format("{}: an empty value", a.substr(0, a.size() - 1)));
    if (a.empty())
      throw ConfigError(i > 1 && std::string(argv[i - 1]).rfind("-", 0) == 0 ? fmt::format("{}: an empty value", argv[i - 1])
                                                                             : fmt::format("argument {}: an empty string", i));
  }
}

/// After CLI11 refused the command line: the first word that is not a subcommand or an option of the command it
/// follows, with the closest name there ("did you mean"), as `--set` keys get; empty when there is none to suggest
/// (CLI11's own message is printed then).
std::string misspelt_word(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* at = &app;
  std::string path = "bitline";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
      std::vector<std::string> names;
      for (const CLI::Option* o : at->get_options())
        for (const std::string& l : o->get_lnames()) names.push_back(l);
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;  // a known option (its value may follow)
      const std::vector<std::string_view> views(names.begin(), names.end());
      const std::string_view near = closest_name(name, views, 3);
      if (near.empty()) return {};
      return fmt::format("{}: unknown option --{}; did you mean --{}? (`{} --help` lists its options)", path, name, near, path);
    }
    if (a.empty() || a[0] == '-') continue;
    std::vector<std::string> subs;
    for (const CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) subs.push_back(sub->get_name());
    if (subs.empty()) continue;  // a positional or an option's value
    const auto it = std::find(subs.begin(), subs.end(), a);
    if (it != subs.end()) {
      at = at->get_subcommand(a);
      path += " " + a;
      continue;
    }
    if (i > 1 && std::string_view(argv[i - 1]).rfind("-", 0) == 0) continue;  // the value of an option
    const std::vector<std::string_view> views(subs.begin(), subs.end());
    const std::string_view near = closest_name(a, views, 3);
    std::string all;
    for (const auto& n : subs) all += (all.empty() ? "" : ", ") + n;
    return fmt::format("{}: unknown command '{}'{} (commands: {})", path, a,
                       near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near), all);
  }
  return {};
}

std::string overrides_of(int argc, const char* const* argv) {
  // options that name outputs or change nothing of the run: never the culprit
  static constexpr std::array<std::string_view, 4> kNotInputs{"--json", "--csv", "--threads", "--quiet"};
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string flag = a.substr(0, eq);
    if (flag.rfind("--", 0) != 0 || std::find(kNotInputs.begin(), kNotInputs.end(), flag) != kNotInputs.end()) continue;
    std::string value = eq != std::string::npos ? a.substr(eq + 1) : (i + 1 < argc ? argv[i + 1] : "");
    if (eq == std::string::npos && (value.empty() || value.rfind("--", 0) == 0)) continue;  // a flag without a value
    if (value.size() > 80) value = value.substr(0, 77) + "...";
    out += (out.empty() ? "" : ", ") + flag + " " + value;
  }
  return out;
}

}  // namespace bitline::cli
