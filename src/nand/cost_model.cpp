#include "nand/cost_model.hpp"

#include <algorithm>

#include "core/overloaded.hpp"

namespace bitline::nand {

const Registry<MultiBitProgram>& multi_bit_programs() {
  static const Registry<MultiBitProgram> r(
      "multi-bit programming",
      {{"one_shot", "all pages of an MLC/TLC wordline in one tPROG(mode) (3D charge-trap NAND)", MultiBitProgram::OneShot},
       {"page_by_page", "each page of a wordline in its own tPROG(mode) (MQSim-style per-page latency)", MultiBitProgram::PageByPage}});
  return r;
}

double CostModel::mws_latency_factor(int wordlines, int blocks) const {
  // Both effects are measured separately; with <= 4 blocks every MWS stays
  // within 1.033 tR (spec), so the slower of the two sets the latency.
  return std::max(t_.mws_wordlines.at(wordlines), t_.mws_blocks.at(blocks));
}

double CostModel::mws_power_factor(int wordlines, int blocks) const {
  return e_.mws_wordline_power.at(wordlines) * e_.mws_block_power.at(blocks);
}

Time CostModel::t_read(ProgramMode mode) const {
  switch (mode) {
    case ProgramMode::Mlc:
      return t_.t_read_mlc;
    case ProgramMode::Tlc:
      return t_.t_read_tlc;
    default:
      return t_.t_read_slc;
  }
}

Time CostModel::t_prog(ProgramMode mode) const {
  switch (mode) {
    case ProgramMode::Slc:
      return t_.t_prog_slc;
    case ProgramMode::Mlc:
      return t_.t_prog_mlc;
    case ProgramMode::Tlc:
      return t_.t_prog_tlc;
    case ProgramMode::Esp:
      return t_.t_esp();
  }
  return t_.t_prog_slc;
}

OpCost CostModel::sense(ProgramMode mode, int wordlines, int blocks) const {
  Time tr = t_read(mode);
  if (wordlines <= 1 && blocks <= 1) return {tr, e_.read_power * tr + e_.read_energy * page_};
  Time t = tr * mws_latency_factor(wordlines, blocks);
  return {t, (e_.read_power * t + e_.read_energy * page_) * mws_power_factor(wordlines, blocks)};
}

OpCost CostModel::program(ProgramMode mode) const {
  Time t = t_prog(mode);
  return {t, e_.program_power * t + e_.program_energy * page_ * double(bits_per_cell(mode))};
}

OpCost CostModel::erase() const { return {t_.t_erase, e_.erase_power * t_.t_erase}; }

OpCost CostModel::latch_op() const { return {t_.t_latch_op, e_.latch_power * t_.t_latch_op}; }

OpCost CostModel::data_out(Bytes n) const { return {n / t_.channel_rate, e_.io_energy * n}; }

OpCost CostModel::command(const Command& cmd, ProgramMode sensed) const {
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  return std::visit(overloaded{
                        [&](const ReadCmd&) { return sense(sensed, 1, 1); },
                        [&](const ProgramCmd& c) { return program(c.mode); },
                        [&](const EraseCmd&) { return erase(); },
                        [&](const MwsCmd& c) {
                          int wordlines = 0;
                          for (const auto& s : c.slots) wordlines = std::max(wordlines, int(s.pbm.count()));
                          return sense(ProgramMode::Slc, wordlines, int(c.slots.size()));
                        },
                        [&](const XorCmd&) { return latch_op(); },
                        [&](const LatchCopyCmd&) { return latch_op(); },
                        [&](const DataOutCmd& c) { return data_out(Bytes(c.length)); },
                    },
                    cmd);
}

}  // namespace bitline::nand
