// The FTL-less runtime of FlashAccel: one virtual address space over HBF, HBM
// and SRAM, and the programming interface of the paper.
//
// Storage layer (no flash translation layer). Weight objects are read-only and
// KV objects append-only, so the physical address of every megapage lives in
// the object's own metadata. Allocation is isolated: every megablock (block b
// on all planes of a megaplane) belongs to one object; evicting a request's KV
// erases exactly its blocks (no data movement, no garbage collection).
//
// Virtual memory. Every mapping is a contiguous virtual range, one page-table
// entry per megapage. An entry points at the object's data (HBF, or HBM for KV
// not yet flushed) unless it is overridden: by an SRAM slot while a prefetch
// holds the data, or by an HBM replica after GroupArrange. Callers always use
// the same virtual address; where it resolves to changes underneath.
//
// Interface (names as in the paper):
//   store_weights / kv_create / kv_append / evict   objects
//   nand_mmap (NandMmap), munmap, hbm_alloc          mappings
//   group_create / group_mmap / group_arrange / group_write / group_destroy
//   sram_prefetch / sram_release
//   read / write                                     through the page table
// Functional mode keeps every byte; timing mode keeps the same metadata and no
// data, and read_plan() turns accesses into a ReadPlan for simulate_reads().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/rng.hpp"
#include "core/stats.hpp"
#include "hbf/devices.hpp"
#include "hbf/kv_placement.hpp"
#include "hbf/layout.hpp"
#include "hbf/system.hpp"
#include "hbf/timing.hpp"

namespace bitline::hbf {

using VAddr = uint64_t;
using GroupId = uint32_t;

enum class Mode { Functional, Timing };

/// Where a page-table entry points.
struct Location {
  enum class Kind : uint8_t { None, Flash, Hbm, PlaneSram, BaseSram };
  Kind kind = Kind::None;
  PhysUnit flash{};         // Flash
  uint64_t hbm = 0;         // Hbm: allocation id
  uint64_t hbm_offset = 0;  // Hbm: byte offset in the allocation
  SramSlot sram{};          // PlaneSram / BaseSram
};
std::string to_string(Location::Kind k);

struct PrefetchResult {
  VAddr address = 0;                                                           // the same virtual address: callers keep using it
  int64_t plane_sram = 0, base_sram = 0, left_in_flash = 0, not_in_flash = 0;  // megapages
};

/// One row of a group's read table: which object's data sits at a megapage of the group mapping.
struct ReadTableEntry {
  ObjectId object = kNoObject;
  uint32_t unit = 0;    // the object's unit (slice) index
  uint32_t stream = 0;  // KV stream (layer) of the slice
  uint32_t slice = 0;   // position of the slice in its stream
};

struct ArrangeReport {
  int64_t replicated = 0;  // megapages copied to HBM
  int64_t max_load_before = 0, max_load_after = 0;
  double mean_load = 0;
  bool hbm_full = false;
};

enum class Remainder { Hold, Scatter };

/// What GroupArrange balances: the whole group's plane loads (the spec's unified KV cache), or each KV stream's
/// (layer's) separately, since attention reads one layer at a time and a layer's time is set by its own fullest
/// megaplane.
enum class ArrangeScope { Group, PerStream };

struct WriteReport {
  int64_t units = 0, hyperpages = 0, scattered = 0, held = 0;
  int64_t spilled = 0;                  // slices placed outside their request's window (no room in it)
  std::vector<MegaplaneId> programmed;  // megaplanes in program order (for simulate_writes)
};

/// An access of a tile: the bytes [va, va + size) and the kernel's compute time on them.
/// `joins` adds the access to the previous one's tile (a tile that spans tensors).
struct Access {
  VAddr va = 0;
  Bytes size{};
  Time compute{};
  bool joins = false;
};

class Runtime {
 public:
  /// `kv` is the KV placement policy (serving.kv_layout, kv_offload, seed, kv_block_bytes): the same KvPlacement the
  /// serving model (llm::GpuMemory) uses.
  Runtime(const System& sys, Mode mode, uint64_t seed = 1, const KvPolicy& kv = {});
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const System& system() const { return sys_; }
  Mode mode() const { return mode_; }

