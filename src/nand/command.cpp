#include "nand/command.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace bitline::nand {

const char* to_string(ProgramMode m) {
  switch (m) {
    case ProgramMode::Slc:
      return "slc";
    case ProgramMode::Mlc:
      return "mlc";
    case ProgramMode::Tlc:
      return "tlc";
    case ProgramMode::Esp:
      return "esp";
  }
  return "?";
}

int bits_per_cell(ProgramMode m) { return m == ProgramMode::Mlc ? 2 : m == ProgramMode::Tlc ? 3 : 1; }

std::string to_string(Latch l) {
  if (l == Latch::S) return "S";
  if (l == Latch::C) return "C";
  return fmt::format("D{}", int(l) - int(Latch::D0));
}

namespace {

size_t pbm_bytes(const Geometry& g) { return size_t((g.wordlines_per_string + 7) / 8); }

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint32_t v) { u8(uint8_t(v)), u8(uint8_t(v >> 8)); }
  void u24(uint32_t v) { u16(v & 0xFFFF), u8(uint8_t(v >> 16)); }
  void u32(uint32_t v) { u16(v & 0xFFFF), u16(v >> 16); }
  void page(const PageAddress& a) {
    u8(uint8_t(a.plane)), u24(a.block), u8(uint8_t(a.subblock)), u8(uint8_t(a.wordline)), u8(uint8_t(a.bit));
  }
  void pbm(const PageBitmap& b, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      uint8_t byte = 0;
      for (int k = 0; k < 8; ++k)
        if (i * 8 + k < kMaxWordlines && b[i * 8 + k]) byte |= uint8_t(1u << k);
      u8(byte);
    }
  }

 private:
  std::vector<uint8_t>& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  uint8_t u8(const char* what) {
    if (pos_ >= b_.size()) throw CommandError(fmt::format("truncated command: missing {} at byte {}", what, pos_));
    return b_[pos_++];
  }
  uint32_t u16(const char* w) {
    uint32_t lo = u8(w);
    return lo | uint32_t(u8(w)) << 8;
  }
  uint32_t u24(const char* w) {
    uint32_t lo = u16(w);
    return lo | uint32_t(u8(w)) << 16;
  }
  uint32_t u32(const char* w) {
    uint32_t lo = u16(w);
    return lo | u16(w) << 16;
  }
  PageAddress page() {
    PageAddress a;
    a.plane = u8("plane");
    a.block = u24("block");
    a.subblock = u8("sub-block");
    a.wordline = u8("wordline");
    a.bit = u8("page-in-wordline");
    return a;
  }
  PageBitmap pbm(size_t n) {
    PageBitmap b;
    for (size_t i = 0; i < n; ++i) {
      uint8_t byte = u8("page bitmap");
      for (int k = 0; k < 8; ++k)
        if (byte >> k & 1) {
          if (i * 8 + k >= kMaxWordlines) throw CommandError("page bitmap wider than the supported 256 wordlines");
          b[i * 8 + k] = true;
        }
    }
    return b;
  }
  void expect(uint8_t v, const char* what) {
    size_t at = pos_;
    uint8_t got = u8(what);
    if (got != v) throw CommandError(fmt::format("expected {} (0x{:02X}) at byte {}, found 0x{:02X}", what, v, at, got));
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ >= b_.size(); }
  std::span<const uint8_t> take(size_t n, const char* what) {
    if (b_.size() - pos_ < n) throw CommandError(fmt::format("truncated command: {} needs {} bytes, {} left", what, n, b_.size() - pos_));
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
};

