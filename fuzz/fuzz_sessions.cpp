// libFuzzer harness: the multi-turn sessions trace readers (JSON Lines, bitline's
// sessions or Mooncake's requests with hash_ids), and the serving simulation's trace
// readers over the same bytes (serve::read_trace's JSON Lines path with its prefix
// keys; read_csv_trace's Azure and BurstGPT CSV).
//
// Input: the bytes of a trace file. It goes through read_any_trace (the CLI's
// path for `accel sessions --trace FILE`); a trace that reads is replayed
// against an LRU KV store (simulate_sessions, a footprint of 1 KiB per token)
// or an LRU prefix cache (simulate_prefix_cache, 512 KiB blocks), and the
// result must be a rate in [0, 1] with no negative token count.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <variant>

#include "harness.hpp"
#include "llm/sessions.hpp"
#include "serve/workload.hpp"

namespace {
/// What every request a serving trace reader returns must satisfy: numbered in order, sorted arrivals from 0 up,
/// lengths within bounds, prefix keys in whole units.
void check_requests(const std::vector<bitline::serve::Request>& reqs) {
  using namespace bitline::serve;
  if (reqs.empty()) bitline::fuzz::property_failed("a trace read with no request");
  for (size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    if (r.id != int64_t(i)) bitline::fuzz::property_failed("requests not numbered in order");
    if (r.arrival.raw() < 0 || (i > 0 && r.arrival < reqs[i - 1].arrival)) bitline::fuzz::property_failed("arrivals not sorted from 0");
    if (r.input < 1 || r.output < 1 || r.input > kMaxTokens || r.output > kMaxTokens)
      bitline::fuzz::property_failed("length out of bounds");
    if (!r.prefix.empty() && r.prefix_unit < 1) bitline::fuzz::property_failed("prefix keys without a unit");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bitline::fuzz::ScratchFile scratch(".jsonl");
  const auto& path = scratch.write(data, size);
  bitline::fuzz::expect_documented_errors([&] {
    const bitline::llm::Trace any = bitline::llm::read_any_trace(path, 512);
    bitline::llm::SessionResult r;
    int64_t records = 0;
    if (const auto* trace = std::get_if<std::vector<bitline::llm::Turn>>(&any)) {
      // The footprint of the analytic (HBM) path of run_sessions: tokens x bytes per token, an error past int64.
      auto footprint = [](int64_t tokens) {
        constexpr int64_t kPerToken = 1024;
        if (tokens > std::numeric_limits<int64_t>::max() / kPerToken) throw bitline::ConfigError("fuzz footprint: token count too large");
        return bitline::Bytes(tokens * kPerToken);
      };
      r = bitline::llm::simulate_sessions(*trace, bitline::GiB(64), footprint);
      records = int64_t(trace->size());
    } else {
      const auto& pt = std::get<bitline::llm::PrefixTrace>(any);
      r = bitline::llm::simulate_prefix_cache(pt, bitline::MiB(64), bitline::KiB(512));
      records = int64_t(pt.requests.size());
    }
    bitline::llm::trace_summary(any);
    if (!(r.hit_rate >= 0 && r.hit_rate <= 1)) bitline::fuzz::property_failed("hit rate outside [0, 1]");
    if (!(r.turn_hit_rate >= 0 && r.turn_hit_rate <= 1)) bitline::fuzz::property_failed("turn hit rate outside [0, 1]");
    if (r.recomputed_tokens < 0 || r.reused_tokens < 0 || r.reusable_tokens < 0) bitline::fuzz::property_failed("negative token count");
    if (r.turns != records) bitline::fuzz::property_failed("not every turn replayed");
  });
  bitline::fuzz::expect_documented_errors([&] { check_requests(bitline::serve::read_trace(path, 0)); });
  bitline::fuzz::expect_documented_errors([&] {
    bitline::serve::CsvTraceInfo info;
    const auto reqs = bitline::serve::read_csv_trace(path, 0, &info);
    check_requests(reqs);
    if (info.skipped_failed < 0) bitline::fuzz::property_failed("negative skipped rows");
  });
  scratch.remove();
  return 0;
}
