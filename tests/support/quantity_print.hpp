// Readable GoogleTest failure messages for bitline quantities (Time, Bytes, ...): the raw value and its unit.
#pragma once

#include <ostream>

#include "core/units.hpp"

namespace bitline {
template <class T, class R>
void PrintTo(const Quantity<T, R>& q, std::ostream* os) {
  *os << q.raw() << " (" << format(q) << ")";
}
}  // namespace bitline
