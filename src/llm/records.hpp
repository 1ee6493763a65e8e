// The records of the serving model's results (llm/records.cpp): the memory of a GPU at a batch, one decode step and
// the batch search's point, each registered into the stats tree and written as JSON from one place.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/stats.hpp"
#include "llm/collectives.hpp"
#include "llm/timing.hpp"

namespace bitline::llm {

/// What a batch that does not fit exhausts first.
enum class Exhausted { Nothing, Hbm, FlashBlocks };
/// "" (fits), "hbm", "flash_blocks": as reported in the JSON.
std::string to_string(Exhausted e);

/// Memory of one GPU at a batch.
struct Capacity {
  bool fits = false;
  Exhausted limit = Exhausted::Nothing;  // what is exhausted first
  Bytes hbm_capacity{}, hbm_used{}, weights{}, kv{}, staging{}, reserve{}, workspace{}, weight_cache{};
  int64_t blocks_per_megaplane = 0, blocks_used = 0;  // HBF: the fullest megaplane
  Bytes replica_budget{};                             // HBF: HBM left for KV replicas
  bool reserve_in_flash = false;                      // no HBM: the runtime reserve takes HBF blocks
  int64_t reserve_blocks = 0;                         // of them, per megaplane (counted in blocks_used)
  double preemption_probability = 0;                  // serving.capacity_context = paged: steps that run out of blocks
  void register_stats(StatGroup& g) const;
  Json json() const;
};

/// One decode step at a batch.
struct StepReport {
  int64_t requests_per_rank = 0, batch = 0;
  Time step{};
  Breakdown breakdown;
  double tokens_per_s_per_gpu = 0;
  Capacity capacity;
  // energy per GPU per step
  Energy e_flash{}, e_hbm{}, e_compute{}, e_comm{}, e_static{}, e_program{}, e_erase{};
  Energy energy() const { return e_flash + e_hbm + e_compute + e_comm + e_static + e_program + e_erase; }
  double tokens_per_j = 0;
  Power power{};  // average draw of one GPU package (GPU + HBM + HBF) during decode
  Power tdp{};    // board power: the sum of board_parts (= GPU TDP, less the HBM stacks it lost, plus HBF stacks)
  // Board power by part (at full activity, with sources): GPU die, HBM stacks, HBF stacks (flash dies), HBF base dies.
  Power board_die{}, board_hbm{}, board_hbf{}, board_base{};
  double tokens_per_j_board = 0;  // tokens/s per GPU / board power (the paper's way); tokens_per_j is activity-based
  // writes per GPU
  double kv_write_bytes_per_s = 0;
  double program_time_fraction = 0;     // of the planes' time
  double erase_time_fraction = 0;       // of the planes' time
  double lifetime_writes_fraction = 0;  // bytes written over the service life / (flash capacity x P/E cycles)
  double lifetime_erase_fraction = 0;   // block erases over the service life / (blocks x P/E cycles)
  double flops = 0;
  // What the step reads per GPU, and the time those bytes take at the peak bandwidth of the memory holding them
  // (flash and HBM in parallel): the step's bandwidth floor, without compute, collectives, kernel overheads,
  // sensing latency or programming.
  double flash_bytes = 0, hbm_bytes = 0;
  Time memory_time{};
  // Collectives per step on this GPU (on the critical path): time by kind (CollectiveKind), bytes by link.
  std::array<Time, kCollectiveKinds> comm_by_kind{};
  Bytes comm_nvlink{}, comm_rdma{};
  // Registered into a stats tree (core/stats.hpp), dumped by the json() functions; each group on its own as well,
  // for PointResult.
  void register_stats(StatGroup& g) const;
  void register_collectives(StatGroup& g) const;
  void register_board(StatGroup& g) const;
  void register_energy(StatGroup& g) const;
  void register_endurance(StatGroup& g) const;
  Json collectives_json() const;
  Json board_json() const;
  Json json() const;
};

/// What sets a point's batch: the step-latency SLO, the memory, no deployment being feasible (the deployment search's
/// record says why), or the batch the user gave (meeting the SLO or not); None until the search has decided.
enum class BoundBy { None, Slo, Capacity, Deployment, GivenBatch, GivenBatchMissesSlo };
/// As the JSON and the printout write it: "", "slo", "capacity", "deployment", "given batch",
/// "given batch (misses the SLO)".
std::string to_string(BoundBy b);

/// The result of the batch search at one point.
struct PointResult {
  std::string model, context, system;
  int64_t gpus = 0;
  double slo_ms = 0;
  bool feasible = false;
  std::string reason;  // why not feasible
  BoundBy bound_by = BoundBy::None;
  std::string capacity_limit;
  StepReport step;
  // The bandwidth bound: the largest batch whose step would meet the SLO if only the bytes read counted
  // (StepReport::memory_time; capacity ignored up to serving.max_requests_per_rank). An upper limit to `batch`,
  // and the quantity of the paper's "could in theory reach" estimates. 0 when not even one request meets it.
  int64_t bandwidth_bound_batch = 0, bandwidth_bound_requests_per_rank = 0;
  int evaluations = 0;
  Json deployment;  // deployment_json of the server searched, and the deployment search's record (llm/deployment.hpp)
  void register_stats(StatGroup& g) const;
  Json json() const;
};

}  // namespace bitline::llm
