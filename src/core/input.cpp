#include "core/input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <system_error>

#include "core/error.hpp"

namespace bitline {

std::string read_input_file(const std::filesystem::path& path, int64_t max_bytes, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw ConfigError(fmt::format("{}: cannot open {} (no such file)", path.string(), what));
  if (fs::is_directory(st)) throw ConfigError(fmt::format("{}: is a directory, not a {}", path.string(), what));
  if (!fs::is_regular_file(st))
    throw ConfigError(fmt::format("{}: not a regular file (a device, pipe or socket cannot be a {})", path.string(), what));
  const auto size = fs::file_size(path, ec);
  if (!ec && size > uint64_t(max_bytes))
    throw ConfigError(fmt::format("{}: {} bytes, more than the {} byte limit for a {}", path.string(), size, max_bytes, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open {} (permission denied?)", path.string(), what));
  // Read at most max_bytes + 1 bytes: the file may have grown since it was measured.
  std::string text;
  text.reserve(size_t(std::min<uint64_t>(ec ? 0 : size, uint64_t(max_bytes))));
  char buf[1 << 16];
  while (in && int64_t(text.size()) <= max_bytes) {
    in.read(buf, std::streamsize(std::min<int64_t>(sizeof buf, max_bytes + 1 - int64_t(text.size()))));
    text.append(buf, size_t(in.gcount()));
  }
  if (in.bad()) throw ConfigError(fmt::format("{}: read error in {}", path.string(), what));
  if (int64_t(text.size()) > max_bytes)
    throw ConfigError(fmt::format("{}: more than the {} byte limit for a {}", path.string(), max_bytes, what));
  return text;
}

void file_stems(const std::filesystem::path& dir, std::string_view ext, std::vector<std::string>& out) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ext) out.push_back(e.path().stem().string());
}

}  // namespace bitline
