// Latency and energy of each die command, from the timing and energy
// parameters (docs/model.md, "Timing" and "Energy"). Pure functions of the
// command's shape: the die asks, the caller decides when the command runs.
#pragma once

#include "nand/command.hpp"
#include "nand/params.hpp"

namespace bitline::nand {

struct OpCost {
  Time latency{};
  Energy energy{};
  /// Average power while the operation runs.
  Power power() const { return latency.raw() > 0 ? energy / latency : Power{}; }
};

class CostModel {
 public:
  /// `page`: bytes of one page (the per-bit energies are per bit of the pages sensed or programmed).
  CostModel(const Timing& t, const EnergyParams& e, Bytes page) : t_(t), e_(e), page_(page) {}

  /// tMWS / tR for a sensing of `wordlines` WLs (the most in any one block) over `blocks` blocks.
  double mws_latency_factor(int wordlines, int blocks) const;
  /// Power of that sensing relative to a normal read.
  double mws_power_factor(int wordlines, int blocks) const;
  /// tR of one page programmed in `mode`.
  Time t_read(ProgramMode mode) const;
  Time t_prog(ProgramMode mode) const;

  /// A sensing: a normal or inverse read (1 WL, 1 block) or an MWS.
  OpCost sense(ProgramMode mode, int wordlines, int blocks) const;
  OpCost program(ProgramMode mode) const;
  OpCost erase() const;
  OpCost latch_op() const;
  OpCost data_out(Bytes n) const;
  /// The cost of one die command, from its fields (what the die charges when it
  /// executes it). `sensed` is the program mode of the data a READ senses, a
  /// property of the stored page the command does not carry; MWS senses SLC/ESP.
  OpCost command(const Command& c, ProgramMode sensed = ProgramMode::Slc) const;

 private:
  Timing t_;
  EnergyParams e_;
  Bytes page_{};
};

}  // namespace bitline::nand
