// bitline: simulator for computing with NAND flash.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"bitline: a simulator for computing with NAND flash (Flash-Cosmos in-flash bitwise ops, "
               "High-Bandwidth Flash for LLM inference)"};
  app.set_version_flag("--version", std::string("bitline ") + BITLINE_VERSION);
  app.require_subcommand(1);
  bitline::cli::add_describe(app);
  bitline::cli::add_nand(app);
  bitline::cli::add_hbf(app);
  bitline::cli::add_cosmos(app);
  bitline::cli::add_accel(app);
  bitline::cli::add_ssd(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bitline::ConfigError& e) {
    std::cerr << "bitline: config error: " << e.what() << "\n";
    return 2;
  } catch (const bitline::CommandError& e) {
    std::cerr << "bitline: illegal command: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "bitline: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
