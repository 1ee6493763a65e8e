#include "serve/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "serve/iteration.hpp"
#include "serve/scheduler.hpp"

namespace bitline::serve {

Json KvMemory::json() const {
  return {{"kv_bytes_per_token_per_gpu", kv_bytes_per_token},
          {"kv_tokens_per_rank", tokens_per_rank},
          {"attention_ranks", ranks},
          {"kv_blocks", blocks}};
}

bool holds_request(const KvMemory& m, const ServeParams& p, int64_t tokens) {
  const BlockManager b(m.blocks, p.block_tokens, p.watermark);
  return b.blocks_for(tokens) <= b.total() - b.watermark_blocks();
}

KvMemory kv_memory(const llm::Server& s, const ServeParams& p) {
  KvMemory km;
  km.ranks = std::max<int64_t>(s.deployment().ranks, 1);
  const auto ctx = [](int64_t tokens) { return llm::ContextSpec{"", tokens, 0}; };
  const llm::Capacity one = s.capacity(1, ctx(1));
  km.kv_bytes_per_token = one.kv.raw();
  const auto gb = [](Bytes b) { return double(b.raw()) * 1e-9; };
  if (!s.capacity(1, ctx(p.block_tokens)).fits)
    throw ConfigError(fmt::format(
        "model {} does not fit on {} x {} ({}): weights {:.1f} GB + reserve {:.1f} GB + workspace {:.2f} GB per GPU leave no room for "
        "one KV block of {} tokens ({} exhausted; {:.1f} GB of {})",
        s.model().name, s.deployment().gpus, s.params().kind, s.deployment().describe(), gb(one.weights), gb(one.reserve),
        gb(one.workspace), p.block_tokens, llm::to_string(one.limit).empty() ? "memory" : llm::to_string(one.limit), gb(one.hbm_capacity),
        s.has_hbf() ? "HBM (weights and KV in HBF)" : "HBM"));
  // The workspace is sized for max_num_seqs requests per rank (vLLM profiles its activation peak the same way).
  const int64_t r = (p.max_num_seqs + km.ranks - 1) / km.ranks;
  if (!s.capacity(r, ctx(1)).fits)
    throw ConfigError(fmt::format(
        "serve.max_num_seqs = {}: the activation workspace of {} requests per rank does not fit beside model {}'s weights on {}; "
        "lower serve.max_num_seqs",
        p.max_num_seqs, r, s.model().name, s.params().kind));
  // The most tokens per request with r requests per rank: bisection on the capacity (memory/capacity code of llm).
  int64_t lo = 1, hi = 2;
  const int64_t limit = (int64_t(1) << 40) / r;
  while (hi < limit && s.capacity(r, ctx(hi)).fits) lo = hi, hi *= 2;
  if (hi >= limit && s.capacity(r, ctx(limit)).fits) lo = hi = limit;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (s.capacity(r, ctx(mid)).fits ? lo : hi) = mid;
  }
  km.tokens_per_rank = lo * r;
  km.blocks = km.tokens_per_rank / p.block_tokens * km.ranks;
  return km;
}

namespace {

/// The prefix cache's unit (tokens per prefix key) of workload `w` under `p`: 0 without prefix caching; ConfigError when
/// prefix caching is asked for a workload with no prefixes, or a unit that is not a whole number of KV blocks.
int64_t prefix_unit(const ServeParams& p, const Workload& w) {
  if (!p.prefix_caching) return 0;
  int64_t unit = 0;
  for (const Request& r : w.requests) {
    if (r.prefix.empty()) continue;
    if (unit == 0) unit = r.prefix_unit;
    if (r.prefix_unit != unit)
      throw ConfigError(
          fmt::format("serve.prefix_caching: request {} has prefix units of {} tokens, others {}", r.id, r.prefix_unit, unit));
  }
  if (unit == 0)
    throw ConfigError(
        "serve.prefix_caching = true: the workload has no prefixes (synthetic requests share no tokens); give a session or Mooncake "
        "trace with --trace");
  if (unit % p.block_tokens != 0)
    throw ConfigError(
        fmt::format("serve.prefix_caching: the trace's prefix unit of {} tokens is not a whole number of "
                    "serve.block_tokens = {} blocks",
                    unit, p.block_tokens));
  return unit;
}

enum class EvKind : uint8_t { Arrival, PassDone };
struct Ev {
  EvKind kind = EvKind::Arrival;
  int32_t idx = 0;
};

class Engine {
 public:
  Engine(const llm::Server& s, const ServeParams& p, Workload w)
      : p_(p),
        w_(std::move(w)),
        model_(s, p, mean_output(w_)),
        mem_(kv_memory(s, p)),
        st_{seqs_, {}, {}, BlockManager(mem_.blocks, p.block_tokens, p.watermark, prefix_unit(p, w_))},
        pass_power_w_(s.board_power().raw() * double(s.deployment().gpus)),
        gpus_(s.deployment().gpus) {
    const size_t n = w_.requests.size();
    seqs_.resize(n);
    rec_.resize(n);
    last_token_.resize(n);
    max_computed_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const Request& r = w_.requests[i];
      seqs_[i].input = r.input;
      seqs_[i].output = r.output;
      if (p.prefix_caching && !r.prefix.empty()) seqs_[i].prefix = &w_.requests[i].prefix, seqs_[i].prefix_unit = r.prefix_unit;
      rec_[i].id = r.id;
      rec_[i].input = r.input;
      rec_[i].output = r.output;
      check_fits(r);
    }
  }

