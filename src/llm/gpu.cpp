#include "llm/gpu.hpp"

#include <algorithm>

namespace bitline::llm {

double GpuCompute::utilisation(double rows) const {
  rows = std::max(rows, 1.0);
  return p_.util_max * rows / (rows + p_.util_half_rows);
}

Time GpuCompute::time(double flops, double rows, bool fp8) const {
  if (flops <= 0) return Time{};
  return ps(flops / (peak(fp8) * utilisation(rows)) * 1e12);
}

}  // namespace bitline::llm
