// Illegal commands: every class is rejected with a CommandError that names the
// problem, both by the static check and by the die, and a rejected command
// leaves the die unchanged.
#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

class Illegal : public ::testing::Test {
 protected:
  Illegal() : p_(small_params()), die_(p_, 3), ref_(size_t(p_.geometry.page_bits())), rng_(99) {}
  void reject(const Command& c, const std::string& needle) {
    expect_command_error([&] { die_.execute(c); }, needle);
  }
  BitVector rnd() { return random_page(rng_, ref_.bits()); }
  NandParams p_;
  Die die_;
  Reference ref_;
  Rng rng_;
};

TEST_F(Illegal, EmptyBitmap) {
  reject(mws(0, Iscm{}, {MwsSlot{3, 0, {}}}), "slot 0 (block 3) has an empty page bitmap");
  reject(mws(0, Iscm{}, {slot(1, 0, {2}), MwsSlot{4, 0, {}}}), "slot 1 (block 4) has an empty page bitmap");
  reject(mws(0, Iscm{}, {}), "MWS: no block slot");
}

TEST_F(Illegal, TooManySlots) {
  MwsCmd c = mws(0, Iscm{}, {});
  for (uint32_t b = 0; b < 5; ++b) c.slots.push_back(slot(b, 0, {0}));
  reject(c, "5 block slots, more than the 4 that CONT may chain");
}

TEST_F(Illegal, WordlineOutOfRange) {
  reject(mws(0, Iscm{}, {slot(1, 0, {3, 48})}), "selects wordline 48, out of range (string has 48 wordlines)");
  reject(mws(0, Iscm{}, {slot(1, 0, {255})}), "selects wordline 255");
  reject(ReadCmd{addr(0, 1, 0, 48)}, "READ: wordline 48 out of range");
  reject(program_cmd(addr(0, 1, 0, 60), rnd()), "PROGRAM: wordline 60 out of range");
  reject(ReadCmd{addr(0, 1, 0, 0, 3)}, "page-in-wordline 3 out of range");
}

TEST_F(Illegal, BlockPlaneSubBlockOutOfRange) {
  reject(ReadCmd{addr(0, 64, 0, 0)}, "READ: block 64 out of range (plane has 64 blocks)");
  reject(program_cmd(addr(0, 1000, 0, 0), rnd()), "PROGRAM: block 1000 out of range");
  reject(EraseCmd{0, 64}, "ERASE: block 64 out of range");
  reject(mws(0, Iscm{}, {slot(2, 0, {0}), slot(64, 0, {0})}), "MWS: block 64 out of range");
  reject(ReadCmd{addr(2, 0, 0, 0)}, "READ: plane 2 out of range (die has 2 planes)");
  reject(program_cmd(addr(5, 0, 0, 0), rnd()), "PROGRAM: plane 5 out of range");
  reject(EraseCmd{2, 0}, "ERASE: plane 2 out of range");
  reject(mws(2, Iscm{}, {slot(0, 0, {0})}), "MWS: plane 2 out of range");
  reject(XorCmd{2}, "XOR: plane 2 out of range");
  reject(LatchCopyCmd{2, Latch::C, Latch::S}, "LATCH-COPY: plane 2 out of range");
  reject(DataOutCmd{2, 0, 8}, "DATA-OUT: plane 2 out of range");
  reject(ReadCmd{addr(0, 0, 4, 0)}, "READ: sub-block 4 out of range (block has 4)");
  reject(program_cmd(addr(0, 0, 9, 0), rnd()), "PROGRAM: sub-block 9 out of range");
  reject(mws(0, Iscm{}, {slot(0, 4, {0})}), "MWS: sub-block 4 out of range");
  reject(LatchCopyCmd{0, Latch::C, data_latch(3)}, "latch 5 does not exist (S, C and 3 data latches)");
  expect_command_error([&] { die_.latch(2, Latch::C); }, "plane 2 out of range");
  expect_command_error([&] { die_.latch(0, data_latch(3)); }, "latch D3 does not exist");
  expect_command_error([&] { die_.set_block_condition(0, 64, 0, 0); }, "block 64 out of range");
}

