// libFuzzer harness: the multi-turn sessions trace reader (JSON Lines).
//
// Input: the bytes of a trace file. It goes through read_trace (the CLI's
// path for `accel sessions --trace FILE`); a trace that reads is replayed
// against an LRU KV store (simulate_sessions) with a footprint of 1 KiB per
// token, and the result must be a rate in [0, 1] with no negative token count.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "harness.hpp"
#include "llm/sessions.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bitline::fuzz::ScratchFile scratch(".jsonl");
  const auto& path = scratch.write(data, size);
  bitline::fuzz::expect_documented_errors([&] {
    const std::vector<bitline::llm::Turn> trace = bitline::llm::read_trace(path);
    // The footprint of the analytic (HBM) path of run_sessions: tokens x bytes per token, an error past int64.
    auto footprint = [](int64_t tokens) {
      constexpr int64_t kPerToken = 1024;
      if (tokens > std::numeric_limits<int64_t>::max() / kPerToken) throw bitline::ConfigError("fuzz footprint: token count too large");
      return bitline::Bytes(tokens * kPerToken);
    };
    const bitline::llm::SessionResult r = bitline::llm::simulate_sessions(trace, bitline::GiB(64), footprint);
    if (!(r.hit_rate >= 0 && r.hit_rate <= 1)) bitline::fuzz::property_failed("hit rate outside [0, 1]");
    if (!(r.turn_hit_rate >= 0 && r.turn_hit_rate <= 1)) bitline::fuzz::property_failed("turn hit rate outside [0, 1]");
    if (r.recomputed_tokens < 0 || r.reused_tokens < 0 || r.reusable_tokens < 0) bitline::fuzz::property_failed("negative token count");
    if (r.turns != int64_t(trace.size())) bitline::fuzz::property_failed("not every turn replayed");
  });
  return 0;
}
