#include "serve/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_io.hpp"

namespace bitline::serve {

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

std::string percentile_key(double p) {
  std::string s = fmt::format("p{:g}", p);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

Json distribution(std::vector<double> v, const std::vector<double>& extra) {
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = v.empty() ? 0.0 : sum / double(v.size());
  double squares = 0;  // about the mean (two passes: no cancellation)
  for (double x : v) squares += (x - mean) * (x - mean);
  Json j = {{"mean", mean},
            {"std", v.empty() ? 0.0 : std::sqrt(squares / double(v.size()))},
            {"min", v.empty() ? 0.0 : *std::min_element(v.begin(), v.end())},
            {"max", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())},
            {"p50", percentile(v, 0.50)},
            {"p90", percentile(v, 0.90)},
            {"p95", percentile(v, 0.95)},
            {"p99", percentile(v, 0.99)},
            {"p99_9", percentile(v, 0.999)},
            {"count", v.size()}};
  for (double p : extra) j[percentile_key(p)] = percentile(v, p / 100);
  return j;
}

Json distribution(std::vector<std::pair<double, int64_t>> v, const std::vector<double>& extra) {
  std::sort(v.begin(), v.end());
  int64_t n = 0;
  double sum = 0;
  for (const auto& [x, c] : v) n += c, sum += x * double(c);
  // The k-th smallest value (0-based) of the expanded list.
  const auto at = [&](int64_t k) {
    for (const auto& [x, c] : v) {
      if (k < c) return x;
      k -= c;
    }
    return v.back().first;
  };
  const auto q = [&](double p) {
    if (n == 0) return 0.0;
    const double pos = p * double(n - 1);
    const int64_t lo = int64_t(std::floor(pos));
    const double a = at(lo), b = at(std::min(lo + 1, n - 1));
    return a + (pos - double(lo)) * (b - a);
  };
  const double mean = n > 0 ? sum / double(n) : 0.0;
  double squares = 0;
  for (const auto& [x, c] : v) squares += (x - mean) * (x - mean) * double(c);
  Json j = {{"mean", mean},
            {"std", n > 0 ? std::sqrt(squares / double(n)) : 0.0},
            {"min", n > 0 ? v.front().first : 0.0},
            {"max", n > 0 ? v.back().first : 0.0},
            {"p50", q(0.50)},
            {"p90", q(0.90)},
            {"p95", q(0.95)},
            {"p99", q(0.99)},
            {"p99_9", q(0.999)},
            {"count", n}};
  for (double p : extra) j[percentile_key(p)] = q(p / 100);
  return j;
}

namespace {
bool meets(const RequestRecord& q, const Slo& slo) {
  if (slo.ttft_ms > 0 && q.ttft_s() * 1e3 > slo.ttft_ms) return false;
  if (slo.tpot_ms > 0 && q.output > 1 && q.tpot_s() * 1e3 > slo.tpot_ms) return false;
  return true;
}
}  // namespace

Json summary(const SimResult& r, const Slo& slo, const std::vector<double>& percentiles) {
  std::vector<double> ttft, tpot, e2e, queue, itl_mean, itl_max, energy;
  int64_t out_tokens = 0, in_tokens = 0, good = 0;
  for (const auto& q : r.requests) {
    ttft.push_back(q.ttft_s() * 1e3);
    e2e.push_back(q.e2e_s() * 1e3);
    queue.push_back(q.queueing_s() * 1e3);
    if (q.output > 1) tpot.push_back(q.tpot_s() * 1e3);
    energy.push_back(q.energy_j);
    out_tokens += q.output;
    in_tokens += q.input;
    good += meets(q, slo) ? 1 : 0;
  }
  const double span = r.makespan_s();
  const double n = double(r.requests.size());
  Json s;
  s["requests"] = r.requests.size();
  s["ttft_ms"] = distribution(ttft, percentiles);
  s["tpot_ms"] = distribution(tpot, percentiles);
  std::vector<std::pair<double, int64_t>> itl;
  itl.reserve(r.itl.size());
  for (const auto& [gap, c] : r.itl) itl.push_back({double(gap) * 1e-9, c});
  s["itl_ms"] = distribution(std::move(itl), percentiles);
  s["e2e_ms"] = distribution(e2e, percentiles);
  s["queueing_ms"] = distribution(queue);
  s["duration_s"] = span;
  s["output_tokens_per_s"] = span > 0 ? double(out_tokens) / span : 0.0;
  s["input_tokens_per_s"] = span > 0 ? double(in_tokens) / span : 0.0;
  s["total_tokens_per_s"] = span > 0 ? double(in_tokens + out_tokens) / span : 0.0;
  s["requests_per_s"] = span > 0 ? n / span : 0.0;
  s["goodput_requests_per_s"] = span > 0 ? double(good) / span : 0.0;
  s["slo_attainment"] = n > 0 ? double(good) / n : 0.0;
  s["slo"] = {{"ttft_ms", slo.ttft_ms > 0 ? Json(slo.ttft_ms) : Json(nullptr)},
              {"tpot_ms", slo.tpot_ms > 0 ? Json(slo.tpot_ms) : Json(nullptr)}};
  s["mean_requests_in_system"] = span > 0 ? r.requests_time_integral_s / span : 0.0;
  s["engine_busy_fraction"] = span > 0 ? to_s(r.busy) / span : 0.0;
  s["iterations"] = r.iterations;
  s["preemptions"] = r.preemptions;
  s["tokens"] = {{"input", in_tokens},
                 {"output", out_tokens},
                 {"prefilled", r.prefill_tokens},
                 {"recomputed", r.recomputed_tokens},
                 {"decoded", r.decode_tokens},
                 {"emitted", r.emitted_tokens},
                 {"padded_decodes", r.padded_decode_tokens},
                 {"cached", r.cached_tokens}};
  s["shapes_timed"] = {{"decode", r.decode_shapes}, {"prefill", r.prefill_shapes}};
  s["instances"] = Json::array();
  for (const InstanceRecord& i : r.instances) s["instances"].push_back(i.json());
  s["swaps"] = {{"out", r.swaps_out}, {"in", r.swaps_in}, {"bytes_per_gpu", r.swapped_bytes_per_gpu}};
  s["kv_writes"] = {{"to", r.kv_in_hbf ? "hbf" : "hbm"},
                    {"bytes_per_gpu", r.kv_write_bytes_per_gpu},
                    {"bytes_per_s_per_gpu", span > 0 ? r.kv_write_bytes_per_gpu / span : 0.0},
                    {"hbf_lifetime_writes_fraction", r.kv_lifetime_writes_fraction}};
  if (r.kv_transfers > 0)
    s["kv_transfer"] = {{"transfers", r.kv_transfers},
                        {"bytes", r.kv_transfer_bytes},
                        {"mean_ms", to_s(r.kv_transfer_time) * 1e3 / double(r.kv_transfers)}};
  s["prefix_cache"] = {{"enabled", r.prefix_caching},
                       {"cached_tokens", r.cached_tokens},
                       {"cached_tokens_by_tier", {{"gpu", r.cached_tokens - r.host_cached_tokens}, {"host", r.host_cached_tokens}}},
                       {"hit_rate", in_tokens > 0 ? double(r.cached_tokens) / double(in_tokens) : 0.0},
                       {"reusable_tokens", r.reusable_tokens},
                       {"reuse_rate", r.reusable_tokens > 0 ? double(r.cached_tokens) / double(r.reusable_tokens) : 0.0},
                       {"requests_with_reusable", r.requests_with_reusable},
                       {"requests_reusing", r.requests_reusing},
                       {"evicted_units", r.prefix_evictions}};
  // At board power over the busy time (accel run's tokens_per_j_board; not its activity-based power_w, tokens_per_j).
  s["energy"] = {{"basis", "board_power"},
                 {"board_power_w_per_gpu", r.board_power.raw()},  // the decode side's when disaggregated
                 {"gpus", r.gpus},
                 {"energy_j", r.energy_j},
                 {"output_tokens_per_j", r.energy_j > 0 ? double(out_tokens) / r.energy_j : 0.0},
                 {"per_request_j", distribution(energy)}};
  return s;
}

Json cdf(const SimResult& r) {
  std::vector<double> ttft, tpot, e2e;
  for (const auto& q : r.requests) {
    ttft.push_back(q.ttft_s() * 1e3);
    e2e.push_back(q.e2e_s() * 1e3);
    if (q.output > 1) tpot.push_back(q.tpot_s() * 1e3);
  }
  const auto quantiles = [](std::vector<double>& v) {
    Json a = Json::array();
    if (v.empty()) return a;
    std::sort(v.begin(), v.end());
    for (int k = 0; k <= 100; ++k) {  // percentile()'s interpolation on the sorted list
      const double pos = k / 100.0 * double(v.size() - 1);
      const size_t lo = size_t(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
      a.push_back(v[lo] + (pos - double(lo)) * (v[hi] - v[lo]));
    }
    return a;
  };
  return {{"quantiles_percent", "0..100 step 1"}, {"ttft_ms", quantiles(ttft)}, {"tpot_ms", quantiles(tpot)}, {"e2e_ms", quantiles(e2e)}};
}

void write_chrome_trace(const std::filesystem::path& file, const SimResult& r) {
  // Written a slice at a time: the text of millions of passes is not held whole.
  AtomicFile f(file);
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"serving engine\"}}";
  for (const auto& p : r.passes) {
    const char* name = p.prefills > 0 && p.decodes > 0 ? "mixed" : p.prefills > 0 ? "prefill" : "decode";
    const double ts = double(p.start.raw()) * 1e-6, dur = double(p.duration.raw()) * 1e-6;
    out += fmt::format(
        ",\n{{\"name\": \"{}\", \"ph\": \"X\", \"pid\": 1, \"tid\": {}, \"ts\": {:.6f}, \"dur\": {:.6f}, \"args\": {{\"prefills\": {}, "
        "\"decodes\": {}, \"prompt_tokens\": {}}}}}",
        name, p.instance + 1, ts, dur, p.prefills, p.decodes, p.prompt_tokens);
    out += fmt::format(",\n{{\"name\": \"batch\", \"ph\": \"C\", \"pid\": 1, \"ts\": {:.6f}, \"args\": {{\"requests\": {}}}}}", ts,
                       p.prefills + p.decodes);
    if (out.size() >= (size_t(1) << 20)) f.write(out), out.clear();
  }
  out += "\n]}\n";
  f.write(out);
  f.commit();
}

void write_requests(const std::filesystem::path& file, const SimResult& r) {
  const bool csv = file.extension() == ".csv";
  // Written a slice at a time: the text of millions of requests is not held whole.
  AtomicFile f(file);
  std::string out;
  if (csv)
    out +=
        "id,arrival_s,queueing_ms,ttft_ms,tpot_ms,itl_mean_ms,itl_max_ms,e2e_ms,input_tokens,output_tokens,preemptions,energy_j,cached_"
        "tokens,cached_host_tokens\n";
  for (const auto& q : r.requests) {
    const double tpot = q.tpot_s() * 1e3;
    if (csv)
      out += fmt::format("{},{:.9f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{:.6f},{},{}\n", q.id, to_s(q.arrival),
                         q.queueing_s() * 1e3, q.ttft_s() * 1e3, tpot, tpot, to_s(q.itl_max) * 1e3, q.e2e_s() * 1e3, q.input, q.output,
                         q.preemptions, q.energy_j, q.cached_tokens, q.host_cached_tokens);
    else
      out += fmt::format(
          "{{\"id\": {}, \"arrival_s\": {:.9f}, \"queueing_ms\": {:.6f}, \"ttft_ms\": {:.6f}, \"tpot_ms\": {:.6f}, \"itl_mean_ms\": "
          "{:.6f}, "
          "\"itl_max_ms\": {:.6f}, \"e2e_ms\": {:.6f}, \"input_tokens\": {}, \"output_tokens\": {}, \"preemptions\": {}, \"energy_j\": "
          "{:.6f}, \"cached_tokens\": {}, \"cached_host_tokens\": {}}}\n",
          q.id, to_s(q.arrival), q.queueing_s() * 1e3, q.ttft_s() * 1e3, tpot, tpot, to_s(q.itl_max) * 1e3, q.e2e_s() * 1e3, q.input,
          q.output, q.preemptions, q.energy_j, q.cached_tokens, q.host_cached_tokens);
    if (out.size() >= (size_t(1) << 20)) f.write(out), out.clear();
  }
  f.write(out);
  f.commit();
}

}  // namespace bitline::serve
