#include "hbf/system.hpp"

#include <fmt/format.h>

namespace bitline::hbf {

System::System(const SystemParams& p) : p_(p) { validate(p_); }

MegaplaneId System::dealt(int64_t i) const {
  const int64_t k = megaplanes();
  i %= k;
  if (i < 0) i += k;
  const int64_t s = i % stacks();
  const int64_t j = i / stacks();
  const int64_t d = j % dies_per_stack();
  const int64_t m = j / dies_per_stack();
  return MegaplaneId((s * dies_per_stack() + d) * megaplanes_per_die() + m);
}

int64_t System::deal_index(MegaplaneId id) const {
  const int64_t s = stack_of(id), d = die_of(id), m = megaplane_in_die(id);
  return (m * dies_per_stack() + d) * stacks() + s;
}

std::string System::name(MegaplaneId m) const {
  return fmt::format("stack {} die {} megaplane {}", stack_of(m), die_of(m), megaplane_in_die(m));
}

}  // namespace bitline::hbf
