#include "llm/collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"

namespace bitline::llm {

const Registry<AllReduceAlgorithm>& all_reduce_algorithms() {
  static const Registry<AllReduceAlgorithm> r(
      "all-reduce algorithm",
      {{"ring", "NCCL's default ring over all GPUs of the group, its node crossings spread over the GPUs' NICs (pipelined)",
        AllReduceAlgorithm::Ring},
       {"hierarchical", "reduce-scatter in the node, all-reduce across nodes, all-gather in the node (one after the other)",
        AllReduceAlgorithm::Hierarchical}});
  return r;
}

const Registry<AllToAllAlgorithm>& all_to_all_algorithms() {
  static const Registry<AllToAllAlgorithm> r(
      "all-to-all algorithm", {{"nccl", "NCCL's default: one message per destination GPU, across nodes too", AllToAllAlgorithm::Nccl},
                               {"dedup", "DeepEP-style: one message per destination node over RDMA, forwarded inside that node over NVLink",
                                AllToAllAlgorithm::Dedup}});
  return r;
}

const Registry<CollectiveModel>& collective_models() {
  static const Registry<CollectiveModel> r(
      "collective model",
      {{"links", "the ring formula at the NVLink bandwidth per direction plus a fixed latency (llm.network.nvlink, nvlink_latency)",
        CollectiveModel::Links},
       {"measured", "a measured nccl-tests bus-bandwidth curve by message size (llm.network.busbw), with its small-message floor",
        CollectiveModel::Measured}});
  return r;
}

const Registry<NodeAllReduce>& node_all_reduces() {
  static const Registry<NodeAllReduce> r(
      "in-node all-reduce", {{"ring", "NCCL's ring: the measured curve llm.network.busbw", NodeAllReduce::Ring},
                             {"nvls",
                              "NCCL with NVLink SHARP (the NVSwitch reduces): at each size the faster of llm.network.busbw and "
                              "llm.network.nvls_busbw, as NCCL's tuner picks; needs collectives = measured and nvlink_sharp",
                              NodeAllReduce::Nvls}});
  return r;
}

std::string to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce:
      return "all_reduce";
    case CollectiveKind::AllGather:
      return "all_gather";
    case CollectiveKind::ReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::AllToAll:
      return "all_to_all";
  }
  throw std::logic_error("unhandled collective kind");
}

namespace {
Time transfer(double bytes, Bandwidth bw) { return bytes > 0 ? ps(bytes / bw.raw() * 1e12) : Time{}; }

void check_curve(const Table& t, const char* key) {
  if (t.points.size() < 2) throw ConfigError(fmt::format("{}: a measured curve needs at least two [bytes, B/s] points", key));
  // Bounded as every other bandwidth and size (1 PB/s; 1 PiB): past them a collective would take no time. (A config's
  // table has its sizes in increasing order already: parse_param(Table).)
  constexpr double kMaxBusbw = 1e15, kMaxSize = 1125899906842624.0;
  for (const auto& [x, y] : t.points) {
    if (!(x > 0) || !(y > 0)) throw ConfigError(fmt::format("{}: [{}, {}]: message sizes and bus bandwidths must be positive", key, x, y));
    if (x > kMaxSize || y > kMaxBusbw)
      throw ConfigError(fmt::format("{}: [{}, {}]: a message size is at most 1 PiB ({}) and a bus bandwidth at most 1 PB/s ({})", key, x, y,
                                    kMaxSize, kMaxBusbw));
  }
}
}  // namespace

Network::Network(const NetworkParams& p) : p_(p) {
  if (*p_.collectives == CollectiveModel::Measured) check_curve(p_.busbw, "llm.network.busbw");
  if (*p_.node_all_reduce == NodeAllReduce::Nvls) {
    if (*p_.collectives != CollectiveModel::Measured)
      throw ConfigError(
          "llm.network.node_all_reduce = nvls needs llm.network.collectives = measured (NVLink SHARP is timed from its "
          "measured curve llm.network.nvls_busbw; collectives is 'links')");
    if (!p_.nvlink_sharp)
      throw ConfigError(
          "llm.network.node_all_reduce = nvls: this node's NVSwitches have no NVLink SHARP (llm.network.nvlink_sharp = "
          "false, e.g. the A100's NVSwitch 2)");
    check_curve(p_.nvls_busbw, "llm.network.nvls_busbw");
  }
}

Time Network::measured_time(const Table& curve, double bus, double bytes) const {
  // log-log interpolation of busbw(S); below the smallest size, that size's time (the latency floor); above the largest,
  // its bandwidth.
  const auto& pts = curve.points;
  const double floor_s = bus * pts.front().first / pts.front().second;
  double bw = pts.back().second;
  if (bytes <= pts.front().first) {
    bw = pts.front().second;
  } else {
    for (size_t i = 1; i < pts.size(); ++i)
      if (bytes <= pts[i].first) {
        const auto [x0, y0] = pts[i - 1];
        const auto [x1, y1] = pts[i];
        const double f = std::log(bytes / x0) / std::log(x1 / x0);
        bw = std::exp(std::log(y0) + f * (std::log(y1) - std::log(y0)));
        break;
      }
  }
  return ps(std::max(floor_s, bus * bytes / bw) * 1e12);
}

