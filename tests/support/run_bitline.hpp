// Runs the real `bitline` binary for CLI tests, with the presets of this source
// tree (whatever the caller's environment says), capturing stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace bitline::test {

struct CliRun {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Under the asan preset the binary is instrumented: a sanitizer report fails the test whatever the exit
/// code (a test that expects a refusal, rc != 0, would otherwise pass on an ASan or UBSan abort).
inline void expect_no_sanitizer_report(const std::string& cmd, const std::string& out) {
  for (const char* signature : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error: "})
    if (out.find(signature) != std::string::npos) ADD_FAILURE() << "sanitizer report from: " << cmd << "\n" << out;
}

/// Runs `bitline ARGS` (ARGS already shell-quoted where needed); `prefix` is shell text run before it
/// (e.g. limits); `config_dir` is the preset folder (default: the source tree's configs/).
inline CliRun run_bitline(const std::string& args, const std::string& prefix = "", const std::string& config_dir = "") {
  const std::string dir = config_dir.empty() ? std::string(BITLINE_SOURCE_DIR) + "/configs" : config_dir;
  const std::string cmd = prefix + "BITLINE_CONFIG_DIR=" + shell_quote(dir) + " " + shell_quote(BITLINE_BINARY) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return r;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  expect_no_sanitizer_report(cmd, r.out);
  return r;
}

/// Runs `bitline ARGS` with its memory capped at `mem_kib` KiB of address space (ulimit -v) and its run
/// time at `seconds` (timeout: exit 124 past it). The cap catches hangs and runs of minutes, not speed (that is
/// `make bench`). Under AddressSanitizer, whose shadow memory needs terabytes of address space, only the time
/// is capped, at 4x `seconds`: an instrumented binary runs 3-10x slower, and CI runs two tests at once on two
/// cores (a refusal that takes 1.7 s in release took 6.9 s alone under ASan and 10.3 s beside another test).
#if defined(__SANITIZE_ADDRESS__)
#define BITLINE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BITLINE_TEST_ASAN 1
#endif
#endif
inline CliRun run_bitline_bounded(const std::string& args, long mem_kib = 1000000, int seconds = 10) {
#if defined(BITLINE_TEST_ASAN)
  (void)mem_kib;
  const std::string limit;
  const int cap = 4 * seconds;
#else
  const std::string limit = "ulimit -v " + std::to_string(mem_kib) + "; ";
  const int cap = seconds;
#endif
  return run_bitline(args, limit + "exec timeout " + std::to_string(cap) + " env ");
}

}  // namespace bitline::test
