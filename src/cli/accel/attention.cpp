// `bitline accel attention`: attention kernels alone on one GPU kind, as the step model times them.
// --prefill: FlashAttention (llm::GpuCompute::prefill_attention): a CTA per (request, query head, block of query rows),
// its loop over the KV blocks it sees, the softmax's exponentials, the balance over the SMs; on a kind that sets
// llm.compute.qkv_preprocessing, the input pass before it and the whole call (kernel, pass, launch gaps). --decode: split-KV decode
// attention (FlashDecoding; llm::GpuCompute::decode_attention): the math of the CTAs against the KV cache and the query
// and output read at the achievable HBM bandwidth, the longer of the two. For checking the kernel model against
// published kernel figures (docs/calibration.md, "Attention kernels against FlashAttention-3's figures").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "llm/gpu.hpp"
#include "llm/model.hpp"
#include "llm/step.hpp"

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
  std::string system = "h100", mask = "causal", precision = "bf16", json;
  std::vector<std::string> shapes, decodes;
};

struct AttentionShape {
  int64_t requests = 0, heads = 0, tokens = 0, head_dim = 0;
};

/// One decode step's attention of a layer: `requests` queries of one token, each over `tokens` of KV.
struct DecodeShape {
  int64_t requests = 0, heads = 0, kv_heads = 0, tokens = 0, head_dim = 0;
};

// The whole numbers of a `flag` argument "AxBx..." ('form'), each in [1, max[i]]; ConfigError naming the argument
// otherwise. `what` lists the dimensions, e.g. "four whole numbers (requests x ...), e.g. 1x32x2048x128".
template <size_t N>
std::vector<int64_t> parse_kernel_dims(const char* flag, const std::string& arg, const char* form, const std::string& what,
                                       const int64_t (&max)[N], const char* const (&names)[N]) {
  const auto d = parse_dims(arg, N, fmt::format("{} '{}': expected {}, {}", flag, arg, form, what));
  for (size_t i = 0; i < N; ++i)
    if (d[i] < 1 || d[i] > max[i]) throw ConfigError(fmt::format("{} '{}': {} = {} is outside [1, {}]", flag, arg, names[i], d[i], max[i]));
  return d;
}

constexpr int64_t kMaxDim[] = {1 << 20, 1 << 12, 1 << 20, 1 << 12};  // requests, heads, tokens, head dim
constexpr const char* kDimName[] = {"requests", "heads", "tokens", "head dim"};

// "BxHxSxD" -> the shape.
AttentionShape parse_shape(const std::string& arg) {
  const auto d =
      parse_kernel_dims("--prefill", arg, "BxHxSxD", "four whole numbers (requests x query heads x tokens x head dim), e.g. 1x32x2048x128",
                        kMaxDim, kDimName);
  return AttentionShape{d[0], d[1], d[2], d[3]};
}

constexpr int64_t kMaxDecodeDim[] = {1 << 20, 1 << 12, 1 << 12, 1 << 24, 1 << 12};  // requests, heads, KV heads, KV tokens, head dim
constexpr const char* kDecodeDimName[] = {"requests", "query heads", "KV heads", "KV tokens", "head dim"};

// "BxHxKxSxD" -> the shape; the query heads must be whole groups of the KV heads.
DecodeShape parse_decode(const std::string& arg) {
  const auto d = parse_kernel_dims("--decode", arg, "BxHxKxSxD",
                                   "five whole numbers (requests x query heads x KV heads x KV tokens x head dim), e.g. 64x64x8x2048x128",
                                   kMaxDecodeDim, kDecodeDimName);
  if (d[1] % d[2] != 0)
    throw ConfigError(fmt::format("--decode '{}': {} query heads are not a whole number of groups of the {} KV heads", arg, d[1], d[2]));
  return DecodeShape{d[0], d[1], d[2], d[3], d[4]};
}

/// A decode attention kernel as a step times it on a GPU whose KV is in HBM: its math, its bytes, the longer.
struct DecodeTiming {
  double math_s = 0, transfer_s = 0, bytes = 0, flops = 0;
  int64_t ctas = 0;
  double time_s() const { return std::max(math_s, transfer_s); }
};

/// The kind's achievable HBM rate (B/s) for a kernel's reads and writes; 0 on an HBM-less GPU.
double hbm_rate(const KindParams& k) {
  return k.system.hbm.bandwidth_per_stack.raw() * double(k.system.hbm.stacks) * k.llm.compute.hbm_efficiency;
}

