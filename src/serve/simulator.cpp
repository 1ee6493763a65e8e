#include "serve/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "serve/iteration.hpp"
#include "serve/scheduler.hpp"

namespace bitline::serve {

const char* to_string(InstanceRole r) {
  return r == InstanceRole::Colocated ? "colocated" : r == InstanceRole::Prefill ? "prefill" : "decode";
}

Json InstanceRecord::json() const {
  return {{"role", to_string(role)},    {"deployment", deployment}, {"gpus", gpus},
          {"kv_blocks", kv_blocks},     {"iterations", iterations}, {"busy_s", to_s(busy)},
          {"preemptions", preemptions}, {"energy_j", energy_j}};
}

namespace {

/// The prefix cache's unit (tokens per prefix key) of workload `w` under `p`: 0 without prefix caching; ConfigError when
/// prefix caching is asked for a workload with no prefixes, or a unit that is not a whole number of KV blocks.
int64_t prefix_unit(const ServeParams& p, const Workload& w, bool engine_default) {
  if (!p.prefix_caching) return 0;
  int64_t unit = 0;
  for (const Request& r : w.requests) {
    if (r.prefix.empty()) continue;
    if (unit == 0) unit = r.prefix_unit;
    if (r.prefix_unit != unit)
      throw ConfigError(
          fmt::format("serve.prefix_caching: request {} has prefix units of {} tokens, others {}", r.id, r.prefix_unit, unit));
  }
  if (unit == 0 && engine_default) return 0;  // the engine caches prefixes; this workload shares none to reuse
  if (unit == 0)
    throw ConfigError(
        "serve.prefix_caching = true: the workload has no prefix to share: synthetic requests share no tokens, and a trace's "
        "requests share whole prefix units only (512 tokens of a session trace, sessions.block_tokens of a Mooncake trace), "
        "which no request here reaches; give a session or Mooncake trace with longer prompts with --trace, or leave prefix "
        "caching off");
  if (unit % p.block_tokens != 0)
    throw ConfigError(
        fmt::format("serve.prefix_caching: the trace's prefix unit of {} tokens is not a whole number of "
                    "serve.block_tokens = {} blocks",
                    unit, p.block_tokens));
  return unit;
}

enum class EvKind : uint8_t { Arrival, Send, Admit, PassDone, KvArrive };  // Send: a held request's turn (max_concurrency)
struct Ev {
  EvKind kind = EvKind::Arrival;
  int32_t idx = 0;  // Arrival, Admit, KvArrive: the request; PassDone: the instance
};

/// Units of `unit` tokens the prefix cache's host tier holds: serve.prefix_host_cache on each GPU, a unit's KV on the
/// GPUs of its attention rank.
int64_t host_units(const ServeParams& p, const KvMemory& m, int64_t unit) {
  if (unit <= 0 || p.prefix_host_cache.raw() <= 0) return 0;
  return int64_t(double(p.prefix_host_cache.raw()) / (double(unit) * double(m.kv_bytes_per_token))) * m.ranks;
}

/// One engine instance: its server, memory, queues and the pass it runs.
struct Instance {
  Instance(InstanceRole r, const llm::Server& srv, const ServeParams& sp, const EngineSetup& e, int64_t mean_out, std::vector<Seq>& seqs,
           int64_t unit)
      : role(r),
        s(&srv),
        model(srv, sp, mean_out),
        mem(kv_memory(srv, sp, e)),
        p(with_limit(sp, mem.max_seqs)),
        st(seqs, BlockManager(mem.blocks, p.block_tokens, p.watermark, unit, host_units(p, mem, unit))),
        // Decode instances take transferred requests into the running batch as they come (their first step a one-token
        // chunk beside the decodes): continuous batching with a token budget, whatever the prefill side's scheduler.
        scheduler(r == InstanceRole::Decode ? make_scheduler("chunked", p) : p.scheduler.make(p)),
        power_w(srv.board_power().raw() * double(srv.deployment().gpus)),
        block_bytes(double(p.block_tokens) * double(mem.kv_bytes_per_token)) {
    // Host memory for swapped KV: swap_space on each GPU, a request's blocks on the GPUs of its rank.
    st.host_free_blocks = int64_t(double(p.swap_space.raw()) / block_bytes) * mem.ranks;
  }
  static ServeParams with_limit(ServeParams p, int64_t max_seqs) {
    p.max_num_seqs = max_seqs;
    return p;
  }
  InstanceRole role;
  const llm::Server* s;
  IterationModel model;
  KvMemory mem;
  ServeParams p;  // the serve parameters with the engine's limit on running requests
  EngineState st;
  std::unique_ptr<Scheduler> scheduler;
  double power_w;      // all its GPUs at board power
  double block_bytes;  // one KV block on each GPU of its attention rank
  Batch batch;
  // Folded passes (Engine::fold): the batch runs this many passes back to back, folded[j] the duration of pass j + 1;
  // empty for one pass.
  std::vector<Time> folded;
  Time deliver{};  // how long after the pass its tokens reach the clients (outputs processed beside the next pass)
  bool busy = false, finished_any = false;
  Time busy_time{};
  int64_t iterations = 0;
  double energy_j = 0;
  int64_t tokens_computed = 0;  // prompt chunk tokens and decodes: each writes its KV
};

class Engine {
 public:
  Engine(const Cluster& c, const ServeParams& p, Workload w, const EngineSetup& e) : p_(p), e_(e), w_(std::move(w)), c_(c) {
    const size_t n = w_.requests.size();
    seqs_.resize(n);
    const int64_t mean_out = mean_output(w_), unit = prefix_unit(p, w_, !e.ideal());
    if (!unit) p_.prefix_caching = false;
    if (!c.disaggregated()) {
      inst_.push_back(std::make_unique<Instance>(InstanceRole::Colocated, *c.colocated, p_, e, mean_out, seqs_, unit));
    } else {
      for (int64_t k = 0; k < c.prefill.count; ++k)
        inst_.push_back(std::make_unique<Instance>(InstanceRole::Prefill, *c.prefill.server, p_, e, mean_out, seqs_, unit));
      for (int64_t k = 0; k < c.decode.count; ++k)
        inst_.push_back(std::make_unique<Instance>(InstanceRole::Decode, *c.decode.server, p_, e, mean_out, seqs_, 0));
    }
    // The engine a request enters (colocated, or the prefill side) prepares it.
    const llm::Server& entry = c.disaggregated() ? *c.prefill.server : *c.colocated;
    request_host_ = e.ideal() ? llm::engine_overheads(entry.params().serving.engine, false, llm::engine_workers(entry.deployment())).request
                              : e.host.request;
    rec_.resize(n);
    last_token_.resize(n);
    max_computed_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const Request& r = w_.requests[i];
      seqs_[i].input = r.input;
      seqs_[i].output = r.output;
      if (p_.prefix_caching && !r.prefix.empty()) seqs_[i].prefix = &w_.requests[i].prefix, seqs_[i].prefix_unit = r.prefix_unit;
      rec_[i].id = r.id;
      rec_[i].input = r.input;
      rec_[i].output = r.output;
      for (const auto& in : inst_) check_fits(r, *in);
    }
  }

