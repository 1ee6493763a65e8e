// The SSB evaluation (`bitline cosmos ssb`): the 13 queries compiled once, each system's index written, every
// query read on every system (timing and energy from the SSD's compute jobs; functional, through the dies' bits, on the
// systems asked for), every answer checked against the row-at-a-time reference, and the host engines (CRoaring,
// the row engine) timed for real.
//
// Determinism: everything in the result is a function of the inputs and the seed, except the host engines' measured
// times and energies, which sit under `systems.roaring` and `systems.row` of each query (marked "measured": true)
// and under the top-level `measured` object; nothing else is measured.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.hpp"
#include "core/stats.hpp"
#include "cosmos/ssb/compile.hpp"
#include "cosmos/workloads.hpp"

namespace bitline::cosmos::ssb {

/// A host engine timed on this machine.
enum class HostEngine { Roaring, Row };
const Registry<HostEngine>& host_engines();

struct SsbOptions {
  EvalConfig config;  // nand, ssd, host, workload (the reliability condition), seed
  double sf = 1;
  std::vector<System> systems{std::begin(kAllSystems), std::end(kAllSystems)};
  std::vector<HostEngine> engines{HostEngine::Roaring, HostEngine::Row};
  bool functional = true;                              // generate the rows (SF <= kMaxGeneratedSf): answers and checks
  std::vector<System> functional_systems{System::Fc};  // systems whose reads run through the dies' bits
  Aggregation aggregation = Aggregation::Auto;
  int equality_max_values = 8;  // CompileOptions::equality_max_values (--equality-max-values)
  int host_repeat = 3;          // host engine runs per query (the fastest is reported)
  bool explain = false;
  bool reliability = false;  // also the answers with and without ESP at the stress condition
  int threads = 1;
};

/// Progress of the run: (step, steps, what).
using Progress = std::function<void(size_t, size_t, const std::string&)>;

/// The planner's options of a run: terms per sensing = min(nand.command.max_inter_block, nand.command.max_mws_slots).
CompileOptions compile_options(const SsbOptions& o);

/// Runs the evaluation (the functional systems' index must fit nand::kMaxFunctionalBytes, checked before any write); the JSON of `bitline
/// cosmos ssb` (docs/cosmos.md, "Analytical queries"). `explain_out`: receives the plan printer's lines when options.explain is on.
Json run_ssb(const std::vector<QuerySpec>& queries, const SsbOptions& o, const Progress& progress,
             const std::function<void(const std::string&)>& explain_out = {});

}  // namespace bitline::cosmos::ssb
