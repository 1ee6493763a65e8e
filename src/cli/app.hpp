// The `bitline` command line as one CLI11 app (cli/app.cpp): what main.cpp runs, and what the Python module runs
// in-process (src/python), so both read the same arguments and refuse the same ones.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace bitline::cli {

/// One progress report of a command: `done` of `total` units (a sweep's points, an evaluation's runs, an SSD run's
/// requests) and what was last done.
struct ProgressReport {
  size_t done = 0;
  size_t total = 0;
  std::string what;
};

/// What a command line runs with besides its words: where its progress goes. The program gives no callback: progress
/// is printed on stderr (cli/common.hpp's print_progress) unless the command's --quiet. The Python module gives its
/// caller's callback (src/python): every report goes there instead, --quiet or not. Passed to each command as it is
/// added (one per command line, never global); a report that throws stops the run with that exception.
struct RunContext {
  std::function<void(const ProgressReport&)> progress;
  /// Reports `done` of `total`: to the callback when there is one, else on stderr unless `quiet`.
  void report(bool quiet, size_t done, size_t total, const std::string& what) const;
};

/// Adds every command family (describe, nand, hbf, cosmos, accel, ssd, serve) to `app`; the commands that report
/// progress send it to `ctx` (stderr when it has no callback). The commands keep a copy of `ctx`.
void add_commands(CLI::App& app, const RunContext& ctx);

/// Refuses (ConfigError) an option given an empty value and an integer not written in decimal (`--gpus 010`), before
/// CLI11 reads them in another base.
void check_argument_values(int argc, const char* const* argv);
/// After CLI11 refused a command line: the first word that is not a command or an option of the command it follows,
/// with the closest name ("did you mean"); empty when there is none to suggest.
std::string misspelt_word(CLI::App& app, int argc, const char* const* argv);

/// The inputs of the command line that change parameters or sizes (--set, --vary, --config, --experiment and the
/// size options), for an overflow found deep in a run: one of them is the culprit, and the message names them
/// (empty when there are none). The program and the Python module append them to an OverflowError's message.
std::string overrides_of(int argc, const char* const* argv);

}  // namespace bitline::cli
