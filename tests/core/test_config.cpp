// Configuration trees (YAML, presets, --set) and parameter loading/description.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/quantity_print.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/params.hpp"

using namespace bitline;
namespace fs = std::filesystem;

namespace {

// Runs f, expects a ConfigError whose message contains every needle.
template <class F>
std::string expect_config_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "message: " << msg << "\nexpected to contain: " << n;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ConfigError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a ConfigError, nothing was thrown";
  return {};
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            (std::string("bitline-core-") + info->test_suite_name() + "-" + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  fs::path path_;
};

// ---- test parameter structs ---------------------------------------------------

struct InnerParams {
  Time delay{};
  int64_t lanes = 0;
  template <class V>
  void visit(V& v) {
    v(delay, {.name = "delay", .def = "1ns", .desc = "inner delay", .source = "test: inner", .min = 0});
    v(lanes, {.name = "lanes", .def = "8", .desc = "lanes", .source = "test: inner", .min = 1, .max = 64});
  }
};

struct TestParams {
  Time latency{};
  Bytes size{};
  Bandwidth rate{};
  Energy energy{};
  Power power{};
  EnergyPerBit io{};
  double ratio = 0;
  int64_t count = 0;
  bool enabled = false;
  std::string mode;
  Table curve;
  InnerParams inner;

  template <class V>
  void visit(V& v) {
    v(latency, {.name = "latency", .def = "22.5us", .desc = "read latency", .source = "spec: test latency", .min = 0});
    v(size, {.name = "size", .def = "16KiB", .desc = "page size", .source = "spec: test size", .min = 1, .max = 1 << 24});
    v(rate, {.name = "rate", .def = "1.2GB/s", .desc = "channel rate", .source = "spec: test rate", .min = 1});
    v(energy, {.name = "energy", .def = "3nJ", .desc = "an energy", .source = "assumption: test", .min = 0});
    v(power, {.name = "power", .def = "82.5mW", .desc = "a power", .source = "assumption: test", .min = 0});
    v(io, {.name = "io", .def = "8pJ/bit", .desc = "I/O energy", .source = "assumption: test", .min = 0});
    v(ratio, {.name = "ratio", .def = "2.0", .desc = "a ratio", .source = "derived: test", .min = 1.0, .max = 10.0});
    v(count, {.name = "count", .def = "4", .desc = "a count", .source = "derived: test", .min = 1, .max = 255});
    v(enabled, {.name = "enabled", .def = "true", .desc = "a flag", .source = "bitline"});
    v(mode, {.name = "mode", .def = "fast", .desc = "a mode", .source = "bitline", .choices = "fast|slow|off"});
    v(curve, {.name = "curve", .def = "[[1, 1.0], [8, 1.01], [48, 1.033]]", .desc = "a curve", .source = "spec: test curve"});
    v.section("inner", inner);
  }
};

TestParams load_text_params(const std::string& yaml, const std::string& origin = "t.yaml") {
  ConfigTree t;
  t.load_text(yaml, origin);
  return load_params<TestParams>(t, "test");
}

}  // namespace

// ---- ConfigTree ------------------------------------------------------------------

TEST(ConfigTree, LoadTextRecordsValuesAndOrigins) {
  ConfigTree t;
  t.load_text("nand:\n  timing:\n    t_read_slc: 22.5us\n  geometry:\n    page_size: 16KiB\n", "a.yaml");
  const ConfigNode* n = t.at("nand.timing.t_read_slc");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, ConfigNode::Kind::Scalar);
  EXPECT_EQ(n->scalar, "22.5us");
  EXPECT_EQ(n->origin, "a.yaml:3");
  ASSERT_NE(t.at("nand.geometry.page_size"), nullptr);
  EXPECT_EQ(t.at("nand.geometry.page_size")->origin, "a.yaml:5");
  EXPECT_TRUE(t.at("nand")->is_map());
  EXPECT_EQ(t.at("nand.timing.nosuch"), nullptr);
  EXPECT_EQ(t.at("nand.timing.t_read_slc.deeper"), nullptr);
  EXPECT_EQ(t.at("other"), nullptr);
  EXPECT_EQ(t.at(""), &t.root());
  // Keys keep file order.
  ASSERT_EQ(t.at("nand")->keys.size(), 2u);
  EXPECT_EQ(t.at("nand")->keys[0].first, "timing");
  EXPECT_EQ(t.at("nand")->keys[1].first, "geometry");
}

