#include "core/stats.hpp"

#include <nlohmann/json.hpp>

namespace bitline {

namespace {

Json read_entry(const std::variant<std::function<StatValue()>, std::function<Json()>>& read) {
  if (const auto* derived = std::get_if<std::function<Json()>>(&read)) return (*derived)();
  return std::visit([](const auto& v) { return Json(v); }, std::get<std::function<StatValue()>>(read)());
}

}  // namespace

Json StatGroup::dump() const {
  Json j = Json::object();
  for (const auto& e : entries_) j[e.name] = read_entry(e.read);
  for (const auto& [name, child] : children_) j[name] = child->dump();
  return j;
}

Json StatGroup::describe() const {
  Json j = Json::object();
  for (const auto& e : entries_) j[e.name] = e.desc;
  for (const auto& [name, child] : children_) j[name] = child->describe();
  return j;
}

Json dump_stats(const std::function<void(StatGroup&)>& fill) {
  StatsTree t;
  fill(t);
  return t.dump();
}

}  // namespace bitline
