// The steps the scheduling policies share (serve/schedulers/*.cpp): preemption, growing a running request's KV
// with preemption of others, admission of waiting requests (FCFS, within the watermark, max_num_seqs and a token
// budget), swapping back in. Internal to the policies.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "serve/scheduler.hpp"

namespace bitline::serve::policy {

/// Preempts running request `i`: swapped out to host memory when serve.preemption = swap and the host holds its
/// blocks (its KV kept, the copy in this pass: `b.swap_out_blocks`); otherwise by recompute (its blocks and prefix
/// references dropped; readmitted, it looks the cache up again).
void preempt(const ServeParams& p, EngineState& st, Batch& b, int32_t i);
/// Gives running request `i` the blocks for `tokens` tokens, preempting the most recently admitted running requests
/// (other than those already scheduled in this pass) while none are free; false when `i` itself had to be preempted.
bool grow_or_preempt(const ServeParams& p, EngineState& st, Batch& b, int32_t i, int64_t tokens);
/// The mean tokens the decodes `ids` attend over (their computed tokens and the one they decode).
double mean_context(const EngineState& st, const std::vector<int32_t>& ids);
/// Moves the first waiting request into the running ones as a prefill of `n` prompt tokens after its computed ones,
/// its blocks grown to hold `tokens` tokens (the caller checked they are free) and its host-tier prefix units copied
/// in before the pass.
void start_prefill(EngineState& st, Batch& b, int64_t n, int64_t tokens);
/// Admits waiting requests (first come first served) as prefills while they fit: blocks leaving the watermark free,
/// max_num_seqs, and `budget` tokens (a request that alone exceeds the budget runs alone, `alone_ok`). `chunk`: a
/// prompt may be cut to what is left of the budget.
void admit(const ServeParams& p, EngineState& st, Batch& b, int64_t& budget, bool chunk, bool alone_ok);
/// Swaps requests back in from host memory, oldest swap first, while their blocks (and one more token) fit leaving the
/// watermark free and max_num_seqs allows: they rejoin the running requests, decoding from where they stopped (vLLM
/// V0 serves the swapped queue before new prefills). Returns whether any is still swapped out.
bool swap_in(const ServeParams& p, EngineState& st, Batch& b);

/// Repeats (Scheduler::repeats) of the continuous-batching policies that admit from the waiting queue while blocks,
/// max_num_seqs and the budget allow (vllm, chunked): `b` decodes every running request, and a waiting request that did
/// not fit fits no better while the decodes take blocks. Its look-up in the prefix cache runs again each pass (unless
/// max_num_seqs requests run: admission stops before it); it takes and puts back the same cached units, which the last
/// look-up left most recently used, so the cache's order is as it was even when the decodes evict (least recently used
/// first, its units last, the tail of its head first, and a look-up takes the head's units still cached). With a host
/// tier it is not: evicted units enter the host's order, and a look-up moves the head's host units after them; the
/// passes may then take only the blocks free without evicting (BlockManager::unused).
std::optional<int64_t> repeats_while_none_joins(const ServeParams& p, const EngineState& st, const Batch& b);

/// Admits the first waiting request with the blocks of its full context (prompt + output, no watermark: static
/// batching and Orca allocate a request's KV for its maximum length, so nothing running can run out of blocks), its
/// cached prefix taken first, as a prefill of the rest of its prompt. False, nothing taken, when the blocks are not
/// free or its prompt tokens exceed `budget` in a pass that already holds work (a longer prompt runs in a pass of its
/// own).
bool admit_reserved(EngineState& st, Batch& b, int64_t budget);

// The policies (one file each), registered in serve/scheduler.cpp.
std::unique_ptr<Scheduler> make_vllm(const ServeParams& p);
std::unique_ptr<Scheduler> make_chunked(const ServeParams& p);
std::unique_ptr<Scheduler> make_orca(const ServeParams& p);
std::unique_ptr<Scheduler> make_static(const ServeParams& p);
std::unique_ptr<Scheduler> make_sglang(const ServeParams& p);
std::unique_ptr<Scheduler> make_sglang_lpm(const ServeParams& p);

}  // namespace bitline::serve::policy
