// A NAND flash die: planes of blocks of sub-blocks of wordlines, with the latch
// circuit of each plane (S-latch, C-latch, data latches). Functional and
// bit-exact: pages hold packed bits, sensing computes through the latch steps
// (M1..M4 of the spec), and errors are injected into sensed cells.
//
// The die keeps no clock. execute() applies a command and returns how long it
// takes and how much energy it uses; a controller decides when it runs.
//
// Latch semantics (per bitline, spec "NAND background" and "MWS"):
//   init C (M4):        C = 0
//   init S (M1):        S = 1 (normal mode) / S = 0 (inverse mode)
//   evaluate (M2):      normal: S = S AND sensed; inverse: S = S OR NOT sensed
//   transfer (M3):      C = C OR S
//   XOR:                C = S XOR C
// where sensed = OR over blocks of (AND over the selected wordlines of the
// block's string); an erased cell conducts and senses 1.
#pragma once

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/bitvector.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "nand/command.hpp"
#include "nand/cost_model.hpp"
#include "nand/error_model.hpp"
#include "nand/params.hpp"

namespace bitline::nand {

/// Most page data a functional simulation may keep (programmed pages in the dies, operands and their CPU
/// reference): 512 MiB, so that a functional run stays under 1 GB. Checked before the data is generated
/// (nand demo, cosmos run --functional, cosmos reliability), naming the keys that set the size.
inline constexpr int64_t kMaxFunctionalBytes = int64_t(512) << 20;

struct CommandResult {
  Time latency{};
  Energy energy{};
  std::vector<uint8_t> data;  // DATA-OUT payload
  uint64_t cells_sensed = 0;
  uint64_t bit_errors = 0;  // cells that sensed wrong in this command
};

/// What a controller-side read (sensing + data-out + derandomise + ECC) returns.
struct PageRead {
  std::vector<uint8_t> data;
  Time latency{};
  Energy energy{};
  uint64_t raw_bit_errors = 0;
  uint64_t corrected_bits = 0;
  bool uncorrectable = false;
};

struct DieStats {
  uint64_t reads = 0, mws = 0, inverse_sensings = 0, programs = 0, erases = 0, xors = 0, latch_copies = 0, data_outs = 0;
  uint64_t programs_by_mode[4] = {0, 0, 0, 0};
  uint64_t wordlines_sensed = 0, cells_sensed = 0, bit_errors = 0, data_out_bytes = 0;
  uint64_t ecc_corrected_bits = 0, ecc_uncorrectable_pages = 0;
  Time busy{};
  Energy sense_energy{}, program_energy{}, erase_energy{}, latch_energy{}, io_energy{};
};

class Die {
 public:
  /// `store_data = false` gives a timing-only die: legality, timing and energy
  /// are modelled, page contents and latches are not.
  Die(const NandParams& params, uint64_t seed, bool store_data = true);

  CommandResult execute(const Command& cmd);
  /// Decodes the bytes of one command and executes it.
  CommandResult execute_bytes(std::span<const uint8_t> bytes);

  /// A controller read: READ + DATA-OUT of the whole page, then derandomisation
  /// and the ECC model (codewords with at most `ecc.correctable_bits` errors are corrected).
  PageRead read_page(const PageAddress& a);
  /// The controller's side of read_page, for a controller that issued the READ
  /// of `a` and a whole-page DATA-OUT itself: their results in, the
  /// derandomised, ECC-corrected page out.
  PageRead correct_read(const PageAddress& a, const CommandResult& read, const CommandResult& data_out);

  const BitVector& latch(uint32_t plane, Latch l) const;
  bool is_programmed(const PageAddress& a) const;
  /// Overrides the wear and age of one block (P/E cycles so far, retention days).
  void set_block_condition(uint32_t plane, uint32_t block, int64_t pe_cycles, double retention_days);
  /// RBER that cells of this page would sense with (0 for an error-free model).
  double page_rber(const PageAddress& a) const;

  const NandParams& params() const { return p_; }
  const CostModel& cost() const { return cost_; }
  const DieStats& stats() const { return stats_; }
  /// Registers the die's statistics (read when the tree is dumped, while the die lives).
  void register_stats(StatGroup& g) const;
  bool stores_data() const { return store_data_; }
  /// Pages currently holding data (memory is proportional to this).
  size_t programmed_pages() const;

 private:
  struct Block {
    bool has_mode = false;
    ProgramMode mode = ProgramMode::Slc;
    bool randomized = false;
    double esp_ratio = 1.0;
    int64_t pe_cycles = 0;
    double retention_days = 0;
    std::vector<uint8_t> programmed;               // per page key
    std::unordered_map<uint32_t, BitVector> data;  // page key -> stored cells
  };
  struct PlaneLatches {
    BitVector s, c;
    std::vector<BitVector> d;
  };
  struct SensedPage {
    const Block* block;  // null: never touched -> erased
    uint32_t key;
    const BitVector* bits;  // null: erased (all ones)
  };

  uint32_t page_key(uint32_t sub, uint32_t wl, uint32_t bit) const {
    return (sub * uint32_t(p_.geometry.wordlines_per_string) + wl) * 3 + bit;
  }
  Block& block_ref(uint32_t plane, uint32_t block);
  const Block* find_block(uint32_t plane, uint32_t block) const;
  PlaneLatches& latches(uint32_t plane);
  CellCondition condition(const Block* b) const;

  CommandResult do_read(const ReadCmd& c);
  CommandResult do_program(const ProgramCmd& c);
  CommandResult do_erase(const EraseCmd& c);
  CommandResult do_mws(const MwsCmd& c);
  CommandResult do_xor(const XorCmd& c);
  CommandResult do_copy(const LatchCopyCmd& c);
  CommandResult do_data_out(const DataOutCmd& c);

  /// sensed = OR over groups of AND over the group's pages, with errors injected.
  void sense(const std::vector<std::vector<SensedPage>>& groups, BitVector& sensed, CommandResult& r);
  /// Applies the ISCM steps with a sensed vector.
  void latch_steps(PlaneLatches& l, const Iscm& iscm, const BitVector& sensed);
  void randomizer_keystream(uint32_t plane, uint32_t block, uint32_t key, BitVector& out) const;
  void account(CommandResult& r, const OpCost& c, Energy DieStats::*bucket);

  NandParams p_;
  CostModel cost_;
  std::unique_ptr<ErrorModel> errors_;
  Rng rng_;
  bool store_data_;
  std::unordered_map<uint64_t, Block> blocks_;
  std::vector<PlaneLatches> latches_;
  BitVector sensed_;  // scratch
  DieStats stats_;
};

}  // namespace bitline::nand