TEST(ConfigTree, SectionOriginIsTheLineOfItsKey) {
  ConfigTree t;
  t.load_text("# comment\nnand:\n  timing:\n    t_read_slc: 22.5us\nsim:\n", "a.yaml");
  EXPECT_EQ(t.at("nand")->origin, "a.yaml:2");
  EXPECT_EQ(t.at("nand.timing")->origin, "a.yaml:3");
  EXPECT_EQ(t.at("sim")->origin, "a.yaml:5");  // an empty section
}

TEST(ConfigTree, MergeOverridesScalarsAndKeepsTheRest) {
  ConfigTree t;
  t.load_text("nand:\n  timing:\n    t_read_slc: 22.5us\n    t_prog_slc: 200us\n", "base.yaml");
  t.load_text("nand:\n  timing:\n    t_read_slc: 60us\n  geometry:\n    page_size: 8KiB\n", "over.yaml");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "60us");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->origin, "over.yaml:3");
  EXPECT_EQ(t.at("nand.timing.t_prog_slc")->scalar, "200us");
  EXPECT_EQ(t.at("nand.timing.t_prog_slc")->origin, "base.yaml:4");
  EXPECT_EQ(t.at("nand.geometry.page_size")->scalar, "8KiB");
  // An empty section in a later file does not erase an earlier one.
  t.load_text("nand:\n  timing:\n", "empty.yaml");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "60us");
  // An empty document changes nothing.
  t.load_text("", "nothing.yaml");
  t.load_text("# only a comment\n", "comment.yaml");
  EXPECT_EQ(t.at("nand.timing.t_prog_slc")->scalar, "200us");
  // A list replaces a list (no element-wise merge).
  t.load_text("x:\n  l: [1, 2, 3]\n", "l1.yaml");
  t.load_text("x:\n  l: [4]\n", "l2.yaml");
  ASSERT_EQ(t.at("x.l")->items.size(), 1u);
  EXPECT_EQ(t.at("x.l")->items[0].scalar, "4");
}

TEST(ConfigTree, TopLevelMustBeAMap) {
  ConfigTree t;
  expect_config_error([&] { t.load_text("- a\n- b\n", "list.yaml"); }, {"list.yaml", "top level", "map"});
  expect_config_error([&] { t.load_text("just text\n", "scalar.yaml"); }, {"scalar.yaml", "top level"});
}

TEST(ConfigTree, MalformedYamlNamesFileAndLine) {
  ConfigTree t;
  // Line 3 is indented under a scalar value: yaml-cpp reports it at line 3.
  expect_config_error([&] { t.load_text("a: 1\nb: 2\n  c: 3\n", "bad.yaml"); }, {"bad.yaml:3:", "malformed YAML"});
  // An unclosed flow sequence is detected at the line after it.
  std::string msg = expect_config_error([&] { t.load_text("nand:\n  l: [1, 2\n  m: 3\n", "flow.yaml"); }, {"flow.yaml:", "malformed YAML"});
  EXPECT_TRUE(msg.rfind("flow.yaml:2:", 0) == 0 || msg.rfind("flow.yaml:3:", 0) == 0) << msg;
  // Duplicate keys are an error too (yaml-cpp would silently keep one).
  expect_config_error([&] { t.load_text("nand:\n  a: 1\n  b: 2\n  a: 3\n", "dup.yaml"); }, {"dup.yaml:4", "'a' appears twice"});
}

TEST(ConfigTree, LoadFileErrors) {
  TempDir d;
  ConfigTree t;
  expect_config_error([&] { t.load_file(d.path() / "missing.yaml"); }, {"missing.yaml", "cannot open"});
  auto bad = d.write("bad.yaml", "a: [\n");
  expect_config_error([&] { t.load_file(bad); }, {bad.string() + ":", "malformed YAML"});
  auto ok = d.write("ok.yaml", "nand:\n  timing:\n    t_read_slc: 30us\n");
  t.load_file(ok);
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->origin, ok.string() + ":3");
}

