// The CPU anchor: the same bitmap plan on the host with CRoaring (Chambi, Lemire, Kaser, Godin, "Better bitmap
// performance with Roaring bitmaps", Software: Practice and Experience 2016; Debian libroaring-dev), timed for real
// on this machine. The index's slices and equality bitmaps are Roaring bitmaps in host memory (built before the
// clock starts: the host engine's best case, no I/O); each fc_read of a plan is evaluated over them (AND, OR,
// AND NOT for an inverted slice), then the answer is assembled as for the in-flash results.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "cosmos/expr.hpp"
#include "cosmos/ssb/answer.hpp"
#include "cosmos/ssb/index.hpp"

struct roaring_bitmap_s;  // CRoaring's roaring_bitmap_t (roaring/roaring.h, included by the .cpp only)

namespace bitline::cosmos::ssb {

/// A Roaring bitmap (roaring_bitmap_t*, the caller frees it) of the set bits of `v`.
::roaring_bitmap_s* to_roaring(const BitVector& v);

class RoaringIndex {
 public:
  /// Every slice and equality bitmap of `layout` (lane 0) from `data`, named as `layout.name` names them.
  RoaringIndex(const IndexLayout& layout, const IndexData& data);
  ~RoaringIndex();
  RoaringIndex(const RoaringIndex&) = delete;
  RoaringIndex& operator=(const RoaringIndex&) = delete;

  /// Bytes the bitmaps take in memory (roaring_bitmap_size_in_bytes) and bitmaps held.
  int64_t bytes() const;
  size_t size() const { return bitmaps_.size(); }

  /// Evaluates a plan's fc_reads over the bitmaps (`reads`: their expressions as an OSP layout renders them, NOT
  /// of slices) and assembles the answer.
  Answer run(const QueryPlan& p, const std::vector<Expr>& reads) const;

 private:
  std::map<std::string, void*> bitmaps_;  // roaring_bitmap_t*, owned
  int64_t rows_ = 0;
};

}  // namespace bitline::cosmos::ssb
