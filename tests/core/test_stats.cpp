// The one statistics tree: registered by reference, dumped by instance path.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/stats.hpp"

#include <nlohmann/json.hpp>

using namespace bitline;

TEST(StatsTree, DumpsRegisteredMembersByPathWithTheirCurrentValues) {
  struct Counters {
    uint64_t reads = 0;
    int64_t free_blocks = 7;
    Time busy{};
    Energy energy{};
    Bytes moved{};
  } c;
  StatsTree t;
  t.group("ssd.die0").add("reads", c.reads, "reads").add("busy_s", c.busy, "busy time");
  t.group("ssd.die0.energy_j").add("sense", c.energy, "sensing energy");
  t.group("ssd").add("free_blocks", c.free_blocks, "free blocks").add("bytes", c.moved, "bytes moved");
  t.group("ssd").derived(
      "reads_per_block", [&] { return double(c.reads) / double(c.free_blocks); }, "a derived figure");
  // Counting happens in the component's own members after registration: the dump reads them then.
  c.reads = 14;
  c.busy = us(3);
  c.energy = Energy(2.5e-6);
  c.moved = Bytes(4096);
  const Json j = t.dump();
  EXPECT_EQ(j["ssd"]["die0"]["reads"], 14);
  EXPECT_DOUBLE_EQ(j["ssd"]["die0"]["busy_s"].get<double>(), 3e-6);  // Time in seconds
  EXPECT_DOUBLE_EQ(j["ssd"]["die0"]["energy_j"]["sense"].get<double>(), 2.5e-6);
  EXPECT_EQ(j["ssd"]["bytes"], 4096);
  EXPECT_DOUBLE_EQ(j["ssd"]["reads_per_block"].get<double>(), 2.0);
  EXPECT_EQ(t.describe()["ssd"]["die0"]["busy_s"], "busy time");
}

TEST(StatsTree, ANameRegisteredTwiceIsAModelBug) {
  uint64_t x = 0;
  StatsTree t;
  t.group("a").add("x", x, "x");
  EXPECT_THROW(t.group("a").add("x", x, "again"), std::logic_error);
  t.group("a.sub");
  EXPECT_THROW(t.group("a").add("sub", x, "clashes with a group"), std::logic_error);
}

// Every kind of value a result registers keeps its JSON type: typed quantities in their base unit (Power in W,
// Bandwidth in B/s), flags, texts, and derived figures that return a JSON object (a deployment record) stay objects
// (a JSON value converts to a string too; it must not be taken for one).
TEST(StatsTree, ValuesKeepTheirJsonTypes) {
  const Power p = watts(700);
  const Bandwidth bw(4.8e12);
  const bool fits = true;
  const std::string where = "hbm";
  const uint32_t small = 3;
  StatsTree t;
  t.add("power_w", p, "power").add("bw", bw, "bandwidth").add("fits", fits, "flag").add("where", where, "text");
  t.add("small", small, "unsigned");
  t.derived(
      "record",
      [] {
        return Json{{"tp", 8}, {"label", "TP8"}};
      },
      "an object");
  t.derived(
      "name", [] { return std::string("csix8"); }, "a derived text");
  t.derived(
      "ms", [] { return 1.5; }, "a derived number");
  const Json j = t.dump();
  EXPECT_EQ(j["power_w"], 700.0);
  EXPECT_EQ(j["bw"], 4.8e12);
  EXPECT_TRUE(j["fits"].is_boolean());
  EXPECT_EQ(j["where"], "hbm");
  EXPECT_TRUE(j["small"].is_number_unsigned());
  ASSERT_TRUE(j["record"].is_object());
  EXPECT_EQ(j["record"]["label"], "TP8");
  EXPECT_EQ(j["name"], "csix8");
  EXPECT_EQ(j["ms"], 1.5);
  // describe() gives the same tree with descriptions.
  EXPECT_EQ(t.describe()["record"], "an object");
}