  SimResult run() {
    const size_t n = w_.requests.size();
    if (w_.concurrency > 0) {
      for (int64_t u = 0; u < w_.concurrency && next_issue_ < n; ++u) issue(Time{});
    } else {
      // A session's later turns are sent when their previous turn finishes, or at their trace time if later.
      for (size_t i = 0; i < n; ++i)
        if (!w_.requests[i].follows) heap_.push(w_.requests[i].arrival, {EvKind::Arrival, int32_t(i)});
    }
    while (!heap_.empty()) {
      const auto e = heap_.pop();
      const Time now = e.t;
      if (e.payload.kind == EvKind::PassDone) {
        // The ends of a folded batch's passes before its last, as the events they would have been.
        const std::vector<Time>& f = inst_[size_t(e.payload.idx)]->folded;
        for (size_t j = 0; j + 1 < f.size(); ++j) {
          const Time end = last_t_ + f[j];
          area_s_ += double(in_system_) * to_s(end - last_t_);
          last_t_ = end;
        }
      }
      area_s_ += double(in_system_) * to_s(now - last_t_);
      last_t_ = now;
      switch (e.payload.kind) {
        case EvKind::Arrival:
          if (w_.max_concurrency > 0 && in_flight_ >= w_.max_concurrency) {
            held_.push_back(e.payload.idx);  // the client waits for a slot (FIFO)
          } else {
            ++in_flight_;
            arrive(e.payload.idx, now);
          }
          break;
        case EvKind::Send:
          arrive(e.payload.idx, now);
          break;
        case EvKind::Admit:
          admit(e.payload.idx);
          break;
        case EvKind::PassDone:
          finish_pass(size_t(e.payload.idx), now);
          break;
        case EvKind::KvArrive:
          kv_arrive(e.payload.idx);
          break;
      }
      // Every event at this time first (the users of a closed loop all send at 0), then the next passes.
      if (heap_.empty() || heap_.next_time() > now)
        for (size_t k = 0; k < inst_.size(); ++k)
          if (!inst_[k]->busy) start_pass(k, now);
    }
    if (done_ != n) throw std::logic_error("serve: the simulation ended with requests unserved");
    SimResult r;
    r.requests = std::move(rec_);
    const Instance& last = *inst_.back();  // the colocated engine, or a decode instance
    r.memory = last.mem;
    r.iterations = 0;
    r.preemptions = 0;
    for (const auto& in : inst_) {
      r.iterations += in->iterations;
      r.preemptions += in->st.preemptions;
      r.swaps_out += in->st.swaps_out;
      r.swaps_in += in->st.swaps_in;
      r.swapped_bytes_per_gpu += double(in->st.swapped_blocks) * in->block_bytes * double(in->s->deployment().gpus / in->mem.ranks);
      r.busy += in->busy_time;
      r.energy_j += in->energy_j;
      r.decode_shapes += in->model.decode_evaluations();
      r.prefill_shapes += in->model.prefill_evaluations();
      r.gpus += in->s->deployment().gpus;
      if (const PrefixCache* c = in->st.blocks.prefix_cache()) r.prefix_evictions += c->evictions();
      r.instances.push_back({in->role, in->s->deployment().describe(), in->s->deployment().gpus, in->mem.blocks, in->iterations,
                             in->st.preemptions, in->busy_time, in->energy_j});
    }
    r.busy = Time(r.busy.raw() / int64_t(inst_.size()));  // the instances' mean
    r.swapped_bytes_per_gpu /= double(r.gpus);
    r.start = r.requests.empty() ? Time{} : r.requests.front().arrival;
    for (const auto& q : r.requests) r.start = std::min(r.start, q.arrival), r.end = std::max(r.end, q.finish);
    // KV writes per GPU (each instance's tokens x its bytes per token per GPU, spread over all GPUs) and, on HBF, the
    // lifetime share of their rate.
    const double span = r.makespan_s();
    for (const auto& in : inst_) {
      // A token's KV is on the GPUs of its attention rank (all of a tensor-parallel instance's, one of a
      // data-parallel one's): kv_bytes_per_token on each of gpus / ranks GPUs.
      const double bytes = double(in->tokens_computed) * double(in->mem.kv_bytes_per_token) / double(in->mem.ranks);  // per GPU
      r.kv_write_bytes_per_gpu += bytes * double(in->s->deployment().gpus) / double(r.gpus);
      if (in->s->has_hbf() && span > 0) {
        r.kv_in_hbf = true;
        r.kv_lifetime_writes_fraction = std::max(r.kv_lifetime_writes_fraction, in->s->lifetime_writes_fraction(bytes / span));
      }
    }
    r.board_power = last.s->board_power();
    r.prefill_tokens = prefill_tokens_;
    r.recomputed_tokens = recomputed_;
    r.decode_tokens = decode_tokens_;
    r.emitted_tokens = emitted_;
    r.padded_decode_tokens = padded_;
    r.folded_passes = folded_passes_;
    r.host_serial = host_serial_;
    r.requests_time_integral_s = area_s_;
    r.prefix_caching = p_.prefix_caching;
    for (const Seq& s : seqs_) r.cached_tokens += s.cached_tokens, r.host_cached_tokens += s.host_cached_tokens;
    if (p_.prefix_caching) {
      const std::vector<int64_t> reusable = reusable_prefix_tokens(w_.requests);
      for (size_t i = 0; i < reusable.size(); ++i) {
        r.requests[i].reusable_tokens = reusable[i];
        r.reusable_tokens += reusable[i];
        if (reusable[i] > 0) ++r.requests_with_reusable, r.requests_reusing += r.requests[i].cached_tokens > 0 ? 1 : 0;
      }
    }
    r.kv_transfers = kv_transfers_;
    r.kv_transfer_bytes = kv_transfer_bytes_;
    r.kv_transfer_time = kv_transfer_time_;
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

  /// What the request needs of an instance: its prompt and first token on a prefill instance, its whole context
  /// elsewhere.
  void check_fits(const Request& r, const Instance& in) const {
    const BlockManager& b = in.st.blocks;
    const int64_t tokens = in.role == InstanceRole::Prefill ? r.input + 1 : r.input + r.output;
    const int64_t need = b.blocks_for(tokens);
    if (!b.holds(tokens))
      throw ConfigError(fmt::format(
          "request {}: {} + {} tokens need {} KV blocks of {} tokens, but the GPUs {}hold {} ({} kept free by serve.watermark); "
          "{:.0f} KV tokens fit per attention rank",
          r.id, r.input, in.role == InstanceRole::Prefill ? 1 : r.output, need, b.block_tokens(),
          in.role == InstanceRole::Colocated ? "" : "of an instance ", b.total(), b.watermark_blocks(), double(in.mem.tokens_per_rank)));
  }

  // Closed loop: the next request is sent now.
  void issue(Time now) {
    const int32_t i = int32_t(next_issue_++);
    w_.requests[size_t(i)].arrival = now;
    heap_.push(now, {EvKind::Arrival, i});
  }

  /// The instance of `role` with the least work queued and running (prompt tokens left for prefill instances,
  /// requests for decode ones); the lowest index on a tie.
  size_t pick(InstanceRole role) const {
    size_t best = inst_.size();
    int64_t best_load = 0;
    for (size_t k = 0; k < inst_.size(); ++k) {
      const Instance& in = *inst_[k];
      if (in.role != role) continue;
      int64_t load = 0;
      if (role == InstanceRole::Prefill) {
        for (int32_t i : in.st.waiting) load += seqs_[size_t(i)].prefill_target() - seqs_[size_t(i)].computed;
        for (int32_t i : in.st.running) load += seqs_[size_t(i)].prefill_target() - seqs_[size_t(i)].computed;
      } else {
        load = int64_t(in.st.waiting.size() + in.st.running.size());
      }
      if (best == inst_.size() || load < best_load) best = k, best_load = load;
    }
    return best;
  }

  /// A request arrives; the engine's host prepares it (serving.engine.request: tokenisation, the runtime's set-up)
  /// before it can be scheduled, off the GPU's passes.
  void arrive(int32_t i, Time now) {
    rec_[size_t(i)].arrival = now;
    seqs_[size_t(i)].arrived = now;
    ++in_system_;
    const Time host = request_host_ + e_.host.request_per_input_token * double(w_.requests[size_t(i)].input);
    if (host.raw() > 0)
      heap_.push(now + host, {EvKind::Admit, i});
    else
      admit(i);
  }

  void admit(int32_t i) {
    const size_t k = c_.disaggregated() ? pick(InstanceRole::Prefill) : 0;
    enqueue_waiting(inst_[k]->st, i);
  }

  /// A prefilled request's KV has reached the decode side: it joins a decode instance's queue, its prompt's KV and
  /// first token there (it decodes from its second token on).
  void kv_arrive(int32_t i) {
    const size_t k = pick(InstanceRole::Decode);
    seqs_[size_t(i)].phase = Phase::Waiting;
    enqueue_waiting(inst_[k]->st, i);
  }

  void start_pass(size_t k, Time now) {
    Instance& in = *inst_[k];
    for (int tries = 0; tries < 2 && in.batch.empty(); ++tries) in.batch = in.scheduler->next(in.st);
    if (in.batch.empty()) {
      if ((!in.st.waiting.empty() || !in.st.swapped.empty()) && in.st.running.empty())
        throw std::logic_error("serve: a waiting request cannot be admitted into an empty engine");
      return;
    }
    for (int32_t i : in.batch.prefill)
      if (!started_[i]) started_[i] = true, rec_[size_t(i)].scheduled = now;
    const int64_t decodes = std::max<int64_t>(int64_t(in.batch.decode.size()), in.batch.decode_slots);
    Time t = pass_time(in, decodes);
    // Swapped KV crosses the host link before the pass (vLLM V0 issues the copies with the step), each GPU its share.
    if (const int64_t blocks = in.batch.swap_out_blocks + in.batch.swap_in_blocks; blocks > 0)
      t += Time(int64_t(std::llround(double(blocks) * in.block_bytes / p_.host_link.raw() * 1e12)));
    in.busy = true;
    in.busy_time += t;
    // The pass's energy (every GPU of the instance at board power), shared by its requests in proportion to the
    // tokens each computes in it (a prompt chunk's tokens, one per decode); padding of a static batch takes no share.
    const double e = in.power_w * to_s(t);
    in.energy_j += e;
    int64_t tokens = int64_t(in.batch.decode.size());
    for (const Chunk& c : in.batch.chunks) tokens += c.tokens;
    in.tokens_computed += tokens;
    if (tokens > 0 && w_.record_request_energy) {
      const double per_token = e / double(tokens);
      for (size_t j = 0; j < in.batch.prefill.size(); ++j)
        rec_[size_t(in.batch.prefill[j])].energy_j += per_token * double(in.batch.chunks[j].tokens);
      for (int32_t i : in.batch.decode) rec_[size_t(i)].energy_j += per_token;
    }
    if (w_.record_passes) {
      if (int64_t(passes_.size()) >= kMaxRecordedPasses)
        throw ConfigError(
            fmt::format("--chrome-trace: the run takes more than {} iterations, more than a trace may record (~230 B "
                        "each of trace text: ~1 GB, about what a trace viewer opens); trace fewer or shorter requests",
                        kMaxRecordedPasses));
      int64_t prompt = 0;
      for (const Chunk& c : in.batch.chunks) prompt += c.tokens;
      passes_.push_back({now, t, int32_t(in.batch.prefill.size()), int32_t(decodes), prompt, int32_t(k)});
    }
    ++in.iterations;
    heap_.push(now + t + fold(in, now, t), {EvKind::PassDone, int32_t(k)});
  }

  /// Folded passes: when the scheduler says its decode-only batch would come back unchanged (Scheduler::repeats),
  /// the passes after this one that end before the next event, before any request of the batch finishes and while
  /// the free blocks hold their tokens are timed here, without asking the scheduler, and run as one event; their
  /// tokens are emitted in finish_pass. Every count, time and sum comes out as pass by pass (the same additions in the
  /// same order), so results are byte-identical; only the work per decoded token goes. Returns the time they add to
  /// this pass's `t`. Only a lone colocated engine without a Chrome trace folds.
  Time fold(Instance& in, Time now, Time t) {
    in.folded.clear();
    Batch& b = in.batch;
    // Every pass must end before the next event (one at the same time would come first): first, cheaply, whether a
    // second one of about this one's duration could.
    const Time next = heap_.empty() ? Time(std::numeric_limits<int64_t>::max()) : heap_.next_time();
    if (!(now + t < next) || next - (now + t) < t * 0.5) return Time{};
    if (inst_.size() != 1 || w_.record_passes) return Time{};
    const std::optional<int64_t> blocks = in.scheduler->repeats(in.st, b);
    if (!blocks) return Time{};
    const int64_t n = int64_t(b.decode.size());
    // Passes until the first of the batch finishes (this one counted): the last may be that one.
    int64_t most = std::numeric_limits<int64_t>::max();
    int64_t context = 0;  // sum over the batch of (computed + 1): this pass's decode contexts
    fold_held_.clear();   // each request's (computed, blocks held), side by side for the bisection below
    for (int32_t i : b.decode) {
      const Seq& s = seqs_[size_t(i)];
      most = std::min(most, s.output - s.generated);
      context += s.computed + 1;
      fold_held_.push_back({s.computed, s.blocks + s.shared});
    }
    if (most < 2) return Time{};
    // While the blocks the scheduler allows hold every request's tokens of the passes (monotone in the passes: bisect).
    const BlockManager& bm = in.st.blocks;
    const auto need = [&](int64_t passes) {
      int64_t sum = 0;
      for (const auto& [computed, blocks] : fold_held_) sum += std::max<int64_t>(0, bm.blocks_for(computed + passes) - blocks);
      return sum;
    };
    if (need(most) > *blocks) {
      int64_t lo = 1, hi = most;  // need(lo) fits (this pass's blocks are held), need(hi) does not
      while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (need(mid) <= *blocks ? lo : hi) = mid;
      }
      most = lo;
    }
    Time end = now + t;
    const double first_context = b.decode_context;
    in.folded.push_back(t);
    for (int64_t j = 1; j < most; ++j) {
      b.decode_context = double(context + n * j) / double(n);  // mean_context's sum of whole numbers, exact
      const Time tj = pass_time(in, n);
      if (!(end + tj < next)) break;
      end += tj;
      in.folded.push_back(tj);
    }
    b.decode_context = first_context;
    const int64_t extra = int64_t(in.folded.size()) - 1;
    if (extra == 0) {
      in.folded.clear();
      return Time{};
    }
    // The passes' blocks (as each pass's decode would have grown them), their counts and energy, pass by pass.
    for (int32_t i : b.decode) {
      Seq& s = seqs_[size_t(i)];
      if (!in.st.blocks.grow(s, s.computed + 1 + extra)) throw std::logic_error("serve: a folded pass found no free block");
    }
    Time added{};
    per_token_.resize(size_t(extra));
    for (int64_t j = 1; j <= extra; ++j) {
      const Time tj = in.folded[size_t(j)];
      added += tj;
      in.busy_time += tj;
      const double e = in.power_w * to_s(tj);
      in.energy_j += e;
      in.tokens_computed += n;
      per_token_[size_t(j - 1)] = e / double(n);
      ++in.iterations;
    }
    // Each request's share of every pass, added in pass order (as pass by pass), one request at a time.
    if (w_.record_request_energy)
      for (int32_t i : b.decode) {
        double energy = rec_[size_t(i)].energy_j;
        for (const double x : per_token_) energy += x;
        rec_[size_t(i)].energy_j = energy;
      }
    in.st.pass += uint64_t(extra);
    folded_passes_ += extra;
    for (int32_t i : b.decode) seqs_[size_t(i)].stamp = in.st.pass;
    in.scheduler->repeated(extra);
    return added;
  }

