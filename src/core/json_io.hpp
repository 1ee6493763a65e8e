// Writing results: JSON files are written to a temporary name and renamed, so a
// crash or an error never leaves a partial result that looks complete.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace bitline {

/// Writes `j` (pretty-printed) to `path` atomically; creates parent folders. Throws on I/O errors.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& j);

}  // namespace bitline