TEST(ConfigTree, PresetsWithBaseInheritance) {
  TempDir d;
  d.write("root.yaml", "nand:\n  timing:\n    t_read_slc: 22.5us\n    t_prog_slc: 200us\n  geometry:\n    page_size: 16KiB\n");
  d.write("mid.yaml", "base: root\nnand:\n  timing:\n    t_read_slc: 60us\n");
  d.write("other.yaml", "nand:\n  geometry:\n    page_size: 4KiB\n    planes_per_die: 4\n");
  d.write("multi.yaml", "base: [mid, other]\nnand:\n  geometry:\n    planes_per_die: 1\n");
  d.write("notes.txt", "not a preset\n");

  ConfigTree t;
  t.set_preset_dir(d.path());
  EXPECT_EQ(t.preset_dir(), d.path());
  EXPECT_EQ(t.available_presets(), (std::vector<std::string>{"mid", "multi", "other", "root"}));

  t.load_preset("mid");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "60us");   // the child overrides its base
  EXPECT_EQ(t.at("nand.timing.t_prog_slc")->scalar, "200us");  // and inherits the rest
  EXPECT_EQ(t.at("base"), nullptr);                            // `base:` is consumed, not a config key
  EXPECT_NE(t.at("nand.timing.t_read_slc")->origin.find("mid.yaml:4"), std::string::npos);
  EXPECT_NE(t.at("nand.timing.t_prog_slc")->origin.find("root.yaml:4"), std::string::npos);

  ConfigTree m;
  m.set_preset_dir(d.path());
  m.load_preset("multi");  // bases in list order, then the file itself
  EXPECT_EQ(m.at("nand.timing.t_read_slc")->scalar, "60us");
  EXPECT_EQ(m.at("nand.geometry.page_size")->scalar, "4KiB");  // `other` after `mid`
  EXPECT_EQ(m.at("nand.geometry.planes_per_die")->scalar, "1");
  EXPECT_EQ(m.at("base"), nullptr);

  // A user file may start from a preset.
  auto user = d.write("user.yaml", "base: mid\nnand:\n  timing:\n    t_prog_slc: 300us\n");
  ConfigTree u;
  u.set_preset_dir(d.path());
  u.load_file(user);
  EXPECT_EQ(u.at("nand.timing.t_read_slc")->scalar, "60us");
  EXPECT_EQ(u.at("nand.timing.t_prog_slc")->scalar, "300us");
}

TEST(ConfigTree, PresetErrors) {
  TempDir d;
  d.write("a.yaml", "base: b\nnand: {}\n");
  d.write("b.yaml", "base: a\nnand: {}\n");
  d.write("self.yaml", "base: self\n");
  d.write("dangling.yaml", "sim:\n  seed: 1\nbase: nowhere\n");
  d.write("badbase.yaml", "base:\n  x: 1\n");
  ConfigTree t;
  t.set_preset_dir(d.path());
  expect_config_error([&] { t.load_preset("a"); }, {"a.yaml -> b.yaml -> a.yaml", "cycle"});
  expect_config_error([&] { t.load_preset("self"); }, {"self.yaml", "cycle"});
  expect_config_error([&] { t.load_preset("dangling"); }, {"dangling.yaml:3", "unknown preset 'nowhere'"});
  expect_config_error([&] { t.load_preset("badbase"); }, {"badbase.yaml", "base: must be a preset name"});
  // Unknown --preset lists what is available.
  expect_config_error([&] { t.load_preset("nosuch"); }, {"--preset nosuch", "unknown preset", "a, b, badbase, dangling, self"});
}

TEST(ConfigTree, ApplySetCreatesAndOverrides) {
  ConfigTree t;
  t.load_text("nand:\n  timing:\n    t_read_slc: 22.5us\n", "a.yaml");
  t.apply_set("nand.timing.t_read_slc=30us");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "30us");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->origin, "--set");
  // Creates missing sections and keys.
  t.apply_set("nand.geometry.page_size=8KiB");
  t.apply_set("sim.seed=7");
  EXPECT_EQ(t.at("nand.geometry.page_size")->scalar, "8KiB");
  EXPECT_EQ(t.at("nand.geometry.page_size")->origin, "--set");
  EXPECT_EQ(t.at("sim.seed")->scalar, "7");
  // The value is YAML: a table.
  t.apply_set("nand.timing.mws_blocks=[[1, 1.0], [4, 2.0]]");
  const ConfigNode* tab = t.at("nand.timing.mws_blocks");
  ASSERT_NE(tab, nullptr);
  ASSERT_EQ(tab->kind, ConfigNode::Kind::Sequence);
  ASSERT_EQ(tab->items.size(), 2u);
  EXPECT_EQ(tab->items[1].items[0].scalar, "4");
  // Everything after the first '=' is the value.
  t.apply_set("x.expr=a=b");
  EXPECT_EQ(t.at("x.expr")->scalar, "a=b");
  // A later --set wins.
  t.apply_set("sim.seed=9");
  EXPECT_EQ(t.at("sim.seed")->scalar, "9");
  // A --set of a map merges into the section.
  t.apply_set("nand.timing={t_prog_slc: 100us}");
  EXPECT_EQ(t.at("nand.timing.t_prog_slc")->scalar, "100us");
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "30us");
}