TEST_F(Illegal, ProgramOfAProgrammedPage) {
  BitVector first = rnd();
  program(die_, ref_, addr(0, 7, 1, 4), first);
  reject(program_cmd(addr(0, 7, 1, 4), rnd()), "page (plane 0, block 7, sub-block 1, wordline 4) is already programmed");
  die_.execute(intra_block(0, 7, 1, {4}));
  EXPECT_EQ(die_.latch(0, Latch::C), first);  // the rejected program did not overwrite the page
  // Neighbouring pages are still free; after an erase the page can be programmed again.
  die_.execute(program_cmd(addr(0, 7, 2, 4), rnd()));
  die_.execute(program_cmd(addr(0, 7, 1, 5), rnd()));
  die_.execute(EraseCmd{0, 7});
  BitVector second = rnd();
  die_.execute(program_cmd(addr(0, 7, 1, 4), second));
  die_.execute(intra_block(0, 7, 1, {4}));
  EXPECT_EQ(die_.latch(0, Latch::C), second);
}

TEST_F(Illegal, InterBlockPowerLimit) {
  // max_inter_block below max_mws_slots: CONT may chain 8 slots but only 4 blocks may be sensed together.
  NandParams p = p_;
  p.command.max_mws_slots = 8;
  p.command.max_inter_block = 4;
  validate(p);
  Die die(p, 1);
  MwsCmd c = mws(0, Iscm{}, {});
  for (uint32_t b = 0; b < 4; ++b) c.slots.push_back(slot(b, 0, {0}));
  EXPECT_NO_THROW(die.execute(c));
  c.slots.push_back(slot(4, 0, {0}));
  expect_command_error([&] { die.execute(c); }, "5 blocks sensed together exceed the power limit of 4 (command.max_inter_block)");
  // The bytes decode (5 <= 8 slots) but the die rejects them.
  Command decoded = decode(encode(c, p.geometry), p.geometry, p.command);
  EXPECT_EQ(decoded, Command{c});
  expect_command_error([&] { die.execute_bytes(encode(c, p.geometry)); }, "power limit");
}

TEST_F(Illegal, InverseWithoutSInit) {
  for (bool init_c : {false, true})
    for (bool transfer : {false, true})
      reject(mws(0, Iscm{.inverse = true, .init_s = false, .init_c = init_c, .transfer = transfer}, {slot(0, 0, {0})}),
             "inverse-read mode must initialise the S-latch");
  EXPECT_NO_THROW(die_.execute(mws(0, Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = false}, {slot(0, 0, {0})})));
}

TEST_F(Illegal, MwsOverMlcOrTlcBlock) {
  for (auto [mode, block] : {std::pair{ProgramMode::Mlc, 10u}, std::pair{ProgramMode::Tlc, 11u}}) {
    ProgramCmd c;
    c.addr = addr(0, block, 0, 0);
    c.mode = mode;
    c.data.assign(size_t(bits_per_cell(mode) * p_.geometry.page_size.raw()), 0x5A);
    die_.execute(c);
    std::string name = to_string(mode);
    reject(intra_block(0, block, 0, {0}), "block " + std::to_string(block) + " of plane 0 holds " + name + " data");
    // Also as the second slot of an inter-block MWS, and on an unprogrammed wordline of that block.
    reject(mws(0, Iscm{}, {slot(1, 0, {0}), slot(block, 2, {7})}), "holds " + name + " data; multi-wordline sensing needs SLC or ESP");
  }
  // A rejected MWS changes neither the latches nor the statistics.
  program(die_, ref_, addr(0, 1, 0, 0), rnd());
  die_.execute(intra_block(0, 1, 0, {0}));
  DieStats before = die_.stats();
  BitVector c_before = die_.latch(0, Latch::C);
  reject(mws(0, Iscm{.inverse = true, .init_s = true, .init_c = true, .transfer = true}, {slot(1, 0, {0, 1, 2}), slot(10, 0, {0})}),
         "holds mlc data");
  EXPECT_EQ(die_.latch(0, Latch::C), c_before);
  EXPECT_EQ(die_.stats().mws, before.mws);
  EXPECT_EQ(die_.stats().wordlines_sensed, before.wordlines_sensed);
  EXPECT_EQ(die_.stats().cells_sensed, before.cells_sensed);
  EXPECT_EQ(die_.stats().busy, before.busy);
  // Erased (never programmed) and ESP blocks are fine; after an erase the MLC block is too.
  die_.execute(EraseCmd{0, 10});
  EXPECT_NO_THROW(die_.execute(intra_block(0, 10, 0, {0})));
  // MLC pages are still read with normal reads; a page-in-wordline the mode does not have is rejected.
  EXPECT_NO_THROW(die_.execute(ReadCmd{addr(0, 11, 0, 0, 2)}));
  reject(ReadCmd{addr(0, 1, 0, 0, 1)}, "READ: page-in-wordline 1 does not exist in a slc block");
}