  /// The pass's time under the engine: its GPU time (a multi-step group's steps; CUDA graphs padded to the captured
  /// size, or an eager pass no shorter than its launches) and the engine's host time around it: the serial parts
  /// added, the overlapped ones beside the GPU (the pass takes the longer). Sets in.deliver: how long after the pass
  /// its outputs reach the clients when they are processed beside the next pass.
  Time pass_time(Instance& in, int64_t decodes) {
    const Batch& b = in.batch;
    const int64_t steps = std::max<int64_t>(b.steps, 1);
    // (The ideal engine has no CUDA-graph rule, no launch cost and no host time: its pass is the GPU's.)
    int64_t tokens = decodes;
    for (const Chunk& c : b.chunks) tokens += c.tokens;
    const bool prompt = !b.chunks.empty();
    const int64_t graph = e_.graph_batch(tokens, prompt);
    // A graph replays at its captured batch: the decode rows padded up to it (a mixed pass's prompt rows are real).
    const int64_t rows = graph > 0 ? decodes + (graph - tokens) : decodes;
    // A group's steps decode at contexts growing by one token a step: the mean context stands for them (the decode
    // step is linear in the context).
    Time gpu = in.model.pass(b.chunks, rows, b.decode_context + 0.5 * double(steps - 1));
    if (steps > 1) gpu = gpu * double(steps);
    if (graph == 0 && e_.host.launch.raw() > 0) gpu = std::max(gpu, e_.host.launch * double(in.model.pass_kernels() * steps));
    const llm::Deployment& d = in.s->deployment();
    const int64_t n = int64_t(b.prefill.size() + b.decode.size());
    const int64_t ranks = std::max<int64_t>(d.ranks, 1);
    const double seqs = double(llm::engine_sequences(d, (n + ranks - 1) / ranks, n));
    const HostCosts& h = e_.host;
    const Time sched = h.schedule + h.schedule_per_sequence * seqs, out = h.output + h.output_per_sequence * seqs;
    const Time serial = (h.overlap_schedule ? Time{} : sched) + (h.overlap_output ? Time{} : out);
    const Time beside = (h.overlap_schedule ? sched : Time{}) + (h.overlap_output ? out : Time{});
    in.deliver = h.overlap_output ? out : Time{};
    const Time t = serial + std::max(gpu, beside);
    host_serial_ += t - gpu;
    return t;
  }

