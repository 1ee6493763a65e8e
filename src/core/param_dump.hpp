// ParamDumper: the resolved values of a parameter struct as JSON (units
// included), written next to every result. Apart from core/params.hpp so that
// the many headers declaring parameter structs do not pull in nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/params.hpp"

namespace bitline {

nlohmann::json param_json(const Time& v);
nlohmann::json param_json(const Bytes& v);
nlohmann::json param_json(const Bandwidth& v);
nlohmann::json param_json(const Energy& v);
nlohmann::json param_json(const Power& v);
nlohmann::json param_json(const EnergyPerBit& v);
nlohmann::json param_json(const Area& v);
nlohmann::json param_json(const double& v);
nlohmann::json param_json(const int64_t& v);
nlohmann::json param_json(const bool& v);
nlohmann::json param_json(const std::string& v);
nlohmann::json param_json(const Table& v);
nlohmann::json param_json(const std::vector<int64_t>& v);
template <class T, const Registry<T>& (*R)()>
nlohmann::json param_json(const Choice<T, R>& v) {
  return std::string(v.name());
}

/// Writes the resolved values of a parameter struct as JSON (units included).
class ParamDumper {
 public:
  template <class T>
  void operator()(const T& field, const ParamInfo& info) {
    out_[std::string(info.name)] = param_json(field);
  }
  template <class P>
  void section(std::string_view name, P& sub) {
    ParamDumper child;
    sub.visit(child);
    out_[std::string(name)] = std::move(child.out_);
  }
  void also_known(std::string_view) {}
  nlohmann::json take() { return std::move(out_); }

 private:
  nlohmann::json out_ = nlohmann::json::object();
};

template <class P>
nlohmann::json dump_params(P p) {
  ParamDumper d;
  p.visit(d);
  return d.take();
}

}  // namespace bitline
