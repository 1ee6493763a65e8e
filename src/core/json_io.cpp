#include "core/json_io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"

namespace bitline {

namespace fs = std::filesystem;

void write_json_file(const fs::path& path, const nlohmann::json& j) {
  // The text first (invalid UTF-8 in a string is replaced, not an exception), so a failure leaves no file.
  write_text_file(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void write_text_file(const fs::path& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)), tmp_(path_) {
  tmp_ += ".partial";
  // The folders this write creates (deepest first): removed again if the write fails, so a refused result leaves
  // nothing behind.
  std::error_code ec;
  for (fs::path d = path_.parent_path(); !d.empty() && !fs::exists(fs::symlink_status(d, ec)); d = d.parent_path()) {
    created_.push_back(d);
    if (d == d.parent_path()) break;
  }
  try {
    if (!created_.empty()) fs::create_directories(path_.parent_path());
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw std::runtime_error(fmt::format("cannot open {} for writing ({})", tmp_.string(), std::strerror(errno)));
  } catch (const std::exception& e) {
    fail(e);
  }
}

void AtomicFile::write(std::string_view text) {
  out_.write(text.data(), std::streamsize(text.size()));
  if (!out_) fail(std::runtime_error(fmt::format("writing {} failed (disk full?)", tmp_.string())));
}

void AtomicFile::commit() {
  try {
    out_.close();
    if (!out_) throw std::runtime_error(fmt::format("writing {} failed (disk full?)", tmp_.string()));
    fs::rename(tmp_, path_);
    done_ = true;
  } catch (const std::exception& e) {
    fail(e);
  }
}

void AtomicFile::discard() noexcept {
  if (done_) return;
  done_ = true;  // once
  std::error_code ec;
  if (out_.is_open()) out_.close();
  fs::remove(tmp_, ec);                              // never leave a partial result behind
  for (const auto& d : created_) fs::remove(d, ec);  // only empty folders: what this write created
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::fail(const std::exception& e) {
  discard();
  const auto* fe = dynamic_cast<const fs::filesystem_error*>(&e);
  throw OutputError(fmt::format("{}: cannot write the result: {}", path_.string(), fe ? fe->code().message() : std::string(e.what())));
}

namespace {
void flatten_row(const nlohmann::json& v, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) flatten_row(x, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  std::string cell;
  if (v.is_string())
    cell = v.get<std::string>();
  else if (!v.is_null())
    cell = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.emplace_back(prefix, std::move(cell));
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

std::string csv_of(const nlohmann::json& rows, const std::vector<std::string>& leading) {
  std::vector<std::string> columns;
  std::map<std::string, size_t> index;
  std::vector<std::vector<std::pair<std::string, std::string>>> flat;
  for (const auto& r : rows) {
    flat.emplace_back();
    flatten_row(r, "", flat.back());
  }
  // The leading keys' columns first (a key, or the leaves under it), then every other in first-seen order.
  const auto under = [](const std::string& column, const std::string& key) {
    return column == key || (column.size() > key.size() && column.compare(0, key.size(), key) == 0 && column[key.size()] == '.');
  };
  for (const std::string& key : leading)
    for (const auto& row : flat)
      for (const auto& [k, v] : row)
        if (under(k, key) && index.emplace(k, columns.size()).second) columns.push_back(k);
  for (const auto& row : flat)
    for (const auto& [k, v] : row)
      if (index.emplace(k, columns.size()).second) columns.push_back(k);
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i) out += ',';
    out += csv_cell(columns[i]);
  }
  out += '\n';
  for (const auto& r : flat) {
    std::vector<std::string> cells(columns.size());
    for (const auto& [k, v] : r) cells[index[k]] = v;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csv_cell(cells[i]);
    }
    out += '\n';
  }
  return out;
}

void write_csv_file(const fs::path& path, const nlohmann::json& rows, const std::vector<std::string>& leading) {
  write_text_file(path, csv_of(rows, leading));
}

namespace {
/// What names one file however it is spelt: its device and inode where it exists (links, hard links, `./` and `..`
/// spellings all meet there), else its normalised absolute path (an output not written yet).
struct FileKey {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  fs::path path;
  bool operator==(const FileKey& o) const { return exists == o.exists && (exists ? dev == o.dev && ino == o.ino : path == o.path); }
};
FileKey file_key(const fs::path& p) {
  FileKey k;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    k.exists = true;
    k.dev = st.st_dev;
    k.ino = st.st_ino;
    return k;
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec).lexically_normal();
  const fs::path c = fs::weakly_canonical(abs, ec);
  k.path = ec ? abs : c;
  return k;
}
}  // namespace

void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<FileKey> in_keys;
  for (const NamedPath& in : inputs) in_keys.push_back(in.path.empty() ? FileKey{} : file_key(in.path));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path.empty()) continue;
    const FileKey a = file_key(outputs[i].path);
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && file_key(outputs[j].path) == a)
        throw OutputError(fmt::format("{} and {} name the same file, {}: one result would overwrite the other", outputs[i].flag,
                                      outputs[j].flag, outputs[i].path.string()));
    for (size_t j = 0; j < inputs.size(); ++j)
      if (!inputs[j].path.empty() && in_keys[j] == a)
        throw OutputError(fmt::format("{} {}: this command reads that file ({} {}); writing the result would overwrite it", outputs[i].flag,
                                      outputs[i].path.string(), inputs[j].flag, inputs[j].path.string()));
  }
}