  /// Request `i` receives `tokens` tokens at `now` (one streamed chunk: one inter-token gap, as a benchmark client
  /// times the chunks it receives).
  void emit(Instance& in, int32_t i, Time now, int64_t tokens = 1) {
    Seq& s = seqs_[size_t(i)];
    RequestRecord& r = rec_[size_t(i)];
    const bool first = s.generated == 0;
    s.generated += tokens;
    emitted_ += tokens;
    if (first)
      r.first_token = now;
    else if (w_.record_itl)
      add_gap(r, now - last_token_[size_t(i)]);
    last_token_[size_t(i)] = now;
    s.phase = Phase::Decode;
    if (s.generated == s.output) {
      s.phase = Phase::Done;
      in.st.blocks.finish(s);
      r.finish = now;
      r.cached_tokens = s.cached_tokens;
      r.host_cached_tokens = s.host_cached_tokens;
      r.preemptions = s.preemptions;
      --in_system_;
      ++done_;
      in.finished_any = true;
      if (w_.concurrency > 0 && next_issue_ < w_.requests.size()) issue(now);
      --in_flight_;
      if (!held_.empty()) {  // the slot passes to the earliest held request, sent now
        ++in_flight_;
        heap_.push(now, {EvKind::Send, held_.front()});
        held_.pop_front();
      }
      if (const int64_t next = w_.requests[size_t(i)].next_turn; next >= 0 && w_.concurrency == 0)
        heap_.push(std::max(now, w_.requests[size_t(next)].arrival), {EvKind::Arrival, int32_t(next)});
    } else if (in.role == InstanceRole::Prefill) {
      // Prefilled: its KV leaves for the decode side (its prompt's units stay in this instance's prefix cache).
      s.phase = Phase::Transfer;
      in.st.blocks.finish(s);
      in.finished_any = true;
      const Time t = kv_transfer_time(s);
      ++kv_transfers_;
      kv_transfer_time_ += t;
      heap_.push(now + t, {EvKind::KvArrive, i});
    }
  }

