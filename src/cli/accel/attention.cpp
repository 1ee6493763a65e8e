// `bitline accel attention`: prefill attention kernels (FlashAttention) alone on one GPU kind, as the step model
// times their math (llm::GpuCompute::prefill_attention): a CTA per (request, query head, block of query rows), its
// loop over the KV blocks it sees, the softmax's exponentials, the balance over the SMs. For checking the kernel model
// against published kernel figures (docs/llm.md, "Attention kernels against FlashAttention-3's figures").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "llm/gpu.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

namespace {

/// Which keys a query row sees.
enum class AttentionMask : uint8_t { Causal, None };

const Registry<AttentionMask>& attention_masks() {
  static const Registry<AttentionMask> r(
      "attention mask", {{"causal", "query row i sees keys 0..i (an LLM's prefill)", AttentionMask::Causal},
                         {"none", "every query row sees every key (FlashAttention's non-causal benchmarks)", AttentionMask::None}});
  return r;
}

struct AttentionOpts {
  std::string system = "h100", mask = "causal", json;
  std::vector<std::string> shapes;
};

struct AttentionShape {
  int64_t requests = 0, heads = 0, tokens = 0, head_dim = 0;
};

constexpr int64_t kMaxDim[] = {1 << 20, 1 << 12, 1 << 20, 1 << 12};  // requests, heads, tokens, head dim
constexpr const char* kDimName[] = {"requests", "heads", "tokens", "head dim"};

// "BxHxSxD" -> the shape; ConfigError naming the argument otherwise.
AttentionShape parse_shape(const std::string& arg) {
  const auto d = parse_dims(arg, 4,
                            fmt::format("--prefill '{}': expected BxHxSxD, four whole numbers (requests x query heads x tokens x "
                                        "head dim), e.g. 1x32x2048x128",
                                        arg));
  for (size_t i = 0; i < 4; ++i)
    if (d[i] < 1 || d[i] > kMaxDim[i])
      throw ConfigError(fmt::format("--prefill '{}': {} = {} is outside [1, {}]", arg, kDimName[i], d[i], kMaxDim[i]));
  return AttentionShape{d[0], d[1], d[2], d[3]};
}

void run_attention(const KindOptions& ko, const AttentionOpts& o) {
  check_one_gpu_kind(o.system, "an attention kernel");
  const AttentionMask mask = attention_masks().at(o.mask, "--mask");
  const bool causal = mask == AttentionMask::Causal;
  std::vector<AttentionShape> shapes;
  for (const auto& a : o.shapes) shapes.push_back(parse_shape(a));
  if (!o.json.empty()) check_json_output(o.json);
  const KindParams k = ko.load(o.system);
  const GpuCompute gpu(k.system.gpu.bf16_flops, k.llm.compute);
  // Every kernel is timed (or refused) before anything is printed: at most 2^20 tokens / attention_block CTAs per
  // (request, head) are summed, and a kernel that would take 10^6 s or more is refused.
  std::vector<double> secs;
  for (const AttentionShape& s : shapes) {
    const double t = gpu.prefill_attention_s(s.requests, s.heads, 0, s.tokens, 4.0 * double(s.head_dim), double(s.tokens), causal);
    if (!(t > 0 && t < 1e6))
      throw ConfigError(fmt::format("--prefill {}x{}x{}x{} on GPU kind '{}' would take {:.3g} s; the limit is 1e6 s", s.requests, s.heads,
                                    s.tokens, s.head_dim, k.kind, t));
    secs.push_back(t);
  }
  fmt::print("Prefill attention alone on {} (FlashAttention, {} mask, 16-bit math; kernel durations, without the {:g} us launch gap)\n",
             k.kind, o.mask, to_us(k.llm.compute.kernel_overhead));
  fmt::print("{:>8} {:>6} {:>8} {:>5} {:>9} {:>12} {:>9}\n", "requests", "heads", "tokens", "d", "CTAs", "time us", "TFLOP/s");
  Json rows = Json::array();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const AttentionShape& s = shapes[i];
    // FLOPs as FlashAttention's benchmarks count them: 4 S^2 d per request and head, half of it under the causal mask.
    const double flops =
        4.0 * double(s.tokens) * double(s.tokens) * double(s.head_dim) * double(s.heads) * double(s.requests) * (causal ? 0.5 : 1.0);
    const int64_t block = std::max<int64_t>(k.llm.compute.attention_block, 1);
    const int64_t ctas = s.requests * s.heads * ((s.tokens + block - 1) / block);
    const double tflops = flops / secs[i] / 1e12;
    fmt::print("{:>8} {:>6} {:>8} {:>5} {:>9} {:>12.2f} {:>9.1f}\n", s.requests, s.heads, s.tokens, s.head_dim, ctas, secs[i] * 1e6,
               tflops);
    rows.push_back({{"requests", s.requests},
                    {"heads", s.heads},
                    {"tokens", s.tokens},
                    {"head_dim", s.head_dim},
                    {"mask", o.mask},
                    {"ctas", ctas},
                    {"time_us", secs[i] * 1e6},
                    {"flops", flops},
                    {"tflops", tflops}});
  }
  if (!o.json.empty()) {
    std::map<std::string, KindParams> ks{{k.kind, k}};
    write_json_file(o.json, Json{{"kind", k.kind}, {"mask", o.mask}, {"prefill", rows}, {"config", config_json(ks, &ko)}});
  }
}

}  // namespace

void add_attention(CLI::App& accel) {
  auto* cmd = accel.add_subcommand(
      "attention",
      "prefill attention kernels alone (requests x heads x tokens x head dim) on one GPU kind: FlashAttention's CTAs and time");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<AttentionOpts>();
  k->add_to(*cmd);
  cmd->add_option("--system", o->system, "the GPU kind (a file of configs/gpus/, or the path of a kind's YAML file)")
      ->capture_default_str();
  cmd->add_option("--prefill", o->shapes, "BxHxSxD: B requests x H query heads x S tokens x D head dim, no earlier KV (repeatable)")
      ->required();
  cmd->add_option("--mask", o->mask, "causal (an LLM's prefill) or none (every row sees every key)")->capture_default_str();
  cmd->add_option("--json", o->json, "write the kernels (and the resolved config) to this file");
  cmd->callback([k, o] { run_attention(*k, *o); });
}

}  // namespace bitline::cli::accel
