#include "nand/die.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace bitline::nand {

namespace {
constexpr uint8_t kErased = 0, kPlain = 1, kRandomized = 2;
}

Die::Die(const NandParams& params, uint64_t seed, bool store_data)
    : p_(params),
      cost_(p_.timing, p_.energy, p_.geometry.page_size),
      errors_(make_error_model(p_.reliability)),
      rng_(Rng::derive(seed, "nand.die.errors")),
      store_data_(store_data),
      latches_(size_t(p_.geometry.planes_per_die)) {}

Die::Block& Die::block_ref(uint32_t plane, uint32_t block) {
  uint64_t k = uint64_t(plane) * uint64_t(p_.geometry.blocks_per_plane) + block;
  auto [it, inserted] = blocks_.try_emplace(k);
  if (inserted) {
    it->second.pe_cycles = p_.reliability.initial_pe_cycles;
    it->second.retention_days = p_.reliability.retention_days;
    it->second.programmed.assign(size_t(p_.geometry.wordlines_per_block()) * 3, kErased);
  }
  return it->second;
}

const Die::Block* Die::find_block(uint32_t plane, uint32_t block) const {
  auto it = blocks_.find(uint64_t(plane) * uint64_t(p_.geometry.blocks_per_plane) + block);
  return it == blocks_.end() ? nullptr : &it->second;
}

Die::PlaneLatches& Die::latches(uint32_t plane) {
  PlaneLatches& l = latches_[plane];
  if (l.s.size() == 0) {
    size_t bits = size_t(p_.geometry.page_bits());
    l.s.assign(bits, false);
    l.c.assign(bits, false);
    l.d.assign(size_t(p_.command.data_latches), BitVector(bits, false));
  }
  return l;
}

const BitVector& Die::latch(uint32_t plane, Latch which) const {
  if (plane >= latches_.size()) throw CommandError(fmt::format("latch: plane {} out of range", plane));
  const_cast<Die*>(this)->latches(plane);
  const PlaneLatches& l = latches_[plane];
  if (which == Latch::S) return l.s;
  if (which == Latch::C) return l.c;
  size_t i = size_t(which) - size_t(Latch::D0);
  if (i >= l.d.size()) throw CommandError(fmt::format("latch {} does not exist", to_string(which)));
  return l.d[i];
}

CellCondition Die::condition(const Block* b) const {
  CellCondition c;
  if (!b) {
    c.pe_cycles = p_.reliability.initial_pe_cycles;
    c.retention_days = p_.reliability.retention_days;
    c.randomized = true;
    return c;
  }
  c.mode = b->has_mode ? b->mode : ProgramMode::Slc;
  c.pe_cycles = b->pe_cycles;
  c.retention_days = b->retention_days;
  c.esp_ratio = b->esp_ratio;
  c.randomized = !b->has_mode;  // erased cells of an erased block: the baseline SLC rate
  return c;
}

bool Die::is_programmed(const PageAddress& a) const {
  const Block* b = find_block(a.plane, a.block);
  return b && b->programmed[page_key(a.subblock, a.wordline, a.bit)] != kErased;
}

void Die::set_block_condition(uint32_t plane, uint32_t block, int64_t pe_cycles, double retention_days) {
  check(EraseCmd{plane, block}, p_.geometry, p_.command);
  Block& b = block_ref(plane, block);
  b.pe_cycles = pe_cycles;
  b.retention_days = retention_days;
}

double Die::page_rber(const PageAddress& a) const {
  const Block* b = find_block(a.plane, a.block);
  CellCondition c = condition(b);
  if (b) {
    uint8_t st = b->programmed[page_key(a.subblock, a.wordline, a.bit)];
    if (st != kErased) c.randomized = st == kRandomized;
  }
  return errors_->rber(c);
}

size_t Die::programmed_pages() const {
  size_t n = 0;
  for (const auto& [k, b] : blocks_)
    n += size_t(std::count_if(b.programmed.begin(), b.programmed.end(), [](uint8_t v) { return v != kErased; }));
  return n;
}

void Die::account(CommandResult& r, const OpCost& c, Energy DieStats::*bucket) {
  r.latency += c.latency;
  r.energy += c.energy;
  stats_.busy += c.latency;
  stats_.*bucket += c.energy;
}

