#include "llm/gpu.hpp"

#include <algorithm>

namespace bitline::llm {

double GpuCompute::utilisation(double rows) const {
  rows = std::max(rows, 1.0);
  return p_.util_max * rows / (rows + p_.util_half_rows);
}

Time GpuCompute::time(double flops, double rows, bool fp8) const {
  if (flops <= 0) return Time{};
  return ps(flops / (peak(fp8) * utilisation(rows)) * 1e12);
}

namespace {
Time transfer(double bytes, Bandwidth bw) { return bytes > 0 ? ps(bytes / bw.raw() * 1e12) : Time{}; }
}  // namespace

Collective Network::all_reduce(Bytes s, int64_t gpus) const {
  Collective c;
  if (gpus <= 1 || s.raw() <= 0) return c;
  const int64_t g = std::min(gpus, p_.gpus_per_node), n = (gpus + p_.gpus_per_node - 1) / p_.gpus_per_node;
  const double intra = 2.0 * double(g - 1) / double(g) * double(s.raw());
  const double inter = n > 1 ? 2.0 * double(n - 1) / double(n) * double(s.raw()) / double(g) : 0.0;
  c.nvlink = Bytes(int64_t(intra));
  c.rdma = Bytes(int64_t(inter));
  c.time = transfer(intra, p_.nvlink) + transfer(inter, p_.rdma) + (n > 1 ? p_.rdma_latency : p_.nvlink_latency);
  return c;
}

Collective Network::all_gather(Bytes gathered, int64_t gpus) const {
  Collective c;
  if (gpus <= 1 || gathered.raw() <= 0) return c;
  const int64_t g = std::min(gpus, p_.gpus_per_node), n = (gpus + p_.gpus_per_node - 1) / p_.gpus_per_node;
  const double intra = double(g - 1) / double(g) * double(gathered.raw());
  const double inter = n > 1 ? double(n - 1) / double(n) * double(gathered.raw()) / double(g) : 0.0;
  c.nvlink = Bytes(int64_t(intra));
  c.rdma = Bytes(int64_t(inter));
  c.time = transfer(intra, p_.nvlink) + transfer(inter, p_.rdma) + (n > 1 ? p_.rdma_latency : p_.nvlink_latency);
  return c;
}

Collective Network::all_to_all(Bytes intra, Bytes inter, bool spans_nodes) const {
  Collective c;
  if (intra.raw() <= 0 && inter.raw() <= 0) return c;
  c.nvlink = intra;
  c.rdma = inter;
  c.time = std::max(transfer(double(intra.raw()), p_.nvlink), transfer(double(inter.raw()), p_.rdma)) +
           (spans_nodes ? p_.rdma_latency : p_.nvlink_latency);
  return c;
}

}  // namespace bitline::llm
