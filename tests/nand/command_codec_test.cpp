// Byte encoding of the die's commands: encode/decode round trips on random
// commands of every kind, streams, and rejection of malformed bytes.
#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

PageAddress random_addr(Rng& r) {
  return PageAddress{uint32_t(r.below(256)), uint32_t(r.below(1u << 24)), uint32_t(r.below(256)), uint32_t(r.below(256)),
                     uint32_t(r.below(256))};
}

/// A random command of kind `kind` (the variant index); fields span what the encoding can carry.
Command random_command(Rng& r, size_t kind, const Geometry& g, int max_slots) {
  switch (kind) {
    case 0:
      return ReadCmd{random_addr(r)};
    case 1: {
      ProgramCmd c;
      c.addr = random_addr(r);
      c.mode = ProgramMode(r.below(4));
      c.randomize = r.chance(0.5);
      c.data.resize(r.below(3) == 0 ? 0 : r.below(300));
      for (auto& b : c.data) b = uint8_t(r.next());
      return c;
    }
    case 2:
      return EraseCmd{uint32_t(r.below(256)), uint32_t(r.below(1u << 24))};
    case 3: {
      MwsCmd c;
      c.plane = uint32_t(r.below(256));
      c.iscm = Iscm{r.chance(0.5), r.chance(0.5), r.chance(0.5), r.chance(0.5)};
      int n = 1 + int(r.below(uint64_t(max_slots)));
      for (int i = 0; i < n; ++i) {
        MwsSlot s;
        s.block = uint32_t(r.below(1u << 24));
        s.subblock = uint32_t(r.below(256));
        for (int w = 0; w < g.wordlines_per_string; ++w)
          if (r.chance(0.3)) s.pbm.set(size_t(w));
        c.slots.push_back(s);
      }
      return c;
    }
    case 4:
      return XorCmd{uint32_t(r.below(256))};
    case 5:
      return LatchCopyCmd{uint32_t(r.below(256)), Latch(r.below(256)), Latch(r.below(256))};
    default:
      return DataOutCmd{uint32_t(r.below(256)), uint32_t(r.next()), uint32_t(r.next())};
  }
}

TEST(CommandCodec, RoundTripOfRandomCommandsOfEveryKind) {
  for (int wls : {48, 20, 64, 1}) {
    NandParams p = default_params<NandParams>();
    p.geometry.wordlines_per_string = wls;
    Rng r(uint64_t(77 + wls));
    std::vector<Command> cmds;
    std::vector<uint8_t> stream;
    for (int i = 0; i < 700; ++i) {
      size_t kind = size_t(i) % std::variant_size_v<Command>;
      Command c = random_command(r, kind, p.geometry, int(p.command.max_mws_slots));
      ASSERT_EQ(c.index(), kind);
      std::vector<uint8_t> bytes = encode(c, p.geometry);
      Command back = decode(bytes, p.geometry, p.command);
      ASSERT_EQ(back, c) << describe(c) << " (" << wls << " wordlines)";
      ASSERT_EQ(encode(back, p.geometry), bytes);
      cmds.push_back(c);
      stream.insert(stream.end(), bytes.begin(), bytes.end());
    }
    EXPECT_EQ(decode_stream(stream, p.geometry, p.command), cmds);
  }
}

TEST(CommandCodec, MwsLayoutMatchesTheCommandSet) {
  // MWS = opcode, ISCM, plane, then (block, sub-block, PBM) slots joined by CONT, ended by CONF.
  Geometry g = default_params<NandParams>().geometry;  // 48 wordlines: 6 bitmap bytes
  MwsCmd c =
      mws(1, Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = true}, {slot(0x010203, 2, {0, 9, 47}), slot(7, 0, {3})});
  std::vector<uint8_t> b = encode(c, g);
  std::vector<uint8_t> want = {op::kMws,     0b1011, 1, 0x03, 0x02, 0x01, 2, 0x01, 0x02, 0, 0, 0,           0x80,
                               op::kMwsCont, 7,      0, 0,    0,    0x08, 0, 0,    0,    0, 0, op::kMwsConf};
  EXPECT_EQ(b, want);
  EXPECT_EQ(Iscm{}.encode(), 0b1110);
}

TEST(CommandCodec, EmptyStreamDecodesToNothing) {
  NandParams p = default_params<NandParams>();
  EXPECT_TRUE(decode_stream(std::vector<uint8_t>{}, p.geometry, p.command).empty());
}

class Malformed : public ::testing::Test {
 protected:
  void reject(const std::vector<uint8_t>& bytes, const std::string& needle) {
    expect_command_error([&] { decode(bytes, p_.geometry, p_.command); }, needle);
  }
  std::vector<uint8_t> enc(const Command& c) { return encode(c, p_.geometry); }
  NandParams p_ = default_params<NandParams>();
};