  SimResult run() {
    const size_t n = w_.requests.size();
    if (w_.concurrency > 0) {
      for (int64_t u = 0; u < w_.concurrency && next_issue_ < n; ++u) issue(Time{});
    } else {
      for (size_t i = 0; i < n; ++i) heap_.push(w_.requests[i].arrival, {EvKind::Arrival, int32_t(i)});
    }
    while (!heap_.empty()) {
      const auto e = heap_.pop();
      const Time now = e.t;
      area_s_ += double(in_system_) * to_s(now - last_t_);
      last_t_ = now;
      switch (e.payload.kind) {
        case EvKind::Arrival:
          arrive(e.payload.idx, now);
          break;
        case EvKind::PassDone:
          finish_pass(now);
          break;
      }
      // Every event at this time first (the users of a closed loop all send at 0), then the next pass.
      if (!busy_ && (heap_.empty() || heap_.next_time() > now)) start_pass(now);
    }
    if (done_ != n) throw std::logic_error("serve: the simulation ended with requests unserved");
    SimResult r;
    r.requests = std::move(rec_);
    r.memory = mem_;
    r.iterations = iterations_;
    r.preemptions = st_.preemptions;
    r.prefill_tokens = prefill_tokens_;
    r.recomputed_tokens = recomputed_;
    r.decode_tokens = decode_tokens_;
    r.emitted_tokens = emitted_;
    r.padded_decode_tokens = padded_;
    r.start = r.requests.empty() ? Time{} : r.requests.front().arrival;
    for (const auto& q : r.requests) r.start = std::min(r.start, q.arrival), r.end = std::max(r.end, q.finish);
    r.requests_time_integral_s = area_s_;
    r.decode_shapes = model_.decode_evaluations();
    r.prefill_shapes = model_.prefill_evaluations();
    r.busy = busy_time_;
    r.board_power = Power(pass_power_w_ / double(gpus_));
    r.gpus = gpus_;
    r.energy_j = energy_j_;
    r.prefix_caching = p_.prefix_caching;
    for (const Seq& s : seqs_) r.cached_tokens += s.cached_tokens;
    if (const PrefixCache* c = st_.blocks.prefix_cache()) r.prefix_evictions = c->evictions();
    r.itl = std::move(itl_);
    r.passes = std::move(passes_);
    return r;
  }

 private:
  static int64_t mean_output(const Workload& w) {
    double s = 0;
    for (const auto& r : w.requests) s += double(r.output);
    return w.requests.empty() ? 1 : int64_t(std::llround(s / double(w.requests.size())));
  }

  void check_fits(const Request& r) const {
    const BlockManager& b = st_.blocks;
    const int64_t need = b.blocks_for(r.input + r.output);
    if (!holds_request(mem_, p_, r.input + r.output))
      throw ConfigError(
          fmt::format("request {}: {} + {} tokens need {} KV blocks of {} tokens, but the GPUs hold {} ({} kept free by serve.watermark); "
                      "{:.0f} KV tokens fit per attention rank",
                      r.id, r.input, r.output, need, b.block_tokens(), b.total(), b.watermark_blocks(), double(mem_.tokens_per_rank)));
  }

  // Closed loop: the next request is sent now.
  void issue(Time now) {
    const int32_t i = int32_t(next_issue_++);
    w_.requests[size_t(i)].arrival = now;
    heap_.push(now, {EvKind::Arrival, i});
  }

  void arrive(int32_t i, Time now) {
    rec_[size_t(i)].arrival = now;
    ++in_system_;
    st_.waiting.push_back(i);
  }

  void start_pass(Time now) {
    for (int tries = 0; tries < 2 && batch_.empty(); ++tries) batch_ = schedule(*p_.scheduler, p_, st_);
    if (batch_.empty()) {
      if (!st_.waiting.empty() && st_.running.empty())
        throw std::logic_error("serve: a waiting request cannot be admitted into an empty engine");
      return;
    }
    for (int32_t i : batch_.prefill)
      if (!started_[i]) started_[i] = true, rec_[size_t(i)].scheduled = now;
    const int64_t decodes = std::max<int64_t>(int64_t(batch_.decode.size()), batch_.padded_decodes);
    const Time t = model_.pass(batch_.chunks, decodes, batch_.decode_context);
    busy_ = true;
    busy_time_ += t;
    // The pass's energy (every GPU at board power), shared by its requests in proportion to the tokens each computes
    // in it (a prompt chunk's tokens, one per decode); padding of a static batch takes no share.
    const double e = pass_power_w_ * to_s(t);
    energy_j_ += e;
    int64_t tokens = int64_t(batch_.decode.size());
    for (const Chunk& c : batch_.chunks) tokens += c.tokens;
    if (tokens > 0) {
      const double per_token = e / double(tokens);
      for (size_t k = 0; k < batch_.prefill.size(); ++k)
        rec_[size_t(batch_.prefill[k])].energy_j += per_token * double(batch_.chunks[k].tokens);
      for (int32_t i : batch_.decode) rec_[size_t(i)].energy_j += per_token;
    }
    if (w_.record_passes) {
      int64_t prompt = 0;
      for (const Chunk& c : batch_.chunks) prompt += c.tokens;
      passes_.push_back({now, t, int32_t(batch_.prefill.size()), int32_t(decodes), prompt});
    }
    ++iterations_;
    heap_.push(now + t, {EvKind::PassDone, 0});
  }

