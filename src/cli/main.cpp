// bitline: simulator for computing with NAND flash.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <system_error>

#include "cli/common.hpp"
#include "core/error.hpp"

namespace {
/// Standard output could not take what was printed (a full disk, /dev/full, a closed pipe): exit 2 with the reason.
int stdout_failed(const std::string& why) {
  std::cerr << "bitline: cannot write the output: standard output: " << why << "\n";
  return 2;
}

/// The values given on the command line (--set KEY=VALUE, --config FILE), for a message whose culprit the failing
/// arithmetic cannot name (a time past 2^63 ps comes from a sum of many terms); values cut to 40 characters.
std::string given_values(int argc, char** argv) {
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    for (const char* opt : {"--set", "--config"}) {
      const std::string o = opt;
      if (a == o && i + 1 < argc)
        v = o + " " + argv[++i];
      else if (a.rfind(o + "=", 0) == 0)
        v = o + " " + a.substr(o.size() + 1);
    }
    if (v.empty()) continue;
    if (v.size() > 60) v = v.substr(0, 57) + "...";
    out += (out.empty() ? "" : ", ") + v;
  }
  return out.empty() ? "" : " (the values given: " + out + "; one of them is out of the range the run can simulate)";
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
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the message (or the help / the version)
    return rc == 0 ? 0 : 2;
  } catch (const bitline::OverflowError& e) {
    std::cerr << "bitline: input too large: " << e.what() << given_values(argc, argv) << "\n";
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
      if (ev == EPIPE || ev == ENOSPC || ev == EIO || ev == EBADF) return stdout_failed(e.what());
    std::cerr << "bitline: internal error (a bug: please report it with the command line): " << e.what() << "\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cerr << "bitline: out of memory: the inputs need more memory than this machine has (see the limits in "
                 "docs/commands.md, \"Hardened inputs\")"
              << given_values(argc, argv) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bitline: internal error (a bug: please report it with the command line): " << e.what() << "\n";
    return 3;
  }
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) return stdout_failed(std::strerror(errno ? errno : EIO));
  return 0;
}