Command decode_one(Reader& r, const Geometry& g, const CommandParams& limits) {
  size_t start = r.pos();
  uint8_t opcode = r.u8("opcode");
  switch (opcode) {
    case op::kRead: {
      ReadCmd c{r.page()};
      r.expect(op::kReadConfirm, "READ confirm");
      return c;
    }
    case op::kProgram: {
      ProgramCmd c;
      uint8_t mode = r.u8("program mode");
      if ((mode & 0x7F) > 3) throw CommandError(fmt::format("PROGRAM: unknown program mode {}", mode & 0x7F));
      c.mode = ProgramMode(mode & 0x7F);
      c.randomize = (mode & 0x80) != 0;
      c.addr = r.page();
      uint32_t len = r.u32("data length");
      auto d = r.take(len, "PROGRAM data");
      c.data.assign(d.begin(), d.end());
      r.expect(op::kProgramConfirm, "PROGRAM confirm");
      return c;
    }
    case op::kErase: {
      EraseCmd c;
      c.plane = r.u8("plane");
      c.block = r.u24("block");
      r.expect(op::kEraseConfirm, "ERASE confirm");
      return c;
    }
    case op::kDataOut: {
      DataOutCmd c;
      c.plane = r.u8("plane");
      c.column = r.u32("column");
      c.length = r.u32("length");
      r.expect(op::kDataOutConfirm, "DATA-OUT confirm");
      return c;
    }
    case op::kXor: {
      XorCmd c;
      c.plane = r.u8("plane");
      return c;
    }
    case op::kLatchCopy: {
      LatchCopyCmd c;
      c.plane = r.u8("plane");
      c.src = Latch(r.u8("source latch"));
      c.dst = Latch(r.u8("destination latch"));
      return c;
    }
    case op::kMws: {
      MwsCmd c;
      uint8_t iscm = r.u8("ISCM");
      if (iscm & 0xF0) throw CommandError(fmt::format("MWS: ISCM byte 0x{:02X} has undefined bits set", iscm));
      c.iscm = Iscm{bool(iscm & 1), bool(iscm & 2), bool(iscm & 4), bool(iscm & 8)};
      c.plane = r.u8("plane");
      while (true) {
        MwsSlot s;
        s.block = r.u24("block");
        s.subblock = r.u8("sub-block");
        s.pbm = r.pbm(pbm_bytes(g));
        c.slots.push_back(s);
        if (int64_t(c.slots.size()) > limits.max_mws_slots)
          throw CommandError(fmt::format("MWS: more than {} block slots chained with CONT (command.max_mws_slots)", limits.max_mws_slots));
        size_t at = r.pos();
        uint8_t next = r.u8("CONT or CONF");
        if (next == op::kMwsConf) break;
        if (next != op::kMwsCont)
          throw CommandError(fmt::format("MWS: expected CONT (0xC1) or CONF (0xC2) at byte {}, found 0x{:02X}", at, next));
      }
      return c;
    }
    default:
      throw CommandError(fmt::format("unknown opcode 0x{:02X} at byte {}", opcode, start));
  }
}

}  // namespace

std::vector<uint8_t> encode(const Command& cmd, const Geometry& g) {
  std::vector<uint8_t> out;
  Writer w(out);
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  std::visit(overloaded{
                 [&](const ReadCmd& c) { w.u8(op::kRead), w.page(c.addr), w.u8(op::kReadConfirm); },
                 [&](const ProgramCmd& c) {
                   w.u8(op::kProgram), w.u8(uint8_t(c.mode) | (c.randomize ? 0x80 : 0)), w.page(c.addr);
                   w.u32(uint32_t(c.data.size()));
                   out.insert(out.end(), c.data.begin(), c.data.end());
                   w.u8(op::kProgramConfirm);
                 },
                 [&](const EraseCmd& c) { w.u8(op::kErase), w.u8(uint8_t(c.plane)), w.u24(c.block), w.u8(op::kEraseConfirm); },
                 [&](const DataOutCmd& c) {
                   w.u8(op::kDataOut), w.u8(uint8_t(c.plane)), w.u32(c.column), w.u32(c.length), w.u8(op::kDataOutConfirm);
                 },
                 [&](const XorCmd& c) { w.u8(op::kXor), w.u8(uint8_t(c.plane)); },
                 [&](const LatchCopyCmd& c) { w.u8(op::kLatchCopy), w.u8(uint8_t(c.plane)), w.u8(uint8_t(c.src)), w.u8(uint8_t(c.dst)); },
                 [&](const MwsCmd& c) {
                   w.u8(op::kMws), w.u8(c.iscm.encode()), w.u8(uint8_t(c.plane));
                   for (size_t i = 0; i < c.slots.size(); ++i) {
                     if (i) w.u8(op::kMwsCont);
                     w.u24(c.slots[i].block), w.u8(uint8_t(c.slots[i].subblock)), w.pbm(c.slots[i].pbm, pbm_bytes(g));
                   }
                   w.u8(op::kMwsConf);
                 },
             },
             cmd);
  return out;
}

