// What `bitline accel run` prints of a point (src/cli/accel/run.cpp): the deployment search, the step and its
// memory, the prefill and the request's latency, and with --breakdown the operator classes.
#pragma once

#include <cstdint>

#include "llm/deployment.hpp"
#include "llm/prefill.hpp"

namespace bitline::cli::accel {

/// A point's batch, step, memory and the deployments tried.
void print_point(const llm::PointResult& p, const llm::Server& s);

/// What `accel run` adds to a point: the prefill of one prompt (time to first token), the request-level latency,
/// and with --breakdown the decode step by operator class.
struct RunExtras {
  bool timed = false;
  llm::PrefillReport prefill;
  Time prefill_engine{};  // the engine's host side of the prefill
  Time request_engine{};  // the engine's own cost of the request (serving.engine.request)
  llm::RequestLatency latency;
  llm::OpBreakdown decode;
};
/// The extras of point `p` on `s` at context `c` (untimed when the point has no batch).
RunExtras run_extras(const llm::Server& s, const llm::PointResult& p, const llm::ContextSpec& c, bool breakdown);
void print_extras(const RunExtras& x, const llm::ContextSpec& c, int64_t layers, bool breakdown);
/// The prefill and the decode step by operator class, per layer and per step.
void print_class_table(const llm::PrefillReport& pf, const llm::OpBreakdown& dec, int64_t layers);

}  // namespace bitline::cli::accel
