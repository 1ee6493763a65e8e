// The scheduling policies through their interface (serve/scheduler.hpp), on engine states built here: each pass's
// batch checked by hand against what the policy's paper or engine does (docs/serving.md, "Schedulers").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "serve/scheduler.hpp"

using namespace bitline;
using namespace bitline::serve;

namespace {

/// Requests of (input, output) tokens, all waiting, over `blocks` blocks of 16 tokens.
class Engine {
 public:
  Engine(const std::vector<std::pair<int64_t, int64_t>>& lengths, int64_t blocks, double watermark = 0)
      : seqs_(make(lengths)), st(seqs_, BlockManager(blocks, 16, watermark)) {
    for (int32_t i = 0; i < int32_t(seqs_.size()); ++i) enqueue_waiting(st, i);
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Seq& seq(int32_t i) { return seqs_[size_t(i)]; }
  /// What the engine does once the pass has run (serve/simulator.cpp, finish_pass and emit): chunks and decodes
  /// computed, a token emitted by each request that completed its prompt or decoded, finished requests retired.
  void complete(const Batch& b) {
    for (size_t j = 0; j < b.prefill.size(); ++j) {
      Seq& s = seq(b.prefill[j]);
      s.computed += b.chunks[j].tokens;
      if (s.computed == s.prefill_target()) emit(s);
    }
    for (int32_t i : b.decode) ++seq(i).computed, emit(seq(i));
    std::erase_if(st.running, [&](int32_t i) { return seq(i).phase == Phase::Done; });
  }

 private:
  static std::vector<Seq> make(const std::vector<std::pair<int64_t, int64_t>>& lengths) {
    std::vector<Seq> v;
    for (const auto& [in, out] : lengths) {
      Seq s;
      s.input = in;
      s.output = out;
      v.push_back(s);
    }
    return v;
  }
  void emit(Seq& s) {
    s.phase = ++s.generated == s.output ? Phase::Done : Phase::Decode;
    if (s.phase == Phase::Done) st.blocks.finish(s);
  }
  std::vector<Seq> seqs_;

 public:
  EngineState st;
};

ServeParams limits(int64_t max_num_seqs, int64_t max_num_batched_tokens) {
  ServeParams p = default_params<ServeParams>();
  p.max_num_seqs = max_num_seqs;
  p.max_num_batched_tokens = max_num_batched_tokens;
  return p;
}

std::vector<int32_t> ids(std::initializer_list<int32_t> l) { return l; }

}  // namespace

TEST(Schedulers, EveryRegisteredPolicyIsBuiltByNameAndAnUnknownNameIsRefused) {
  for (const auto& name : schedulers().names()) EXPECT_NE(make_scheduler(name, limits(4, 64)), nullptr) << name;
  for (const char* shipped : {"vllm", "chunked", "orca", "static"}) EXPECT_NE(make_scheduler(shipped, limits(4, 64)), nullptr);
  EXPECT_THROW(make_scheduler("fifo", limits(4, 64)), ConfigError);
}

TEST(Schedulers, VllmPrefillsTheWaitingRequestsThatFitThenDecodesEveryRunningOne) {
  Engine e({{32, 3}, {32, 3}, {32, 3}}, 100);
  auto s = make_scheduler("vllm", limits(8, 64));
  // Prefill first: two whole prompts fill the 64-token pass; the third waits; nothing decodes.
  Batch b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({0, 1}));
  EXPECT_TRUE(b.decode.empty());
  EXPECT_EQ(b.chunks[1].tokens, 32);
  e.complete(b);
  // The third still waits and fits: another prefill-only pass.
  b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({2}));
  EXPECT_TRUE(b.decode.empty());
  e.complete(b);
  // Nothing waits: every running request decodes, attending its 32 prompt tokens and its first token.
  b = s->next(e.st);
  EXPECT_TRUE(b.prefill.empty());
  EXPECT_EQ(b.decode, ids({0, 1, 2}));
  EXPECT_DOUBLE_EQ(b.decode_context, 33.0);
  EXPECT_EQ(e.st.pass, 3u);
}