  /// The prompt's KV, every layer, from the prefill instance's GPUs to the decode instance's over the link of
  /// serve.kv_transfer: it is on the GPUs of one attention rank on each side (gpus / ranks: all of a tensor-parallel
  /// instance, one GPU of a data-parallel one), each of the smaller side's moving its share at the link's bandwidth
  /// per GPU (llm.network.rdma or nvlink), after the link's latency.
  Time kv_transfer_time(const Seq& s) {
    const llm::Server& ps = *c_.prefill.server;
    const KvMemory& pm = inst_.front()->mem;
    const KvMemory& dm = inst_.back()->mem;
    const int64_t sp = ps.deployment().gpus / pm.ranks, sd = c_.decode.server->deployment().gpus / dm.ranks;
    const double bytes = double(pm.kv_bytes_per_token) * double(sp) * double(s.computed);
    kv_transfer_bytes_ += bytes;
    const llm::NetworkParams& net = ps.params().llm.network;
    const bool nvlink = *p_.kv_transfer == KvTransferLink::Nvlink;
    const double rate = (nvlink ? net.nvlink : net.rdma).raw() * double(std::max<int64_t>(1, std::min(sp, sd)));
    return (nvlink ? net.nvlink_latency : net.rdma_latency) + Time(int64_t(std::llround(bytes / rate * 1e12)));
  }