DecodeTiming time_decode(const GpuCompute& gpu, const KindParams& k, const DecodeShape& s, int64_t kv_value_bytes) {
  DecodeTiming t;
  const double group = double(s.heads / s.kv_heads);
  const std::vector<int64_t> contexts(size_t(s.requests), s.tokens);
  t.flops = 4.0 * double(s.tokens) * double(s.heads) * double(s.head_dim) * double(s.requests);
  // The KV cache (K and V of every token and KV head) and, as the step counts them, the query read and the output
  // written in 16-bit (llm/step.cpp: the attention op's activation bytes).
  const double kv = double(s.requests) * double(s.tokens) * 2.0 * double(s.kv_heads) * double(s.head_dim) * double(kv_value_bytes);
  t.math_s =
      to_s(gpu.decode_attention(contexts, s.kv_heads, group, 4.0 * double(s.head_dim), t.flops, group, kv_value_bytes == 1 ? kv : 0.0));
  t.bytes = kv + double(s.requests) * double(s.heads) * double(s.head_dim) * 4.0;
  const double hbm = hbm_rate(k);
  if (!(hbm > 0))
    throw ConfigError(fmt::format("GPU kind '{}' has no HBM (hbm.stacks = {}): a decode attention kernel alone is timed with its KV in HBM",
                                  k.kind, k.system.hbm.stacks));
  t.transfer_s = t.bytes / hbm + to_s(k.system.hbm.latency);
  t.ctas = gpu.decode_attention_ctas(contexts, s.kv_heads);
  return t;
}

void run_attention(const KindOptions& ko, const AttentionOpts& o) {
  check_one_gpu_kind(o.system, "an attention kernel");
  if (o.shapes.empty() && o.decodes.empty()) throw ConfigError("accel attention: give at least one --prefill or --decode kernel");
  const AttentionMask mask = attention_masks().at(o.mask, "--mask");
  const bool causal = mask == AttentionMask::Causal;
  const Precision precision = precisions().at(o.precision, "--precision");
  if (precision == Precision::Model) throw ConfigError("--precision model: a kernel alone has no model; give bf16, fp16, fp8 or fp4");
  const int64_t kv_value_bytes = with_precision(ModelConfig{}, precision).kv_value_bytes;
  std::vector<AttentionShape> shapes;
  for (const auto& a : o.shapes) shapes.push_back(parse_shape(a));
  std::vector<DecodeShape> decodes;
  for (const auto& a : o.decodes) decodes.push_back(parse_decode(a));
  if (!o.json.empty()) check_json_output(o.json);
  check_distinct_files({{"--json", o.json}}, input_files(ko, {}, {o.system}));
  const KindParams k = ko.load(o.system);
  const GpuCompute gpu(k.system.gpu.bf16_flops, k.llm.compute);
  // Decode kernels: at most 2^20 requests are summed; one over 10^6 s is refused before anything is printed.
  std::vector<DecodeTiming> dec;
  for (const DecodeShape& s : decodes) {
    dec.push_back(time_decode(gpu, k, s, kv_value_bytes));
    if (!(dec.back().time_s() < 1e6))
      throw OverflowError(fmt::format("--decode {}x{}x{}x{}x{} on GPU kind '{}' would take more than 1e6 s (the limit)", s.requests,
                                      s.heads, s.kv_heads, s.tokens, s.head_dim, k.kind));
  }
  // Every kernel is timed (or refused) before anything is printed: at most 2^20 tokens / attention_block CTAs per
  // (request, head) are summed, and a kernel that would take 10^6 s or more is refused.
  std::vector<double> secs;
  for (const AttentionShape& s : shapes) {
    const double t = gpu.prefill_attention_s(s.requests, s.heads, 0, s.tokens, 4.0 * double(s.head_dim), double(s.tokens), causal);
    if (!(t > 0 && t < 1e6))
      throw OverflowError(fmt::format("--prefill {}x{}x{}x{} on GPU kind '{}' would take more than 1e6 s (the limit)", s.requests, s.heads,
                                      s.tokens, s.head_dim, k.kind));
    secs.push_back(t);
  }
  // The attention's input pass where the kind times one (llm.compute.qkv_preprocessing; llm/step.cpp): a multi-head
  // layer's Q, K and V read and Q and K written, 16-bit, at the achievable HBM rate (none on an HBM-less GPU).
  const bool pass = k.llm.compute.qkv_preprocessing;
  const double hbm = hbm_rate(k);
  const double gap_us = to_us(k.llm.compute.kernel_overhead);
  Json rows = Json::array();
  if (!shapes.empty()) {
    fmt::print("Prefill attention alone on {} (FlashAttention, {} mask, 16-bit math; kernel durations, without the {:g} us launch gap)\n",
               k.kind, o.mask, gap_us);
    if (pass)
      fmt::print(
          "  pass: the input pass before it (llm.compute.qkv_preprocessing: Q, K, V read and Q, K written, 16-bit, H KV heads);\n"
          "  call: the attention kernel, the pass and their 3 launch gaps\n");
    fmt::print("{:>8} {:>6} {:>8} {:>5} {:>9} {:>12} {:>9}", "requests", "heads", "tokens", "d", "CTAs", "time us", "TFLOP/s");
    if (pass) fmt::print(" {:>10} {:>10}", "pass us", "call us");
    fmt::print("\n");
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const AttentionShape& s = shapes[i];
    // FLOPs as FlashAttention's benchmarks count them: 4 S^2 d per request and head, half of it under the causal mask.
    const double flops =
        4.0 * double(s.tokens) * double(s.tokens) * double(s.head_dim) * double(s.heads) * double(s.requests) * (causal ? 0.5 : 1.0);
    const int64_t block = std::max<int64_t>(k.llm.compute.attention_block, 1);
    const int64_t ctas = s.requests * s.heads * ((s.tokens + block - 1) / block);
    const double tflops = flops / secs[i] / 1e12;
    const double pass_bytes =
        qkv_preprocessing_bytes(double(s.requests) * double(s.tokens), double(s.heads), double(s.heads), double(s.head_dim));
    const double pass_us = pass && hbm > 0 ? pass_bytes / hbm * 1e6 : 0.0;
    const double call_us = secs[i] * 1e6 + pass_us + (pass ? 3.0 : 2.0) * gap_us;
    fmt::print("{:>8} {:>6} {:>8} {:>5} {:>9} {:>12.2f} {:>9.1f}", s.requests, s.heads, s.tokens, s.head_dim, ctas, secs[i] * 1e6, tflops);
    if (pass) fmt::print(" {:>10.2f} {:>10.2f}", pass_us, call_us);
    fmt::print("\n");
    rows.push_back({{"requests", s.requests},
                    {"heads", s.heads},
                    {"tokens", s.tokens},
                    {"head_dim", s.head_dim},
                    {"mask", o.mask},
                    {"ctas", ctas},
                    {"time_us", secs[i] * 1e6},
                    {"flops", flops},
                    {"tflops", tflops},
                    {"input_pass_us", pass_us},
                    {"call_us", call_us}});
  }
  Json drows = Json::array();
  if (!decodes.empty()) {
    fmt::print(
        "Decode attention alone on {} (split-KV, one query token per request, {} KV of {} B a value; kernel durations, without "
        "the 2 x {:g} us launch gaps of its two kernels)\n",
        k.kind, o.precision, kv_value_bytes, to_us(k.llm.compute.kernel_overhead));
    fmt::print("{:>8} {:>6} {:>8} {:>9} {:>5} {:>7} {:>10} {:>10} {:>10} {:>9} {:>8}\n", "requests", "heads", "kv heads", "kv tokens", "d",
               "CTAs", "MB", "math us", "time us", "GB/s", "bound");
  }
  for (size_t i = 0; i < decodes.size(); ++i) {
    const DecodeShape& s = decodes[i];
    const DecodeTiming& t = dec[i];
    const std::string bound = t.math_s > t.transfer_s ? "compute" : "memory";
    const double gbs = t.bytes / t.time_s() / 1e9;
    fmt::print("{:>8} {:>6} {:>8} {:>9} {:>5} {:>7} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.1f} {:>8}\n", s.requests, s.heads, s.kv_heads,
               s.tokens, s.head_dim, t.ctas, t.bytes * 1e-6, t.math_s * 1e6, t.time_s() * 1e6, gbs, bound);
    drows.push_back({{"requests", s.requests},
                     {"heads", s.heads},
                     {"kv_heads", s.kv_heads},
                     {"kv_tokens", s.tokens},
                     {"head_dim", s.head_dim},
                     {"ctas", t.ctas},
                     {"bytes", t.bytes},
                     {"math_us", t.math_s * 1e6},
                     {"transfer_us", t.transfer_s * 1e6},
                     {"time_us", t.time_s() * 1e6},
                     {"launch_gaps_us", 2.0 * to_us(k.llm.compute.kernel_overhead)},
                     {"gb_per_s", gbs},
                     {"bound", bound}});
  }
  if (!o.json.empty()) {
    std::map<std::string, KindParams> ks{{k.kind, k}};
    write_json_file(o.json, Json{{"kind", k.kind},
                                 {"mask", o.mask},
                                 {"precision", o.precision},
                                 {"prefill", rows},
                                 {"decode", drows},
                                 {"config", config_json(ks, &ko)}});
  }
}

}  // namespace

