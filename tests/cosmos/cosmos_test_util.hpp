// Helpers shared by the Flash-Cosmos tests: small SSD configurations and
// expectations on errors.
#pragma once

// Project headers before GoogleTest (see tests/nand/nand_test_util.hpp).
#include "core/error.hpp"
#include "core/params.hpp"
#include "cosmos/cosmos_ssd.hpp"
#include "cosmos/firmware.hpp"
#include "cosmos/planner.hpp"
#include "cosmos/workloads.hpp"
#include "nand/params.hpp"
#include "ssd/params.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace bitline::cosmos::test {

/// The paper's SSD (every parameter at its default).
inline EvalConfig paper_config() {
  EvalConfig c;
  c.nand = default_params<nand::NandParams>();
  c.ssd = default_params<ssd::SsdParams>();
  c.host = default_params<ssd::HostParams>();
  c.cosmos = default_params<CosmosParams>();
  c.workload = default_params<WorkloadParams>();
  c.seed = 1;
  return c;
}

/// The paper's evaluation matrix: the shipped configs/experiments/flash-cosmos-eval.yaml of this source tree.
inline EvalMatrix paper_matrix() {
  return load_eval_matrix(std::string(BITLINE_SOURCE_DIR) + "/configs/experiments/flash-cosmos-eval.yaml");
}

/// The values of one workload's sweep in a matrix, in order.
inline std::vector<int64_t> sweep_of(const EvalMatrix& m, const std::string& workload) {
  std::vector<int64_t> v;
  for (const Point& p : m.points)
    if (p.workload == workload) v.push_back(p.value);
  return v;
}

/// A matrix of `points` on every system.
inline EvalMatrix matrix_of(std::vector<Point> points) {
  EvalMatrix m;
  m.points = std::move(points);
  m.systems.assign(std::begin(kAllSystems), std::end(kAllSystems));
  m.compare = {{System::Fc, System::Osp}, {System::Fc, System::ParaBit}};
  return m;
}

/// A small SSD for functional runs: 2 channels x 2 dies x 2 planes (8 planes),
/// 1 KiB pages, 256 blocks per plane; `errors` selects the rber_table model.
inline EvalConfig small_config(bool errors) {
  EvalConfig c = paper_config();
  c.ssd.channels = 2;
  c.ssd.dies_per_channel = 2;
  c.nand.geometry.page_size = Bytes(1024);
  c.nand.geometry.blocks_per_plane = 256;
  c.nand.ecc.codeword = Bytes(512);
  c.nand.ecc.correctable_bits = 40;
  c.nand.reliability.model = nand::ErrorModelChoice::named(errors ? "rber_table" : "none");
  nand::validate(c.nand);
  return c;
}

/// Reduced workloads: several page columns, a partial last page, BMI across
/// two strings (60 operands > 48 wordlines), IMS over several blocks (66
/// columns, 16 per string), KCS with k = 64.
inline WorkloadParams small_workload() {
  WorkloadParams w = default_params<WorkloadParams>();
  w.users = (16 * 1024 + 200) * 8;  // 17 pages of 1 KiB over 8 planes: 3 columns, the last one partial
  w.days_per_month = 30;
  w.image_width = 16;
  w.image_height = 16;
  w.colors = 4;
  w.vertices = 20 * 1024 * 8;  // 20 pages: 3 columns, the last on half the planes
  w.cliques = 3;
  return w;
}

/// The points run on small_workload(): BMI 1 and 2 months, IMS 10 and 4200 images (4200 images: 525 pages,
/// 66 columns), KCS k = 8 and 64.
inline std::vector<Point> small_points() {
  return {{"bmi", "months", 1}, {"bmi", "months", 2}, {"ims", "images", 10}, {"ims", "images", 4200}, {"kcs", "k", 8}, {"kcs", "k", 64}};
}

/// Expects `f` to throw a ModelError whose message contains every needle.
inline void expect_model_error(const std::function<void()>& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    std::string m = e.what();
    for (const auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "message: " << m << "\nexpected: " << n;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ModelError, got: " << e.what();
  }
}

}  // namespace bitline::cosmos::test