  void add_gap(RequestRecord& r, Time gap) {
    r.itl_max = std::max(r.itl_max, gap);
    if (!itl_.empty() && itl_.back().first == gap.raw())
      ++itl_.back().second;
    else
      itl_.push_back({gap.raw(), 1});
  }

  /// Request `i`'s decode in a pass of `steps` steps whose tokens reach the client at `now`.
  void decode(Instance& in, int32_t i, Time now, int64_t steps) {
    Seq& s = seqs_[size_t(i)];
    // A multi-step group's tokens of this request: the group's steps, or what is left of its output.
    const int64_t n = std::min<int64_t>(steps, s.output - s.generated);
    decode_tokens_ += n;
    padded_ += steps - n;
    recomputed_ += std::clamp<int64_t>(max_computed_[size_t(i)] - s.computed, 0, n);
    s.computed += n;
    max_computed_[size_t(i)] = std::max(max_computed_[size_t(i)], s.computed);
    emit(in, i, now, n);
  }

  /// The tokens of a folded batch's passes before its last (Instance::folded; finish_pass emits the last's at `now`):
  /// the first pass's request by request, as any decode pass, the others in bulk, each request one token a pass
  /// with the pass's duration as its gap, as they would have been emitted pass by pass.
  void emit_folded(Instance& in, Time now) {
    const std::vector<Time>& f = in.folded;
    const Batch& b = in.batch;
    const int64_t n = int64_t(b.decode.size()), middle = int64_t(f.size()) - 2;  // passes after the first, before the last
    Time end = now;  // (every pass's tokens reach the clients `deliver` after it ends: the same for all)
    for (const Time& t : f) end -= t;
    end += f[0];
    for (int32_t i : b.decode) decode(in, i, end, 1);
    if (middle <= 0) return;
    Time longest{};
    for (int64_t j = 1; j <= middle; ++j) {
      end += f[size_t(j)];
      if (!w_.record_itl) continue;
      longest = std::max(longest, f[size_t(j)]);
      if (!itl_.empty() && itl_.back().first == f[size_t(j)].raw())
        itl_.back().second += n;
      else
        itl_.push_back({f[size_t(j)].raw(), n});
    }
    decode_tokens_ += middle * n;
    emitted_ += middle * n;
    for (int32_t i : b.decode) {
      Seq& s = seqs_[size_t(i)];
      recomputed_ += std::clamp<int64_t>(max_computed_[size_t(i)] - s.computed, 0, middle);
      s.computed += middle;
      s.generated += middle;
      max_computed_[size_t(i)] = std::max(max_computed_[size_t(i)], s.computed);
      rec_[size_t(i)].itl_max = std::max(rec_[size_t(i)].itl_max, longest);
      last_token_[size_t(i)] = end;
    }
  }