void check_json_output(const fs::path& path, std::string_view flag) {
  if (path.empty()) return;
  const auto fail = [&](const std::string& why) { throw OutputError(fmt::format("{} {}: {}", flag, path.string(), why)); };
  std::error_code ec;
  if (!path.has_filename()) fail("ends in '/', so it names a folder; give a file name");
  const auto st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) fail("is a directory; give a file name");
    if (!fs::is_regular_file(st)) fail("is not a regular file (a device or pipe cannot hold a result)");
  }
  // The preset folder is bitline's input (presets, GPU kinds, models, experiments, queries, traces): a result written
  // there would be read as one (a results/csi.yaml there shadows the kind gpus/csi.yaml).
  const fs::path presets = fs::weakly_canonical(default_preset_dir(), ec), target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (!presets.empty() && std::mismatch(presets.begin(), presets.end(), target.begin(), target.end()).first == presets.end())
    fail(
        fmt::format("is inside {}, the folder of presets, GPU kinds and models that bitline reads (BITLINE_CONFIG_DIR): a result "
                    "there could be read as one; write it elsewhere",
                    presets.string()));
  auto tmp = path;
  tmp += ".partial";
  if (fs::is_directory(fs::status(tmp, ec))) fail(fmt::format("{} is a directory (bitline writes there first)", tmp.string()));
  // The nearest folder that exists: a result under a missing folder creates it (and its parents).
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  while (!fs::exists(fs::status(dir, ec)) && dir.has_parent_path() && dir.parent_path() != dir) dir = dir.parent_path();
  if (!fs::exists(fs::status(dir, ec)) && dir.is_relative() && !dir.has_parent_path()) dir = ".";  // `results/x.json`: results is created
  const auto dst = fs::status(dir, ec);
  if (!fs::exists(dst)) fail(fmt::format("folder {} does not exist", dir.string()));
  if (!fs::is_directory(dst)) fail(fmt::format("{} is not a folder", dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) fail(fmt::format("folder {} is not writable ({})", dir.string(), std::strerror(errno)));
  if (dir == (path.has_parent_path() ? path.parent_path() : fs::path("."))) {
    // The folder exists: try the file itself (catches read-only file systems and special folders such as /proc).
    const bool existed = fs::exists(fs::symlink_status(tmp, ec));
    {
      std::ofstream probe(tmp, std::ios::binary | std::ios::app);
      if (!probe) fail(fmt::format("cannot create {} ({})", tmp.string(), std::strerror(errno)));
    }
    if (!existed) fs::remove(tmp, ec);
  }
}

nlohmann::json parse_input_json(std::string_view text, const std::string& origin, int64_t max_values) {
  // The parser itself is iterative; the depth check keeps the value shallow for everything that walks it later,
  // and the count of values bounds the memory of what it builds (~16 B a value) before it is built.
  // A key given twice in one object is refused (the parser would keep the last without a word; YAML refuses it too):
  // the keys of every open object, innermost last.
  int64_t values = 0;
  std::vector<std::set<std::string, std::less<>>> open_keys;
  const nlohmann::json::parser_callback_t depth_check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw ConfigError(fmt::format("{}: JSON nested deeper than {} levels", origin, kMaxJsonDepth));
    if (event == nlohmann::json::parse_event_t::object_start) open_keys.emplace_back();
    if (event == nlohmann::json::parse_event_t::object_end && !open_keys.empty()) open_keys.pop_back();
    if (event == nlohmann::json::parse_event_t::key && !open_keys.empty() && parsed.is_string() &&
        !open_keys.back().insert(parsed.get<std::string>()).second)
      throw ConfigError(fmt::format("{}: duplicate key {} in one JSON object (give each key once)", origin, json_brief(parsed)));
    if (max_values >= 0 && event == nlohmann::json::parse_event_t::value && ++values > max_values)
      throw ConfigError(fmt::format("{}: more than {} JSON values", origin, max_values));
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), depth_check);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(fmt::format("{}: malformed JSON: {}", origin, e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number past double's range (e.g. 1e999): the parser's out_of_range 406 (found by fuzz_model / fuzz_sessions).
    throw ConfigError(fmt::format("{}: a number out of range: {}", origin, e.what()));
  }
}

std::string text_brief(std::string_view v) {
  constexpr size_t kMax = 40;
  const std::string_view head = v.size() <= kMax ? v : v.substr(0, kMax - 3);
  std::string out;
  for (const char ch : head) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return v.size() <= kMax ? out : fmt::format("{}... ({} characters)", out, v.size());
}

std::string json_brief(const nlohmann::json& v) {
  if (v.is_object()) return fmt::format("an object of {} keys", v.size());
  if (v.is_array()) return fmt::format("a list of {} values", v.size());
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace bitline