TEST_F(Illegal, ProgramModeMismatchInsideABlock) {
  die_.execute(program_cmd(addr(0, 12, 0, 0), rnd(), ProgramMode::Slc));
  reject(program_cmd(addr(0, 12, 1, 0), rnd(), ProgramMode::Esp), "PROGRAM(esp): block 12 of plane 0 holds slc data; erase it first");
  ProgramCmd mlc;
  mlc.addr = addr(0, 12, 0, 1);
  mlc.mode = ProgramMode::Mlc;
  mlc.data.assign(size_t(2 * p_.geometry.page_size.raw()), 0);
  reject(mlc, "PROGRAM(mlc): block 12 of plane 0 holds slc data");
  EXPECT_EQ(die_.programmed_pages(), 1u);
  die_.execute(EraseCmd{0, 12});
  EXPECT_NO_THROW(die_.execute(program_cmd(addr(0, 12, 1, 0), rnd(), ProgramMode::Esp)));
  reject(program_cmd(addr(0, 12, 1, 1), rnd(), ProgramMode::Slc), "PROGRAM(slc): block 12 of plane 0 holds esp data");
}

TEST_F(Illegal, WrongDataSizeAndProgramShape) {
  ProgramCmd c = program_cmd(addr(0, 0, 0, 0), rnd());
  c.data.pop_back();
  reject(c, "PROGRAM(slc): 1023 data bytes, expected 1024");
  c.data.resize(2048);
  reject(c, "PROGRAM(slc): 2048 data bytes, expected 1024");
  c.mode = ProgramMode::Tlc;
  reject(c, "PROGRAM(tlc): 2048 data bytes, expected 3072 (3 page(s) of 1024 bytes)");
  c.data.clear();
  reject(c, "PROGRAM: no data");  // a functional die needs the contents
  ProgramCmd esp = program_cmd(addr(0, 0, 0, 0), rnd(), ProgramMode::Esp, /*randomize=*/true);
  reject(esp, "ESP data is for in-flash computation and must not be randomised");
  ProgramCmd bit1 = program_cmd(addr(0, 0, 0, 0, 1), rnd());
  reject(bit1, "page-in-wordline must be 0");
  EXPECT_EQ(die_.programmed_pages(), 0u);
}

TEST_F(Illegal, DuplicateBlockInTwoSlots) {
  reject(mws(0, Iscm{}, {slot(5, 0, {0}), slot(6, 0, {1}), slot(5, 0, {2})}), "MWS: block 5 appears in two slots");
  reject(mws(0, Iscm{}, {slot(5, 0, {0}), slot(5, 1, {0})}), "block 5 appears in two slots");
}

TEST_F(Illegal, DataOutPastThePage) {
  reject(DataOutCmd{0, 1000, 25}, "DATA-OUT: bytes [1000, 1025) outside the 1024-byte page");
  reject(DataOutCmd{0, 1024, 1}, "outside the 1024-byte page");
  reject(DataOutCmd{0, 0, 0}, "DATA-OUT: bytes [0, 0) outside");
  reject(DataOutCmd{0, 0xFFFFFFFFu, 2}, "outside the 1024-byte page");
  EXPECT_EQ(die_.execute(DataOutCmd{0, 1000, 24}).data.size(), 24u);
}

TEST_F(Illegal, StaticCheckAgreesWithTheDie) {
  // check() alone rejects the static classes without a die.
  const auto& g = p_.geometry;
  const auto& l = p_.command;
  expect_command_error([&] { check(mws(0, Iscm{}, {MwsSlot{0, 0, {}}}), g, l); }, "empty page bitmap");
  expect_command_error([&] { check(mws(0, Iscm{.inverse = true, .init_s = false}, {slot(0, 0, {0})}), g, l); }, "S-latch");
  expect_command_error([&] { check(ReadCmd{addr(0, 0, 0, 99)}, g, l); }, "wordline 99 out of range");
  EXPECT_NO_THROW(check(mws(1, Iscm{}, {slot(63, 3, {47}), slot(0, 0, {0})}), g, l));
  // The byte path rejects the same commands.
  expect_command_error([&] { die_.execute_bytes(encode(ReadCmd{addr(0, 70, 0, 0)}, g)); }, "block 70 out of range");
}

}  // namespace
}  // namespace bitline::nand::test