double bus_factor(CollectiveKind k, int64_t gpus) {
  if (k == CollectiveKind::AllToAll) throw std::logic_error("bus_factor: the all-to-all has none");
  return (k == CollectiveKind::AllReduce ? 2.0 : 1.0) * double(gpus - 1) / double(gpus);
}

Collective Network::reduction(Bytes s, int64_t gpus, CollectiveKind kind) const {
  Collective c;
  c.kind = kind;
  if (gpus <= 1 || s.raw() <= 0) return c;
  const int64_t g = std::min(gpus, p_.gpus_per_node), n = (gpus + p_.gpus_per_node - 1) / p_.gpus_per_node;
  const double S = double(s.raw());
  double intra = 0, inter = 0;
  Time t{};
  if (n == 1) {  // inside a node both algorithms are the ring
    const double bus = bus_factor(kind, g);
    intra = bus * S;
    switch (*p_.collectives) {
      case CollectiveModel::Links:
        t = transfer(intra, p_.nvlink);
        break;
      case CollectiveModel::Measured: {  // nccl-tests: time = bus factor x S / busbw(S), the curve's floor included
        c.nvlink = Bytes(int64_t(intra));
        c.time = measured_time(p_.busbw, bus, S);
        if (kind == CollectiveKind::AllReduce && *p_.node_all_reduce == NodeAllReduce::Nvls) {
          // NVLink SHARP: each GPU sends its S bytes to the switch and receives the reduced S (multicast).
          const Time nvls = measured_time(p_.nvls_busbw, bus, S);
          if (nvls < c.time) {
            c.time = nvls;
            c.nvlink = Bytes(int64_t(S));
          }
        }
        return c;
      }
    }
  } else {
    switch (*p_.all_reduce) {
      case AllReduceAlgorithm::Ring: {
        const double sent = bus_factor(kind, gpus) * S;
        intra = sent * double(g - 1) / double(g);
        inter = sent / double(g);
        t = std::max(transfer(intra, p_.nvlink), transfer(inter, p_.rdma));
        break;
      }
      case AllReduceAlgorithm::Hierarchical:
        intra = bus_factor(kind, g) * S;
        inter = bus_factor(kind, n) * S / double(g);
        t = transfer(intra, p_.nvlink) + transfer(inter, p_.rdma);
        break;
    }
  }
  c.nvlink = Bytes(int64_t(intra));
  c.rdma = Bytes(int64_t(inter));
  c.time = t + (n > 1 ? p_.rdma_latency : p_.nvlink_latency);
  return c;
}

Collective Network::all_reduce(Bytes s, int64_t gpus) const { return reduction(s, gpus, CollectiveKind::AllReduce); }
Collective Network::all_gather(Bytes gathered, int64_t gpus) const { return reduction(gathered, gpus, CollectiveKind::AllGather); }
Collective Network::reduce_scatter(Bytes whole, int64_t gpus) const { return reduction(whole, gpus, CollectiveKind::ReduceScatter); }

Collective Network::all_to_all(Bytes intra, Bytes inter, bool spans_nodes) const {
  Collective c;
  c.kind = CollectiveKind::AllToAll;
  if (intra.raw() <= 0 && inter.raw() <= 0) return c;
  c.nvlink = intra;
  c.rdma = inter;
  c.time = std::max(transfer(double(intra.raw()), p_.nvlink), transfer(double(inter.raw()), p_.rdma)) +
           (spans_nodes ? p_.rdma_latency : p_.nvlink_latency);
  return c;
}

Collective Network::expert_all_to_all(double tokens, double token_bytes, const ExpertFanout& f, bool spans_nodes) const {
  double intra = tokens * f.node_gpus * token_bytes, inter = 0;
  switch (*p_.all_to_all) {
    case AllToAllAlgorithm::Nccl:
      inter = tokens * f.remote_gpus * token_bytes;
      break;
    case AllToAllAlgorithm::Dedup:
      // One copy per node; the receiving GPU forwards it to the others of its node that need it. By symmetry each
      // GPU relays as many tokens as it sends across, so its NVLink carries those forwards too.
      inter = tokens * f.remote_nodes * token_bytes;
      intra += tokens * f.remote_nodes * f.relays * token_bytes;
      break;
  }
  return all_to_all(Bytes(int64_t(intra)), Bytes(int64_t(inter)), spans_nodes);
}

}  // namespace bitline::llm
