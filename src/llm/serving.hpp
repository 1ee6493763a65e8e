// Serving a model on a system of GPUs: capacity accounting, one decode step
// with its breakdown, energy and writes, the batch search under a step-latency
// SLO, and the check of the fast step model. The evaluation matrix and the ablation
// that run it over an experiment are in llm/experiment.hpp. See docs/llm.md.
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
#include "llm/memory.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"
#include "llm/step.hpp"
#include "llm/timing.hpp"

namespace bitline::llm {

/// The parameters of one GPU kind (a preset with the user's overrides).
struct KindParams {
  std::string kind;  // a file of configs/gpus/ without .yaml (h200, csi, b200, ...), or the path of a kind's YAML file
  hbf::SystemParams system;
  LlmParams llm;
  ServingParams serving;
};

/// Reads one GPU kind's parameters (memory system, LLM model, serving) from a resolved config tree.
KindParams load_kind_params(const ConfigTree& tree, const std::string& kind);

/// The GPU kinds: the YAML files of kinds_dir() (configs/gpus/, or $BITLINE_CONFIG_DIR/gpus/), sorted, without .yaml.
std::filesystem::path kinds_dir();
std::vector<std::string> available_kinds();
/// A kind given as the path of its YAML file (it holds a '/' or ends in .yaml / .yml) rather than by name.
bool kind_is_path(const std::string& kind);
/// ConfigError naming the known kinds unless `kind` is one of available_kinds() or the path of a readable file.
void check_kind(const std::string& kind);

/// "csix8" -> kind "csi", 8 GPUs; the kind is a file of configs/gpus/ or a path ("./mine.yamlx8").
struct SystemName {
  std::string name, kind;
  int64_t gpus = 0;
};
/// Parses KIND x N (csix8, ...); ConfigError listing the kinds for anything else.
SystemName parse_system(const std::string& name);

struct ContextSpec {
  std::string name;
  int64_t input = 0, output = 0;
};
/// One of the `named` contexts (an experiment's, e.g. "long") or "IN:OUT" tokens; ConfigError otherwise.
ContextSpec parse_context(const std::string& s, const std::vector<ContextSpec>& named = {});

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

/// The result of the batch search at one point.
struct PointResult {
  std::string model, context, system;
  int64_t gpus = 0;
  double slo_ms = 0;
  bool feasible = false;
  std::string reason;    // why not feasible
  std::string bound_by;  // "slo" or "capacity"
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

/// What the serving engine adds to the GPU's kernels (serving.engine; values and sources in engine_kinds()).
struct EngineOverheads {
  Time launch{};        // host time per kernel launched without CUDA graphs (0: CUDA graphs); the GPU waits when it is ahead
  Time iteration{};     // per forward pass: scheduling, the host synchronisation that reads the sampled tokens
  Time per_sequence{};  // per forward pass and sequence in it: the host's per-sequence work (inputs, outputs)
  Time request{};       // per request: tokenisation and detokenisation
  /// The host-side time `passes` passes (forward passes, e.g. a prefill's chunks) of `kernels` kernel launches in all
  /// over `sequences` sequences add to `gpu` time on the GPU: the launches it waits for (kernels x launch beyond the
  /// GPU time), then each pass's iteration overhead and its sequences'. The request's own cost is not in it.
  Time added(Time gpu, int64_t kernels, int64_t sequences, int64_t passes = 1) const;
};
/// The engine `k` stands for (EngineKind::Auto: `static_batch` ? the TensorRT-LLM session runtime : none); not Custom.
/// `workers`: the GPUs one instance of the engine drives (engine_workers); a kind whose host costs grow with them
/// (sarathi_serve: Ray's workers) takes its profile at that count.
EngineOverheads engine_overheads(EngineKind k, bool static_batch, int64_t workers);
/// The engine the config section serving.engine gives: its kind's costs, or for kind custom its parameters. A cost
/// parameter set for another kind is refused (ConfigError) rather than ignored.
EngineOverheads engine_overheads(const EngineParams& e, bool static_batch, int64_t workers);
/// The GPUs one engine instance of deployment `d` drives: its tensor-parallel group, or every GPU when the experts of
/// a MoE model span them (one step couples them all).
int64_t engine_workers(const Deployment& d);
/// The sequences of a pass that one engine instance of `d` handles, of `per_rank` on each attention rank and `total`
/// over all: a replica's when each tensor-parallel group is its own engine (their hosts work in parallel), all of them
/// when the experts of a MoE model couple every GPU in one engine.
int64_t engine_sequences(const Deployment& d, int64_t per_rank, int64_t total);

/// One GEMM kernel alone, timed as a step times it (`bitline accel gemm`): M x K activations (16-bit) times a K x N
/// weight matrix held in the GPU's HBM in the number format `p`, M x N outputs (16-bit). time = max(math, transfers):
/// the library kernel's math (tile, split-K, waves; the weight-streaming floor included) against the weights and
/// activations at the achievable HBM bandwidth (hbm_efficiency). It is a kernel's duration as a profiler reports it:
/// the launch gap (llm.compute.kernel_overhead) is not in it.
struct GemmTiming {
  /// What set the time: the tiles' math, the weight-streaming kernel's rate (weight_efficiency of the peak HBM
  /// bandwidth), the bytes at the achievable HBM bandwidth (hbm_efficiency), or the tiles' operand loads from L2
  /// (l2_bandwidth).
  enum class Bound { Compute, WeightStream, Memory, L2 };
  GemmKernel kernel;     // the kernel chosen and its math time (the weight-streaming floor included)
  Time weight_stream{};  // GpuCompute::weight_stream: the pipeline fill, then the weights at the weight-streaming rate
  Time transfer{};       // weights and activations at the achievable HBM bandwidth
  Time time{};           // max(kernel.math, transfer)
  double flops = 0, weight_bytes = 0, act_bytes = 0;
  Bound bound() const;
  static const char* name(Bound b);
};
/// Dimensions above this are refused (ConfigError): a GEMM alone is a kernel, not a model.
inline constexpr double kMaxGemmDim = 1 << 20;
/// ConfigError for precision `model` (a GEMM alone has no model), for FP4 on a kind without FP4 tensor cores, for a
/// dimension outside [1, kMaxGemmDim] and for a GEMM that would take more than 10^6 s.
GemmTiming time_gemm(const KindParams& k, const GemmShape& s, Precision p);

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
  /// The largest batch meeting `slo` and fitting in memory.
  PointResult search(const ContextSpec& c, Time slo) const;
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
  double arranged_bytes(const StepGraph& g, const KvWrites& w) const;
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

/// Loads the models of the evaluation once.
struct ModelSet {
  std::map<std::string, ModelConfig> models;
  const ModelConfig& get(const std::string& name);
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