void Die::randomizer_keystream(uint32_t plane, uint32_t block, uint32_t key, BitVector& out) const {
  // The scrambler is seeded by the page address, as SSD randomisers are.
  Rng r(0x5EEDull ^ (uint64_t(plane) << 56) ^ (uint64_t(block) << 24) ^ key);
  out.assign(size_t(p_.geometry.page_bits()), false);
  for (auto& w : out.words()) w = r.next();
  BitVector ones(out.size(), true);
  out &= ones;  // clear the tail beyond the page
}

CommandResult Die::execute_bytes(std::span<const uint8_t> bytes) { return execute(decode(bytes, p_.geometry, p_.command)); }

CommandResult Die::execute(const Command& cmd) {
  check(cmd, p_.geometry, p_.command);
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  return std::visit(overloaded{
                        [&](const ReadCmd& c) { return do_read(c); },
                        [&](const ProgramCmd& c) { return do_program(c); },
                        [&](const EraseCmd& c) { return do_erase(c); },
                        [&](const MwsCmd& c) { return do_mws(c); },
                        [&](const XorCmd& c) { return do_xor(c); },
                        [&](const LatchCopyCmd& c) { return do_copy(c); },
                        [&](const DataOutCmd& c) { return do_data_out(c); },
                    },
                    cmd);
}

CommandResult Die::do_program(const ProgramCmd& c) {
  const auto& a = c.addr;
  int bits = bits_per_cell(c.mode);
  if (!c.data.empty() && int64_t(c.data.size()) != bits * p_.geometry.page_size.raw())
    throw CommandError(fmt::format("PROGRAM({}): {} data bytes, the {} pages of a wordline need {}", to_string(c.mode), c.data.size(), bits,
                                   bits * p_.geometry.page_size.raw()));
  if (a.bit != 0)
    throw CommandError(fmt::format("PROGRAM: address page-in-wordline 0; {} mode programs all {} pages of wordline {} at once",
                                   to_string(c.mode), bits, a.wordline));
  if (store_data_ && c.data.empty()) throw CommandError("PROGRAM: no data (a functional die needs the page contents)");
  Block& b = block_ref(a.plane, a.block);
  if (b.has_mode && b.mode != c.mode)
    throw CommandError(fmt::format("PROGRAM({}): block {} of plane {} holds {} data; erase it first", to_string(c.mode), a.block, a.plane,
                                   to_string(b.mode)));
  for (int k = 0; k < bits; ++k)
    if (b.programmed[page_key(a.subblock, a.wordline, uint32_t(k))] != kErased)
      throw CommandError(
          fmt::format("PROGRAM: page (plane {}, block {}, sub-block {}, wordline {}) is already programmed; "
                      "erase the block first",
                      a.plane, a.block, a.subblock, a.wordline));
  b.has_mode = true;
  b.mode = c.mode;
  if (c.mode == ProgramMode::Esp) b.esp_ratio = p_.timing.esp_prog_ratio;
  const size_t page_bytes = size_t(p_.geometry.page_size.raw());
  for (int k = 0; k < bits; ++k) {
    uint32_t key = page_key(a.subblock, a.wordline, uint32_t(k));
    b.programmed[key] = c.randomize ? kRandomized : kPlain;
    if (!store_data_) continue;
    BitVector cells(size_t(p_.geometry.page_bits()));
    cells.from_bytes(std::span<const uint8_t>(c.data).subspan(size_t(k) * page_bytes, page_bytes));
    if (c.randomize) {
      BitVector ks;
      randomizer_keystream(a.plane, a.block, key, ks);
      cells ^= ks;
    }
    // Data-in goes through the cache latch (and the data latches for MLC/TLC).
    PlaneLatches& l = latches(a.plane);
    if (k == bits - 1)
      l.c = cells;
    else if (size_t(k) < l.d.size())
      l.d[size_t(k)] = cells;
    b.data[key] = std::move(cells);
  }
  CommandResult r;
  account(r, cost_.command(c), &DieStats::program_energy);
  ++stats_.programs;
  ++stats_.programs_by_mode[int(c.mode)];
  return r;
}

CommandResult Die::do_erase(const EraseCmd& c) {
  Block& b = block_ref(c.plane, c.block);
  b.has_mode = false;
  std::fill(b.programmed.begin(), b.programmed.end(), kErased);
  b.data.clear();
  ++b.pe_cycles;
  CommandResult r;
  account(r, cost_.command(c), &DieStats::erase_energy);
  ++stats_.erases;
  return r;
}

