// Overflow-checked quantities (an error naming the quantity, never a wrap or an
// infinity) and result files (refused before the work when they cannot be
// written; no .partial left behind when a write fails).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "../support/quantity_print.hpp"
#include "../support/temp_dir_test.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/units.hpp"

using namespace bitline;
namespace fs = std::filesystem;

namespace {

template <class F>
std::string expect_overflow(F&& f) {
  try {
    f();
  } catch (const OverflowError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected OverflowError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected OverflowError, nothing was thrown";
  return {};
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

TEST(Overflow, TimeSumsAndDifferencesPast2To63) {
  const Time big(kMax - 10);
  EXPECT_EQ((big + Time(10)).raw(), kMax);
  std::string msg = expect_overflow([&] { (void)(big + Time(11)); });
  EXPECT_NE(msg.find("time overflow"), std::string::npos) << msg;
  EXPECT_NE(msg.find("106 days"), std::string::npos) << msg;
  expect_overflow([&] {
    Time t = big;
    t += sec(1);
  });
  expect_overflow([&] { (void)(Time(-kMax) - Time(10)); });
  expect_overflow([&] {
    Time t(-kMax);
    t -= Time(10);
  });
  expect_overflow([&] { (void)(big * 2.0); });
  expect_overflow([&] { (void)(Time(5) * std::nan("")); });
  expect_overflow([] { (void)sec(1e8); });  // 3 years of picoseconds
  expect_overflow([] { (void)ms(std::numeric_limits<double>::infinity()); });
  expect_overflow([] { (void)ps(std::nan("")); });
  EXPECT_EQ(sec(1e6).raw(), int64_t(1e18));  // 11.6 days is fine
}

TEST(Overflow, BytesAndCounts) {
  std::string msg = expect_overflow([] { (void)(Bytes(kMax) + Bytes(1)); });
  EXPECT_NE(msg.find("size overflow"), std::string::npos) << msg;
  expect_overflow([] { (void)GiB(int64_t(1) << 40); });
  expect_overflow([] { (void)to_bits(Bytes(kMax / 4)); });
  expect_overflow([] { (void)(Bytes(kMax / 2) * 3.0); });
  expect_overflow([] { (void)(Bytes(int64_t(1) << 62) / Bandwidth(1.0)); });  // 1.5e17 s
  expect_overflow([] { (void)(Bytes(1) / Bandwidth(0.0)); });
  msg = expect_overflow([] { (void)checked_mul(int64_t(1) << 40, int64_t(1) << 30, "KV bytes"); });
  EXPECT_NE(msg.find("KV bytes overflow"), std::string::npos) << msg;
  expect_overflow([] { (void)checked_add(kMax, 1, "tokens"); });
  EXPECT_EQ(checked_mul(int64_t(1) << 31, int64_t(1) << 31, "x"), int64_t(1) << 62);
}

TEST(Overflow, DoubleQuantitiesMustStayFinite) {
  const Energy huge(std::numeric_limits<double>::max());
  std::string msg = expect_overflow([&] { (void)(huge + huge); });
  EXPECT_NE(msg.find("energy overflow"), std::string::npos) << msg;
  expect_overflow([&] { (void)(huge * 2.0); });
  expect_overflow([] { (void)(Bandwidth(1e300) * 1e300); });
  EXPECT_DOUBLE_EQ((Energy(1.0) + Energy(2.0)).raw(), 3.0);
}

TEST(Overflow, ParsedValuesMustBeFinite) {
  for (const char* s : {"1e300TB/s", "infGB/s", "nanGB/s", "1e309B/s"}) EXPECT_THROW(parse_bandwidth(s), std::invalid_argument) << s;
  EXPECT_NO_THROW(parse_energy("1e307J"));
  EXPECT_THROW(parse_power("1e306kW"), std::invalid_argument);  // 1e309 W is not finite
  EXPECT_THROW(parse_bytes("1e300TB"), std::invalid_argument);
  EXPECT_THROW(parse_time("1e300s"), std::invalid_argument);
  EXPECT_THROW(parse_time("nan s"), std::invalid_argument);
}

namespace {
class OutputFiles : public ::bitline::test::TempDirTest {
 protected:
  OutputFiles() : TempDirTest("bitline-out-") {}
};
}  // namespace

TEST_F(OutputFiles, AFailedWriteLeavesNoPartialFile) {
  // The target is a non-empty directory: the rename fails after the .partial was written.
  fs::create_directories(dir_ / "res.json" / "inside");
  EXPECT_THROW(write_json_file(dir_ / "res.json", {{"a", 1}}), OutputError);
  EXPECT_FALSE(fs::exists(dir_ / "res.json.partial"));
  // The parent is a file.
  std::ofstream(dir_ / "file") << "x";
  EXPECT_THROW(write_json_file(dir_ / "file" / "res.json", {{"a", 1}}), OutputError);
  // A good write: the file, and no .partial.
  write_json_file(dir_ / "sub" / "ok.json", {{"a", 1}});
  EXPECT_TRUE(fs::is_regular_file(dir_ / "sub" / "ok.json"));
  EXPECT_FALSE(fs::exists(dir_ / "sub" / "ok.json.partial"));
}

TEST_F(OutputFiles, AFolderRelativeToTheWorkingDirectoryIsCreated) {
  // `--json results/x.json` in a fresh clone: `results` does not exist yet and has no parent in the path.
  const auto cwd = fs::current_path();
  fs::current_path(dir_);
  EXPECT_NO_THROW(check_json_output("results/x.json"));
  EXPECT_FALSE(fs::exists(dir_ / "results"));  // the check creates nothing
  EXPECT_NO_THROW(write_json_file("results/x.json", {{"a", 1}}));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "results" / "x.json"));
  fs::current_path(cwd);
}

TEST_F(OutputFiles, ARefusedWriteRemovesTheFoldersItCreated) {
  // The target under new folders is itself a directory name: the write fails and leaves no new folder behind.
  fs::create_directories(dir_ / "keep");
  EXPECT_THROW(write_json_file(dir_ / "keep" / "newdir" / "deeper" / "", {{"a", 1}}), OutputError);
  EXPECT_FALSE(fs::exists(dir_ / "keep" / "newdir"));
  EXPECT_TRUE(fs::is_directory(dir_ / "keep"));  // a folder that was there stays
}

TEST_F(OutputFiles, InvalidUtf8IsReplacedNotAnException) {
  write_json_file(dir_ / "u.json", {{"name", std::string("bad \xff\xfe name")}});
  std::ifstream in(dir_ / "u.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_NE(j["name"].get<std::string>().find("name"), std::string::npos);
}

TEST_F(OutputFiles, CheckBeforeTheWork) {
  EXPECT_NO_THROW(check_json_output(dir_ / "a.json"));
  EXPECT_FALSE(fs::exists(dir_ / "a.json.partial")) << "the probe must not stay behind";
  EXPECT_NO_THROW(check_json_output(dir_ / "new" / "deeper" / "a.json"));  // folders are created when writing
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  EXPECT_NO_THROW(check_json_output(""));
  EXPECT_THROW(check_json_output(dir_), OutputError);
  EXPECT_THROW(check_json_output(dir_ / "newdir" / ""), OutputError);  // a trailing '/': a folder, not a file
  EXPECT_FALSE(fs::exists(dir_ / "newdir"));
  std::ofstream(dir_ / "f") << "x";
  EXPECT_THROW(check_json_output(dir_ / "f" / "a.json"), OutputError);
  EXPECT_THROW(check_json_output("/dev/null"), OutputError);
  EXPECT_THROW(check_json_output("/proc/bitline-test.json"), OutputError);
  try {
    check_json_output(dir_, "--out");
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("--out"), std::string::npos) << e.what();
  }
}

TEST(InputJson, DepthLimitAndBriefValues) {
  EXPECT_NO_THROW(parse_input_json(std::string(31, '[') + std::string(31, ']'), "x"));
  try {
    parse_input_json(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nested deeper than 32 levels"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_input_json("{\"a\": }", "bad.json"), ConfigError);
  EXPECT_THROW(parse_input_json("{\"timestamp\": 1e999}", "huge.json"), ConfigError);  // found by fuzz_model / fuzz_sessions
  EXPECT_EQ(json_brief(nlohmann::json::array({1, 2, 3})), "a list of 3 values");
  EXPECT_EQ(json_brief(nlohmann::json::object({{"a", 1}})), "an object of 1 keys");
  EXPECT_EQ(json_brief(nlohmann::json(std::string(100, 'x'))).size(), 40u);
  EXPECT_EQ(json_brief(nlohmann::json(12)), "12");
}
