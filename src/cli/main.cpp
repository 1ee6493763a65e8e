// bitline: simulator for computing with NAND flash.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"

namespace {
/// Standard output could not take what was printed (a full disk, /dev/full, a closed pipe): exit 2 with the reason,
/// except for a closed pipe (`bitline describe | head`), where the reader has what it wanted: exit 2 without a word.
int stdout_failed(const std::string& why, int error) {
  if (error != EPIPE) std::cerr << "bitline: cannot write the output: standard output: " << why << "\n";
  return 2;
}
/// The inputs of the command line that change parameters or sizes (--set, --vary, --config, --experiment and the
/// size options), for an overflow found deep in a run: one of them is the culprit, and the message names them.
std::string overrides_of(int argc, char** argv) {
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string flag = a.substr(0, eq);
    if (flag.rfind("--", 0) != 0 || flag == "--json" || flag == "--csv" || flag == "--threads" || flag == "--quiet") continue;
    std::string value = eq != std::string::npos ? a.substr(eq + 1) : (i + 1 < argc ? argv[i + 1] : "");
    if (eq == std::string::npos && (value.empty() || value.rfind("--", 0) == 0)) continue;  // a flag without a value
    if (value.size() > 80) value = value.substr(0, 77) + "...";
    out += (out.empty() ? "" : ", ") + flag + " " + value;
  }
  return out;
}

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

/// An option given an empty value (`--json ''`, `--systems=`) is refused: no option of bitline means anything by one,
/// and taking it as "not given" silently drops an output or an input (exit 2 before anything runs). So is an integer
/// that is not plainly decimal (`--gpus 010` was 8 GPUs).
void check_argument_values(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const bool option_value = i > 1 && std::string_view(argv[i - 1]).rfind("--", 0) == 0 && a.rfind("-", 0) != 0;
    const std::string value = a.rfind("--", 0) == 0 && eq != std::string::npos ? a.substr(eq + 1) : option_value ? a : std::string();
    if (non_decimal_integer(value))
      throw bitline::ConfigError(
          fmt::format("{}: '{}': write the number in decimal (a leading 0 or a 0x/0b prefix would be read in "
                      "another base)",
                      eq != std::string::npos && a.rfind("--", 0) == 0 ? a.substr(0, eq) : argv[i - 1], value));
    if (a.rfind("--", 0) == 0 && a.size() > 2 && a.back() == '=')
      throw bitline::ConfigError(fmt::format("{}: an empty value", a.substr(0, a.size() - 1)));
    if (a.empty())
      throw bitline::ConfigError(i > 1 && std::string(argv[i - 1]).rfind("-", 0) == 0 ? fmt::format("{}: an empty value", argv[i - 1])
                                                                                      : fmt::format("argument {}: an empty string", i));
  }
}

/// After CLI11 refused the command line: the first word that is not a subcommand or an option of the command it
/// follows, with the closest name there ("did you mean"), as `--set` keys get; empty when there is none to suggest
/// (CLI11's own message is printed then).
std::string misspelt_word(CLI::App& app, int argc, char** argv) {
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
      const std::string_view near = bitline::closest_name(name, views, 3);
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
    const std::string_view near = bitline::closest_name(a, views, 3);
    std::string all;
    for (const auto& n : subs) all += (all.empty() ? "" : ", ") + n;
    return fmt::format("{}: unknown command '{}'{} (commands: {})", path, a,
                       near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near), all);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe (`bitline ... | head -1`) is a write error to report, not a signal that kills the process
  // before its result files are written.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "bitline: a simulator for computing with NAND flash (Flash-Cosmos in-flash bitwise ops, "
      "High-Bandwidth Flash for LLM inference)"};
  app.set_version_flag("--version", std::string("bitline ") + BITLINE_VERSION);
  app.require_subcommand(1);
  bitline::cli::add_describe(app);
  bitline::cli::add_nand(app);
  bitline::cli::add_hbf(app);
  bitline::cli::add_cosmos(app);
  bitline::cli::add_accel(app);
  bitline::cli::add_ssd(app);
  bitline::cli::add_serve(app);
  // Exit codes (docs/commands.md): 0 success, 1 no feasible result, 2 bad input (arguments, configs, model
  // files, traces, an output path that cannot be written, values too large to simulate), 3 an internal error.
  try {
    // Under mpirun every rank must have the same inputs: checked before any rank starts (all exit 2 together).
    bitline::Distributed::check_same_inputs(argc, argv);
    check_argument_values(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      if (const std::string m = misspelt_word(app, argc, argv); !m.empty()) {
        std::cerr << m << "\n";
        return 2;
      }
    }
    const int rc = app.exit(e);  // prints the message (or the help / the version)
    if (rc != 0) return 2;
    // --help or --version: printed to standard output, which may not take it (/dev/full, a closed pipe).
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
      return stdout_failed(std::strerror(errno ? errno : EIO), errno ? errno : EIO);
    return 0;
  } catch (const bitline::OverflowError& e) {
    // The overflow is found where times or sizes add up, far from the key that made them large: name the inputs.
    const std::string inputs = overrides_of(argc, argv);
    std::cerr << "bitline: input too large: " << e.what()
              << (inputs.empty() ? std::string() : "; the run's inputs (one is past what can be simulated): " + inputs) << "\n";
    return 2;
  } catch (const bitline::ConfigError& e) {
    std::cerr << "bitline: config error: " << e.what() << "\n";
    return 2;
  } catch (const bitline::OutputError& e) {
    std::cerr << "bitline: cannot write the output: " << e.what() << "\n";
    return 2;
  } catch (const bitline::CommandError& e) {
    std::cerr << "bitline: illegal command: " << e.what() << "\n";
    return 2;
  } catch (const bitline::ModelError& e) {
    std::cerr << "bitline: error: " << e.what() << "\n";
    return 1;
  } catch (const std::system_error& e) {
    // fmt::print reports a failed write to stdout this way (EPIPE, ENOSPC, EIO).
    const int ev = e.code().value();
    if (e.code().category() == std::generic_category() || e.code().category() == std::system_category())
      if (ev == EPIPE || ev == ENOSPC || ev == EIO || ev == EBADF) return stdout_failed(e.what(), ev);
    std::cerr << "bitline: internal error (a bug: please report it with the command line): " << e.what() << "\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cerr << "bitline: out of memory: the inputs need more memory than this machine has (see the limits in "
                 "docs/commands.md, \"Hardened inputs\")";
    const std::string inputs = overrides_of(argc, argv);
    std::cerr << (inputs.empty() ? std::string() : "; the run's inputs: " + inputs) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bitline: internal error (a bug: please report it with the command line): " << e.what() << "\n";
    return 3;
  }
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
    return stdout_failed(std::strerror(errno ? errno : EIO), errno ? errno : EIO);
  return 0;
}