void add_attention(CLI::App& accel) {
  auto* cmd = accel.add_subcommand(
      "attention",
      "attention kernels alone on one GPU kind: prefill (FlashAttention's CTAs and time) and decode (split-KV: math, bytes, bound)");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<AttentionOpts>();
  k->add_to(*cmd);
  cmd->add_option("--system", o->system, "the GPU kind (a file of configs/gpus/, or the path of a kind's YAML file)")
      ->capture_default_str();
  cmd->add_option("--prefill", o->shapes, "BxHxSxD: B requests x H query heads x S tokens x D head dim, no earlier KV (repeatable)");
  cmd->add_option("--decode", o->decodes,
                  "BxHxKxSxD: B requests of one query token x H query heads x K KV heads x S KV tokens x D head dim (repeatable)");
  cmd->add_option("--precision", o->precision, "--decode: the KV cache's number format, bf16, fp16 (2 B a value), fp8 or fp4 (1 B)")
      ->capture_default_str();
  cmd->add_option("--mask", o->mask, "causal (an LLM's prefill) or none (every row sees every key)")->capture_default_str();
  cmd->add_option("--json", o->json, "write the kernels (and the resolved config) to this file");
  cmd->callback([k, o] { run_attention(*k, *o); });
}

}  // namespace bitline::cli::accel