  // ---- objects ---------------------------------------------------------------
  /// Stores a weight object (model load): tensors cut into megapages, dealt over
  /// the megaplanes by the layout policy (default: hbf.runtime.weight_layout),
  /// continuing after the megaplane the previous weight object ended on.
  /// `data` is the tensors' bytes concatenated in declaration order (functional
  /// mode; empty in timing mode). ModelError if the object does not fit.
  ObjectId store_weights(const WeightSpec& spec, std::span<const uint8_t> data = {}, const WeightLayout* layout = nullptr);
  /// A request's KV object with `streams` append-only streams (one per layer).
  /// With `token_bytes` (one token's KV in one layer) each slice holds the N =
  /// tokens_per_slice() whole tokens that fit a megapage (a layer's N-token slice
  /// aligned to a megapage) and appends must be whole tokens; without, slices are
  /// plain megapages of bytes.
  /// `expected` (optional) is the KV the request will hold in all (the prompt and the output): with
  /// hbf.runtime.kv_span = fit it sizes the request's window of megaplanes (kv_window()); with kv_span = all
  /// the request starts at the next cursor of the placement's cursor stream (without `expected`: at 0).
  ObjectId kv_create(std::string name, uint32_t streams = 1, Bytes token_bytes = {}, Bytes expected = {});
  /// The window of megaplanes a KV object's slices are dealt over: first dealing index and width (K: all).
  std::pair<int64_t, int64_t> kv_window(ObjectId kv) const;
  /// N: tokens of `token_bytes` that fit one megapage. ModelError if not even one fits.
  int64_t tokens_per_slice(Bytes token_bytes) const;
  /// Appends to a stream. New KV collects in HBM in slices until GroupWrite flushes them.
  void kv_append(ObjectId kv, uint32_t stream, std::span<const uint8_t> data);
  /// Appends `n` bytes of zeros (timing mode: no data is kept).
  void kv_append_zeros(ObjectId kv, uint32_t stream, Bytes n);
  /// The bytes of one KV stream, from wherever its slices are (functional mode).
  std::vector<uint8_t> kv_read(ObjectId kv, uint32_t stream);
  /// Erases every flash block of the object and frees its HBM. Returns the
  /// megablocks erased. The object must be unmapped and in no live group.
  std::vector<std::pair<MegaplaneId, uint32_t>> evict(ObjectId obj);

  // ---- virtual memory --------------------------------------------------------
  /// NandMmap: maps a weight object contiguously (tensors at tensor_offset()).
  VAddr nand_mmap(ObjectId weights);
  /// Removes a weight or HBM mapping (and its prefetches); frees an HBM allocation.
  void munmap(VAddr base);
  /// A writable HBM buffer (activations, intermediate data).
  VAddr hbm_alloc(Bytes n, std::string name = "hbm");
  /// Reads through the page table. Functional mode.
  void read(VAddr va, std::span<uint8_t> out);
  /// Writes through the page table: only HBM buffers are writable.
  void write(VAddr va, std::span<const uint8_t> data);
  /// Where the page-table entry of `va` points now.
  Location translate(VAddr va) const;
  /// Offset of tensor `t` (declaration index) in the weight object's mapping.
  Bytes tensor_offset(ObjectId weights, size_t t) const;

  // ---- groups (the unified KV cache of a step) --------------------------------
  GroupId group_create(std::span<const ObjectId> kv_objects);
  /// GroupMmap: maps the group's slices contiguously, packed into hyperpages
  /// (megapage i of round r is on the i-th megaplane that holds r+1 slices),
  /// then the slices still in HBM. Returns the base; see read_table().
  VAddr group_mmap(GroupId g);
  const std::vector<ReadTableEntry>& read_table(GroupId g) const;
  /// GroupArrange (selective replication): copies the slices above the average
  /// load (rounded up) of overloaded megaplanes to HBM and re-points their entries
  /// (kv_offload = fill: further, KvPlacement::offload), each scope within an
  /// equal share of the HBM left (hbm_full: some scope's share was too small).
  /// PerStream does it for each stream's slices on their own (max/mean loads in
  /// the report are then the largest over the streams).
  ArrangeReport group_arrange(GroupId g, ArrangeScope scope = ArrangeScope::Group);
  /// GroupWrite: flushes the group's full slices from HBM to flash a hyperpage at
  /// a time (one slice per megaplane, each request into its own blocks); the
  /// remainder stays in HBM (Hold) or goes to random megaplanes (Scatter).
  /// With the scatter KV layout every full slice goes to the megaplane the
  /// placement draws for its stream (no hyperpages, nothing held). With the
  /// paged layout every whole PagedAttention block goes to the megaplane and
  /// page offset the placement draws for its stream, as the megapages it runs
  /// over (the first megapage - offset bytes, ...); a partial last block stays
  /// in HBM (as in PagedAttention's serving: `remainder` does not apply).
  /// Updates metadata, the page table and the read table.
  WriteReport group_write(GroupId g, Remainder remainder = Remainder::Hold);
  /// Unmaps the group, releases its prefetches and frees its replicas.
  void group_destroy(GroupId g);
  /// Megapages of the group in flash (not replicated) per megaplane.
  std::vector<int64_t> group_loads(GroupId g) const;
  /// The same per stream (layer): [stream][megaplane]. The group must be mapped.
  std::vector<std::vector<int64_t>> group_stream_loads(GroupId g) const;
  const KvPlacement& kv_placement() const { return kv_; }