Command decode(std::span<const uint8_t> bytes, const Geometry& g, const CommandParams& limits) {
  Reader r(bytes);
  Command c = decode_one(r, g, limits);
  if (!r.done()) throw CommandError(fmt::format("{} trailing bytes after the command", bytes.size() - r.pos()));
  return c;
}

std::vector<Command> decode_stream(std::span<const uint8_t> bytes, const Geometry& g, const CommandParams& limits) {
  Reader r(bytes);
  std::vector<Command> out;
  while (!r.done()) out.push_back(decode_one(r, g, limits));
  return out;
}

namespace {

void check_plane(uint32_t plane, const Geometry& g, const char* cmd) {
  if (int64_t(plane) >= g.planes_per_die)
    throw CommandError(fmt::format("{}: plane {} out of range (die has {} planes)", cmd, plane, g.planes_per_die));
}
void check_block(uint32_t block, const Geometry& g, const char* cmd) {
  if (int64_t(block) >= g.blocks_per_plane)
    throw CommandError(fmt::format("{}: block {} out of range (plane has {} blocks)", cmd, block, g.blocks_per_plane));
}
void check_page(const PageAddress& a, const Geometry& g, const char* cmd) {
  check_plane(a.plane, g, cmd);
  check_block(a.block, g, cmd);
  if (int64_t(a.subblock) >= g.subblocks_per_block)
    throw CommandError(fmt::format("{}: sub-block {} out of range (block has {})", cmd, a.subblock, g.subblocks_per_block));
  if (int64_t(a.wordline) >= g.wordlines_per_string)
    throw CommandError(fmt::format("{}: wordline {} out of range (string has {} wordlines)", cmd, a.wordline, g.wordlines_per_string));
  if (a.bit > 2) throw CommandError(fmt::format("{}: page-in-wordline {} out of range (at most 3 bits per cell)", cmd, a.bit));
}
void check_latch(Latch l, const CommandParams& lim, const char* cmd) {
  if (int(l) >= int(Latch::D0) + lim.data_latches)
    throw CommandError(fmt::format("{}: latch {} does not exist (S, C and {} data latches)", cmd, int(l), lim.data_latches));
}

}  // namespace