TEST(Schedulers, VllmPreemptsTheMostRecentlyAdmittedWhenADecodeFindsNoBlock) {
  // Two 16-token prompts take the two blocks; the first decode needs a second block for request 0.
  Engine e({{16, 4}, {16, 4}}, 2);
  auto s = make_scheduler("vllm", limits(8, 64));
  e.complete(s->next(e.st));
  const Batch b = s->next(e.st);
  EXPECT_EQ(b.decode, ids({0}));
  EXPECT_EQ(e.st.preemptions, 1);
  EXPECT_EQ(e.st.waiting, std::deque<int32_t>({1}));
  EXPECT_EQ(e.seq(1).computed, 0);  // recompute: its KV is freed
  EXPECT_EQ(e.seq(0).blocks, 2);
}

TEST(Schedulers, ChunkedSpendsTheBudgetOnDecodesFirstThenCutsAPromptToWhatIsLeft) {
  Engine e({{16, 8}, {100, 2}}, 100);
  auto s = make_scheduler("chunked", limits(8, 32));
  // Request 0's 16-token prompt, then 16 tokens of request 1's.
  Batch b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({0, 1}));
  EXPECT_EQ(b.chunks[1].offset, 0);
  EXPECT_EQ(b.chunks[1].tokens, 16);
  e.complete(b);
  // Request 0 decodes (one token of the budget), request 1 continues with the 31 left, beside it in one pass.
  b = s->next(e.st);
  EXPECT_EQ(b.decode, ids({0}));
  EXPECT_EQ(b.prefill, ids({1}));
  EXPECT_EQ(b.chunks[0].offset, 16);
  EXPECT_EQ(b.chunks[0].tokens, 31);
}

TEST(Schedulers, OrcaDecodesAndAdmitsNewPromptsInOnePassReservingTheirWholeContext) {
  Engine e({{32, 3}, {40, 100}}, 100);
  auto s = make_scheduler("orca", limits(8, 64));
  // Request 0 is admitted with its whole context reserved: 35 tokens, 3 blocks; request 1 would exceed the budget.
  Batch b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({0}));
  EXPECT_EQ(e.seq(0).blocks, 3);
  e.complete(b);
  // Request 0 decodes and request 1's whole prompt joins the same pass (selective batching), 140 tokens reserved.
  b = s->next(e.st);
  EXPECT_EQ(b.decode, ids({0}));
  EXPECT_EQ(b.prefill, ids({1}));
  EXPECT_EQ(b.chunks[0].tokens, 40);
  EXPECT_EQ(e.seq(1).blocks, 9);
  EXPECT_EQ(e.seq(0).blocks, 3);  // its decode took no block: reserved at admission
}

TEST(Schedulers, StaticDecodesItsBatchPaddedToItsSizeUntilTheLongestFinishesWhileNewRequestsWait) {
  Engine e({{16, 2}, {16, 4}, {16, 2}}, 100);
  auto s = make_scheduler("static", limits(2, 1024));
  Batch b = s->next(e.st);  // a batch of two (max_num_seqs), prefilled together
  EXPECT_EQ(b.prefill, ids({0, 1}));
  e.complete(b);
  b = s->next(e.st);
  EXPECT_EQ(b.decode, ids({0, 1}));
  EXPECT_EQ(b.decode_slots, 2);
  e.complete(b);  // request 0 has its 2 tokens: done
  b = s->next(e.st);
  EXPECT_EQ(b.decode, ids({1}));
  EXPECT_EQ(b.decode_slots, 2);    // its finished member is still a slot of the batch
  EXPECT_TRUE(b.prefill.empty());  // request 2 waits for the batch to finish
  e.complete(b);
  e.complete(s->next(e.st));  // request 1's last token
  b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({2}));  // a new batch
}