TEST(ConfigTree, ApplySetErrors) {
  ConfigTree t;
  t.load_text("nand:\n  timing:\n    t_read_slc: 22.5us\n", "a.yaml");
  expect_config_error([&] { t.apply_set("nand.timing.t_read_slc"); }, {"nand.timing.t_read_slc", "expected key.path=value"});
  expect_config_error([&] { t.apply_set("=5"); }, {"expected key.path=value"});
  expect_config_error([&] { t.apply_set("nand..x=5"); }, {"empty key"});
  expect_config_error([&] { t.apply_set(".x=5"); }, {"empty key"});
  expect_config_error([&] { t.apply_set("nand.timing.t_read_slc.sub=1"); },
                      {"--set 'nand.timing.t_read_slc.sub=1'", "'nand.timing.t_read_slc' is not a section"});
  expect_config_error([&] { t.apply_set("nand.timing.t_read_slc=[1, 2"); }, {"--set nand.timing.t_read_slc", "malformed YAML"});
  // A failed --set leaves the value alone.
  EXPECT_EQ(t.at("nand.timing.t_read_slc")->scalar, "22.5us");
}

// ---- ParamLoader ----------------------------------------------------------------

TEST(ParamLoader, DefaultsWhenSectionAbsent) {
  ConfigTree empty;
  for (const TestParams& p : {default_params<TestParams>(), load_params<TestParams>(empty, "test")}) {
    EXPECT_EQ(p.latency.raw(), 22'500'000);
    EXPECT_EQ(p.size.raw(), 16384);
    EXPECT_DOUBLE_EQ(p.rate.raw(), 1.2e9);
    EXPECT_DOUBLE_EQ(p.energy.raw(), 3e-9);
    EXPECT_DOUBLE_EQ(p.power.raw(), 0.0825);
    EXPECT_DOUBLE_EQ(p.io.raw(), 8e-12);
    EXPECT_EQ(p.ratio, 2.0);
    EXPECT_EQ(p.count, 4);
    EXPECT_TRUE(p.enabled);
    EXPECT_EQ(p.mode, "fast");
    ASSERT_EQ(p.curve.points.size(), 3u);
    EXPECT_EQ(p.curve.points[2], (std::pair<double, double>{48, 1.033}));
    EXPECT_EQ(p.inner.delay.raw(), 1000);
    EXPECT_EQ(p.inner.lanes, 8);
  }
  // An empty section is the same as an absent one.
  TestParams q = load_text_params("test:\n  inner:\n");
  EXPECT_EQ(q.inner.lanes, 8);
}

TEST(ParamLoader, ReadsEveryTypeFromConfig) {
  TestParams p = load_text_params(
      "test:\n"
      "  latency: 60us\n"
      "  size: 8KiB\n"
      "  rate: 800MB/s\n"
      "  energy: 2pJ\n"
      "  power: 1W\n"
      "  io: 5pJ/bit\n"
      "  ratio: 3.5\n"
      "  count: 16\n"
      "  enabled: no\n"
      "  mode: slow\n"
      "  curve: [[0, 1], [10, 2]]\n"
      "  inner:\n"
      "    lanes: 2\n");
  EXPECT_EQ(p.latency, us(60));
  EXPECT_EQ(p.size, KiB(8));
  EXPECT_DOUBLE_EQ(p.rate.raw(), 8e8);
  EXPECT_DOUBLE_EQ(p.energy.raw(), 2e-12);
  EXPECT_DOUBLE_EQ(p.power.raw(), 1.0);
  EXPECT_DOUBLE_EQ(p.io.raw(), 5e-12);
  EXPECT_EQ(p.ratio, 3.5);
  EXPECT_EQ(p.count, 16);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.mode, "slow");
  ASSERT_EQ(p.curve.points.size(), 2u);
  EXPECT_EQ(p.curve.points[1], (std::pair<double, double>{10, 2}));
  EXPECT_EQ(p.inner.lanes, 2);
  EXPECT_EQ(p.inner.delay, ns(1));  // not given: default
}

