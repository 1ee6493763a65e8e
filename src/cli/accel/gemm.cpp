// `bitline accel gemm`: GEMM kernels alone on one GPU kind, as the step model times them (llm::time_gemm): the
// library tile, split-K and waves chosen, the math against the transfers, the bound. For checking the kernel model
// against measured kernel times (docs/calibration.md, "GEMM kernels against measured kernel times").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "llm/gemm.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

namespace {

struct GemmOpts {
  std::string system = "h100", precision = "bf16", json;
  std::vector<std::string> gemms;
};

// "MxKxN" -> the shape; ConfigError naming the argument otherwise.
GemmShape parse_shape(const std::string& arg) {
  const auto d = parse_dims(
      arg, 3,
      fmt::format("--gemm '{}': expected MxKxN, three whole numbers in decimal (rows x inputs x outputs), e.g. 128x4096x12288", arg));
  return GemmShape{double(d[0]), double(d[2]), double(d[1]), 1};
}

void run_gemms(const KindOptions& ko, const GemmOpts& o) {
  check_one_gpu_kind(o.system, "a GEMM");
  const Precision p = precisions().at(o.precision, "--precision");
  std::vector<GemmShape> shapes;
  for (const auto& g : o.gemms) shapes.push_back(parse_shape(g));
  if (!o.json.empty()) check_json_output(o.json);
  check_distinct_files({{"--json", o.json}}, input_files(ko, {}, {o.system}));
  const KindParams k = ko.load(o.system);
  std::vector<GemmTiming> timed;  // every GEMM is timed (or refused) before anything is printed
  for (const GemmShape& s : shapes) timed.push_back(time_gemm(k, s, p));
  Json rows = Json::array();
  fmt::print("GEMMs alone on {} ({}; weights in HBM; kernel durations, without the {:g} us launch gap)\n", k.kind, o.precision,
             to_us(k.llm.compute.kernel_overhead));
  fmt::print("{:>8} {:>7} {:>7} {:>9} {:>5} {:>5} {:>6} {:>10} {:>10} {:>10} {:>9} {:>8}  {}\n", "M", "K", "N", "tile", "split", "waves",
             "CTAs", "math us", "bytes us", "time us", "TFLOP/s", "GB/s", "bound");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GemmShape& s = shapes[i];
    const GemmTiming& t = timed[i];
    const double sec = to_s(t.time), bytes = t.weight_bytes + t.act_bytes;
    const char* bound = GemmTiming::name(t.bound());
    fmt::print("{:>8} {:>7} {:>7} {:>9} {:>5} {:>5} {:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.1f} {:>8.0f}  {}\n", s.m, s.k, s.n,
               fmt::format("{}x{}", t.kernel.tile_m, t.kernel.tile_n), t.kernel.split, t.kernel.waves, t.kernel.ctas, to_us(t.kernel.math),
               to_us(t.transfer), to_us(t.time), t.flops / sec / 1e12, bytes / sec / 1e9, bound);
    rows.push_back({{"m", s.m},
                    {"k", s.k},
                    {"n", s.n},
                    {"tile_m", t.kernel.tile_m},
                    {"tile_n", t.kernel.tile_n},
                    {"split_k", t.kernel.split},
                    {"ctas", t.kernel.ctas},
                    {"waves", t.kernel.waves},
                    {"math_us", to_us(t.kernel.math)},
                    {"weight_stream_us", to_us(t.weight_stream)},
                    {"transfer_us", to_us(t.transfer)},
                    {"time_us", to_us(t.time)},
                    {"flops", t.flops},
                    {"weight_bytes", t.weight_bytes},
                    {"activation_bytes", t.act_bytes},
                    {"tflops", t.flops / sec / 1e12},
                    {"gb_per_s", bytes / sec / 1e9},
                    {"bound", bound}});
  }
  if (!o.json.empty()) {
    std::map<std::string, KindParams> kinds{{k.kind, k}};
    write_json_file(o.json, Json{{"kind", k.kind}, {"precision", o.precision}, {"gemms", rows}, {"config", config_json(kinds, &ko)}});
  }
}

}  // namespace

void add_gemm(CLI::App& accel) {
  auto* cmd =
      accel.add_subcommand("gemm", "GEMM kernels alone (M x K x N) on one GPU kind: the tile, split-K and waves chosen, math vs transfers");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<GemmOpts>();
  k->add_to(*cmd);
  cmd->add_option("--system", o->system, "the GPU kind (a file of configs/gpus/, or the path of a kind's YAML file)")
      ->capture_default_str();
  cmd->add_option("--gemm", o->gemms, "MxKxN: M rows (tokens) x K inputs x N outputs, the K x N weights in HBM (repeatable)")->required();
  cmd->add_option("--precision", o->precision, "number format of the weights and the math: bf16, fp16, fp8, fp4")->capture_default_str();
  cmd->add_option("--json", o->json, "write the kernels (and the resolved config) to this file");
  cmd->callback([k, o] { run_gemms(*k, *o); });
}

}  // namespace bitline::cli::accel
