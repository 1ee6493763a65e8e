#include "nand/sequences.hpp"

namespace bitline::nand {

MwsCmd single_wordline(uint32_t plane, const WordlineRef& w, Iscm iscm) {
  MwsCmd c;
  c.plane = plane;
  c.iscm = iscm;
  MwsSlot s;
  s.block = w.block;
  s.subblock = w.subblock;
  s.pbm.set(w.wordline);
  c.slots.push_back(s);
  return c;
}

std::vector<Command> parabit_and(uint32_t plane, const std::vector<WordlineRef>& ops) {
  std::vector<Command> out;
  out.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    bool first = i == 0, last = i + 1 == ops.size();
    out.emplace_back(std::in_place_type<MwsCmd>,
                     single_wordline(plane, ops[i], Iscm{.inverse = false, .init_s = first, .init_c = first, .transfer = last}));
  }
  return out;
}

std::vector<Command> parabit_or(uint32_t plane, const std::vector<WordlineRef>& ops) {
  std::vector<Command> out;
  out.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    out.emplace_back(std::in_place_type<MwsCmd>,
                     single_wordline(plane, ops[i], Iscm{.inverse = false, .init_s = true, .init_c = i == 0, .transfer = true}));
  return out;
}

MwsCmd intra_block(uint32_t plane, uint32_t block, uint32_t subblock, const std::vector<uint32_t>& wordlines, Iscm iscm) {
  MwsCmd c;
  c.plane = plane;
  c.iscm = iscm;
  MwsSlot s;
  s.block = block;
  s.subblock = subblock;
  for (auto w : wordlines) s.pbm.set(w);
  c.slots.push_back(s);
  return c;
}

}  // namespace bitline::nand