TEST(ParamLoader, BooleansAndNumbers) {
  for (const char* yes : {"true", "yes", "on"}) EXPECT_TRUE(load_text_params(std::string("test: {enabled: ") + yes + "}").enabled);
  for (const char* no : {"false", "no", "off"}) EXPECT_FALSE(load_text_params(std::string("test: {enabled: ") + no + "}").enabled);
  expect_config_error([] { load_text_params("test:\n  enabled: maybe\n"); }, {"t.yaml:2", "test.enabled", "not a boolean"});
  expect_config_error([] { load_text_params("test:\n  count: 1.5\n"); }, {"t.yaml:2", "test.count", "'1.5' is not an integer"});
  expect_config_error([] { load_text_params("test:\n  count: 12abc\n"); }, {"test.count", "not an integer"});
  expect_config_error([] { load_text_params("test:\n  ratio: two\n"); }, {"t.yaml:2", "test.ratio", "'two' is not a number"});
  EXPECT_EQ(load_text_params("test: {ratio: 1e0}").ratio, 1.0);
}

TEST(ParamLoader, UnknownKeySuggestsTheClosest) {
  std::string msg = expect_config_error([] { load_text_params("test:\n  latency: 1us\n  latncy: 5us\n"); },
                                        {"t.yaml:3", "test.latncy", "unknown key", "did you mean 'latency'?"});
  EXPECT_NE(msg.find("known keys here:"), std::string::npos) << msg;
  // In a nested section the full path is named.
  expect_config_error([] { load_text_params("test:\n  inner:\n    delya: 1us\n"); },
                      {"t.yaml:3", "test.inner.delya", "unknown key", "did you mean 'delay'?"});
  // Nothing close: no suggestion, but the known keys are listed.
  msg = expect_config_error([] { load_text_params("test:\n  zzzzzzzz: 1\n"); }, {"test.zzzzzzzz", "unknown key", "known keys here:"});
  EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
  EXPECT_NE(msg.find("latency"), std::string::npos) << msg;
  // Case slips are close too.
  expect_config_error([] { load_text_params("test:\n  Latency: 1us\n"); }, {"did you mean 'latency'?"});
}

namespace {
struct WithImpl {
  Time t{};
  template <class V>
  void visit(V& v) {
    v.also_known("impl");
    v(t, {.name = "t", .def = "1us", .desc = "t", .source = "test"});
  }
};
}  // namespace

TEST(ParamLoader, AlsoKnownKeysAreAccepted) {
  ConfigTree tree;
  tree.load_text("c:\n  impl: fancy\n  t: 2us\n", "c.yaml");
  EXPECT_EQ(load_params<WithImpl>(tree, "c").t, us(2));
}

TEST(ParamLoader, BadUnitNamesFileLineAndKey) {
  std::string msg = expect_config_error([] { load_text_params("test:\n  inner:\n    delay: 22.5uss\n", "my.yaml"); },
                                        {"my.yaml:3", "test.inner.delay", "unknown time unit 'uss'"});
  EXPECT_EQ(msg.rfind("my.yaml:3: test.inner.delay: ", 0), 0u) << msg;
  expect_config_error([] { load_text_params("test:\n  size: 16\n"); }, {"t.yaml:2", "test.size", "has no unit"});
  expect_config_error([] { load_text_params("test:\n  size: 1.5B\n"); }, {"t.yaml:2", "test.size", "whole number of bytes"});
  expect_config_error([] { load_text_params("test:\n  rate: 1.2GB\n"); }, {"t.yaml:2", "test.rate", "unknown bandwidth unit"});
  expect_config_error([] { load_text_params("test:\n  latency: [1us]\n"); }, {"test.latency", "expected a time value, found a list"});
  expect_config_error([] { load_text_params("test:\n  latency:\n    a: 1\n"); }, {"test.latency", "found a section"});
  expect_config_error([] { load_text_params("test:\n  latency:\n"); }, {"t.yaml:2", "test.latency", "empty value"});
}

TEST(ParamLoader, SectionShapeErrors) {
  expect_config_error([] { load_text_params("test: 5\n"); }, {"t.yaml:1", "test", "expected a section"});
  expect_config_error([] { load_text_params("test:\n  inner: 5\n"); }, {"t.yaml:2", "test.inner", "expected a section"});
  expect_config_error([] { load_text_params("test:\n  inner: [1, 2]\n"); }, {"test.inner", "expected a section"});
}

