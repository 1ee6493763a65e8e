// The index builder: which bitmaps of the LINEORDER rows each system stores, where (fc_write's groups and lanes),
// and the expressions a compiled conjunction becomes on each system.
//
// Every code the queries touch is bit-sliced: slice k of a code is the bitmap of the rows whose code has bit k set.
// A code that a predicate or a group-by reads (every dimension code, and measures in predicates) also keeps each
// slice's inverse (the rows with bit k clear) and, for its equality-encoded attributes (at most
// CompileOptions::equality_max_values values), one bitmap per value. A code's bitmaps form one fc_write group
// ("ssb.CODE", declared with the group's size, at most one string of 48 wordlines per page column), so any AND of
// them is one intra-block MWS. Flash-Cosmos stores `lanes` replicas of the group (lanes of fc_write: different
// blocks), as many as the widest factor over the code needs (at most nand.command.max_inter_block), so the terms of
// a factor are sensed together by one inter-block MWS. ParaBit stores one lane with the inverses (it senses one
// wordline at a time and cannot invert a literal in the latches); OSP and ISP one lane without inverses (the host /
// the controller inverts).
//
// On each system a conjunction becomes:
//   fc       AND over factors of OR over terms (term k on lane k): one sensing per factor (planner: AND of ORs);
//            a factor wider than its lanes is split, and the AND distributed over the pieces (OR of products);
//   parabit  the disjunctive normal form over single bitmaps (one sensing per literal, OR in the C-latch);
//   osp/isp  the same AND of ORs over the normal slices, NOT where the term wants a zero bit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bitvector.hpp"
#include "cosmos/cosmos_ssd.hpp"
#include "cosmos/expr.hpp"
#include "cosmos/ssb/compile.hpp"

namespace bitline::cosmos::ssb {

/// One stored bitmap of a code: slice k, its inverse, or the equality bitmap of (column, value).
struct Bitmap {
  enum class Kind { Slice, Inverse, Equal } kind = Kind::Slice;
  int bit = 0;  // Slice, Inverse
  EqLit eq;     // Equal
  bool operator==(const Bitmap&) const = default;
};

struct IndexLayout {
  System system = System::Fc;
  int64_t rows = 0;                          // bits per bitmap
  std::vector<int> lanes;                    // per code (codes() index): replicas stored (0: not indexed)
  std::vector<std::vector<Bitmap>> bitmaps;  // per code: one lane's bitmaps, in write order
  int max_terms = 4;                         // the planner's terms per sensing (nand.command.max_inter_block)

  /// Bytes of one bitmap (whole bytes: the SSD stores bytes).
  int64_t bitmap_bytes() const { return (rows + 7) / 8; }
  int64_t bitmaps_stored() const;
  int64_t bytes_stored() const { return bitmaps_stored() * bitmap_bytes(); }
  /// The operand name of a bitmap on a lane: "CODE.rLANE.bK", "CODE.rLANE.nK", "CODE.rLANE.COLUMN.vI".
  std::string name(int code, int lane, const Bitmap& b) const;
  /// The expression of a conjunction on this system (ModelError when it would take more than 4096 products).
  Expr render(const Conjunction& c) const;
};

/// The layout a system needs for these plans (options: the planner's).
IndexLayout plan_layout(System s, const std::vector<QueryPlan>& plans, int64_t rows, const CompileOptions& o);

/// The bitmaps of every indexed code of a layout, computed from the rows (functional runs, the host engine):
/// per code, per bitmap of `bitmaps[code]`, in that order.
using IndexData = std::vector<std::vector<BitVector>>;
IndexData build_bitmaps(const Data& d, const IndexLayout& layout);

/// The bitmaps of layout `to` taken from those built for `from` (which holds every bitmap of `to`).
IndexData pick_bitmaps(const IndexLayout& from, const IndexData& data, const IndexLayout& to);

/// fc_write of every bitmap of the layout (with the system's program mode: ESP for fc, SLC for the others,
/// randomised for osp/isp), sizes only when `data` is null.
/// `mode`: another program mode for every bitmap (the reliability experiment's "without ESP").
void write_index(CosmosSsd& ssd, const IndexLayout& layout, const IndexData* data, std::optional<nand::ProgramMode> mode = {});

}  // namespace bitline::cosmos::ssb
