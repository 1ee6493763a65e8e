#include "hbf/experiments.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace bitline::hbf {

WeightSpec synthetic_weights(Bytes total, Bytes tensor) {
  if (total.raw() <= 0) throw ModelError("synthetic weights: the object size must be positive");
  if (tensor.raw() <= 0) throw ModelError("synthetic weights: the tensor size must be positive");
  const int64_t n = total.raw() / tensor.raw() + (total.raw() % tensor.raw() != 0 ? 1 : 0);
  if (n > kMaxSyntheticTensors)
    throw ConfigError(
        fmt::format("--bytes {} / --tensor {}: {} tensors, more than the {} a synthetic object may have; use larger "
                    "tensors",
                    format(total), format(tensor), n, kMaxSyntheticTensors));
  std::vector<std::string> names(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) names[size_t(i)] = fmt::format("experts.{}", i);
  std::vector<uint32_t> decl(static_cast<size_t>(n));  // declaration position -> execution index
  std::iota(decl.begin(), decl.end(), 0u);
  std::sort(decl.begin(), decl.end(), [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  WeightSpec w;
  w.name = fmt::format("synthetic-{}", format(total));
  w.tensors.resize(size_t(n));
  std::vector<uint32_t> pos_of(static_cast<size_t>(n));
  for (size_t p = 0; p < decl.size(); ++p) {
    const uint32_t i = decl[p];
    const int64_t bytes = std::min(tensor.raw(), total.raw() - int64_t(i) * tensor.raw());
    w.tensors[p] = TensorSpec{names[i], Bytes(bytes)};
    pos_of[i] = uint32_t(p);
  }
  w.execution_order.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) w.execution_order[size_t(i)] = pos_of[size_t(i)];
  return w;
}

StreamRun run_stream(const System& sys, const WeightSpec& w) {
  int64_t units = 0, bytes = 0;
  for (const auto& t : w.tensors) units += t.bytes.raw() / sys.megapage().raw() + 1, bytes += t.bytes.raw();
  // (An object larger than the flash is refused by store_weights, before it allocates anything.)
  if (units > kMaxExperimentUnits && bytes <= sys.flash_capacity().raw())
    throw ConfigError(
        fmt::format("--bytes: streaming {} reads about {} megapages of {}, more than the {} one run may simulate "
                    "(about 2 s and 300 MB); stream less, or use larger pages",
                    w.name, units, format(sys.megapage()), kMaxExperimentUnits));
  Runtime rt(sys, Mode::Timing, 1);
  const ObjectId id = rt.store_weights(w);
  const VAddr va = rt.nand_mmap(id);
  StreamRun r;
  r.layout = std::string(sys.hbf().runtime.weight_layout.name());
  r.options = read_options(sys);
  r.tile = Bytes(sys.hyperpage().raw() * sys.hbf().runtime.tile_hyperpages);
  // The execution-order stream cut into tiles of tile_hyperpages x K megapages;
  // a tile may span tensors (with the declaration layout they are not adjacent in the mapping).
  const int64_t unit = sys.megapage().raw(), tile_units = sys.megaplanes() * sys.hbf().runtime.tile_hyperpages;
  std::vector<Access> acc;
  int64_t left = tile_units;
  bool first = true;
  for (uint32_t t : w.resolved_execution_order()) {
    const VAddr base = va + VAddr(rt.tensor_offset(id, t).raw());
    const int64_t bytes = w.tensors[t].bytes.raw();
    for (int64_t off = 0; off < bytes;) {
      const int64_t take = std::min(left * unit, bytes - off);
      acc.push_back(Access{base + VAddr(off), Bytes(take), Time{}, !first});
      first = false;
      off += take;
      left -= (take + unit - 1) / unit;
      if (left == 0) left = tile_units, first = true;
    }
  }
  const ReadPlan plan = rt.read_plan(acc);
  r.tensors = int64_t(w.tensors.size());
  r.tiles = int64_t(plan.tiles.size());
  r.result = simulate_reads(sys, plan, r.options);
  StatsTree stats;
  rt.register_stats(stats);
  r.runtime = stats.dump();
  return r;
}

Json StreamRun::json(const System& sys) const {
  Json j = result.json(sys);
  j["layout"] = layout;
  j["prefetch"] = options.prefetch;
  j["prefetch_distance"] = options.distance;
  j["granularity"] = to_string(options.granularity);
  j["tensors"] = tensors;
  j["tiles"] = tiles;
  j["tile_bytes"] = tile.raw();
  j["stacks"] = sys.stacks();
  j["interface_gb_per_s"] = sys.hbf().timing.interface_bandwidth.raw() * 1e-9;
  j["runtime"] = runtime;
  j["fraction_of_interface"] =
      sys.stacks() > 0 ? result.gb_per_s() / (double(sys.stacks()) * sys.hbf().timing.interface_bandwidth.raw() * 1e-9) : 0.0;
  return j;
}

WriteBwRun run_write_bw(const System& sys, Bytes total, int64_t requests, Granularity g) {
  if (requests <= 0) throw ModelError("write-bw: the number of requests must be positive");
  const int64_t unit = sys.megapage().raw(), k = sys.megaplanes();
  const int64_t hyper = total.raw() / (unit * k);
  if (hyper == 0)
    throw ConfigError(
        fmt::format("--bytes {}: less than one hyperpage ({}), the unit write-bw writes", format(total), format(sys.hyperpage())));
  const int64_t slices = hyper * k;
  if (slices > kMaxExperimentUnits)
    throw ConfigError(
        fmt::format("--bytes {}: writing {} megapages of {}, more than the {} one run may simulate (about 2 s "
                    "and 300 MB)",
                    format(total), slices, format(sys.megapage()), kMaxExperimentUnits));
  if (requests > slices)
    throw ConfigError(fmt::format("--requests {}: more requests than the {} megapages written (each request needs one)", requests, slices));
  Runtime rt(sys, Mode::Timing, 1);
  std::vector<ObjectId> ids;
  for (int64_t r = 0; r < requests; ++r) {
    ids.push_back(rt.kv_create(fmt::format("request{}", r)));
    const int64_t mine = slices / requests + (r < slices % requests ? 1 : 0);
    try {
      rt.kv_append_zeros(ids.back(), 0, Bytes(mine * unit));
    } catch (const ModelError& e) {
      // The KV is staged in HBM until the group write: more than HBM holds is the option's fault, not the model's.
      throw ConfigError(
          fmt::format("--bytes {}: the KV is staged in HBM before GroupWrite programs it, and HBM ({}) cannot "
                      "hold it ({}); give fewer bytes",
                      format(total), format(sys.hbm_capacity()), e.what()));
    }
  }
  const GroupId g_id = rt.group_create(ids);
  const WriteReport rep = rt.group_write(g_id, Remainder::Hold);
  WriteBwRun r;
  r.requests = requests;
  r.hyperpages = rep.hyperpages;
  r.result = simulate_writes(sys, rep.programmed, g);
  return r;
}

Json WriteBwRun::json(const System& sys) const {
  Json j = result.json(sys);
  j["requests"] = requests;
  j["hyperpages"] = hyperpages;
  j["stacks"] = sys.stacks();
  j["program_bound_gb_per_s"] = sys.program_bandwidth().raw() * 1e-9;
  return j;
}

}  // namespace bitline::hbf
