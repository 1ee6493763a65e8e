// Serving a model on a system of GPUs: capacity accounting, one decode step
// with its breakdown, energy and writes, the batch search under a step-latency
// SLO, and the check of the fast step model. The evaluation matrix and the ablation
// that run it over an experiment are in llm/experiment.hpp. See docs/llm.md. The kinds, systems and contexts it is
// given are in llm/names.hpp, its result records in llm/records.hpp, the engine's host costs in llm/engine.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "hbf/params.hpp"
#include "hbf/system.hpp"
#include "llm/engine.hpp"
#include "llm/memory.hpp"
#include "llm/model.hpp"
#include "llm/names.hpp"
#include "llm/params.hpp"
#include "llm/records.hpp"
#include "llm/step.hpp"
#include "llm/timing.hpp"

namespace bitline::llm {

/// Reads one GPU kind's parameters (memory system, LLM model, serving) from a resolved config tree, checked as a whole
/// (the board power's parts, the serving engine's costs, the collectives' curves).
KindParams load_kind_params(const ConfigTree& tree, const std::string& kind);

/// A model served on a number of GPUs of one kind (the model in the kind's llm.precision).
class Server {
 public:
  Server(const ModelConfig& m, const KindParams& k, int64_t gpus);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const Deployment& deployment() const { return d_; }
  const GpuWeights& weights() const { return w_; }
  const hbf::System& system() const { return sys_; }
  const GpuMemory& memory() const { return *mem_; }
  const ModelConfig& model() const { return m_; }
  const KindParams& params() const { return k_; }
  bool has_hbf() const { return sys_.stacks() > 0; }
  /// The GPU's kernel model and the network, as the step graphs use them.
  const GpuCompute& gpu() const { return gpu_; }
  const Network& network() const { return net_; }

  /// Per-GPU memory with `r` requests per attention rank.
  Capacity capacity(int64_t r, const ContextSpec& c) const;
  /// The most requests per rank that fit (0: not even one).
  int64_t max_requests(const ContextSpec& c) const;
  /// The most tokens each of `r` requests per rank may hold (their KV, prompt and output together) with the memory
  /// fitting, at most 2^40 / r; 0 when not even one token fits. What a serving engine's KV cache holds per request.
  int64_t max_context(int64_t r) const;
  /// The step graph at `r` requests per rank (replica budget set).
  StepGraph graph(int64_t r, const ContextSpec& c) const;
  /// The step graph of the requests of `contexts` (tokens of KV each) in a run of context `c` (replica budget and
  /// window size set).
  /// `requests_total`: the requests of the step over all attention ranks (0: as many on every rank; build_step).
  StepGraph graph_at(std::vector<int64_t> contexts, const ContextSpec& c, int64_t requests_total = 0) const;
  /// One decode step at `r` requests per rank (fast model), with energy and writes.
  StepReport step(int64_t r, const ContextSpec& c) const;
  /// One decode step of the requests of `contexts` (tokens of KV each) in a run of context `c` (KV reserved, window
  /// sizes); `disaggregated`: the step also writes the prompts' KV arriving from the prefill GPUs (the decode
  /// evaluation) or only its new tokens' (a static batch prefilled on the same GPUs). `engine`: the serving engine's
  /// host-side overheads added to the step (breakdown.engine).
  /// `requests_total`: as graph_at's.
  StepReport step_at(const std::vector<int64_t>& contexts, const ContextSpec& c, bool disaggregated, const EngineOverheads& engine,
                     int64_t requests_total = 0) const;
  /// Steps already timed at one context, by requests per rank: searches of the same context at several SLOs share them
  /// (a step is the same whatever the SLO).
  using StepMemo = std::map<int64_t, StepReport>;
  /// The largest batch meeting `slo` and fitting in memory. `memo` (optional): steps of context `c` timed before, and
  /// where this search's go (PointResult::evaluations still counts the steps this search looked at).
  PointResult search(const ContextSpec& c, Time slo, StepMemo* memo = nullptr) const;
  /// The share of the HBF's lifetime writes (flash capacity x P/E cycles over serving.endurance_years) that a write
  /// rate of `bytes_per_s` per GPU uses (StepReport::lifetime_writes_fraction); 0 without HBF.
  double lifetime_writes_fraction(double bytes_per_s) const;
  /// Board power of one GPU package (StepReport::tdp: the GPU die, its HBM stacks, its HBF stacks and base dies).
  Power board_power() const {
    StepReport r;
    add_board_power(r);
    return r.tdp;
  }

 private:
  // The phases of step(), in order.
  /// The reads and compute of the step (serving.step_model: fast, or event-driven with the fast breakdown).
  StepTiming time_reads(const StepGraph& g) const;
  /// The step's KV writes and its share of the erases of finished requests.
  struct KvWrites {
    double kv_token = 0;  // KV bytes of one token over all layers
    double written = 0;   // new KV bytes per step on this GPU
    Time write_time{}, erase_time{};
    double megablocks_per_request = 0, finished_per_step = 0;
  };
  KvWrites kv_writes(const StepGraph& g, int64_t r, const ContextSpec& c, bool disaggregated) const;
  /// GroupArrange: the bytes of selective-offload replicas copied to HBM in the step, and the time that takes.
  double arranged_bytes(const StepGraph& g, const KvWrites& w, const StepTiming& st) const;
  Time arrange_time(double arranged) const;
  /// The bandwidth floor: the step's bytes at the peak bandwidth of the memory holding them.
  Time memory_time(double flash_bytes, double hbm_bytes) const;
  /// Activity-based energy per step, board power from its parts, write rate and endurance.
  void add_energy(StepReport& s, const StepGraph& g, const StepTiming& st, const KvWrites& w, double arranged) const;
  void add_board_power(StepReport& s) const;
  void add_endurance(StepReport& s, const KvWrites& w) const;

  ModelConfig m_;
  KindParams k_;
  Deployment d_;
  GpuWeights w_;
  hbf::System sys_;
  GpuCompute gpu_;
  Network net_;
  MemoryTiming mt_;
  std::unique_ptr<GpuMemory> mem_;
};

/// Fast model vs the event-driven reference on one step.
struct ValidationPoint {
  std::string model, system;
  int64_t requests_per_rank = 0;
  double fast_ms = 0, fast_all_layers_ms = 0, event_ms = 0;
  double error() const { return event_ms > 0 ? fast_ms / event_ms - 1.0 : 0.0; }
  double error_all_layers() const { return event_ms > 0 ? fast_all_layers_ms / event_ms - 1.0 : 0.0; }
  uint64_t events = 0;
  double fast_wall_s = 0, event_wall_s = 0;
  Json json() const;
};
ValidationPoint validate_step(const Server& s, int64_t r, const ContextSpec& c);

}  // namespace bitline::llm