  // ---- SRAM ------------------------------------------------------------------
  /// SramPrefetch: moves the flash megapages of [va, va+size) into plane SRAM,
  /// else base-die SRAM, else leaves them in flash; re-points their entries.
  PrefetchResult sram_prefetch(VAddr va, Bytes size);
  /// SramRelease: `va` must be the address of a live prefetch.
  void sram_release(VAddr va);

  // ---- inspection, timing ------------------------------------------------------
  /// Flash megapages of an object, in the object's unit order.
  std::vector<PhysUnit> flash_units(ObjectId obj) const;
  /// Megablocks the object owns.
  std::vector<std::pair<MegaplaneId, uint32_t>> owned_blocks(ObjectId obj) const;
  bool is_live(ObjectId obj) const;
  std::vector<ObjectId> live_objects() const;
  std::string object_name(ObjectId obj) const;
  /// One tile per access (or per run of joined accesses), in order: the megapages each touches and where they are now.
  ReadPlan read_plan(std::span<const Access> accesses) const;
  /// Splits [va, va+size) into accesses of at most `tile` bytes, cut at multiples of `tile` from va.
  static std::vector<Access> tiles(VAddr va, Bytes size, Bytes tile, Time compute_per_tile = {});

  const FlashArray& flash() const { return flash_; }
  const HbmStore& hbm() const { return hbm_; }
  const SramPool& sram() const { return sram_; }
  int64_t page_table_entries() const;
  /// Registers the runtime's statistics and those of its devices (flash, hbm, sram groups).
  void register_stats(StatGroup& g) const;

 private:
  enum class Kind : uint8_t { Weights, Kv, Hbm };  // in the order of Object::data's alternatives
  struct KvSlice {
    uint32_t stream = 0, slice = 0, bytes = 0;
    uint32_t cap = 0;  // bytes when full (flashaccel, scatter: the object's slice_cap; paged: see KvData::block)
    bool in_flash = false;
    PhysUnit phys{};
    uint64_t hbm = 0;  // staging allocation while not in flash
  };
  /// A weight object: its tensors, written once by store_weights, one flash megapage per unit.
  struct WeightData {
    std::vector<TensorSpec> tensors;
    std::vector<int64_t> tensor_first;  // first unit of each tensor (declaration order)
    std::vector<PhysUnit> units;
  };
  /// A KV object: append-only streams of slices, staged in HBM until group_write places them in flash.
  struct KvData {
    std::vector<KvSlice> slices;
    std::vector<std::vector<uint32_t>> streams;  // slice ids of each stream, in order
    int64_t slice_cap = 0;                       // bytes of a full slice (whole tokens; paged: a megapage)
    int64_t token_bytes = 0;
    // paged: the bytes of a PagedAttention block (whole tokens), and the bytes appended to each stream. A stream is
    // staged in slices of at most a megapage that never cross a block boundary; GroupWrite re-cuts a whole block at
    // its page offset into the megapages it occupies in flash.
    int64_t block = 0;
    std::vector<int64_t> appended;
    int64_t cursor = 0;                    // next position in its window for its slices
    int64_t window_start = 0, window = 0;  // dealing index of the window's first megaplane, width (0: all K)
  };
  /// An HBM buffer (hbm_alloc).
  struct HbmData {
    uint64_t hbm = 0;
    Bytes bytes{};
  };
  /// What every object has (name, liveness, mapping, group, the flash blocks it owns) and its kind's own data.
  struct Object {
    std::string name;
    bool live = true;
    VAddr mapped = 0;
    GroupId group = UINT32_MAX;
    std::variant<WeightData, KvData, HbmData> data;
    // flash ownership (weights and KV)
    std::vector<std::pair<MegaplaneId, uint32_t>> blocks;
    std::unordered_map<MegaplaneId, uint32_t> open;  // the block being filled on each megaplane
    Kind kind() const { return Kind(data.index()); }
  };
  struct Mapping {
    VAddr base = 0;
    int64_t units = 0, reserved = 0;
    Kind kind = Kind::Weights;
    ObjectId object = kNoObject;
    GroupId group = UINT32_MAX;
    std::vector<Location> override_;  // lazily sized; Kind::None = follow the object
  };
  struct Group {
    std::vector<ObjectId> members;
    bool live = true;
    VAddr mapped = 0;
    std::vector<ReadTableEntry> table;
    std::vector<uint32_t> mapped_slices;                 // per member: slices already in the mapping
    std::vector<std::pair<int64_t, uint64_t>> replicas;  // (mapping index, HBM allocation)
  };
  struct Prefetch {
    VAddr mapping = 0;
    std::vector<std::pair<int64_t, SramSlot>> slots;
  };