TEST(ParamLoader, RangeErrors) {
  expect_config_error([] { load_text_params("test:\n  size: -16KiB\n"); }, {"t.yaml:2", "test.size", "must not be negative"});
  expect_config_error([] { load_text_params("test:\n  latency: -1us\n"); }, {"test.latency", "must not be negative"});
  expect_config_error([] { load_text_params("test:\n  inner:\n    lanes: -3\n"); },
                      {"t.yaml:3", "test.inner.lanes", "must not be negative"});
  expect_config_error([] { load_text_params("test:\n  size: 0B\n"); }, {"test.size", "must be at least 1"});
  expect_config_error([] { load_text_params("test:\n  size: 32MiB\n"); }, {"test.size", "must be at most 16777216"});
  expect_config_error([] { load_text_params("test:\n  count: 256\n"); }, {"test.count", "must be at most 255"});
  expect_config_error([] { load_text_params("test:\n  ratio: 0.5\n"); }, {"test.ratio", "must be at least 1"});
  expect_config_error([] { load_text_params("test:\n  rate: 0B/s\n"); }, {"test.rate", "must be at least 1"});
  // The limits themselves are in range.
  EXPECT_EQ(load_text_params("test: {count: 255, ratio: 10, latency: 0}").count, 255);
  EXPECT_EQ(load_text_params("test: {count: 1, size: 1B}").size.raw(), 1);
  // range_violation directly.
  ParamInfo nonneg{.name = "x", .def = "0", .desc = "x", .source = "test", .min = 0};
  EXPECT_EQ(range_violation(0.0, nonneg), "");
  EXPECT_NE(range_violation(-1.0, nonneg).find("must not be negative"), std::string::npos);
}

TEST(ParamLoader, Choices) {
  EXPECT_EQ(load_text_params("test: {mode: fast}").mode, "fast");
  EXPECT_EQ(load_text_params("test: {mode: slow}").mode, "slow");
  EXPECT_EQ(load_text_params("test: {mode: off}").mode, "off");  // the last choice, and YAML 'off' stays a string
  expect_config_error([] { load_text_params("test:\n  mode: medium\n"); },
                      {"t.yaml:2", "test.mode", "'medium' is not one of fast|slow|off"});
  expect_config_error([] { load_text_params("test:\n  mode: fas\n"); }, {"test.mode", "not one of"});  // no prefix match
  expect_config_error([] { load_text_params("test:\n  mode: fast|slow\n"); }, {"test.mode", "not one of"});
  expect_config_error([] { load_text_params("test:\n  mode: ''\n"); }, {"test.mode", "not one of"});
}

TEST(ParamLoader, TableParsing) {
  expect_config_error([] { load_text_params("test:\n  curve: [[1, 1.0], [1, 2.0]]\n"); },
                      {"t.yaml:2", "test.curve", "must increase strictly"});
  expect_config_error([] { load_text_params("test:\n  curve: [[2, 1.0], [1, 2.0]]\n"); }, {"test.curve", "must increase strictly"});
  expect_config_error([] { load_text_params("test:\n  curve: [[1, 2, 3]]\n"); }, {"test.curve", "pair [x, y]"});
  expect_config_error([] { load_text_params("test:\n  curve: [1, 2]\n"); }, {"test.curve", "pair [x, y]"});
  expect_config_error([] { load_text_params("test:\n  curve: []\n"); }, {"test.curve", "at least one row"});
  expect_config_error([] { load_text_params("test:\n  curve: 5\n"); }, {"test.curve", "expected a table"});
  expect_config_error([] { load_text_params("test:\n  curve: [[1, x]]\n"); }, {"test.curve", "'x' is not a number"});
  // Block style works as well as flow style.
  TestParams p = load_text_params("test:\n  curve:\n    - [0, 5]\n    - [2.5, 7]\n");
  ASSERT_EQ(p.curve.points.size(), 2u);
  EXPECT_EQ(p.curve.points[1], (std::pair<double, double>{2.5, 7}));
}

TEST(Table, LinearInterpolationByHand) {
  Table t{{{1, 1.0}, {8, 1.01}, {48, 1.033}}};
  EXPECT_DOUBLE_EQ(t.at(1), 1.0);
  EXPECT_DOUBLE_EQ(t.at(8), 1.01);
  EXPECT_DOUBLE_EQ(t.at(48), 1.033);
  // Between 8 and 48: 1.01 + 0.023 * (28 - 8) / 40 = 1.0215.
  EXPECT_NEAR(t.at(28), 1.0215, 1e-12);
  // Between 1 and 8: 1.0 + 0.01 * (4.5 - 1) / 7 = 1.005.
  EXPECT_NEAR(t.at(4.5), 1.005, 1e-12);
  // Clamped at both ends.
  EXPECT_DOUBLE_EQ(t.at(0), 1.0);
  EXPECT_DOUBLE_EQ(t.at(-100), 1.0);
  EXPECT_DOUBLE_EQ(t.at(1000), 1.033);
  // Degenerate tables.
  EXPECT_DOUBLE_EQ(Table{}.at(3), 0.0);
  Table one{{{5, 2.5}}};
  EXPECT_DOUBLE_EQ(one.at(0), 2.5);
  EXPECT_DOUBLE_EQ(one.at(5), 2.5);
  EXPECT_DOUBLE_EQ(one.at(9), 2.5);
  // A decreasing segment.
  Table down{{{0, 10}, {10, 0}}};
  EXPECT_DOUBLE_EQ(down.at(2.5), 7.5);
}