CommandResult Die::do_read(const ReadCmd& c) {
  const auto& a = c.addr;
  const Block* b = find_block(a.plane, a.block);
  ProgramMode mode = b && b->has_mode ? b->mode : ProgramMode::Slc;
  if (int(a.bit) >= bits_per_cell(mode))
    throw CommandError(fmt::format("READ: page-in-wordline {} does not exist in a {} block", a.bit, to_string(mode)));
  CommandResult r;
  uint32_t key = page_key(a.subblock, a.wordline, a.bit);
  std::vector<std::vector<SensedPage>> groups(1);
  const BitVector* bits = nullptr;
  if (b) {
    auto it = b->data.find(key);
    if (it != b->data.end()) bits = &it->second;
  }
  groups[0].push_back(SensedPage{b, key, bits});
  sense(groups, sensed_, r);
  if (store_data_) latch_steps(latches(a.plane), Iscm{}, sensed_);
  account(r, cost_.command(c, mode), &DieStats::sense_energy);
  ++stats_.reads;
  ++stats_.wordlines_sensed;
  return r;
}

CommandResult Die::do_mws(const MwsCmd& c) {
  // State checks first: a rejected command must leave the statistics untouched.
  for (const auto& s : c.slots) {
    const Block* b = find_block(c.plane, s.block);
    if (b && b->has_mode && (b->mode == ProgramMode::Mlc || b->mode == ProgramMode::Tlc))
      throw CommandError(fmt::format("MWS: block {} of plane {} holds {} data; multi-wordline sensing needs SLC or ESP data", s.block,
                                     c.plane, to_string(b->mode)));
  }
  CommandResult r;
  std::vector<std::vector<SensedPage>> groups(c.slots.size());
  for (size_t i = 0; i < c.slots.size(); ++i) {
    const auto& s = c.slots[i];
    const Block* b = find_block(c.plane, s.block);
    int n = 0;
    for (int w = 0; w < p_.geometry.wordlines_per_string; ++w) {
      if (!s.pbm[size_t(w)]) continue;
      ++n;
      uint32_t key = page_key(s.subblock, uint32_t(w), 0);
      const BitVector* bits = nullptr;
      if (b) {
        auto it = b->data.find(key);
        if (it != b->data.end()) bits = &it->second;
      }
      groups[i].push_back(SensedPage{b, key, bits});
    }
    stats_.wordlines_sensed += uint64_t(n);
  }
  sense(groups, sensed_, r);
  if (store_data_) latch_steps(latches(c.plane), c.iscm, sensed_);
  account(r, cost_.command(c), &DieStats::sense_energy);
  ++stats_.mws;
  if (c.iscm.inverse) ++stats_.inverse_sensings;
  return r;
}

