// `bitline accel collective`: one collective alone over a group of GPUs of one kind, as the step model times it
// (llm::Network: the kind's llm.network: a measured nccl-tests curve inside a node, NVLink SHARP where set, the link
// model across nodes). For checking the collective model against measured collective times (docs/calibration.md,
// "Collectives against measured times").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "llm/collectives.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

namespace {

// The limits of the arguments (docs/commands.md): a group no larger than a large cluster, a message no larger than
// the whole HBM of such a group could hold; both far from where the times would overflow.
constexpr int64_t kMaxGpus = 65536;
constexpr int64_t kMaxBytes = int64_t(1) << 40;  // 1 TiB

const Registry<CollectiveKind>& collective_names() {
  static const Registry<CollectiveKind> r(
      "collective", {{"all_reduce", "every GPU ends with the sum of all GPUs' S bytes (nccl-tests all_reduce_perf: bus factor 2 (n-1)/n)",
                      CollectiveKind::AllReduce},
                     {"all_gather", "every GPU ends with all GPUs' pieces, S bytes gathered (all_gather_perf: bus factor (n-1)/n)",
                      CollectiveKind::AllGather},
                     {"reduce_scatter", "every GPU ends with its 1/n of the sum of S bytes (reduce_scatter_perf: bus factor (n-1)/n)",
                      CollectiveKind::ReduceScatter}});
  return r;
}

struct CollectiveOpts {
  std::string system = "h100", collective = "all_reduce", json;
  int64_t gpus = 8;
  std::vector<std::string> sizes;
};

Bytes size_arg(const std::string& v) {
  Bytes b;
  try {
    b = parse_bytes(v);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("--bytes '{}': {}", v, e.what()));
  }
  if (b.raw() < 1 || b.raw() > kMaxBytes)
    throw ConfigError(fmt::format("--bytes '{}': {} bytes is outside [1, {}] (1 TiB)", v, b.raw(), kMaxBytes));
  return b;
}

void run_collectives(const KindOptions& ko, const CollectiveOpts& o) {
  check_one_gpu_kind(o.system, "a collective");
  const CollectiveKind kind = collective_names().at(o.collective, "--collective");
  if (o.gpus < 2 || o.gpus > kMaxGpus)
    throw ConfigError(fmt::format("--gpus {}: a collective needs a group of 2 to {} GPUs", o.gpus, kMaxGpus));
  std::vector<Bytes> sizes;
  for (const auto& s : o.sizes) sizes.push_back(size_arg(s));
  if (!o.json.empty()) check_json_output(o.json);
  check_distinct_files({{"--json", o.json}}, input_files(ko, {}, {o.system}));
  const KindParams k = ko.load(o.system);
  const Network net(k.llm.network);
  const NetworkParams& np = k.llm.network;
  const int64_t per_node = std::min(o.gpus, np.gpus_per_node), nodes = (o.gpus + np.gpus_per_node - 1) / np.gpus_per_node;
  // nccl-tests' bus bandwidth: the algorithm bandwidth S / t times the bus factor of the collective over n GPUs.
  const double bus = bus_factor(kind, o.gpus);
  std::vector<Collective> timed;  // every size is timed before anything is printed
  for (const Bytes s : sizes) {
    switch (kind) {
      case CollectiveKind::AllReduce:
        timed.push_back(net.all_reduce(s, o.gpus));
        break;
      case CollectiveKind::AllGather:
        timed.push_back(net.all_gather(s, o.gpus));
        break;
      case CollectiveKind::ReduceScatter:
        timed.push_back(net.reduce_scatter(s, o.gpus));
        break;
      case CollectiveKind::AllToAll:
        throw std::logic_error("accel collective: all_to_all is not offered");
    }
  }
  const std::string model =
      nodes > 1 ? fmt::format("{} GPUs on {} nodes of {}: the link model across nodes ({})", o.gpus, nodes, per_node, np.all_reduce.name())
                : fmt::format("{} GPUs in one node: {}{}", o.gpus, np.collectives.name(),
                              kind == CollectiveKind::AllReduce && *np.node_all_reduce == NodeAllReduce::Nvls ? ", NVLink SHARP" : "");
  fmt::print("{} alone on {} ({})\n", o.collective, k.kind, model);
  fmt::print("{:>14} {:>11} {:>13} {:>13} {:>12} {:>12}\n", "bytes", "time us", "algbw GB/s", "busbw GB/s", "NVLink MB", "RDMA MB");
  Json rows = Json::array();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double S = double(sizes[i].raw()), sec = to_s(timed[i].time);
    const double algbw = S / sec / 1e9, busbw = bus * algbw;
    fmt::print("{:>14} {:>11.2f} {:>13.1f} {:>13.1f} {:>12.3f} {:>12.3f}\n", sizes[i].raw(), to_us(timed[i].time), algbw, busbw,
               double(timed[i].nvlink.raw()) / 1e6, double(timed[i].rdma.raw()) / 1e6);
    rows.push_back({{"bytes", sizes[i].raw()},
                    {"time_us", to_us(timed[i].time)},
                    {"algbw_gb_per_s", algbw},
                    {"busbw_gb_per_s", busbw},
                    {"nvlink_bytes", timed[i].nvlink.raw()},
                    {"rdma_bytes", timed[i].rdma.raw()}});
  }
  if (!o.json.empty()) {
    std::map<std::string, KindParams> kinds{{k.kind, k}};
    write_json_file(o.json, Json{{"kind", k.kind},
                                 {"collective", o.collective},
                                 {"gpus", o.gpus},
                                 {"nodes", nodes},
                                 {"model", model},
                                 {"collectives", rows},
                                 {"config", config_json(kinds, &ko)}});
  }
}

}  // namespace

void add_collective(CLI::App& accel) {
  auto* cmd = accel.add_subcommand(
      "collective", "one collective alone (all-reduce, all-gather, reduce-scatter) over a group of GPUs of one kind: time, algbw, busbw");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<CollectiveOpts>();
  k->add_to(*cmd);
  cmd->add_option("--system", o->system, "the GPU kind (a file of configs/gpus/, or the path of a kind's YAML file)")
      ->capture_default_str();
  cmd->add_option("--gpus", o->gpus, fmt::format("GPUs in the group (2 to {}; they fill nodes of llm.network.gpus_per_node)", kMaxGpus))
      ->capture_default_str();
  cmd->add_option("--collective", o->collective, "all_reduce, all_gather or reduce_scatter")->capture_default_str();
  cmd->add_option("--bytes", o->sizes, "the message size S (nccl-tests' size: all-reduce buffer, gathered size), e.g. 1MiB (repeatable)")
      ->required();
  cmd->add_option("--json", o->json, "write the collectives (and the resolved config) to this file");
  cmd->callback([k, o] { run_collectives(*k, *o); });
}

}  // namespace bitline::cli::accel
