// Serving engines as people run them (`--engine NAME|FILE`; configs/engines/NAME.yaml; the config section `engine`):
// which scheduling policy an engine runs and with what limits, how it sizes its KV pool, how many decode steps it runs
// per scheduling, which passes it replays as CUDA graphs, and the host time around its GPU passes. A profile names its
// engine family (engine.family) and gives every option of that family under the engine's own name (engine.OPTION,
// e.g. engine.num_scheduler_steps) and the host costs (engine.host.*); load_engine turns them into an EngineSetup,
// which the request-level simulation (serve/simulator.hpp) runs. The family `ideal` has no options: the serve
// section's scheduler and limits, no host time (the hardware alone). docs/serving.md, "Engines".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/params.hpp"
#include "core/registry.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "llm/names.hpp"
#include "serve/params.hpp"

namespace bitline::serve {

/// engine.family: whose options a profile gives (table in serve/engine_profile.cpp).
enum class EngineFamily { Ideal, Vllm, VllmV0, Sglang, TensorRtLlm };
const Registry<EngineFamily>& engine_families();
std::string_view family_name(EngineFamily f);

/// How an engine sizes its KV pool on a GPU whose KV lives in HBM (Capacity: HBM, weights, the runtime reserve, the
/// activation workspace at max_num_seqs):
///   AllFree          everything the others leave (the idealized engine)
///   Utilization      vLLM: gpu_memory_utilization x HBM, less the weights, the non-torch reserve and the activation peak
///   StaticFraction   SGLang: mem_fraction_static x HBM holds the weights and the KV pool; the rest is left to
///                    activations and CUDA graphs
///   FreeFraction     TensorRT-LLM: free_gpu_memory_fraction of what the weights, the runtime and its buffers leave
enum class KvPoolRule { AllFree, Utilization, StaticFraction, FreeFraction };
const char* to_string(KvPoolRule r);

/// Host time an engine spends around its GPU passes; a multi-step group of decode steps pays the per-scheduling parts
/// once. Serial parts add to the pass; overlapped parts run beside the GPU (the pass takes the longer of the two).
struct HostCosts {
  Time schedule{};                 // per scheduling: the scheduler and the preparation of the step's inputs
  Time schedule_per_sequence{};    // and per sequence in it
  Time output{};                   // per scheduling: sampling's read-back, output processing, detokenisation, streaming
  Time output_per_sequence{};      // and per sequence in it
  Time request{};                  // per request before it can be scheduled: the API server and tokenisation
  Time request_per_input_token{};  // and per prompt token
  Time launch{};                   // per kernel launched outside a CUDA graph (the GPU waits for the host)
  bool overlap_schedule = false;   // the next scheduling runs while the GPU computes (SGLang's overlap scheduler,
                                   // vLLM V1 async scheduling)
  bool overlap_output = false;     // output processing runs beside the next pass (vLLM's async output processing)
};

/// What a profile makes of the simulation.
struct EngineSetup {
  std::string profile;  // the profile's name, or its file
  EngineFamily family = EngineFamily::Ideal;
  std::string version;  // the engine's release the profile describes
  KvPoolRule kv_pool = KvPoolRule::AllFree;
  double kv_fraction = 1;  // the rule's fraction
  // CUDA graphs: a pass of at most `graph_tokens` tokens (decode-only passes of at most that many sequences when
  // `graph_decode_only`) is replayed from a graph captured at the next captured batch size (padding rows); a larger one
  // or one with a prompt chunk (graph_decode_only) is launched kernel by kernel. 0: every pass eager.
  int64_t graph_tokens = 0;
  bool graph_decode_only = true;
  HostCosts host;
  bool ideal() const { return family == EngineFamily::Ideal; }
  /// The captured batch size a graph pass of `n` tokens replays (>= n), or 0 when it runs eagerly.
  int64_t graph_batch(int64_t n, bool has_prompt) const;
  Json json() const;
};

/// The idealized engine (family ideal): the serve section's scheduler, kernels only.
EngineSetup ideal_engine();

/// The profile `bitline serve` runs when --engine is not given.
inline constexpr const char* kDefaultEngine = "vllm";

/// Engines shipped in configs/engines/ (names, file stems) and the profile file a --engine value names: a shipped
/// name, or a path (a value with '/' or ending in .yaml). ConfigError for an unknown name (did you mean).
std::vector<std::string> shipped_engines();
std::filesystem::path engine_file(const std::string& engine);

/// Loads the profile `engine` (a name or a file) into `tree` (its section `engine`).
void load_engine_profile(ConfigTree& tree, const std::string& engine);

/// What an engine's own rules for its defaults read (an option given as 0 = "the engine's rule").
struct EngineContext {
  double hbm_bytes_per_gpu = 0;  // the GPU's memory
  std::string kind;              // the GPU kind (vLLM's rule asks whether the device is an A100)
};
/// The context of GPU kind `k`: its HBM stacks' capacity and its name.
EngineContext engine_context(const llm::KindParams& k);

/// The engine of the tree's section `engine` (absent: the ideal engine), applied to `serve`: a family other than ideal
/// sets the serve section's scheduler, max_num_seqs, max_num_batched_tokens, block_tokens, watermark,
/// prefix_caching and scheduler_steps from its options, and refuses (ConfigError naming the key) those set in the
/// tree by hand. ConfigError naming the file, key and value for an unknown family, a missing option or host cost, an
/// option of another family, a value out of range.
EngineSetup load_engine(const ConfigTree& tree, ServeParams& serve, const EngineContext& ctx);

/// Checks the section `engine` of `tree` (the config catalogue's check).
void check_engine_section(const ConfigTree& tree);
/// `bitline describe`'s rows of the section `engine`: every family's options.
std::vector<ParamRow> describe_engine_section(const std::string& path);

/// One shipped profile for `bitline describe --engines`: its name, file, family, version, description and options.
struct EngineListing {
  std::string name, file, family, version, description;
  std::vector<std::pair<std::string, std::string>> options;  // key, value (as written)
};
std::vector<EngineListing> list_engines();

}  // namespace bitline::serve
