// Raw bit error rate (RBER) of sensed cells, and seeded injection of errors.
//
// ErrorModel is the interface; implementations are chosen by name with
// `nand.reliability.model` from the table error_models() in error_model.cpp:
// "rber_table" (docs/model.md, "Reliability") or "none" (error-free sensing).
// To add one, implement ErrorModel and add a line to that table.
#pragma once

#include <memory>

#include "core/rng.hpp"
#include "nand/command.hpp"
#include "nand/params.hpp"

namespace bitline::nand {

/// What the RBER of a page depends on.
struct CellCondition {
  ProgramMode mode = ProgramMode::Slc;
  bool randomized = false;
  int64_t pe_cycles = 0;
  double retention_days = 0;
  double esp_ratio = 1.0;  // tESP / tPROG(SLC) the data was programmed with
};

class ErrorModel {
 public:
  virtual ~ErrorModel() = default;
  /// Probability that one sensed cell of a page in this condition reads wrong.
  virtual double rber(const CellCondition& c) const = 0;
  virtual const char* name() const = 0;
};

/// RBER = rber_slc x mode factor x pe_factor(P/E) x retention_factor(days)
///        x (no randomisation factor unless randomised) x esp_factor(tESP/tPROG) for ESP.
class RberTableModel final : public ErrorModel {
 public:
  explicit RberTableModel(const ReliabilityParams& p) : p_(p) {}
  double rber(const CellCondition& c) const override;
  const char* name() const override { return "rber_table"; }

 private:
  ReliabilityParams p_;
};

class NoErrorModel final : public ErrorModel {
 public:
  double rber(const CellCondition&) const override { return 0.0; }
  const char* name() const override { return "none"; }
};

/// Builds the error model chosen by `p.model`.
std::unique_ptr<ErrorModel> make_error_model(const ReliabilityParams& p);

/// Calls on_error(i) for each of `nbits` cells that reads wrong with probability
/// `p`, jumping from one error to the next with geometric gaps: the cost is
/// proportional to the number of errors, not to the bits sensed.
template <class F>
uint64_t inject_errors(Rng& rng, double p, uint64_t nbits, F&& on_error) {
  if (p <= 0.0 || nbits == 0) return 0;
  uint64_t n = 0;
  uint64_t pos = rng.geometric(p);
  while (pos < nbits) {
    on_error(pos);
    ++n;
    uint64_t gap = rng.geometric(p);
    if (gap >= nbits) break;
    pos += gap + 1;
  }
  return n;
}

}  // namespace bitline::nand
