#include "hbf/system.hpp"

#include <fmt/format.h>

#include <algorithm>

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

const Registry<KvSpan>& kv_spans() {
  static const Registry<KvSpan> r(
      "KV span", {{"all", "every megaplane from the request's cursor: at least one megablock on each", KvSpan::All},
                  {"fit",
                   "a window of consecutive megaplanes just wide enough for the request's expected KV in whole megablocks; "
                   "successive requests' windows follow each other round the megaplanes",
                   KvSpan::Fit}});
  return r;
}

int64_t System::kv_window(int64_t slices) const {
  const int64_t k = megaplanes();
  switch (*p_.hbf.runtime.kv_span) {
    case KvSpan::All:
      return k;
    case KvSpan::Fit:
      return std::clamp<int64_t>((slices + pages_per_block() - 1) / pages_per_block(), 1, k);
  }
  throw std::logic_error("unhandled hbf.runtime.kv_span");
}

int64_t System::kv_megablocks(int64_t slices) const {
  if (slices <= 0) return 0;
  const int64_t w = kv_window(slices), ppb = pages_per_block();
  if (slices < w) return slices;
  return w * (((slices + w - 1) / w + ppb - 1) / ppb);
}

std::string System::name(MegaplaneId m) const {
  return fmt::format("stack {} die {} megaplane {}", stack_of(m), die_of(m), megaplane_in_die(m));
}

}  // namespace bitline::hbf
