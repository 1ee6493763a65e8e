// Searches over a monotone predicate, the one bisection of the house: the largest batch or context that fits
// (llm::Server), the lowest replication level that hides (hbf KV placement), the highest arrival rate that meets an SLO
// (serve capacity).
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

namespace bitline {

/// The largest x in [lo, hi) with holds(x), for a predicate true up to some x and false beyond it, given holds(lo)
/// and !holds(hi) (neither is evaluated). Integer bisection: ceil(log2(hi - lo)) evaluations.
template <class Pred>
int64_t last_true(int64_t lo, int64_t hi, Pred holds) {
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? lo : hi) = mid;
  }
  return lo;
}

/// The smallest x in [lo, hi] with holds(x), for a predicate false up to some x and true beyond it, given holds(hi)
/// (not evaluated; holds(lo) is).
template <class Pred>
int64_t first_true(int64_t lo, int64_t hi, Pred holds) {
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? hi : lo) = mid;
  }
  return holds(lo) ? lo : hi;
}

/// The bracket [lo, hi] (lo > 0) narrowed geometrically around the edge of a predicate true below it and false above,
/// given holds(lo) and !holds(hi), until (hi - lo) / hi <= tolerance: returns {lo, hi}, the last x that held and the
/// first that did not.
template <class Pred>
std::pair<double, double> geometric_edge(double lo, double hi, double tolerance, Pred holds) {
  while ((hi - lo) / hi > tolerance) {
    const double mid = std::sqrt(lo * hi);
    (holds(mid) ? lo : hi) = mid;
  }
  return {lo, hi};
}

}  // namespace bitline
