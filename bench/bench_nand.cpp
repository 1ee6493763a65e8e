// Micro-benchmarks of the functional NAND die against the machine's memory
// read bandwidth, measured in the same run.
//
//   BM_MemoryReadBandwidth  AND-reduce of uint64 words over a 256 MiB buffer
//                           (larger than the last-level cache), as 1 sequential
//                           stream or 8 interleaved streams (the reference).
//   BM_Mws48/<model>        one 48-wordline intra-block MWS over 16 KiB ESP pages
//                           per iteration (768 KiB of operands, cache-resident).
//   BM_LongAnd/<blocks>     an AND over blocks x 48 wordlines: one MWS per block,
//                           accumulated ParaBit-style in the S-latch (first with
//                           S/C init, the rest without, the last with S->C).
//
// Counters: GB/s = operand bytes per CPU-second (decimal GB); mem_GB/s =
// the memory read bandwidth of one core (the die model is single-threaded),
// measured in the benchmark's own setup as the best of three 8-stream passes
// over 256 MiB; x_mem = GB/s / mem_GB/s (target for the NAND benchmarks: >= 0.7).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <memory>
#include <vector>

#include "core/bitvector.hpp"
#include "core/params.hpp"
#include "core/rng.hpp"
#include "nand/die.hpp"
#include "nand/params.hpp"
#include "nand/sequences.hpp"

namespace {

using namespace bitline;
using namespace bitline::nand;

// CPU time of the calling thread, in seconds. Rates are per CPU-second so that
// time the thread spends descheduled on a shared machine does not count
// (stalls on memory do count); on an idle machine it equals wall-clock time.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// CPU time of a benchmark's timed loop.
class LoopTimer {
 public:
  void start() { t0_ = thread_cpu_seconds(); }
  void stop() { seconds_ = thread_cpu_seconds() - t0_; }
  double seconds() const { return seconds_; }

 private:
  double t0_ = 0, seconds_ = 0;
};

constexpr size_t kMemBufferBytes = size_t(256) << 20;

// AND-reduce of n words (a multiple of 8 x S) read as S sequential streams, one
// per contiguous segment, interleaved 64 bytes at a time. One stream is the
// plainest streaming read; several streams keep more cache misses in flight
// and reach the core's full read bandwidth (about 8 on the machines tried).
template <int S>
uint64_t and_reduce(const uint64_t* p, size_t n) {
  const size_t seg = n / S;
  uint64_t acc[8] = {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull};
  for (size_t i = 0; i < seg; i += 8)
    for (int s = 0; s < S; ++s) {
      const uint64_t* q = p + size_t(s) * seg + i;
      for (int k = 0; k < 8; ++k) acc[k] &= q[k];
    }
  return acc[0] & acc[1] & acc[2] & acc[3] & acc[4] & acc[5] & acc[6] & acc[7];
}

std::unique_ptr<uint64_t[]> make_buffer(size_t words) {
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
  for (size_t i = 0; i < words; ++i) buf[i] = ~(i * 0x9E3779B97F4A7C15ull);  // touches every page
  return buf;
}

// The memory read bandwidth of one core in bytes/s: best of three 8-stream
// passes over a buffer larger than the last-level cache. Called in each
// benchmark's setup (no caching), so that it is measured next to the figure it
// is compared with: the machine is shared and its bandwidth drifts.
double measure_memory_read_bandwidth() {
  const size_t words = kMemBufferBytes / 8;
  auto buf = make_buffer(words);
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double t0 = thread_cpu_seconds();
    uint64_t r = and_reduce<8>(buf.get(), words);
    benchmark::DoNotOptimize(r);
    const double t1 = thread_cpu_seconds();
    best = std::max(best, double(kMemBufferBytes) / (t1 - t0));
  }
  return best;
}

// GB/s (decimal) of operand data, the memory read bandwidth and their ratio,
// as plain numbers (a rate counter would print "/s" after the ratio).
void set_counters(benchmark::State& state, double bytes_per_iter, const LoopTimer& t, double mem_bw) {
  const double bytes = double(state.iterations()) * bytes_per_iter;
  state.SetBytesProcessed(int64_t(bytes));
  const double rate = t.seconds() > 0 ? bytes / t.seconds() : 0.0;
  state.counters["GB/s"] = rate / 1e9;
  state.counters["mem_GB/s"] = mem_bw / 1e9;
  state.counters["x_mem"] = rate / mem_bw;
}

