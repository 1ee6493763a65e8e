// Helpers shared by the NAND die tests: small geometries, random pages, a CPU
// reference of what the die stores, and shortcuts for building commands.
#pragma once

// Project headers before GoogleTest: <signal.h> (pulled in by gtest) defines a
// macro named si_value, which would mangle the si_value() declarations of
// core/params.hpp if it came first.
#include "core/bitvector.hpp"
#include "core/error.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "nand/command.hpp"
#include "nand/die.hpp"
#include "nand/params.hpp"
#include "nand/sequences.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace bitline::nand::test {

/// Default parameters with a small plane (64 blocks) and `page_bytes` pages.
/// `errors` selects the rber_table model; otherwise the die is error-free.
/// The die's statistics as the stats tree dumps them.
inline Json die_stats(const Die& d) {
  StatsTree t;
  d.register_stats(t);
  return t.dump();
}

inline NandParams small_params(bool errors = false, int64_t page_bytes = 1024) {
  NandParams p = default_params<NandParams>();
  p.geometry.blocks_per_plane = 64;
  p.geometry.page_size = Bytes(page_bytes);
  if (p.ecc.codeword > p.geometry.page_size) p.ecc.codeword = Bytes(page_bytes / 2);
  p.reliability.model = ErrorModelChoice::named(errors ? "rber_table" : "none");
  validate(p);
  return p;
}

/// A random page: each bit is 1 with probability `p_one` (0.5 uses whole random words).
inline BitVector random_page(Rng& rng, size_t bits, double p_one = 0.5) {
  BitVector v(bits, false);
  if (p_one == 0.5) {
    for (auto& w : v.words()) w = rng.next();
  } else {
    for (size_t i = 0; i < bits; ++i)
      if (rng.chance(p_one)) v.set(i, true);
  }
  return v;
}

inline PageAddress addr(uint32_t plane, uint32_t block, uint32_t sub, uint32_t wl, uint32_t bit = 0) {
  return PageAddress{plane, block, sub, wl, bit};
}

inline ProgramCmd program_cmd(const PageAddress& a, const BitVector& data, ProgramMode mode = ProgramMode::Slc, bool randomize = false) {
  ProgramCmd c;
  c.addr = a;
  c.mode = mode;
  c.randomize = randomize;
  c.data = data.to_bytes();
  return c;
}

inline MwsSlot slot(uint32_t block, uint32_t sub, const std::vector<uint32_t>& wls) {
  MwsSlot s;
  s.block = block;
  s.subblock = sub;
  for (auto w : wls) s.pbm.set(w);
  return s;
}

inline MwsCmd mws(uint32_t plane, Iscm iscm, std::vector<MwsSlot> slots) {
  MwsCmd c;
  c.plane = plane;
  c.iscm = iscm;
  c.slots = std::move(slots);
  return c;
}

/// The CPU reference: what every page of the die holds (erased pages read all ones).
class Reference {
 public:
  explicit Reference(size_t bits) : bits_(bits) {}
  void store(uint32_t plane, uint32_t block, uint32_t sub, uint32_t wl, const BitVector& v) { pages_[{plane, block, sub, wl}] = v; }
  BitVector page(uint32_t plane, uint32_t block, uint32_t sub, uint32_t wl) const {
    auto it = pages_.find({plane, block, sub, wl});
    return it == pages_.end() ? BitVector(bits_, true) : it->second;
  }
  /// AND over the wordlines of one slot.
  BitVector slot_and(uint32_t plane, const MwsSlot& s, int wordlines) const {
    BitVector acc(bits_, true);
    for (int w = 0; w < wordlines; ++w)
      if (s.pbm[size_t(w)]) acc &= page(plane, s.block, s.subblock, uint32_t(w));
    return acc;
  }
  /// What an MWS senses: OR over slots of AND over the slot's wordlines.
  BitVector sensed(const MwsCmd& c, int wordlines) const {
    BitVector acc(bits_, false);
    for (const auto& s : c.slots) acc |= slot_and(c.plane, s, wordlines);
    return acc;
  }
  size_t bits() const { return bits_; }

 private:
  size_t bits_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, BitVector> pages_;
};

/// Programs a page on the die and records it in the reference.
inline CommandResult program(Die& die, Reference& ref, const PageAddress& a, const BitVector& data, ProgramMode mode = ProgramMode::Slc,
                             bool randomize = false) {
  CommandResult r = die.execute(program_cmd(a, data, mode, randomize));
  ref.store(a.plane, a.block, a.subblock, a.wordline, data);
  return r;
}

/// Expects `f` to throw a CommandError whose message contains `needle`.
inline void expect_command_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected a CommandError containing '" << needle << "'";
  } catch (const CommandError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what() << "\nexpected: " << needle;
  }
}

/// Number of positions where two vectors differ.
inline size_t hamming(const BitVector& a, const BitVector& b) {
  BitVector x = a;
  x ^= b;
  return x.popcount();
}

}  // namespace bitline::nand::test
