// Statistics as a JSON tree. Components count in plain struct members (no
// string-keyed counters in hot loops) and write them here when asked; the tree
// is keyed by the instance path, and derived figures carry their unit in the
// key name (e.g. "time_s", "energy_j", "bandwidth_gb_per_s").
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace bitline {

using Json = nlohmann::json;

/// Returns the JSON object at a dotted path inside `root`, creating it.
inline Json& stats_at(Json& root, std::string_view dotted) {
  Json* cur = &root;
  size_t start = 0;
  while (start <= dotted.size() && !dotted.empty()) {
    size_t dot = dotted.find('.', start);
    std::string key(dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    cur = &(*cur)[key];
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return *cur;
}

}  // namespace bitline
