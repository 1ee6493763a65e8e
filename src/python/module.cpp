// _bitline: runs one `bitline` command line in-process (the same CLI11 app as the program, cli/app.hpp) for the
// Python package `bitline` (src/python/bitline/__init__.py, docs/python.md). Errors are exceptions, never an exit:
// bad input (the program's exit 2) raises bitline.ConfigError, a run with no feasible result (exit 1)
// bitline.ModelError, with the message the program prints. The run releases the GIL; an optional progress callback
// is called with it held.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace {

/// Where a command's failure goes: the class of the program's exit code, and the program's message.
struct Failure {
  enum class Kind { None, Config, Model } kind = Kind::None;
  std::string message;
};

/// Thrown through the run by a progress report whose callback raised: it unwinds the command (a worker pool starts no
/// job after it) and is then replaced by what the callback raised.
struct CallbackRaised : std::exception {
  const char* what() const noexcept override { return "the progress callback raised an exception"; }
};

/// The caller's progress callback, called as callback(done, total, what) for each report of the run (cli/app.hpp's
/// RunContext), from whichever thread reports, with the GIL held. What it raises is kept (`raised`) and stops the
/// run; later reports call it no more. Reports of one run come one at a time (the commands serialise them).
struct Callback {
  py::object fn;
  std::optional<py::error_already_set> raised;  // set and read with the GIL held

  void operator()(const bitline::cli::ProgressReport& r) {
    py::gil_scoped_acquire gil;
    if (!raised) {
      try {
        fn(r.done, r.total, r.what);
        return;
      } catch (py::error_already_set& e) {
        raised = std::move(e);
      }
    }
    throw CallbackRaised{};
  }
};

/// Runs `bitline ARGS` (args without the program's name); what it prints to std::cout is returned when `capture`.
/// A process-wide redirection of std::cout while it runs: one captured command at a time (the Python side holds a
/// lock for those). Progress goes to `ctx` (its callback, or stderr as the program's).
std::string run(const std::vector<std::string>& args, bool capture, const bitline::cli::RunContext& ctx, Failure& failure) {
  std::vector<const char*> argv{"bitline"};
  for (const auto& a : args) argv.push_back(a.c_str());
  const int argc = int(argv.size());
  std::ostringstream out;
  std::streambuf* const saved = capture ? std::cout.rdbuf(out.rdbuf()) : nullptr;
  try {
    CLI::App app{"bitline"};
    app.require_subcommand(1);
    bitline::cli::add_commands(app, ctx);
    bitline::cli::check_argument_values(argc, argv.data());
    try {
      app.parse(argc, argv.data());  // runs the command (CLI11 calls its callback)
    } catch (const CLI::ParseError& e) {
      const std::string suggestion = bitline::cli::misspelt_word(app, argc, argv.data());
      throw bitline::ConfigError(suggestion.empty() ? std::string(e.what()) : suggestion);
    }
  } catch (const bitline::ModelError& e) {
    failure = {Failure::Kind::Model, e.what()};
  } catch (const bitline::OverflowError& e) {  // named with the run's inputs, as the program names them
    const std::string inputs = bitline::cli::overrides_of(argc, argv.data());
    failure = {Failure::Kind::Config,
               std::string(e.what()) + (inputs.empty() ? "" : "; the run's inputs (one is past what can be simulated): " + inputs)};
  } catch (const std::exception& e) {  // ConfigError, OverflowError, OutputError, CommandError: the program's exit 2
    failure = {Failure::Kind::Config, e.what()};
  }
  if (capture) std::cout.rdbuf(saved);
  return out.str();
}

}  // namespace

PYBIND11_MODULE(_bitline, m) {
  m.doc() = "bitline's commands in-process (use the package `bitline`, not this module)";
  static py::exception<bitline::ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  static py::exception<bitline::ModelError> model_error(m, "ModelError", PyExc_RuntimeError);
  m.def(
      "run",
      [](const std::vector<std::string>& args, bool capture, const py::object& progress) {
        if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
          throw py::type_error("progress: a callable, progress(done, total, what), or None");
        Failure failure;
        std::string out;
        Callback callback{progress, std::nullopt};  // destroyed with the GIL held
        bitline::cli::RunContext ctx;
        if (!progress.is_none()) ctx.progress = [&callback](const bitline::cli::ProgressReport& r) { callback(r); };
        {
          py::gil_scoped_release free;  // the simulation runs without the interpreter
          out = run(args, capture, ctx, failure);
        }
        if (callback.raised) throw std::move(*callback.raised);  // the callback's exception, as it raised it
        if (failure.kind == Failure::Kind::Config) {
          PyErr_SetString(config_error.ptr(), failure.message.c_str());
          throw py::error_already_set();
        }
        if (failure.kind == Failure::Kind::Model) {
          PyErr_SetString(model_error.ptr(), failure.message.c_str());
          throw py::error_already_set();
        }
        return out;
      },
      py::arg("args"), py::arg("capture") = false, py::arg("progress") = py::none(),
      "Runs `bitline ARGS...`; returns what it printed when capture (else ''); raises ConfigError or ModelError. "
      "progress(done, total, what), when given, is called with each progress report instead of printing it; what it "
      "raises stops the run and is raised");
}
