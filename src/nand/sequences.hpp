// Command sequences built from the die's primitive commands: ParaBit's serial
// AND / OR (one sensing per operand, differing only in when the latches are
// initialised and when M3 fires), and single-wordline normal / inverse reads.
#pragma once

#include <vector>

#include "nand/command.hpp"

namespace bitline::nand {

struct WordlineRef {
  uint32_t block = 0, subblock = 0, wordline = 0;
};

/// A sensing of one wordline (a normal read, or NOT with `inverse`), as an MWS with one bit set.
MwsCmd single_wordline(uint32_t plane, const WordlineRef& w, Iscm iscm);

/// ParaBit AND: S-latch initialised once, operands sensed one after another
/// without re-initialising it (S = S AND N), then one S->C transfer.
std::vector<Command> parabit_and(uint32_t plane, const std::vector<WordlineRef>& operands);
/// ParaBit OR: C-latch initialised once; each operand re-initialises the S-latch
/// and fires M3 (C = C OR N).
std::vector<Command> parabit_or(uint32_t plane, const std::vector<WordlineRef>& operands);

/// An intra-block MWS over the given wordlines of one string (AND, or NAND with `inverse`).
MwsCmd intra_block(uint32_t plane, uint32_t block, uint32_t subblock, const std::vector<uint32_t>& wordlines, Iscm iscm = {});

}  // namespace bitline::nand
