// Shared by the libFuzzer harnesses (fuzz/*.cpp): what counts as a bug.
//
// A parser given hostile bytes may refuse them with one of bitline's
// documented errors (ConfigError, ModelError, CommandError): that is the
// contract, and the harness returns normally. Anything else is a bug that
// libFuzzer must report: another exception type (std::bad_alloc,
// nlohmann::json::type_error, std::out_of_range, ...), a crash, a sanitizer
// report, running past -timeout or past -rss_limit_mb.
#pragma once

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "core/error.hpp"

namespace bitline::fuzz {

/// Runs `body`; documented errors are fine, any other exception aborts (libFuzzer reports it with the input).
template <class F>
void expect_documented_errors(F&& body) {
  try {
    body();
  } catch (const ConfigError&) {
  } catch (const ModelError&) {
  } catch (const CommandError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\n== bitline fuzz: undocumented exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "\n== bitline fuzz: exception of a non-std type\n");
    std::abort();
  }
}

/// A property of a successful parse that does not hold: a bug even without a crash.
[[noreturn]] inline void property_failed(const char* what) {
  std::fprintf(stderr, "\n== bitline fuzz: property failed: %s\n", what);
  std::abort();
}

/// One scratch file per fuzzing process, for the loaders that read a path (the real code path of the CLI).
/// It lives in $BITLINE_FUZZ_SCRATCH (scripts/fuzz.sh makes one and removes it), else in /dev/shm where there
/// is one: rewriting a file on ext4 can wait for the disk (a truncated file is flushed on close), which cut the
/// rate of executions by 10x or more.
class ScratchFile {
 public:
  explicit ScratchFile(std::string_view suffix) {
    std::error_code ec;
    const char* env = std::getenv("BITLINE_FUZZ_SCRATCH");
    std::filesystem::path dir = env && *env ? env : "/dev/shm";
    if (!std::filesystem::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0) {
      dir = std::filesystem::temp_directory_path(ec);
      if (ec) dir = ".";
    }
    path_ = dir / ("bitline-fuzz-" + std::to_string(::getpid()) + std::string(suffix));
  }
  ~ScratchFile() { remove(); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  /// Replaces the file's contents with `data`.
  const std::filesystem::path& write(const uint8_t* data, size_t size) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // a new file, not a truncated one (see above)
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    out.close();
    if (!out) {
      std::fprintf(stderr, "bitline fuzz: cannot write the scratch file %s\n", path_.c_str());
      std::abort();
    }
    return path_;
  }
  /// Removes the file after each input, so that a crash (no destructor runs) leaves at most the crashing input.
  void remove() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace bitline::fuzz
