// The published figures that validation tests compare with, read from
// scripts/paper_figures.json (the one copy; docs/validation.md is generated
// from the same file), never written again in a test.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>
#include <string>

namespace bitline::test {

/// The figures of one paper ("flash_cosmos" or "flashaccel").
inline const nlohmann::json& paper_figures(const std::string& paper) {
  static const nlohmann::json all = [] {
    const std::string path = std::string(BITLINE_SOURCE_DIR) + "/scripts/paper_figures.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return nlohmann::json::parse(in);
  }();
  return all.at(paper);
}

/// One figure, by JSON pointer inside the paper's object (e.g. "/speedup/fc~1osp").
inline double paper_figure(const std::string& paper, const std::string& pointer) {
  return paper_figures(paper).at(nlohmann::json::json_pointer(pointer)).get<double>();
}

}  // namespace bitline::test
