// libFuzzer harness: the multi-turn sessions trace readers (JSON Lines, bitline's
// sessions or Mooncake's requests with hash_ids).
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
  scratch.remove();
  return 0;
}