TEST(Table, LogInterpolationByHand) {
  Table t{{{0, 1.0}, {10, 100.0}, {20, 1e-4}}};
  // log10 goes 0 -> 2 over [0, 10]: at 5 it is 1 -> 10; at 2.5 it is 0.5 -> sqrt(10).
  EXPECT_NEAR(t.at_log(5), 10.0, 1e-12);
  EXPECT_NEAR(t.at_log(2.5), std::sqrt(10.0), 1e-12);
  // log10 goes 2 -> -4 over [10, 20]: at 15 it is -1 -> 0.1.
  EXPECT_NEAR(t.at_log(15), 0.1, 1e-14);
  EXPECT_DOUBLE_EQ(t.at_log(10), 100.0);
  EXPECT_DOUBLE_EQ(t.at_log(-1), 1.0);
  EXPECT_DOUBLE_EQ(t.at_log(30), 1e-4);
  EXPECT_DOUBLE_EQ(Table{}.at_log(1), 0.0);
  // The linear interpolation of the same table differs: it is the mean, 50.5.
  EXPECT_NEAR(t.at(5), 50.5, 1e-12);
}

// ---- describe and dump ------------------------------------------------------------

TEST(ParamDescriber, RowsForEveryParameter) {
  auto rows = describe_params<TestParams>("test");
  ASSERT_EQ(rows.size(), 13u);  // 11 fields + 2 in the nested section
  const ParamRow& lat = rows[0];
  EXPECT_EQ(lat.path, "test.latency");
  EXPECT_EQ(lat.type, "time");
  EXPECT_EQ(lat.def, "22.5us");
  EXPECT_EQ(lat.desc, "read latency");
  EXPECT_EQ(lat.source, "spec: test latency");
  EXPECT_EQ(lat.range, ">= 0");
  EXPECT_EQ(rows[1].path, "test.size");
  EXPECT_EQ(rows[1].type, "bytes");
  EXPECT_EQ(rows[1].range, "[1, 16777216]");
  EXPECT_EQ(rows[2].type, "bandwidth");
  EXPECT_EQ(rows[3].type, "energy");
  EXPECT_EQ(rows[4].type, "power");
  EXPECT_EQ(rows[5].type, "energy/bit");
  EXPECT_EQ(rows[6].type, "number");
  EXPECT_EQ(rows[6].range, "[1, 10]");
  EXPECT_EQ(rows[7].type, "integer");
  EXPECT_EQ(rows[8].type, "bool");
  EXPECT_EQ(rows[8].range, "");
  EXPECT_EQ(rows[9].type, "choice");
  EXPECT_EQ(rows[9].range, "fast|slow|off");
  EXPECT_EQ(rows[10].type, "table");
  EXPECT_EQ(rows[10].def, "[[1, 1.0], [8, 1.01], [48, 1.033]]");
  EXPECT_EQ(rows[11].path, "test.inner.delay");
  EXPECT_EQ(rows[11].source, "test: inner");
  EXPECT_EQ(rows[12].path, "test.inner.lanes");
  EXPECT_EQ(rows[12].range, "[1, 64]");
  // Without a prefix the paths are relative.
  EXPECT_EQ(describe_params<TestParams>("")[0].path, "latency");
  EXPECT_EQ(describe_params<TestParams>("")[11].path, "inner.delay");
  // Every default parses (describe shows what the loader would use).
  for (const auto& r : rows) EXPECT_FALSE(r.def.empty()) << r.path;
}

