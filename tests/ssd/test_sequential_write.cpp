// Sequential writes (ssd/sequential_write): hand-checked small cases, the
// event-driven run against the steady state it must converge to, and linear
// cost in the bytes written.
#include "core/error.hpp"
#include "core/params.hpp"
#include "nand/params.hpp"
#include "ssd/params.hpp"
#include "ssd/sequential_write.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace bitline::ssd {
namespace {

using nand::ProgramMode;

struct Rig {
  nand::NandParams nand = default_params<nand::NandParams>();
  SsdParams ssd = default_params<SsdParams>();
  Rig(int64_t channels, int64_t dies_per_channel) {
    ssd.channels = channels;
    ssd.dies_per_channel = dies_per_channel;
  }
  // One page slice: one 16 KiB page on each of the die's 2 planes.
  Time t_chan() const { return Bytes(32768) / nand.timing.channel_rate; }
  Time t_pcie() const { return Bytes(32768) / ssd.pcie_effective_rate(); }
  WriteResult write(ProgramMode m, Bytes b) const { return run_sequential_write(ssd, nand, m, b); }
};

TEST(SequentialWrite, TwoSlcProgramsOnOneDieOverlapTheSecondDataIn) {
  Rig r(1, 1);
  const Time first = r.t_pcie() + r.ssd.pcie_latency + r.t_chan();  // the first slice reaches the die
  // Cache program: the second slice loads while the first programs.
  WriteResult w = r.write(ProgramMode::Slc, KiB(64));
  EXPECT_EQ(w.total, first + us(200) * 2.0);
  EXPECT_EQ(w.programs, 2u);
  EXPECT_EQ(w.bytes, 65536);
  // Without cache program the second data-in waits for the first program.
  r.ssd.cache_program = false;
  EXPECT_EQ(r.write(ProgramMode::Slc, KiB(64)).total, first + us(200) * 2.0 + r.t_chan());
}

TEST(SequentialWrite, OneShotTlcLoadsOnlyOnePageOfTheNextWordlineWhileProgramming) {
  // A TLC wordline = 3 slices; 3 data latches + the C-latch: the programming wordline holds 3, one is free.
  Rig r(1, 1);
  r.nand.timing.multi_bit_program = nand::MultiBitProgram::OneShot;
  const Time first = r.t_pcie() + r.ssd.pcie_latency + r.t_chan() * 3.0;  // the first wordline's 3 slices are in
  WriteResult w = r.write(ProgramMode::Tlc, KiB(192));
  EXPECT_EQ(w.programs, 2u);
  EXPECT_EQ(w.total, first + us(700) + r.t_chan() * 2.0 + us(700));
  // With 5 data latches the whole next wordline loads during the program.
  r.nand.command.data_latches = 5;
  EXPECT_EQ(r.write(ProgramMode::Tlc, KiB(192)).total, first + us(700) * 2.0);
  // Page by page: six SLC-sized programs of 700 us each.
  r.nand.timing.multi_bit_program = nand::MultiBitProgram::PageByPage;
  WriteResult p = r.write(ProgramMode::Tlc, KiB(192));
  EXPECT_EQ(p.programs, 6u);
  EXPECT_EQ(p.total, r.t_pcie() + r.ssd.pcie_latency + r.t_chan() + us(700) * 6.0);
}

TEST(SequentialWrite, TooFewLatchesForAOneShotProgramIsAnError) {
  Rig r(1, 1);
  r.nand.timing.multi_bit_program = nand::MultiBitProgram::OneShot;
  r.nand.command.data_latches = 1;  // C + 1 data latch: 2 pages, a TLC wordline needs 3
  EXPECT_THROW(r.write(ProgramMode::Tlc, MiB(1)), ModelError);
  EXPECT_NO_THROW(r.write(ProgramMode::Mlc, MiB(1)));
}

TEST(SequentialWrite, ConvergesToTheSteadyState) {
  // On the paper's SSD and on a small die-bound one, for every mode and both programming schemes.
  for (auto [ch, dpc] : {std::pair<int64_t, int64_t>{8, 8}, {2, 2}})
    for (const char* scheme : {"one_shot", "page_by_page"})
      for (ProgramMode m : {ProgramMode::Slc, ProgramMode::Esp, ProgramMode::Mlc, ProgramMode::Tlc}) {
        Rig r(ch, dpc);
        r.nand.timing.multi_bit_program = decltype(r.nand.timing.multi_bit_program)::named(scheme);
        SCOPED_TRACE(::testing::Message() << ch << "x" << dpc << " " << scheme << " " << nand::to_string(m));
        const double ev = r.write(m, GiB(1)).gb_per_s() * 1e9;
        const double ss = sequential_write_steady_state(r.ssd, r.nand, m);
        EXPECT_LE(ev, ss * 1.0001);
        EXPECT_GT(ev, ss * 0.98);
      }
}

TEST(SequentialWrite, ModesOnThePapersSsd) {
  // The paper's configuration (every default): each page takes its own tPROG(mode), as the paper's MQSim-based
  // simulator charges it, so SLC > ESP > MLC > TLC in bandwidth, as the paper's write comparison reports.
  Rig r(8, 8);
  ASSERT_EQ(*r.nand.timing.multi_bit_program, nand::MultiBitProgram::PageByPage);
  const double slc = r.write(ProgramMode::Slc, GiB(1)).gb_per_s();
  const double esp = r.write(ProgramMode::Esp, GiB(1)).gb_per_s();
  const double mlc = r.write(ProgramMode::Mlc, GiB(1)).gb_per_s(), tlc = r.write(ProgramMode::Tlc, GiB(1)).gb_per_s();
  // SLC is bound by the host link's payload rate; ESP (tPROG x 2) by the dies: 64 x 32 KiB / 400 us.
  EXPECT_EQ(r.write(ProgramMode::Slc, GiB(1)).bottleneck, Bottleneck::Pcie);
  EXPECT_NEAR(esp, 64 * 32768 / 400e-6 / 1e9, 0.02);
  EXPECT_GT(slc, esp);
  EXPECT_GT(esp, mlc);
  EXPECT_GT(mlc, tlc);
  EXPECT_NEAR(mlc, 64 * 32768 / 500e-6 / 1e9, 0.02);
  EXPECT_NEAR(tlc, 64 * 32768 / 700e-6 / 1e9, 0.02);
  EXPECT_EQ(r.write(ProgramMode::Tlc, GiB(1)).bottleneck, Bottleneck::Dies);
  // One shot: MLC/TLC program 2/3 pages per tPROG, more than the link takes.
  r.nand.timing.multi_bit_program = nand::MultiBitProgram::OneShot;
  EXPECT_EQ(r.write(ProgramMode::Tlc, GiB(1)).bottleneck, Bottleneck::Pcie);
  EXPECT_GT(r.write(ProgramMode::Mlc, GiB(1)).gb_per_s(), esp);
}

TEST(SequentialWrite, CostIsLinearInTheBytesWritten) {
  Rig r(8, 8);
  const WriteResult a = r.write(ProgramMode::Tlc, GiB(1)), b = r.write(ProgramMode::Tlc, GiB(2));
  EXPECT_EQ(b.bytes, 2 * a.bytes);
  EXPECT_NEAR(double(b.events) / double(a.events), 2.0, 0.01);
  EXPECT_NEAR(to_s(b.total) / to_s(a.total), 2.0, 0.01);
}

}  // namespace
}  // namespace bitline::ssd
