// The policies of the llm, serving and sessions sections chosen by name (core/registry.hpp): their enums and
// tables, each table defined beside the code it selects; `bitline describe` lists the choices under the key.
#pragma once

#include "core/registry.hpp"
#include "hbf/kv_placement.hpp"

namespace bitline::llm {

// Policies chosen by name (core/registry.hpp). Each table is defined beside the
// code it selects; `bitline describe` lists the choices under the key.

/// llm.attention_parallel (table in llm/step.cpp, make_deployment).
enum class AttentionParallel { Auto, Dp, Tp };
const Registry<AttentionParallel>& attention_parallels();
/// llm.network.all_reduce and llm.network.all_to_all (tables in llm/collectives.cpp, Network).
enum class AllReduceAlgorithm { Ring, Hierarchical };
const Registry<AllReduceAlgorithm>& all_reduce_algorithms();
enum class AllToAllAlgorithm { Nccl, Dedup };
const Registry<AllToAllAlgorithm>& all_to_all_algorithms();
/// llm.network.collectives and llm.network.node_all_reduce (tables in llm/collectives.cpp, Network).
enum class CollectiveModel { Links, Measured };
const Registry<CollectiveModel>& collective_models();
enum class NodeAllReduce { Ring, Nvls };
const Registry<NodeAllReduce>& node_all_reduces();
/// serving.engine (table in llm/serving.cpp, engine_overheads).
enum class EngineKind { Auto, None, TensorRtLlmSession, SarathiServe, Custom };
const Registry<EngineKind>& engine_kinds();
/// llm.deployment_search (table in llm/deployment.cpp, DeploymentSearch).
enum class DeploymentPolicy { PreferredOrFastest, Preferred, Fixed, Best };
const Registry<DeploymentPolicy>& deployment_policies();
/// serving.capacity_context (table in llm/serving.cpp, Server::capacity).
enum class CapacityContext { Paged, Full, Mean };
/// serving.expert_prefetch (table in llm/serving.cpp): what the HBF prefetch queue reads of a MoE layer's experts.
enum class ExpertPrefetch { Static, Router };
const Registry<ExpertPrefetch>& expert_prefetches();
const Registry<CapacityContext>& capacity_contexts();
/// sessions.think_time_distribution (table in llm/sessions.cpp): how the gaps between a turn's end and the next turn are drawn.
enum class ThinkTime { Exponential, Lognormal };
const Registry<ThinkTime>& think_times();
/// serving.kv_layout and serving.kv_offload: the KV placement policy that the HBF runtime and the serving model
/// share (tables in hbf/kv_placement.cpp, hbf::KvPlacement).
using hbf::kv_layouts;
using hbf::kv_offloads;
using hbf::KvLayout;
using hbf::KvOffload;
/// serving.kv_arrange (table in llm/serving.cpp, Server::step).
enum class KvArrange { NewKv, Whole };
const Registry<KvArrange>& kv_arranges();
/// serving.step_model (table in llm/serving.cpp, Server::step).
enum class StepModel { Fast, Event };
const Registry<StepModel>& step_models();

/// llm.compute.kernels (table in llm/gpu.cpp, GpuCompute).
enum class KernelModel { Tiles, Curve };
const Registry<KernelModel>& kernel_models();

}  // namespace bitline::llm