  static constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  Object& obj(ObjectId id, const char* what);
  const Object& obj(ObjectId id, const char* what) const;
  /// The data of object `id`, which must be live and a KV object (else a ModelError naming `what`).
  KvData& kv_obj(ObjectId id, const char* what);
  const KvData& kv_obj(ObjectId id, const char* what) const;
  /// The data of a KV object known to be one (group members, placed slices).
  KvData& kv_of(ObjectId id) { return std::get<KvData>(objects_[id].data); }
  const KvData& kv_of(ObjectId id) const { return std::get<KvData>(objects_[id].data); }
  Group& group(GroupId g, const char* what);
  const Group& group(GroupId g, const char* what) const;
  Mapping& mapping_at(VAddr va, const char* what);
  const Mapping* find_mapping(VAddr va) const;
  VAddr reserve_va(int64_t units);
  /// Where the object unit behind mapping index `i` lives (ignores overrides).
  Location base_location(const Mapping& m, int64_t i) const;
  Location location(const Mapping& m, int64_t i) const;
  /// The valid bytes of mapping index `i`.
  int64_t unit_bytes(const Mapping& m, int64_t i) const;
  /// Copies the megapage at a location into `out` (megapage-sized).
  void load(const Location& l, std::span<uint8_t> out);
  /// Places the next megapage of `o` on megaplane `m` (allocating a block when needed).
  std::optional<PhysUnit> place(ObjectId id, Object& o, MegaplaneId m);
  bool has_room(const Object& o, MegaplaneId m) const;
  /// The megaplane at dealing index `start` if `o` can place a megapage there, else the next one (in dealing order)
  /// that can; ModelError if none can (HBF is full).
  MegaplaneId megaplane_with_room(const Object& o, int64_t start) const;
  void append(ObjectId id, uint32_t stream, const uint8_t* data, int64_t n);
  /// The capacity of the next slice stream `stream` of `o` opens after `appended` bytes (paged: up to the block's end).
  int64_t next_cap(const KvData& o, int64_t appended) const;
  /// GroupWrite's mechanisms (the layout's class picks one, KvLayoutPolicy::write): flashaccel's hyperpages of
  /// full slices inside each request's window, scatter's full slices on random megaplanes, paged's whole blocks.
  void write_runs(Group& g, Remainder remainder, WriteReport& r);
  void write_scattered(Group& g, WriteReport& r);
  void write_paged_blocks(Group& g, WriteReport& r);
  /// The members' full slices still in HBM (object, slice), member by member, slice by slice.
  std::vector<std::pair<ObjectId, uint32_t>> full_slices(const Group& g) const;
  /// Programs full slice `u` of `id` on megaplane `mp`, releasing its HBM copy.
  void flush_slice(ObjectId id, uint32_t u, MegaplaneId mp, WriteReport& r);
  void release_prefetches_in(const Mapping& m);
  void extend_group_mapping(Group& g);

  System sys_;
  Mode mode_;
  Rng rng_;
  KvPlacement kv_;
  std::vector<Rng> scatter_;  // scatter layout: each stream's draws (KvPlacement::scatter_stream), across GroupWrites
  std::vector<Rng> paged_;    // paged layout: each stream's block placements (KvPlacement::paged_stream), likewise
  Rng cursors_;               // kv_span = all: the starting cursors of requests created with their expected size
  std::unique_ptr<WeightLayout> layout_;
  FlashArray flash_;
  HbmStore hbm_;
  SramPool sram_;
  std::vector<Object> objects_;
  std::vector<Group> groups_;
  std::map<VAddr, Mapping> mappings_;
  std::map<VAddr, Prefetch> prefetches_;
  VAddr next_va_;
  int64_t weight_cursor_ = 0;
  int64_t kv_window_next_ = 0;  // where the next request's window starts (kv_span = fit)
};

/// The prefetch runtime, functional: `tiles` are the accesses in the order the
/// operator graph touches them (joined accesses form one tile). Before tile t is
/// consumed, SramPrefetch has been issued for every access of tiles t..t+distance
/// (what finds no SRAM stays in flash); after `consume(t)` the tile's prefetches
/// are released. simulate_reads() times the same policy. Returns the megapages
/// that were read from SRAM / left in flash.
struct PrefetchQueueStats {
  int64_t sram = 0, flash = 0, max_slots_in_use = 0;
};
PrefetchQueueStats run_prefetch_queue(Runtime& rt, std::span<const Access> accesses, int64_t distance,
                                      const std::function<void(size_t tile)>& consume);

}  // namespace bitline::hbf
