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

#include "cli/app.hpp"
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
  bitline::cli::add_commands(app, bitline::cli::RunContext{});  // progress on stderr
  // Exit codes (docs/commands.md): 0 success, 1 no feasible result, 2 bad input (arguments, configs, model
  // files, traces, an output path that cannot be written, values too large to simulate), 3 an internal error.
  try {
    // Under mpirun every rank must have the same inputs: checked before any rank starts (all exit 2 together).
    bitline::Distributed::check_same_inputs(argc, argv);
    bitline::cli::check_argument_values(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      if (const std::string m = bitline::cli::misspelt_word(app, argc, argv); !m.empty()) {
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
    const std::string inputs = bitline::cli::overrides_of(argc, argv);
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
    const std::string inputs = bitline::cli::overrides_of(argc, argv);
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