TEST(Schedulers, SglangAdmitsWhileTheKvHoldsTheExpectedOutputAndCutsLongPromptsIntoPrefillOnlyPasses) {
  // 20 blocks of 16 tokens. Request 0: 64-token prompt, 160 output tokens; its expected KV at admission is its prompt
  // plus 0.7 x 160 = 112 tokens: 176 tokens, 11 blocks. Request 1 (64 + 160) would need 11 more: 22 > 20, so it waits
  // although its prompt alone (4 blocks) fits. Request 2 comes after it (first come, first served).
  Engine e({{64, 160}, {64, 160}, {16, 2}}, 20);
  auto s = make_scheduler("sglang", limits(8, 512));
  Batch b = s->next(e.st);
  EXPECT_EQ(b.prefill, ids({0}));
  e.complete(b);
  b = s->next(e.st);  // request 1 still cannot be admitted: request 0 decodes alone
  EXPECT_TRUE(b.prefill.empty());
  EXPECT_EQ(b.decode, ids({0}));
  EXPECT_EQ(e.st.waiting, std::deque<int32_t>({1, 2}));
  // A prompt longer than the pass's budget (chunked_prefill_size) runs in prefill-only passes of the budget, the
  // decodes waiting, and goes on first in the next prefill pass.
  Engine l({{8, 4}, {100, 2}}, 100);
  auto t = make_scheduler("sglang", limits(8, 40));
  b = t->next(l.st);
  EXPECT_EQ(b.prefill, ids({0, 1}));
  EXPECT_EQ(b.chunks[1].tokens, 32);
  l.complete(b);
  b = t->next(l.st);
  EXPECT_EQ(b.prefill, ids({1}));
  EXPECT_TRUE(b.decode.empty());  // never mixed
  EXPECT_EQ(b.chunks[0].offset, 32);
  EXPECT_EQ(b.chunks[0].tokens, 40);
  l.complete(b);
  b = t->next(l.st);
  EXPECT_EQ(b.chunks[0].offset, 72);
  EXPECT_EQ(b.chunks[0].tokens, 28);
  l.complete(b);
  b = t->next(l.st);  // both prompts done: both decode
  EXPECT_EQ(b.decode, ids({0, 1}));
}

TEST(Schedulers, SglangLpmTriesTheLongestCachedPrefixFirstAndArrivalOrderWhenMoreThan128Wait) {
  // Units of 16 tokens (one block each). A finished request leaves keys 1, 2, 3 in the cache. Waiting, in arrival
  // order: request 0 shares nothing, request 1 its first two units, request 2 all three. Each has a 64-token prompt
  // (at most (64 - 1) / 16 = 3 units from the cache); the pass's budget is 64 tokens.
  const std::vector<uint64_t> none{7, 8, 9, 10}, two{1, 2, 9, 10}, three{1, 2, 3, 10}, donor{1, 2, 3};
  const auto run = [&](const char* policy, size_t waiting) {
    std::vector<Seq> seqs(waiting + 1);
    EngineState st(seqs, BlockManager(1000, 16, 0, 16));
    Seq& d = seqs.back();  // the finished request: 48 tokens computed in 3 blocks of its own
    d.prefix = &donor, d.prefix_unit = 16, d.input = 48, d.output = 1, d.computed = 48;
    EXPECT_TRUE(st.blocks.grow(d, 48));
    st.blocks.finish(d);
    for (size_t i = 0; i < waiting; ++i) {
      Seq& s = seqs[i];
      s.input = 64, s.output = 4, s.prefix_unit = 16;
      s.prefix = i + 1 == waiting ? &three : i + 2 == waiting ? &two : &none;
      enqueue_waiting(st, int32_t(i));
    }
    auto s = make_scheduler(policy, limits(512, 64));
    Batch b = s->next(st);
    return std::pair{b.prefill, std::vector<int32_t>(st.waiting.begin(), st.waiting.end())};
  };
  // First come first served: request 0's whole prompt takes the budget.
  EXPECT_EQ(run("sglang", 3).first, ids({0}));
  // lpm: request 2 (48 tokens cached, 16 to compute), then 1 (32 + 32), then 0 with the 16 tokens left.
  EXPECT_EQ(run("sglang-lpm", 3).first, ids({2, 1, 0}));
  // 129 waiting: the matching is skipped, first come first served; the ones not admitted stay in arrival order.
  const auto [admitted, left] = run("sglang-lpm", 129);
  EXPECT_EQ(admitted, ids({0}));
  ASSERT_EQ(left.size(), 128u);
  EXPECT_TRUE(std::is_sorted(left.begin(), left.end()));
  // 128 waiting: lpm again; those left wait in arrival order.
  const auto [admitted128, left128] = run("sglang-lpm", 128);
  EXPECT_EQ(admitted128, ids({127, 126, 0}));
  EXPECT_TRUE(std::is_sorted(left128.begin(), left128.end()));
  EXPECT_EQ(left128.size(), 125u);
}