TEST(ParamDumper, ResolvedValuesWithUnits) {
  nlohmann::json j = dump_params(default_params<TestParams>());
  EXPECT_EQ(j["latency"], "22.5us");
  EXPECT_EQ(j["size"], "16KiB");
  EXPECT_EQ(j["rate"], "1.2GB/s");
  EXPECT_EQ(j["energy"], "3nJ");
  EXPECT_EQ(j["power"], "82.5mW");
  EXPECT_EQ(j["io"], "8pJ/bit");
  EXPECT_EQ(j["ratio"], 2.0);
  EXPECT_EQ(j["count"], 4);
  EXPECT_EQ(j["enabled"], true);
  EXPECT_EQ(j["mode"], "fast");
  EXPECT_EQ(j["curve"], nlohmann::json::parse("[[1, 1.0], [8, 1.01], [48, 1.033]]"));
  ASSERT_TRUE(j["inner"].is_object());
  EXPECT_EQ(j["inner"]["delay"], "1ns");
  EXPECT_EQ(j["inner"]["lanes"], 8);
  EXPECT_EQ(j.size(), 12u);
}

TEST(ParamDumper, DumpReadsBackToTheSameValues) {
  // The resolved config is JSON, which is YAML: loading it again must give the
  // very same parameters, including values that are not round numbers.
  ConfigTree t;
  t.load_text(
      "test:\n  latency: 13.653334us\n  size: 17KiB\n  rate: 1.23456789GB/s\n  power: 85.2225mW\n"
      "  energy: 1.7257612345uJ\n  ratio: 1.2345678901\n  mode: slow\n  curve: [[1, 1.5], [2, 3.25]]\n  inner: {lanes: 3}\n",
      "in.yaml");
  TestParams p = load_params<TestParams>(t, "test");
  nlohmann::json dumped = dump_params(p);
  ConfigTree back;
  back.load_text(nlohmann::json{{"test", dumped}}.dump(), "dump.json");
  TestParams q = load_params<TestParams>(back, "test");
  EXPECT_EQ(q.latency, p.latency);
  EXPECT_EQ(q.size, p.size);
  EXPECT_EQ(q.rate.raw(), p.rate.raw());
  EXPECT_EQ(q.energy.raw(), p.energy.raw());
  EXPECT_EQ(q.power.raw(), p.power.raw());
  EXPECT_EQ(q.io.raw(), p.io.raw());
  EXPECT_EQ(q.ratio, p.ratio);
  EXPECT_EQ(q.count, p.count);
  EXPECT_EQ(q.enabled, p.enabled);
  EXPECT_EQ(q.mode, p.mode);
  EXPECT_EQ(q.curve.points, p.curve.points);
  EXPECT_EQ(q.inner.lanes, 3);
  EXPECT_EQ(dump_params(q), dumped);
  // Values that format() would round are written exactly, in the base unit.
  EXPECT_EQ(dumped["latency"], "13653334ps");
  EXPECT_EQ(dumped["rate"], "1234567890B/s");
  EXPECT_EQ(dumped["size"], "17KiB");
  EXPECT_EQ(dumped["mode"], "slow");
}

TEST(ParamDumper, ExactForAnyValue) {
  TestParams p = default_params<TestParams>();
  for (int64_t ps_value : {int64_t(1), int64_t(999), int64_t(22'500'001), int64_t(123'456'789'012'345), int64_t(-7)}) {
    p.latency = Time(ps_value);
    ConfigNode n;
    n.kind = ConfigNode::Kind::Scalar;
    n.scalar = dump_params(p)["latency"].get<std::string>();
    Time back{};
    parse_param(n, back);
    EXPECT_EQ(back, p.latency) << n.scalar;
  }
  for (double v : {1.0 / 3.0 * 1e9, 1.2e9, 987654321.123}) {
    p.rate = Bandwidth(v);
    ConfigNode n;
    n.kind = ConfigNode::Kind::Scalar;
    n.scalar = dump_params(p)["rate"].get<std::string>();
    Bandwidth back{};
    parse_param(n, back);
    EXPECT_EQ(back.raw(), v) << n.scalar;
  }
  for (double v : {1.0 / 3.0 * 1e-6, 1.85625e-6, 7.123456789e-13}) {
    p.energy = Energy(v);
    p.power = Power(v * 1e4);
    p.io = EnergyPerBit(v * 1e-5);
    nlohmann::json d = dump_params(p);
    ConfigNode n;
    n.kind = ConfigNode::Kind::Scalar;
    n.scalar = d["energy"].get<std::string>();
    Energy e{};
    parse_param(n, e);
    EXPECT_EQ(e.raw(), v) << n.scalar;
    n.scalar = d["power"].get<std::string>();
    Power w{};
    parse_param(n, w);
    EXPECT_EQ(w.raw(), v * 1e4) << n.scalar;
    n.scalar = d["io"].get<std::string>();
    EnergyPerBit epb{};
    parse_param(n, epb);
    EXPECT_EQ(epb.raw(), v * 1e-5) << n.scalar;
  }
}
