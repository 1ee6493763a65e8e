// Ready-made experiments on one GPU's memory system, shared by `bitline hbf`
// and the tests: stream a weight object once, write KV a hyperpage at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hbf/layout.hpp"
#include "hbf/runtime.hpp"
#include "hbf/timing.hpp"

namespace bitline::hbf {

// Work limits of the experiments, checked before anything is allocated (docs/commands.md, "Hardened inputs").
/// Most megapages one experiment reads or writes: 2^24, about 1 TB at CSI's megapages (~2 s and ~300 MB).
inline constexpr int64_t kMaxExperimentUnits = int64_t(1) << 24;
/// Most tensors of a synthetic weight object (a name and layout entries each, ~150 B): 2^20.
inline constexpr int64_t kMaxSyntheticTensors = int64_t(1) << 20;

/// A synthetic weight object of `total` bytes: tensors of `tensor` bytes (the
/// last one shorter) named "experts.<i>", executed in numeric order and declared
/// in checkpoint order, i.e. sorted as strings (experts.0, experts.1,
/// experts.10, experts.100, ...), as safetensors index files list them.
WeightSpec synthetic_weights(Bytes total, Bytes tensor);

struct StreamRun {
  ReadResult result;
  int64_t tensors = 0, tiles = 0;
  Bytes tile{};
  std::string layout;
  ReadOptions options;
  Json runtime;  // the runtime's statistics after the run (flash, HBM, page table)
  Json json(const System& sys) const;
};

/// Stores `w` with the layout of `hbf.runtime.weight_layout`, maps it and reads
/// it once: the tensors in execution order form one stream of megapages, cut
/// into tiles of `tile_hyperpages` x K megapages (a tile may span tensors), read
/// with the prefetch and granularity of `hbf.runtime`. With the execution layout
/// every tile is a set of full hyperpages. Timing mode: no data is kept.
StreamRun run_stream(const System& sys, const WeightSpec& w);

struct WriteBwRun {
  WriteResult result;
  int64_t requests = 0, hyperpages = 0;
  Json json(const System& sys) const;
};

/// `requests` KV objects receive `total` bytes of new KV (rounded down to whole
/// hyperpages) in HBM; one GroupWrite flushes it a hyperpage at a time, and the
/// programs are timed.
WriteBwRun run_write_bw(const System& sys, Bytes total, int64_t requests, Granularity g);

}  // namespace bitline::hbf
