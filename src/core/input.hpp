// Bounded reading of the files a user hands to bitline (configs, model
// descriptions, traces). Every input is capped so that a hostile or mistaken
// file fails early with a message naming the file and the limit, instead of
// exhausting memory or blocking: only regular files are read (a directory,
// /dev/zero or a pipe is refused), and each kind of file has a size cap.
// The caps and their reasons are listed in docs/commands.md ("Hardened inputs").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bitline {

/// Largest YAML config file: the presets are about 1 KB; 1 MiB leaves room for any hand-written
/// config while bounding the YAML parser's memory (about 1 KB per node).
inline constexpr int64_t kMaxConfigFileBytes = int64_t(1) << 20;
/// Largest model description (a Hugging Face config.json is a few KB).
inline constexpr int64_t kMaxModelFileBytes = int64_t(1) << 20;
/// Largest sessions trace (JSON Lines): about 3 million turns at ~80 bytes a line; the replay keeps
/// about 200 bytes per turn, so a full-size trace stays under 1 GB.
inline constexpr int64_t kMaxTraceFileBytes = int64_t(256) << 20;

/// Reads a whole regular file of at most `max_bytes` bytes. `what` names the kind of file in messages
/// ("config file", "model description", "trace"). Throws ConfigError naming the path and the reason.
std::string read_input_file(const std::filesystem::path& path, int64_t max_bytes, std::string_view what);

/// The names (without the extension) of the files of `dir` ending in `ext` (".yaml"), appended to `out`; a missing
/// folder adds none. Used to discover presets, GPU kinds and models from their folders.
void file_stems(const std::filesystem::path& dir, std::string_view ext, std::vector<std::string>& out);

}  // namespace bitline