TEST_F(Malformed, UnknownOpcode) {
  for (uint8_t opc : {0x01, 0x77, 0xC3, 0xFF}) reject({opc, 0, 0, 0}, "unknown opcode");
  // A valid command followed by an unknown one, in a stream.
  auto b = enc(XorCmd{0});
  b.push_back(0x42);
  expect_command_error([&] { decode_stream(b, p_.geometry, p_.command); }, "unknown opcode 0x42 at byte 2");
}

TEST_F(Malformed, EveryTruncationOfEveryKindIsRejected) {
  Rng r(5);
  for (size_t kind = 0; kind < std::variant_size_v<Command>; ++kind) {
    for (int rep = 0; rep < 5; ++rep) {
      auto b = enc(random_command(r, kind, p_.geometry, 4));
      for (size_t n = 0; n < b.size(); ++n) {
        std::vector<uint8_t> prefix(b.begin(), b.begin() + long(n));
        reject(prefix, "truncated");
      }
      // And in a stream: a complete command followed by a truncated one.
      std::vector<uint8_t> s = b;
      s.insert(s.end(), b.begin(), b.end() - 1);
      expect_command_error([&] { decode_stream(s, p_.geometry, p_.command); }, "truncated");
    }
  }
}

TEST_F(Malformed, MissingConfirm) {
  auto rd = enc(ReadCmd{addr(0, 1, 0, 2)});
  rd.back() = 0x31;
  reject(rd, "READ confirm");
  auto er = enc(EraseCmd{0, 3});
  er.back() = 0x30;
  reject(er, "ERASE confirm");
  ProgramCmd pc;
  pc.data = {1, 2, 3};
  auto pr = enc(pc);
  pr.back() = 0x11;
  reject(pr, "PROGRAM confirm");
  auto dout = enc(DataOutCmd{0, 0, 16});
  dout.back() = 0x00;
  reject(dout, "DATA-OUT confirm");
  auto m = enc(mws(0, Iscm{}, {slot(1, 0, {1}), slot(2, 0, {2})}));
  m.back() = 0x00;  // neither CONT nor CONF
  reject(m, "expected CONT (0xC1) or CONF (0xC2)");
  m.pop_back();  // ends after the last slot's bitmap: no CONF at all
  reject(m, "truncated command: missing CONT or CONF");
}

TEST_F(Malformed, TrailingBytes) {
  for (const Command& c : {Command{ReadCmd{}}, Command{XorCmd{}}, Command{mws(0, Iscm{}, {slot(1, 0, {1})})}}) {
    auto b = enc(c);
    b.push_back(0x00);
    reject(b, "1 trailing bytes");
    b.push_back(0x00);
    reject(b, "2 trailing bytes");
  }
}

TEST_F(Malformed, TooManyContSlots) {
  MwsCmd c = mws(0, Iscm{}, {});
  for (uint32_t i = 0; i < 5; ++i) c.slots.push_back(slot(i, 0, {i}));
  reject(enc(c), "more than 4 block slots chained with CONT");
  c.slots.pop_back();
  EXPECT_EQ(decode(enc(c), p_.geometry, p_.command), Command{c});
  // The limit is a parameter.
  CommandParams wide = p_.command;
  wide.max_mws_slots = 8;
  for (uint32_t i = 4; i < 8; ++i) c.slots.push_back(slot(i, 0, {i}));
  EXPECT_EQ(decode(enc(c), p_.geometry, wide), Command{c});
  c.slots.push_back(slot(8, 0, {8}));
  expect_command_error([&] { decode(enc(c), p_.geometry, wide); }, "more than 8 block slots");
}

TEST_F(Malformed, UndefinedIscmBitsAndProgramModes) {
  for (uint8_t bit : {0x10, 0x20, 0x40, 0x80}) {
    auto b = enc(mws(0, Iscm{}, {slot(1, 0, {1})}));
    b[1] |= bit;
    reject(b, "undefined bits");
  }
  ProgramCmd pc;
  auto b = enc(pc);
  b[1] = 4;
  reject(b, "unknown program mode 4");
  b[1] = 0x80 | 0x7F;
  reject(b, "unknown program mode 127");
}

TEST_F(Malformed, BitmapBitsBeyondTheStringAreCaughtByTheCheck) {
  // With 20 wordlines the bitmap is 3 bytes; bits 20..23 decode but the legality check rejects them.
  NandParams p = p_;
  p.geometry.wordlines_per_string = 20;
  auto b = encode(mws(0, Iscm{}, {slot(1, 0, {1})}), p.geometry);
  b[3 + 3 + 1 + 2] |= 0x10;  // opcode, ISCM, plane, block(3), sub-block, bitmap byte 2 bit 4 = wordline 20
  Command c = decode(b, p.geometry, p.command);
  ASSERT_TRUE(std::get<MwsCmd>(c).slots[0].pbm[20]);
  expect_command_error([&] { check(c, p.geometry, p.command); }, "selects wordline 20, out of range");
}

}  // namespace
}  // namespace bitline::nand::test
