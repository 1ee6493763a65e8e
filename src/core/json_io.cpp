#include "core/json_io.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace bitline {

void write_json_file(const std::filesystem::path& path, const nlohmann::json& j) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  auto tmp = path;
  tmp += ".partial";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", tmp.string()));
    out << j.dump(2) << "\n";
    out.close();
    if (!out) throw std::runtime_error(fmt::format("{}: write failed", tmp.string()));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace bitline