// state.range(0): number of streams (1: one sequential pass; 8: the reference).
template <int S>
void BM_MemoryReadBandwidth(benchmark::State& state) {
  const double mem = measure_memory_read_bandwidth();
  const size_t words = kMemBufferBytes / 8;
  auto buf = make_buffer(words);
  LoopTimer t;
  t.start();
  for (auto _ : state) {
    uint64_t r = and_reduce<S>(buf.get(), words);
    benchmark::DoNotOptimize(r);
  }
  t.stop();
  set_counters(state, double(kMemBufferBytes), t, mem);
}
BENCHMARK(BM_MemoryReadBandwidth<1>)->Name("BM_MemoryReadBandwidth/streams:1")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemoryReadBandwidth<8>)->Name("BM_MemoryReadBandwidth/streams:8")->Unit(benchmark::kMillisecond);

NandParams bench_params(bool errors) {
  NandParams p = default_params<NandParams>();
  if (!errors) p.reliability.model = nand::ErrorModelChoice::named("none");
  return p;
}

// Mostly-ones page with `zeros` random bits cleared, so that long ANDs are not all zero.
BitVector sparse_zeros_page(Rng& rng, size_t bits, int zeros) {
  BitVector v(bits, true);
  for (int i = 0; i < zeros; ++i) v.set(size_t(rng.below(bits)), false);
  return v;
}

// Programs `blocks` x all wordlines of sub-block 0 of plane 0 in ESP mode and
// returns the AND of everything programmed.
BitVector program_blocks(Die& die, uint32_t blocks, int zeros_per_page) {
  const auto& g = die.params().geometry;
  const size_t bits = size_t(g.page_bits());
  Rng rng(7);
  BitVector ref(bits, true);
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t w = 0; w < uint32_t(g.wordlines_per_string); ++w) {
      BitVector v = sparse_zeros_page(rng, bits, zeros_per_page);
      ref &= v;
      die.execute(ProgramCmd{{0, b, 0, w, 0}, ProgramMode::Esp, false, v.to_bytes()});
    }
  return ref;
}

std::vector<uint32_t> all_wordlines(const Die& die) {
  std::vector<uint32_t> wls(size_t(die.params().geometry.wordlines_per_string));
  for (uint32_t w = 0; w < wls.size(); ++w) wls[w] = w;
  return wls;
}

// state.range(0): 0 = error-free model ("none"), 1 = default error model (rber_table).
void BM_Mws48(benchmark::State& state) {
  const bool errors = state.range(0) != 0;
  Die die(bench_params(errors), 1);
  const auto& g = die.params().geometry;
  const BitVector ref = program_blocks(die, 1, 64);
  const Command cmd = intra_block(0, 0, 0, all_wordlines(die));
  const double mem = measure_memory_read_bandwidth();
  LoopTimer t;
  t.start();
  for (auto _ : state) {
    CommandResult r = die.execute(cmd);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(die.latch(0, Latch::C).data());
  }
  t.stop();
  const double bytes = double(g.wordlines_per_string) * double(g.page_size.raw());
  set_counters(state, bytes, t, mem);
  state.counters["bit_errors"] = double(die.stats().bit_errors);
  if (!errors && !(die.latch(0, Latch::C) == ref)) state.SkipWithError("MWS result differs from the CPU reference");
  state.SetLabel(errors ? "rber_table, ESP" : "error-free");
}
BENCHMARK(BM_Mws48)->ArgName("errors")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// state.range(0): blocks of 48 ESP wordlines ANDed together (64 -> 48 MiB, 256 -> 192 MiB).
void BM_LongAnd(benchmark::State& state) {
  const uint32_t blocks = uint32_t(state.range(0));
  Die die(bench_params(false), 1);
  const auto& g = die.params().geometry;
  const BitVector ref = program_blocks(die, blocks, 4);
  const std::vector<uint32_t> wls = all_wordlines(die);
  std::vector<Command> cmds;
  for (uint32_t b = 0; b < blocks; ++b) {
    const bool first = b == 0, last = b + 1 == blocks;
    cmds.push_back(intra_block(0, b, 0, wls, Iscm{.inverse = false, .init_s = first, .init_c = first, .transfer = last}));
  }
  const double mem = measure_memory_read_bandwidth();
  LoopTimer t;
  t.start();
  for (auto _ : state) {
    for (const auto& c : cmds) {
      CommandResult r = die.execute(c);
      benchmark::DoNotOptimize(r);
    }
    benchmark::DoNotOptimize(die.latch(0, Latch::C).data());
  }
  t.stop();
  const double bytes = double(blocks) * double(g.wordlines_per_string) * double(g.page_size.raw());
  set_counters(state, bytes, t, mem);
  state.counters["operand_MiB"] = bytes / double(1 << 20);
  if (!(die.latch(0, Latch::C) == ref)) state.SkipWithError("long AND result differs from the CPU reference");
}
BENCHMARK(BM_LongAnd)->ArgName("blocks")->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