void check(const Command& cmd, const Geometry& g, const CommandParams& lim) {
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  std::visit(overloaded{
                 [&](const ReadCmd& c) { check_page(c.addr, g, "READ"); },
                 [&](const ProgramCmd& c) {
                   check_page(c.addr, g, "PROGRAM");
                   if (c.addr.bit != 0)
                     throw CommandError(
                         fmt::format("PROGRAM: page-in-wordline must be 0 (a {} program writes all {} pages of the wordline at once)",
                                     to_string(c.mode), bits_per_cell(c.mode)));
                   if (!c.data.empty() && int64_t(c.data.size()) != bits_per_cell(c.mode) * g.page_size.raw())
                     throw CommandError(fmt::format("PROGRAM({}): {} data bytes, expected {} ({} page(s) of {} bytes)", to_string(c.mode),
                                                    c.data.size(), bits_per_cell(c.mode) * g.page_size.raw(), bits_per_cell(c.mode),
                                                    g.page_size.raw()));
                   if (c.mode == ProgramMode::Esp && c.randomize)
                     throw CommandError("PROGRAM: ESP data is for in-flash computation and must not be randomised");
                 },
                 [&](const EraseCmd& c) {
                   check_plane(c.plane, g, "ERASE");
                   check_block(c.block, g, "ERASE");
                 },
                 [&](const DataOutCmd& c) {
                   check_plane(c.plane, g, "DATA-OUT");
                   if (c.length == 0 || int64_t(c.column) + int64_t(c.length) > g.page_size.raw())
                     throw CommandError(fmt::format("DATA-OUT: bytes [{}, {}) outside the {}-byte page", c.column,
                                                    int64_t(c.column) + c.length, g.page_size.raw()));
                 },
                 [&](const XorCmd& c) { check_plane(c.plane, g, "XOR"); },
                 [&](const LatchCopyCmd& c) {
                   check_plane(c.plane, g, "LATCH-COPY");
                   check_latch(c.src, lim, "LATCH-COPY");
                   check_latch(c.dst, lim, "LATCH-COPY");
                 },
                 [&](const MwsCmd& c) {
                   check_plane(c.plane, g, "MWS");
                   if (c.slots.empty()) throw CommandError("MWS: no block slot");
                   if (int64_t(c.slots.size()) > lim.max_mws_slots)
                     throw CommandError(fmt::format("MWS: {} block slots, more than the {} that CONT may chain (command.max_mws_slots)",
                                                    c.slots.size(), lim.max_mws_slots));
                   if (int64_t(c.slots.size()) > lim.max_inter_block)
                     throw CommandError(fmt::format("MWS: {} blocks sensed together exceed the power limit of {} (command.max_inter_block)",
                                                    c.slots.size(), lim.max_inter_block));
                   if (c.iscm.inverse && !c.iscm.init_s)
                     throw CommandError("MWS: inverse-read mode must initialise the S-latch (set the S-latch init flag)");
                   for (size_t i = 0; i < c.slots.size(); ++i) {
                     const auto& s = c.slots[i];
                     check_block(s.block, g, "MWS");
                     if (int64_t(s.subblock) >= g.subblocks_per_block)
                       throw CommandError(fmt::format("MWS: sub-block {} out of range (block has {})", s.subblock, g.subblocks_per_block));
                     if (s.pbm.none()) throw CommandError(fmt::format("MWS: slot {} (block {}) has an empty page bitmap", i, s.block));
                     for (int w = int(g.wordlines_per_string); w < kMaxWordlines; ++w)
                       if (s.pbm[w])
                         throw CommandError(fmt::format("MWS: slot {} selects wordline {}, out of range (string has {} wordlines)", i, w,
                                                        g.wordlines_per_string));
                     for (size_t j = 0; j < i; ++j)
                       if (c.slots[j].block == s.block) throw CommandError(fmt::format("MWS: block {} appears in two slots", s.block));
                   }
                 },
             },
             cmd);
}

std::string describe(const Command& cmd) {
  // Exhaustive (core/overloaded.hpp): a Command alternative without a lambda here does not compile.
  return std::visit(
      overloaded{
          [](const ReadCmd& c) {
            return fmt::format("READ p{} b{} sb{} wl{} bit{}", c.addr.plane, c.addr.block, c.addr.subblock, c.addr.wordline, c.addr.bit);
          },
          [](const ProgramCmd& c) {
            return fmt::format("PROGRAM({}{}) p{} b{} sb{} wl{} bit{}", to_string(c.mode), c.randomize ? ",rand" : "", c.addr.plane,
                               c.addr.block, c.addr.subblock, c.addr.wordline, c.addr.bit);
          },
          [](const EraseCmd& c) { return fmt::format("ERASE p{} b{}", c.plane, c.block); },
          [](const DataOutCmd& c) { return fmt::format("DATA-OUT p{} [{}+{}]", c.plane, c.column, c.length); },
          [](const XorCmd& c) { return fmt::format("XOR p{}", c.plane); },
          [](const LatchCopyCmd& c) { return fmt::format("LATCH-COPY p{} {}->{}", c.plane, to_string(c.src), to_string(c.dst)); },
          [](const MwsCmd& c) {
            std::string s = fmt::format("MWS p{} [{}{}{}{}]", c.plane, c.iscm.inverse ? "inv " : "", c.iscm.init_s ? "initS " : "",
                                        c.iscm.init_c ? "initC " : "", c.iscm.transfer ? "S->C" : "");
            for (const auto& sl : c.slots) s += fmt::format(" b{}/sb{}:{}wl", sl.block, sl.subblock, sl.pbm.count());
            return s;
          },
      },
      cmd);
}

}  // namespace bitline::nand
