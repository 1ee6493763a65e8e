// libFuzzer harness: the multi-turn sessions trace readers (JSON Lines, bitline's
// sessions or Mooncake's requests with hash_ids), and the serving simulation's trace
// readers over the same bytes (serve::read_trace's JSON Lines path with its prefix
// keys; read_csv_trace's Azure and BurstGPT CSV).
//
// Input: the bytes of a trace file. It goes through read_any_trace (the CLI's
// path for `accel sessions --trace FILE`); a trace that reads becomes the
// serving simulation's requests (serve::requests_from_trace, what `accel
// sessions` serves), whose session links must form chains (each later turn
// linked from exactly one earlier request) and whose reusable prefix tokens
// (serve::reusable_prefix_tokens, what the hit rate is measured against) must
// lie in [0, prompt - 1].
#include <cstddef>
#include <cstdint>
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
    bitline::llm::trace_summary(any);
    const auto reqs = bitline::serve::requests_from_trace(any, 0, path.string());
    check_requests(reqs);
    std::vector<int> linked(reqs.size(), 0);
    for (size_t i = 0; i < reqs.size(); ++i) {
      const int64_t next = reqs[i].next_turn;
      if (next < 0) continue;
      if (next >= int64_t(reqs.size()) || next == int64_t(i)) bitline::fuzz::property_failed("a session link out of range");
      if (++linked[size_t(next)] > 1) bitline::fuzz::property_failed("a turn linked from two requests");
    }
    for (size_t i = 0; i < reqs.size(); ++i)
      if (reqs[i].follows != (linked[i] == 1)) bitline::fuzz::property_failed("a later turn without its link, or a link to a first turn");
    const std::vector<int64_t> reusable = bitline::serve::reusable_prefix_tokens(reqs);
    for (size_t i = 0; i < reqs.size(); ++i)
      if (reusable[i] < 0 || reusable[i] > reqs[i].input - 1) bitline::fuzz::property_failed("reusable tokens outside [0, prompt - 1]");
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
