// The serving model's result records (Capacity, StepReport, PointResult), registered into the stats tree
// (core/stats.hpp) with a description per figure; json() dumps it.
#include <nlohmann/json.hpp>

#include "llm/serving.hpp"

namespace bitline::llm {

namespace {

double to_ms(Time t) { return to_s(t) * 1e3; }

}  // namespace

void Capacity::register_stats(StatGroup& g) const {
  g.add("fits", fits, "the batch fits in this GPU's memory");
  g.add("hbm_capacity_bytes", hbm_capacity, "HBM of one GPU");
  g.add("hbm_used_bytes", hbm_used, "HBM used at this batch");
  g.add("weights_bytes", weights, "weights held by this GPU (HBM and HBF)");
  g.add("kv_bytes", kv, "KV cache of this GPU's requests");
  g.add("kv_staging_bytes", staging, "HBM staging of KV not yet written to flash (partial slices)");
  g.add("runtime_reserve_bytes", reserve, "runtime reserve (llm.runtime_reserve)");
  g.derived(
      "runtime_reserve_in", [this] { return std::string(reserve_in_flash ? "hbf" : "hbm"); },
      "where the runtime reserve lives: hbm, or hbf blocks on HBF-only kinds");
  g.add("workspace_bytes", workspace, "activation workspace (llm.workspace_buffers x activation and logit bytes)");
  if (reserve_blocks > 0) g.add("runtime_reserve_blocks_per_megaplane", reserve_blocks, "flash blocks the reserve takes per megaplane");
  if (weight_cache.raw() > 0) g.add("hbm_weight_cache_bytes", weight_cache, "HBM caching weights that also live in HBF");
  if (preemption_probability > 0)
    g.add("preemption_probability", preemption_probability,
          "capacity_context = paged: fraction of steps at which the batch's KV outgrows its blocks (a request is preempted)");
  if (limit != Exhausted::Nothing)
    g.derived(
        "limit", [this] { return to_string(limit); }, "what the batch exhausts first");
  if (blocks_per_megaplane > 0) {
    g.add("flash_blocks_per_megaplane", blocks_per_megaplane, "flash blocks of one megaplane");
    g.add("flash_blocks_used", blocks_used, "flash blocks used on the fullest megaplane");
    g.add("replica_budget_bytes", replica_budget, "HBM left for selective-offload KV replicas");
  }
}

Json Capacity::json() const {
  return dump_stats([this](StatGroup& g) { register_stats(g); });
}

void StepReport::register_collectives(StatGroup& g) const {
  StatGroup& ms = g.group("time_ms");
  for (int i = 0; i < kCollectiveKinds; ++i) {
    const Time& t = comm_by_kind[size_t(i)];
    ms.derived(
        to_string(CollectiveKind(i)), [&t] { return to_ms(t); }, "time of this collective per step (critical path)");
  }
  g.add("nvlink_bytes", comm_nvlink, "bytes this GPU sends over NVLink per step");
  g.add("rdma_bytes", comm_rdma, "bytes this GPU sends over the scale-out (RDMA) network per step");
}

void StepReport::register_board(StatGroup& g) const {
  g.add("gpu_die", board_die, "board power of the GPU die (W)");
  g.add("hbm_stacks", board_hbm, "board power of the HBM stacks (W)");
  g.add("hbf_stacks", board_hbf, "board power of the HBF stacks' flash dies (W)");
  g.add("hbf_base_dies", board_base, "board power of the HBF base dies (W)");
  g.add("total", tdp, "board power of one GPU package (W)");
}

void StepReport::register_energy(StatGroup& g) const {
  g.add("flash_read", e_flash, "flash sensing and transfer energy per step (J)");
  g.add("hbm", e_hbm, "HBM access energy per step (J)");
  g.add("compute", e_compute, "GPU compute energy per step (J)");
  g.add("communication", e_comm, "collective (NVLink, RDMA) energy per step (J)");
  g.add("static", e_static, "static power over the step (J)");
  g.add("flash_program", e_program, "KV programming energy per step (J)");
  g.add("flash_erase", e_erase, "block erase energy per step (J)");
  g.derived(
      "total", [this] { return energy(); }, "energy per step per GPU (J)");
}

void StepReport::register_endurance(StatGroup& g) const {
  g.add("program_time_fraction", program_time_fraction, "fraction of the planes' time spent programming KV");
  g.add("erase_time_fraction", erase_time_fraction, "fraction of the planes' time spent erasing");
  g.add("lifetime_writes_vs_tbw", lifetime_writes_fraction, "bytes written over the service life / (capacity x P/E cycles)");
  g.add("lifetime_erases_vs_pe_budget", lifetime_erase_fraction, "block erases over the service life / (blocks x P/E cycles)");
}

Json StepReport::collectives_json() const {
  return dump_stats([this](StatGroup& g) { register_collectives(g); });
}

Json StepReport::board_json() const {
  return dump_stats([this](StatGroup& g) { register_board(g); });
}

void StepReport::register_stats(StatGroup& g) const {
  g.add("requests_per_rank", requests_per_rank, "requests per data-parallel rank");
  register_board(g.group("board_power_w"));
  g.add("tokens_per_j_board", tokens_per_j_board, "tokens per joule at board power (the paper's way)");
  register_collectives(g.group("collectives"));
  g.add("batch", batch, "requests decoded per step over the system");
  g.derived(
      "step_ms", [this] { return to_ms(step); }, "decode step time");
  breakdown.register_stats_ms(g.group("breakdown_ms"));
  g.add("tokens_per_s_per_gpu", tokens_per_s_per_gpu, "decode throughput per GPU");
  g.add("tokens_per_j", tokens_per_j, "tokens per joule, activity-based energy");
  g.add("power_w", power, "average draw of one GPU package during decode (W)");
  g.add("tdp_w", tdp, "board power of one GPU package (W)");
  register_energy(g.group("energy_per_step_j"));
  g.add("kv_write_bytes_per_s", kv_write_bytes_per_s, "KV written to flash per second per GPU");
  register_endurance(g.group("endurance"));
  g.add("flops_per_step", flops, "floating-point operations per step per GPU");
  StatGroup& bytes = g.group("bytes_read");
  bytes.add("flash", flash_bytes, "bytes read from HBF per step per GPU");
  bytes.add("hbm", hbm_bytes, "bytes read from HBM per step per GPU");
  g.derived(
      "memory_time_ms", [this] { return to_ms(memory_time); }, "the step's bandwidth floor: its bytes at peak bandwidth");
  capacity.register_stats(g.group("capacity"));
}

Json StepReport::json() const {
  return dump_stats([this](StatGroup& g) { register_stats(g); });
}

void PointResult::register_stats(StatGroup& g) const {
  g.add("model", model, "model name");
  g.add("context", context, "context (input:output tokens)");
  g.add("slo_ms", slo_ms, "decode step-time SLO");
  g.add("system", system, "system name");
  g.add("gpus", gpus, "GPUs of the system");
  g.add("feasible", feasible, "some batch meets the SLO and fits");
  if (!deployment.is_null())
    g.derived(
        "deployment", [this] { return deployment; }, "the deployment chosen and every one tried");
  if (!feasible) {
    g.add("reason", reason, "why no batch is feasible");
    g.derived(
        "batch", [] { return int64_t(0); }, "requests decoded per step over the system");
    g.derived(
        "tokens_per_s_per_gpu", [] { return 0.0; }, "decode throughput per GPU");
    g.derived(
        "bound_by", [this] { return to_string(bound_by); }, "slo or capacity");
    return;
  }
  g.add("batch", step.batch, "requests decoded per step over the system");
  g.add("requests_per_rank", step.requests_per_rank, "requests per data-parallel rank");
  g.derived(
      "step_ms", [this] { return to_ms(step.step); }, "decode step time");
  g.add("tokens_per_s_per_gpu", step.tokens_per_s_per_gpu, "decode throughput per GPU");
  g.derived(
      "bound_by", [this] { return to_string(bound_by); }, "what limits the batch: slo or capacity");
  if (!capacity_limit.empty()) g.add("capacity_limit", capacity_limit, "what the next batch would exhaust: hbm or flash_blocks");
  step.breakdown.register_stats_ms(g.group("breakdown_ms"));
  step.register_collectives(g.group("collectives"));
  g.add("tokens_per_j", step.tokens_per_j, "tokens per joule, activity-based energy");
  g.add("power_w", step.power, "average draw of one GPU package during decode (W)");
  g.add("tdp_w", step.tdp, "board power of one GPU package (W)");
  StatGroup& board = g.group("board_power_w");
  step.register_board(board);
  board.derived(
      "system", [this] { return step.tdp.raw() * double(gpus); }, "board power of all GPUs of the system (W)");
  g.add("tokens_per_j_board", step.tokens_per_j_board, "tokens per joule at board power (the paper's way)");
  g.add("kv_write_bytes_per_s", step.kv_write_bytes_per_s, "KV written to flash per second per GPU");
  step.register_endurance(g.group("endurance"));
  step.register_energy(g.group("energy_per_step_j"));
  step.capacity.register_stats(g.group("capacity"));
  StatGroup& bytes = g.group("bytes_read_per_gpu");
  bytes.add("flash", step.flash_bytes, "bytes read from HBF per step per GPU");
  bytes.add("hbm", step.hbm_bytes, "bytes read from HBM per step per GPU");
  g.derived(
      "memory_time_ms", [this] { return to_ms(step.memory_time); }, "the step's bandwidth floor: its bytes at peak bandwidth");
  g.add("bandwidth_bound_batch", bandwidth_bound_batch, "largest batch the bytes read alone would allow within the SLO");
  g.add("search_evaluations", evaluations, "step evaluations the batch search made");
}

Json PointResult::json() const {
  return dump_stats([this](StatGroup& g) { register_stats(g); });
}

std::string to_string(Exhausted e) {
  switch (e) {
    case Exhausted::Nothing:
      return "";
    case Exhausted::Hbm:
      return "hbm";
    case Exhausted::FlashBlocks:
      return "flash_blocks";
  }
  return "?";
}

std::string to_string(BoundBy b) {
  switch (b) {
    case BoundBy::None:
      return "";
    case BoundBy::Slo:
      return "slo";
    case BoundBy::Capacity:
      return "capacity";
    case BoundBy::Deployment:
      return "deployment";
    case BoundBy::GivenBatch:
      return "given batch";
    case BoundBy::GivenBatchMissesSlo:
      return "given batch (misses the SLO)";
  }
  return "?";
}

}  // namespace bitline::llm