  void finish_pass(size_t k, Time done) {
    Instance& in = *inst_[k];
    in.busy = false;
    in.finished_any = false;
    const Batch& b = in.batch;
    const Time now = done + in.deliver;  // when the pass's tokens reach the clients
    if (!in.folded.empty()) emit_folded(in, now);
    for (size_t j = 0; j < b.prefill.size(); ++j) {
      const int32_t i = b.prefill[j];
      Seq& s = seqs_[size_t(i)];
      const Chunk c = b.chunks[j];
      prefill_tokens_ += c.tokens;
      // Positions computed before a preemption are computed again.
      recomputed_ += std::max<int64_t>(0, std::min(c.offset + c.tokens, max_computed_[size_t(i)]) - c.offset);
      s.computed += c.tokens;
      max_computed_[size_t(i)] = std::max(max_computed_[size_t(i)], s.computed);
      if (s.computed == s.prefill_target()) emit(in, i, now);
    }
    const int64_t steps = std::max<int64_t>(b.steps, 1);
    for (int32_t i : b.decode) decode(in, i, now, steps);
    padded_ += std::max<int64_t>(0, b.decode_slots - int64_t(b.decode.size()));
    in.folded.clear();
    if (in.finished_any)
      in.st.running.erase(std::remove_if(in.st.running.begin(), in.st.running.end(),
                                         [&](int32_t i) {
                                           const Phase ph = seqs_[size_t(i)].phase;
                                           return ph == Phase::Done || ph == Phase::Transfer;
                                         }),
                          in.st.running.end());
    in.batch = Batch{};
  }

