// Writing results: JSON files are written to a temporary name and renamed, so a
// crash or an error never leaves a partial result that looks complete.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bitline {

/// Writes `j` (pretty-printed) to `path` atomically; creates parent folders. Throws on I/O errors.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& j);
/// Writes `text` to `path` atomically (NAME.partial, then renamed), creating parent folders; OutputError on failure
/// (and no file, no folder it created, left behind).
void write_text_file(const std::filesystem::path& path, const std::string& text);

/// The rows of a table-shaped result as CSV (RFC 4180): one line per element of `rows` (JSON objects), one column per
/// scalar leaf, named by its dotted path ("breakdown_ms.weights"), in first-seen order over all rows; lists are
/// written as JSON text; a leaf a row lacks is an empty cell. Deterministic for the same rows. `leading`: keys whose
/// columns come first, in that order (a key of an object: all its leaves), before the rest (a JSON object's keys are
/// otherwise in alphabetical order).
std::string csv_of(const nlohmann::json& rows, const std::vector<std::string>& leading = {});
/// A result file written in pieces (one too large to hold as one string), atomically as write_text_file: to
/// PATH.partial, renamed by commit(); destroyed without commit() (an error on the way), it removes the partial file and
/// the folders it created. Every failure is an OutputError naming the path.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  void write(std::string_view text);
  void commit();

 private:
  [[noreturn]] void fail(const std::exception& e);
  void discard() noexcept;
  std::filesystem::path path_, tmp_;
  std::vector<std::filesystem::path> created_;
  std::ofstream out_;
  bool done_ = false;  // committed or discarded
};

/// csv_of(rows) written atomically to `path` (see write_text_file).
void write_csv_file(const std::filesystem::path& path, const nlohmann::json& rows, const std::vector<std::string>& leading = {});

/// Checks, before any work starts, that write_json_file(path, ...) can succeed: the path is not a directory,
/// and its folder exists (or can be created) and is writable. Throws ConfigError naming `flag` and the path.
void check_json_output(const std::filesystem::path& path, std::string_view flag = "--json");

/// A command's file (an option and its path; an empty path is not given).
struct NamedPath {
  std::string flag;
  std::filesystem::path path;
};
/// Checks, before any work starts, that a command's outputs are different files and none of them is one of its
/// inputs (one would overwrite the other, or the input): OutputError naming both options and the file.
void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

// ---- Reading JSON that a user wrote (model descriptions, traces) ----------
/// Deepest nesting accepted in an input JSON document: a config.json nests 3 levels, a trace line 1.
/// Bounding it keeps every later walk of the value (and its destruction) shallow.
inline constexpr int kMaxJsonDepth = 32;

/// Parses JSON text; throws ConfigError "ORIGIN: malformed JSON: ...", "ORIGIN: JSON nested deeper than ..." or,
/// with `max_values` >= 0, "ORIGIN: more than N JSON values" (checked while parsing).
nlohmann::json parse_input_json(std::string_view text, const std::string& origin, int64_t max_values = -1);

/// A short description of a JSON value for messages: a scalar as written (cut to 40 characters), "a list of N
/// values" or "an object of N keys"; never the whole value.
std::string json_brief(const nlohmann::json& v);
/// A value from an input file or argument for messages: at most 40 characters ("..." and its length past them),
/// control characters as \xNN; never the whole of a long value.
std::string text_brief(std::string_view v);

}  // namespace bitline