  void emit(int32_t i, Time now) {
    Seq& s = seqs_[size_t(i)];
    RequestRecord& r = rec_[size_t(i)];
    ++s.generated;
    ++emitted_;
    if (s.generated == 1)
      r.first_token = now;
    else
      add_gap(r, now - last_token_[size_t(i)]);
    last_token_[size_t(i)] = now;
    s.phase = Phase::Decode;
    if (s.generated == s.output) {
      s.phase = Phase::Done;
      st_.blocks.finish(s);
      r.finish = now;
      r.cached_tokens = s.cached_tokens;
      r.preemptions = s.preemptions;
      --in_system_;
      ++done_;
      finished_any_ = true;
      if (w_.concurrency > 0 && next_issue_ < w_.requests.size()) issue(now);
    }
  }

  void add_gap(RequestRecord& r, Time gap) {
    r.itl_max = std::max(r.itl_max, gap);
    if (!itl_.empty() && itl_.back().first == gap.raw())
      ++itl_.back().second;
    else
      itl_.push_back({gap.raw(), 1});
  }

  void finish_pass(Time now) {
    busy_ = false;
    finished_any_ = false;
    for (size_t k = 0; k < batch_.prefill.size(); ++k) {
      const int32_t i = batch_.prefill[k];
      Seq& s = seqs_[size_t(i)];
      const Chunk c = batch_.chunks[k];
      prefill_tokens_ += c.tokens;
      // Positions computed before a preemption are computed again.
      recomputed_ += std::max<int64_t>(0, std::min(c.offset + c.tokens, max_computed_[size_t(i)]) - c.offset);
      s.computed += c.tokens;
      max_computed_[size_t(i)] = std::max(max_computed_[size_t(i)], s.computed);
      if (s.computed == s.prefill_target()) emit(i, now);
    }
    for (int32_t i : batch_.decode) {
      Seq& s = seqs_[size_t(i)];
      ++decode_tokens_;
      if (s.computed < max_computed_[size_t(i)]) ++recomputed_;
      ++s.computed;
      max_computed_[size_t(i)] = std::max(max_computed_[size_t(i)], s.computed);
      emit(i, now);
    }
    padded_ += std::max<int64_t>(0, batch_.padded_decodes - int64_t(batch_.decode.size()));
    if (finished_any_)
      st_.running.erase(
          std::remove_if(st_.running.begin(), st_.running.end(), [&](int32_t i) { return seqs_[size_t(i)].phase == Phase::Done; }),
          st_.running.end());
    batch_ = Batch{};
  }

  ServeParams p_;
  Workload w_;
  IterationModel model_;
  KvMemory mem_;
  std::vector<Seq> seqs_;
  EngineState st_;
  std::vector<RequestRecord> rec_;
  std::vector<Time> last_token_;
  std::vector<int64_t> max_computed_;
  std::vector<bool> started_ = std::vector<bool>(w_.requests.size(), false);
  EventHeap<Ev> heap_;
  Batch batch_;
  bool busy_ = false, finished_any_ = false;
  size_t next_issue_ = 0, done_ = 0;
  int64_t in_system_ = 0, iterations_ = 0;
  int64_t prefill_tokens_ = 0, recomputed_ = 0, decode_tokens_ = 0, emitted_ = 0, padded_ = 0;
  double area_s_ = 0;
  std::vector<std::pair<int64_t, int64_t>> itl_;
  std::vector<PassRecord> passes_;
  Time last_t_{}, busy_time_{};
  double pass_power_w_ = 0;  // all GPUs at board power
  int64_t gpus_ = 1;
  double energy_j_ = 0;
};

}  // namespace

SimResult simulate(const llm::Server& s, const ServeParams& p, Workload w) {
  if (w.requests.empty()) throw ConfigError("serve: no requests to simulate");
  if (w.concurrency < 0 || w.concurrency > int64_t(w.requests.size()))
    throw ConfigError(
        fmt::format("--concurrency {}: more users than the {} requests (each user sends at least one)", w.concurrency, w.requests.size()));
  for (const auto& r : w.requests)
    if (r.input < 1 || r.output < 1)
      throw ConfigError(
          fmt::format("request {}: {} prompt and {} output tokens: every request needs at least one of each", r.id, r.input, r.output));
  Engine e(s, p, std::move(w));
  return e.run();
}

}  // namespace bitline::serve