  ServeParams p_;
  EngineSetup e_;
  Workload w_;
  Cluster c_;
  std::vector<Seq> seqs_;
  std::vector<std::unique_ptr<Instance>> inst_;
  std::vector<RequestRecord> rec_;
  std::vector<Time> last_token_;
  std::vector<int64_t> max_computed_;
  std::vector<bool> started_ = std::vector<bool>(w_.requests.size(), false);
  EventHeap<Ev> heap_;
  size_t next_issue_ = 0, done_ = 0;
  Time host_serial_{};   // the engine's host time the passes took beyond their GPU time
  Time request_host_{};  // the entry engine's host time per request before it is scheduled (serving.engine.request)
  int64_t in_system_ = 0;
  int64_t in_flight_ = 0;     // requests sent and not finished (max_concurrency's slots in use)
  std::deque<int32_t> held_;  // requests due while every slot was in use, in the order they came due
  int64_t prefill_tokens_ = 0, recomputed_ = 0, decode_tokens_ = 0, emitted_ = 0, padded_ = 0, folded_passes_ = 0;
  int64_t kv_transfers_ = 0;
  double kv_transfer_bytes_ = 0;
  Time kv_transfer_time_{};
  double area_s_ = 0;
  std::vector<std::pair<int64_t, int64_t>> itl_;
  std::vector<PassRecord> passes_;
  std::vector<double> per_token_;                       // fold(): each folded pass's energy per token
  std::vector<std::pair<int64_t, int64_t>> fold_held_;  // fold(): the batch's (computed, blocks held)
  Time last_t_{};
};

}  // namespace

const Registry<KvTransferLink>& kv_transfer_links() {
  static const Registry<KvTransferLink> r(
      "KV transfer link",
      {{"rdma", "between nodes: llm.network.rdma per GPU after llm.network.rdma_latency", KvTransferLink::Rdma},
       {"nvlink", "inside one NVLink domain: llm.network.nvlink per GPU after llm.network.nvlink_latency", KvTransferLink::Nvlink}});
  return r;
}

SimResult simulate(const Cluster& c, const ServeParams& p, Workload w) {
  if (p.scheduler_steps > 1 && p.scheduler.name() != "vllm")
    throw ConfigError(
        fmt::format("serve.scheduler_steps = {}: multi-step scheduling runs with the vllm scheduler only (the "
                    "scheduler is '{}')",
                    p.scheduler_steps, p.scheduler.name()));
  if (w.requests.empty()) throw ConfigError("serve: no requests to simulate");
  if (w.concurrency < 0 || w.concurrency > int64_t(w.requests.size()))
    throw ConfigError(
        fmt::format("--concurrency {}: more users than the {} requests (each user sends at least one)", w.concurrency, w.requests.size()));
  if (w.max_concurrency < 0 || (w.max_concurrency > 0 && w.concurrency > 0))
    throw ConfigError(fmt::format("--max-concurrency {}: a cap on an open loop or a trace (a closed loop's --concurrency is its own)",
                                  w.max_concurrency));
  for (const auto& r : w.requests)
    if (r.input < 1 || r.output < 1)
      throw ConfigError(
          fmt::format("request {}: {} prompt and {} output tokens: every request needs at least one of each", r.id, r.input, r.output));
  if (c.disaggregated() && (c.prefill.count < 1 || c.decode.count < 1 || !c.prefill.server || !c.decode.server))
    throw ConfigError("serve: a disaggregated deployment needs at least one prefill and one decode instance");
  if (c.disaggregated() && *p.kv_transfer == KvTransferLink::Nvlink) {
    // Over NVLink a prefill instance and a decode instance must share one NVLink domain.
    const int64_t pg = c.prefill.server->deployment().gpus, dg = c.decode.server->deployment().gpus;
    const int64_t domain = c.prefill.server->params().llm.network.gpus_per_node;
    if (pg + dg > domain)
      throw ConfigError(
          fmt::format("serve.kv_transfer = nvlink: a prefill instance ({} GPUs) and a decode instance ({} GPUs) do not fit "
                      "in one NVLink domain of llm.network.gpus_per_node = {} GPUs; use rdma, or a larger domain",
                      pg, dg, domain));
  }
  Engine engine(c, p, std::move(w), c.engine);
  return engine.run();
}

SimResult simulate(const llm::Server& s, const ServeParams& p, Workload w) {
  Cluster c;
  c.colocated = &s;
  return simulate(c, p, std::move(w));
}

}  // namespace bitline::serve
