// The `bitline` command line as one CLI11 app (cli/app.cpp): what main.cpp runs, and what the Python module runs
// in-process (src/python), so both read the same arguments and refuse the same ones.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace bitline::cli {

/// Adds every command family (describe, nand, hbf, cosmos, accel, ssd, serve) to `app`.
void add_commands(CLI::App& app);
/// Refuses (ConfigError) an option given an empty value and an integer not written in decimal (`--gpus 010`), before
/// CLI11 reads them in another base.
void check_argument_values(int argc, const char* const* argv);
/// After CLI11 refused a command line: the first word that is not a command or an option of the command it follows,
/// with the closest name ("did you mean"); empty when there is none to suggest.
std::string misspelt_word(CLI::App& app, int argc, const char* const* argv);

}  // namespace bitline::cli
