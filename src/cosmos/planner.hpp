// Compiles a bitwise expression over co-located operands into die commands.
//
// The plan is the same for every page column (placement is uniform), so it is
// made once, in terms of (pool, chunk, wordline offsets), and resolved to
// addresses per column. Strategies, chosen per sub-expression:
//   AND of literals     intra-block MWS per chunk (<= `wordlines` WLs), results
//                       accumulated in the S-latch across chunks;
//   OR of terms         terms that fit one sensing are merged into inter-block
//                       MWS (<= `blocks` slots, distinct pools), the rest
//                       accumulated in S; each term ends with S->C (C = C OR S);
//   AND of ORs          each OR of single-string terms in distinct pools (<= `blocks`)
//                       is one inter-block MWS, the literals one MWS per string,
//                       all ANDed in the S-latch (no S init after the first), the
//                       last with S->C; an OR of such ANDs accumulates them in C
//                       (bit-sliced range predicates, cosmos/ssb/compile.hpp);
//   OR via De Morgan    when the complements are stored (inverted copies), one
//                       inverse MWS per chunk: NOT(AND(NOT x)) = OR(x);
//   NOT / NAND / NOR    inverse-mode sensing, or AND of inverted copies;
//   XOR / XNOR          one side into C, the other into S, then the latch XOR;
//   otherwise           the controller inverts the result on its way out.
// A literal is an operand (normal copy) or NOT(operand) (inverted copy).
// ParaBit is the same planner limited to one wordline and one block per sensing.
#pragma once

#include <string>
#include <vector>

#include "cosmos/expr.hpp"
#include "cosmos/firmware.hpp"
#include "nand/command.hpp"

namespace bitline::cosmos {

struct PlanLimits {
  int wordlines = 48;  // per block per sensing
  int blocks = 4;      // per sensing (power limit)
};

struct SlotPlan {
  uint32_t pool = 0, chunk = 0;
  std::vector<uint32_t> offsets;  // wordline offsets inside the chunk
};

struct OpPlan {
  enum class Kind { Mws, Xor } kind = Kind::Mws;
  nand::Iscm iscm;
  std::vector<SlotPlan> slots;
  int wordlines() const;  // most wordlines in one slot
};

struct Plan {
  std::vector<OpPlan> ops;
  bool invert_output = false;  // the controller inverts the result page on data-out
  std::string describe() const;
};

/// Plans `e` (normalised inside). Throws ModelError for an unknown operand, for
/// operands of different sizes (cannot be co-located), or for a form the
/// latches cannot compute.
Plan plan_expression(const Expr& e, const Firmware& fw, const PlanLimits& limits);

/// The commands of a plan for one page column (page index `page`): die, and
/// the commands for that die's plane. XOR ops become XorCmd.
struct ColumnCommands {
  uint32_t die = 0, plane = 0;
  std::vector<nand::Command> commands;
};
ColumnCommands resolve(const Plan& plan, const Firmware& fw, int64_t page);

/// The operands' common size in bytes (all must match).
int64_t operand_bytes(const Expr& e, const Firmware& fw);

}  // namespace bitline::cosmos