void Die::sense(const std::vector<std::vector<SensedPage>>& groups, BitVector& out, CommandResult& r) {
  const size_t nbits = size_t(p_.geometry.page_bits());
  uint64_t pages = 0;
  for (const auto& g : groups) pages += g.size();
  r.cells_sensed += pages * nbits;
  stats_.cells_sensed += pages * nbits;
  if (!store_data_) return;

  if (out.size() != nbits) out.assign(nbits, false);
  const size_t words = out.word_count();
  uint64_t* __restrict dst = out.data();

  // Error-free result: OR over groups of AND over the group's pages, in
  // cache-sized chunks so the accumulator stays in L1.
  constexpr size_t kChunk = 512;
  alignas(64) uint64_t acc[kChunk];
  std::vector<std::vector<const uint64_t*>> ptrs(groups.size());
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& p : groups[g])
      if (p.bits) ptrs[g].push_back(p.bits->data());
  for (size_t base = 0; base < words; base += kChunk) {
    const size_t n = std::min(kChunk, words - base);
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& pg = ptrs[g];
      if (pg.empty())
        for (size_t j = 0; j < n; ++j) acc[j] = ~uint64_t(0);
      // Eight pages per pass keep eight read streams in flight (the long AND
      // is bound by memory bandwidth); a short last pass repeats its last page
      // (x AND x = x), so the result is the same for any page count.
      for (size_t k = 0; k < pg.size(); k += 8) {
        const size_t last = pg.size() - 1;
        const uint64_t* __restrict a0 = pg[k] + base;
        const uint64_t* __restrict a1 = pg[std::min(k + 1, last)] + base;
        const uint64_t* __restrict a2 = pg[std::min(k + 2, last)] + base;
        const uint64_t* __restrict a3 = pg[std::min(k + 3, last)] + base;
        const uint64_t* __restrict a4 = pg[std::min(k + 4, last)] + base;
        const uint64_t* __restrict a5 = pg[std::min(k + 5, last)] + base;
        const uint64_t* __restrict a6 = pg[std::min(k + 6, last)] + base;
        const uint64_t* __restrict a7 = pg[std::min(k + 7, last)] + base;
        if (k == 0)
          for (size_t j = 0; j < n; ++j) acc[j] = a0[j] & a1[j] & a2[j] & a3[j] & a4[j] & a5[j] & a6[j] & a7[j];
        else
          for (size_t j = 0; j < n; ++j) acc[j] &= a0[j] & a1[j] & a2[j] & a3[j] & a4[j] & a5[j] & a6[j] & a7[j];
      }
      if (g == 0)
        for (size_t j = 0; j < n; ++j) dst[base + j] = acc[j];
      else
        for (size_t j = 0; j < n; ++j) dst[base + j] |= acc[j];
    }
  }
  if (nbits % 64) dst[words - 1] &= (uint64_t(1) << (nbits % 64)) - 1;

  // Errors: each sensed cell reads wrong with its page's RBER. Find the error
  // positions by geometric jumps, then recompute only the affected bitlines.
  struct Flip {
    uint64_t pos;
    uint32_t group, page;
  };
  std::vector<Flip> flips;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < groups[g].size(); ++i) {
      const SensedPage& sp = groups[g][i];
      CellCondition cond = condition(sp.block);
      if (sp.block) {
        uint8_t st = sp.block->programmed[sp.key];
        if (st != kErased) cond.randomized = st == kRandomized;
      }
      double p = errors_->rber(cond);
      inject_errors(rng_, p, nbits, [&](uint64_t pos) { flips.push_back(Flip{pos, uint32_t(g), uint32_t(i)}); });
    }
  }
  if (flips.empty()) return;
  r.bit_errors += flips.size();
  stats_.bit_errors += flips.size();
  std::sort(flips.begin(), flips.end(), [](const Flip& x, const Flip& y) {
    return x.pos != y.pos ? x.pos < y.pos : (x.group != y.group ? x.group < y.group : x.page < y.page);
  });
  for (size_t i = 0; i < flips.size();) {
    size_t j = i;
    while (j < flips.size() && flips[j].pos == flips[i].pos) ++j;
    const uint64_t pos = flips[i].pos;
    bool any = false;
    for (size_t g = 0; g < groups.size() && !any; ++g) {
      bool all = true;
      for (size_t k = 0; k < groups[g].size() && all; ++k) {
        const SensedPage& sp = groups[g][k];
        bool v = sp.bits ? sp.bits->get(pos) : true;
        for (size_t f = i; f < j; ++f)
          if (flips[f].group == g && flips[f].page == k) v = !v;
        all = v;
      }
      any = all;
    }
    out.set(pos, any);
    i = j;
  }
}

void Die::latch_steps(PlaneLatches& l, const Iscm& iscm, const BitVector& sensed) {
  if (iscm.init_c) l.c.fill(false);  // M4
  if (iscm.inverse) {
    // Inverse read: M1/M2 swapped; S is initialised to 0 and set where the bitline does not discharge.
    l.s = sensed;
    l.s.invert();
  } else if (iscm.init_s) {
    l.s = sensed;  // S = 1 (M1), then S = S AND sensed (M2)
  } else {
    l.s &= sensed;  // no re-initialisation: ParaBit-style accumulation of AND
  }
  if (iscm.transfer) l.c |= l.s;  // M3
}

CommandResult Die::do_xor(const XorCmd& c) {
  if (store_data_) {
    PlaneLatches& l = latches(c.plane);
    l.c ^= l.s;
  }
  CommandResult r;
  account(r, cost_.command(c), &DieStats::latch_energy);
  ++stats_.xors;
  return r;
}

CommandResult Die::do_copy(const LatchCopyCmd& c) {
  if (store_data_) {
    PlaneLatches& l = latches(c.plane);
    auto ref = [&](Latch x) -> BitVector& { return x == Latch::S ? l.s : x == Latch::C ? l.c : l.d[size_t(x) - size_t(Latch::D0)]; };
    if (c.src != c.dst) ref(c.dst) = ref(c.src);
  }
  CommandResult r;
  account(r, cost_.command(c), &DieStats::latch_energy);
  ++stats_.latch_copies;
  return r;
}

CommandResult Die::do_data_out(const DataOutCmd& c) {
  CommandResult r;
  if (store_data_) {
    const BitVector& cl = latches(c.plane).c;
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(cl.data());
    r.data.assign(bytes + c.column, bytes + c.column + c.length);
  }
  account(r, cost_.command(c), &DieStats::io_energy);
  ++stats_.data_outs;
  stats_.data_out_bytes += c.length;
  return r;
}

