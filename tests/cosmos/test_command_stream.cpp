// One command stream (docs/cosmos.md): timing-only and functional mode issue the
// same die commands. Each mode records, per die and in issue order, a 64-bit
// FNV-1a hash over the encoded bytes of every command it issues; the two must
// match for every workload and every system on a small SSD.
#include "cosmos_test_util.hpp"

#include <fmt/format.h>

#include <numeric>

namespace bitline::cosmos::test {
namespace {

ReadResult traced_read(const EvalConfig& cfg, const Point& p, System s, bool functional, uint64_t seed, bool trace = true) {
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, functional, seed);
  ssd.trace_commands(trace);
  PreparedPoint prep = prepare(ssd, p, cfg.workload, s, seed);
  return ssd.read(prep.queries, s, prep.popcount);
}

uint64_t total(const CommandStream& st) { return std::accumulate(st.commands.begin(), st.commands.end(), uint64_t(0)); }

TEST(CommandStream, HashIsFnv1aOverTheBytesPerDie) {
  // Published FNV-1a 64-bit test vectors: "" -> offset basis, "a", "foobar".
  CommandStream st(3);
  const std::string a = "a", foobar = "foobar";
  st.add(1, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(a.data()), a.size()));
  st.add(2, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(foobar.data()), 3));
  st.add(2, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(foobar.data()) + 3, 3));
  EXPECT_EQ(st.fnv1a[0], 0xcbf29ce484222325ull);
  EXPECT_EQ(st.fnv1a[1], 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(st.fnv1a[2], 0x85944171f73967e8ull);  // one stream: the hash runs on over command boundaries
  EXPECT_EQ(st.commands, (std::vector<uint64_t>{0, 1, 2}));
}

TEST(CommandStream, SameInBothModesForEveryWorkloadAndSystem) {
  EvalConfig cfg = small_config(false);
  cfg.workload = small_workload();
  const size_t dies = size_t(cfg.ssd.dies());
  for (const Point& p : small_points()) {
    std::vector<CommandStream> by_system;
    for (System s : kAllSystems) {
      SCOPED_TRACE(fmt::format("{} {}={} on {}", p.workload, p.param, p.value, to_string(s)));
      ReadResult f = traced_read(cfg, p, s, true, 7);
      ReadResult t = traced_read(cfg, p, s, false, 7);
      ASSERT_EQ(f.stream.fnv1a.size(), dies);
      ASSERT_EQ(t.stream.fnv1a.size(), dies);
      size_t used = 0;
      for (size_t d = 0; d < dies; ++d) {
        EXPECT_EQ(f.stream.commands[d], t.stream.commands[d]) << "die " << d;
        EXPECT_EQ(f.stream.fnv1a[d], t.stream.fnv1a[d]) << "die " << d;
        used += t.stream.commands[d] > 0;
      }
      EXPECT_GE(used, 2u);  // even the smallest point (2 pages) spreads over two dies
      EXPECT_EQ(total(f.stream), f.die_commands);
      EXPECT_EQ(total(t.stream), t.die_commands);
      // Tracing only records: the timing is the same without it.
      ReadResult u = traced_read(cfg, p, s, false, 7, false);
      EXPECT_TRUE(u.stream.fnv1a.empty());
      EXPECT_EQ(u.die_commands, t.die_commands);
      EXPECT_EQ(u.timing.total, t.timing.total);
      EXPECT_EQ(u.energy.total().raw(), t.energy.total().raw());
      by_system.push_back(t.stream);
    }
    SCOPED_TRACE(fmt::format("{} {}={}", p.workload, p.param, p.value));
    // OSP and ISP issue the same die commands (they differ in where the pages go); the in-flash
    // systems issue other ones, and Flash-Cosmos's MWS differ from ParaBit's single sensings.
    EXPECT_EQ(by_system[0], by_system[1]);
    EXPECT_NE(by_system[1].fnv1a, by_system[2].fnv1a);
    EXPECT_NE(by_system[2].fnv1a, by_system[3].fnv1a);
    EXPECT_NE(by_system[0].fnv1a, by_system[3].fnv1a);
  }
}

TEST(CommandStream, TimingOnlyModeChecksTheCommandsItPrices) {
  // CONT may chain 2 slots while the power limit allows 4: the planner merges an OR of three operands
  // from different blocks into one 3-slot MWS, which the die rejects. Timing-only mode rejects it too.
  EvalConfig cfg = small_config(false);
  cfg.nand.command.max_mws_slots = 2;
  for (bool functional : {true, false}) {
    SCOPED_TRACE(functional ? "functional" : "timing-only");
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, functional, 3);
    const int64_t bytes = 8 * cfg.nand.geometry.page_size.raw();
    for (const char* n : {"a", "b", "c"}) {
      WriteOptions o;
      o.group = n;  // a pool (and so a block) of its own
      if (functional)
        ssd.write(n, BitVector(size_t(bytes) * 8, true), o);
      else
        ssd.write(n, bytes, o);
    }
    try {
      ssd.read("OR(a, b, c)", System::Fc);
      ADD_FAILURE() << "expected a CommandError";
    } catch (const CommandError& e) {
      EXPECT_NE(std::string(e.what()).find("command.max_mws_slots"), std::string::npos) << e.what();
    }
    // ParaBit senses one block at a time: legal.
    EXPECT_EQ(ssd.read("OR(a, b, c)", System::ParaBit).die_commands, 8u * 4u);
  }
}

}  // namespace
}  // namespace bitline::cosmos::test
