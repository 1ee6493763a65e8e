// The SSD firmware's view of computable data: operands, their co-location,
// and where every page of every operand lives.
//
// Striping: page i of every operand goes to plane i mod P (P = all planes of
// the SSD, channel-interleaved: plane p is on channel p mod C), at column
// i / P of that plane, so operands of the same size line up bitline for
// bitline. Co-location: operands written to one group (and lane) share
// strings; a string (one sub-block of one block, W wordlines) holds chunks of
// `chunk_width` operands for several columns. Different lanes and different
// groups never share a block, so they can be sensed together by an
// inter-block MWS. Inverted copies live in their own pool. Per-page metadata
// (program mode, randomised, inverted, group) is kept per pool. Blocks are
// allocated at the same index in every plane and freed by erase.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "nand/command.hpp"
#include "nand/params.hpp"
#include "ssd/params.hpp"

namespace bitline::cosmos {

struct WriteOptions {
  nand::ProgramMode mode = nand::ProgramMode::Esp;
  bool randomize = false;
  enum class Copies { Normal, Inverted, Both } copies = Copies::Normal;
  std::string group;  // empty: a group of its own
  uint32_t lane = 0;  // operands of one group in different lanes go to different blocks
};

/// One pool of co-located pages: a (group, lane, normal/inverted) triple.
struct Pool {
  std::string key, group;
  bool inverted = false;
  nand::ProgramMode mode = nand::ProgramMode::Esp;
  bool randomize = false;
  int64_t bytes = 0;         // every operand of the pool has this size
  int64_t columns = 0;       // page columns per plane
  uint32_t chunk_width = 0;  // operands per chunk (wordlines one column of a chunk uses)
  uint32_t per_string = 0;   // column-chunks per string
  uint32_t count = 0;        // operands so far
  std::vector<uint32_t> blocks;
};

struct CopyRef {
  uint32_t pool = 0, index = 0;
};

struct Operand {
  std::string name;
  int64_t bytes = 0;
  std::optional<CopyRef> normal, inverted;
  WriteOptions options;
};

/// Physical location of one page.
struct PageLoc {
  uint32_t die = 0, plane = 0;  // plane within the die
  uint32_t block = 0, subblock = 0, wordline = 0;
};

struct PlaneLoc {
  uint32_t channel = 0, die = 0, plane = 0;  // die = index over the whole SSD
};

class Firmware {
 public:
  Firmware(const nand::NandParams& nand, const ssd::SsdParams& ssd);

  /// Declares how many operands a group will hold per lane, so chunks are sized
  /// to it (e.g. 3 for IMS: 16 columns share one 48-wordline string).
  void declare_group(const std::string& group, uint32_t operands_per_lane);
  /// Allocates an operand (fc_write). Throws ModelError on a duplicate name,
  /// a size that differs from its group, or a full SSD.
  const Operand& write(const std::string& name, int64_t bytes, const WriteOptions& opt);
  /// Erases the blocks of a group's pools and forgets its operands.
  void erase_group(const std::string& group);

  const Operand& operand(const std::string& name) const;
  bool has(const std::string& name) const { return operands_.count(name) != 0; }
  const Pool& pool(uint32_t i) const { return pools_[i]; }
  const std::vector<Pool>& pools() const { return pools_; }

  int64_t planes() const { return planes_; }
  int64_t pages_of(int64_t bytes) const { return (bytes + page_ - 1) / page_; }
  int64_t columns_of(int64_t bytes) const { return (pages_of(bytes) + planes_ - 1) / planes_; }
  PlaneLoc plane_loc(int64_t plane) const;
  /// Where page `page_index` of a copy lives.
  PageLoc locate(const CopyRef& c, int64_t page_index) const;
  /// The string (block, sub-block) and first wordline of chunk `chunk` of a pool at a column.
  PageLoc chunk_loc(uint32_t pool, uint32_t chunk, int64_t page_index) const;
  uint32_t chunk_of(const CopyRef& c) const { return c.index / pools_[c.pool].chunk_width; }
  uint32_t offset_of(const CopyRef& c) const { return c.index % pools_[c.pool].chunk_width; }
  int64_t blocks_in_use() const { return next_block_ - int64_t(free_blocks_.size()); }

  // ---- Ordinary data: a page-level mapping ---------------------------------
  // Logical pages are written log-structured, striped over all planes, into
  // blocks of their own program mode (one block index per mode stream). An
  // overwrite or a trim invalidates the old physical page; a full block whose
  // pages are all invalid is erased and returned to the allocator (no data is
  // ever moved: the firmware keeps no garbage collector).
  struct OrdinaryPage {
    PageLoc loc;
    uint32_t bit = 0;  // page within the wordline (MLC/TLC)
    nand::ProgramMode mode = nand::ProgramMode::Tlc;
  };
  /// Maps logical page `lpn` to a fresh physical page (invalidating its old one).
  OrdinaryPage map_ordinary(int64_t lpn, nand::ProgramMode mode);
  /// Where logical page `lpn` lives, if mapped.
  std::optional<OrdinaryPage> lookup_ordinary(int64_t lpn) const;
  /// Forgets `lpn` (its physical page becomes invalid).
  void trim_ordinary(int64_t lpn);
  int64_t ordinary_pages() const { return int64_t(ordinary_map_.size()); }
  /// Blocks erased so far because all their ordinary pages were invalid.
  int64_t ordinary_blocks_erased() const { return ordinary_erased_; }

 private:
  uint32_t pool_for(const std::string& group, uint32_t lane, bool inverted, const WriteOptions& opt, int64_t bytes,
                    const std::string& operand);
  CopyRef add_to_pool(uint32_t pool, const std::string& operand);
  uint32_t allocate_block(const std::string& operand);

  nand::NandParams nand_;
  ssd::SsdParams ssd_;
  int64_t planes_, page_, wordlines_, subblocks_;
  // Looked up by name once or more per operand (KCS writes 1,024 x (k + 1) of them): hashed, not ordered (nothing
  // iterates them in an order that shows).
  std::unordered_map<std::string, Operand> operands_;
  std::vector<Pool> pools_;
  std::unordered_map<std::string, uint32_t> pool_index_;  // by Pool::key
  std::unordered_map<std::string, uint32_t> declared_;
  int64_t next_block_ = 0;
  std::set<uint32_t> free_blocks_;

  struct Stream {  // the open block of one program mode
    bool open = false;
    uint32_t block = 0;
    int64_t next = 0;  // next page slot in the block (over all planes)
  };
  struct OrdinaryBlock {
    int64_t valid = 0;
    bool full = false;
  };
  void invalidate(uint64_t slot_key);
  std::map<nand::ProgramMode, Stream> streams_;
  std::map<uint32_t, OrdinaryBlock> ordinary_blocks_;
  std::map<int64_t, std::pair<OrdinaryPage, uint64_t>> ordinary_map_;  // lpn -> (page, block)
  int64_t ordinary_erased_ = 0;
};

}  // namespace bitline::cosmos