PageRead Die::read_page(const PageAddress& a) {
  CommandResult r1 = execute(ReadCmd{a});
  CommandResult r2 = execute(DataOutCmd{a.plane, 0, uint32_t(p_.geometry.page_size.raw())});
  return correct_read(a, r1, r2);
}

PageRead Die::correct_read(const PageAddress& a, const CommandResult& r1, const CommandResult& r2) {
  PageRead out;
  out.latency = r1.latency + r2.latency;
  out.energy = r1.energy + r2.energy;
  out.raw_bit_errors = r1.bit_errors;
  if (!store_data_) return out;
  const Block* b = find_block(a.plane, a.block);
  uint32_t key = page_key(a.subblock, a.wordline, a.bit);
  BitVector raw(size_t(p_.geometry.page_bits()));
  raw.from_bytes(r2.data);
  BitVector truth(raw.size(), true);
  if (b) {
    auto it = b->data.find(key);
    if (it != b->data.end()) truth = it->second;
  }
  // ECC model: a codeword is corrected when its raw errors do not exceed the capability.
  const size_t cw_words = size_t(p_.ecc.codeword.raw()) / 8;
  for (size_t w0 = 0; w0 < raw.word_count(); w0 += cw_words) {
    size_t w1 = std::min(raw.word_count(), w0 + cw_words);
    uint64_t errs = 0;
    for (size_t w = w0; w < w1; ++w) errs += uint64_t(popcount64(raw.data()[w] ^ truth.data()[w]));
    if (errs == 0) continue;
    if (int64_t(errs) <= p_.ecc.correctable_bits) {
      for (size_t w = w0; w < w1; ++w) raw.data()[w] = truth.data()[w];
      out.corrected_bits += errs;
    } else {
      out.uncorrectable = true;
    }
  }
  if (b && b->programmed[key] == kRandomized) {
    BitVector ks;
    randomizer_keystream(a.plane, a.block, key, ks);
    raw ^= ks;
  }
  stats_.ecc_corrected_bits += out.corrected_bits;
  if (out.uncorrectable) ++stats_.ecc_uncorrectable_pages;
  out.data = raw.to_bytes();
  return out;
}

void Die::register_stats(StatGroup& g) const {
  const DieStats& s = stats_;
  g.group("commands")
      .add("read", s.reads, "READ commands (one sensing of one wordline)")
      .add("mws", s.mws, "multi-wordline sensing commands")
      .add("inverse_sensing", s.inverse_sensings, "sensings in inverse-read mode")
      .add("program", s.programs, "PROGRAM commands (every mode)")
      .add("erase", s.erases, "ERASE commands")
      .add("xor", s.xors, "XOR between the S- and C-latch")
      .add("latch_copy", s.latch_copies, "latch-to-latch copies")
      .add("data_out", s.data_outs, "DATA-OUT transfers");
  g.group("programs_by_mode")
      .add("slc", s.programs_by_mode[0], "SLC programs")
      .add("mlc", s.programs_by_mode[1], "MLC programs")
      .add("tlc", s.programs_by_mode[2], "TLC programs")
      .add("esp", s.programs_by_mode[3], "enhanced SLC programs");
  g.add("wordlines_sensed", s.wordlines_sensed, "wordlines sensed, summed over commands")
      .add("cells_sensed", s.cells_sensed, "cells sensed (wordlines x bitlines)")
      .add("bit_errors", s.bit_errors, "raw bit errors injected into sensed data")
      .add("data_out_bytes", s.data_out_bytes, "bytes moved out of the die")
      .add("busy_s", s.busy, "time the die was busy");
  g.group("ecc")
      .add("corrected_bits", s.ecc_corrected_bits, "bits the ECC model corrected")
      .add("uncorrectable_pages", s.ecc_uncorrectable_pages, "pages with an uncorrectable codeword");
  g.group("energy_j")
      .add("sense", s.sense_energy, "sensing energy")
      .add("program", s.program_energy, "programming energy")
      .add("erase", s.erase_energy, "erase energy")
      .add("latch", s.latch_energy, "latch operation energy")
      .add("io", s.io_energy, "data-out energy")
      .derived(
          "total", [&s] { return (s.sense_energy + s.program_energy + s.erase_energy + s.latch_energy + s.io_energy).raw(); },
          "sum of the above");
  g.derived(
      "programmed_pages", [this] { return programmed_pages(); }, "pages holding data now");
}

}  // namespace bitline::nand
