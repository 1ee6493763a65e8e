// The engine's scheduler: which requests each iteration (one forward pass) prefills and decodes, over a
// PagedAttention block manager (serve/block_manager.hpp); preemption when blocks run out. One interface, Scheduler;
// its policies live one file each in serve/schedulers/ and are chosen by name through one registry (serve.scheduler,
// serve/params.hpp; `bitline describe --impls`). docs/serving.md gives the engine behaviour each follows:
//   vllm     vLLM V0's default scheduler: prefill first. When requests wait and the first of them fits (its blocks,
//            leaving the watermark free; max_num_seqs; the pass's max_num_batched_tokens), the iteration prefills
//            the waiting requests that fit, first come first served, and decodes nothing; otherwise it decodes every
//            running request. A decode that needs a block when none is free preempts the most recently admitted
//            running request (recompute: its blocks are freed, it waits again at the front, and its prompt and
//            generated tokens are prefilled again when it is readmitted)
//   chunked  chunked prefill (Sarathi-Serve; vLLM V1's scheduler): a token budget of max_num_batched_tokens per
//            iteration, spent on the running decodes first (one token each), then on the running prefills, then on
//            new requests; a prompt longer than what is left is cut into a chunk; decodes and chunks share a pass
//   orca     iteration-level scheduling with selective batching (Orca, OSDI 2022): every iteration decodes all
//            running requests and prefills the newly admitted ones' whole prompts in the same pass (first come first
//            served, max_num_seqs, max_num_batched_tokens; a longer prompt only in a pass of its own); a request
//            reserves the blocks of its full context (input + output) at admission, so it is never preempted
//   static   static batching (TensorRT-LLM's gptSession): when nothing runs, up to max_num_seqs waiting requests
//            whose full context (input + output) fits in the free blocks (no watermark) form a batch; it is prefilled in one pass and
//            decoded until its longest request finishes, every pass at the batch's size (finished requests are
//            padding), while new requests wait
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "serve/block_manager.hpp"
#include "serve/iteration.hpp"
#include "serve/params.hpp"

namespace bitline::serve {

/// What the scheduler gives an iteration.
struct Batch {
  std::vector<int32_t> prefill;  // requests with a chunk in this pass
  std::vector<Chunk> chunks;     // their chunks, in the same order
  std::vector<int32_t> decode;   // requests decoding one token
  int64_t decode_slots = 0;      // decode rows the pass computes, when more than decode.size() (static batching pads
                                 // its batch's finished requests)
  double decode_context = 0;     // mean tokens a decode attends over
  int64_t swap_out_blocks = 0;   // KV blocks copied to host memory before the pass (swap preemption)
  int64_t swap_in_blocks = 0;    // and back from it (and prefix-cache units taken from its host tier)
  int64_t steps = 1;             // decode steps the pass runs (serve.scheduler_steps: a decode-only multi-step group)
  bool empty() const { return prefill.empty() && decode.empty(); }
};

/// The engine's queues and memory, which a scheduler reads and changes.
struct EngineState {
  EngineState(std::vector<Seq>& all, BlockManager kv, int64_t host_blocks = 0)
      : seqs(all), blocks(std::move(kv)), host_free_blocks(host_blocks) {}
  std::vector<Seq>& seqs;
  std::deque<int32_t> waiting;   // arrived, not running, first come first served (preempted ones go back in order)
  std::vector<int32_t> running;  // admitted, in admission order
  BlockManager blocks;
  uint64_t pass = 0;  // passes scheduled
  int64_t preemptions = 0;
  // Swap preemption (serve.preemption = swap): requests whose KV is in host memory, oldest swap first, and the host
  // blocks left for more.
  std::deque<int32_t> swapped;
  int64_t host_free_blocks = 0;
  int64_t swaps_out = 0, swaps_in = 0, swapped_blocks = 0;  // swapped_blocks: out and in, all passes
};

/// Puts request `i` in the waiting queue in arrival order (Seq::arrived, then request number; a session's later turn
/// is numbered by its trace time but arrives when its previous turn is answered).
void enqueue_waiting(EngineState& st, int32_t i);
/// Puts the waiting queue back in arrival order (after a policy tried its requests in another order).
void sort_waiting_by_arrival(EngineState& st);

/// A scheduling policy. Contract: next(st) starts a pass (st.pass counts it) and returns its batch: it may admit
/// waiting requests, grow running ones' KV blocks, preempt running requests (back to `waiting`, or to `swapped` under
/// serve.preemption = swap) and swap requests back in, and every request it returns is running; an empty batch when
/// nothing can run now. A policy keeps whatever it needs between passes in itself, not in `st`.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Batch next(EngineState& st) = 0;
  /// Whether next() would return `b` again, pass after pass, until a request of it finishes, a request arrives or the
  /// passes have taken the blocks returned: `b` decodes every running request and nothing else, and the policy's other
  /// choices cannot change meanwhile. The engine may then time such passes without asking (serve/simulator.cpp,
  /// "folded passes") and tells the policy with repeated(). Returns the blocks those passes may take (at most
  /// st.blocks.free()), or nothing when `b` does not repeat (unless a policy says so).
  virtual std::optional<int64_t> repeats(const EngineState& st, const Batch& b) const {
    (void)st, (void)b;
    return std::nullopt;
  }
  /// `passes` more passes of the last batch ran (st.pass counted them) without next() being called.
  virtual void repeated(int64_t passes) { (void)passes; }
};

/// The batch decodes every running request and nothing else, in one step, with nothing swapped out: what repeats() of
/// the continuous-batching policies asks first (serve/schedulers/steps.cpp).
bool decodes_all_running(const EngineState& st, const Batch& b);

/// The policy named `name` of the registry (schedulers(), serve.scheduler), built for `p`.
std::unique_ptr<Scheduler> make_scheduler(std::string_view name, const ServeParams& p);

}  // namespace bitline::serve
