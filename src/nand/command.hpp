// The die's command set: ordinary READ / PROGRAM / ERASE / DATA-OUT, and the
// Flash-Cosmos commands MWS (multi-wordline sensing with ISCM flags and page
// bitmaps chained with CONT ... CONF), ESP program (PROGRAM with mode ESP) and
// XOR between the S- and C-latch. Commands have a byte-level encoding
// (docs/nand-commands.md); the die executes decoded commands.
#pragma once

#include <bitset>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/overloaded.hpp"
#include "nand/params.hpp"

namespace bitline::nand {

enum class ProgramMode : uint8_t { Slc = 0, Mlc = 1, Tlc = 2, Esp = 3 };
const char* to_string(ProgramMode m);
/// Bits stored per cell (ESP is SLC with extra ISPP steps: 1 bit).
int bits_per_cell(ProgramMode m);

/// The latches of one bitline: sensing latch, cache latch, extra data latches.
enum class Latch : uint8_t { S = 0, C = 1, D0 = 2 };
inline Latch data_latch(int i) { return Latch(uint8_t(Latch::D0) + i); }
std::string to_string(Latch l);

/// One logical page: a wordline of a sub-block of a block, and which bit of the cell.
struct PageAddress {
  uint32_t plane = 0, block = 0, subblock = 0, wordline = 0, bit = 0;
  bool operator==(const PageAddress&) const = default;
};

/// ISCM slot of an MWS command: inverse-read mode, S-latch init, C-latch init, S->C transfer.
struct Iscm {
  bool inverse = false;
  bool init_s = true;
  bool init_c = true;
  bool transfer = true;
  bool operator==(const Iscm&) const = default;
  uint8_t encode() const { return uint8_t(inverse) | uint8_t(init_s) << 1 | uint8_t(init_c) << 2 | uint8_t(transfer) << 3; }
};

constexpr int kMaxWordlines = 256;
using PageBitmap = std::bitset<kMaxWordlines>;

/// One (block, page bitmap) slot of an MWS command.
struct MwsSlot {
  uint32_t block = 0, subblock = 0;
  PageBitmap pbm;
  bool operator==(const MwsSlot&) const = default;
};

struct ReadCmd {
  PageAddress addr;
  bool operator==(const ReadCmd&) const = default;
};
struct ProgramCmd {
  PageAddress addr;
  ProgramMode mode = ProgramMode::Slc;
  bool randomize = true;
  std::vector<uint8_t> data;  // one page, or empty in timing-only mode
  bool operator==(const ProgramCmd&) const = default;
};
struct EraseCmd {
  uint32_t plane = 0, block = 0;
  bool operator==(const EraseCmd&) const = default;
};
struct MwsCmd {
  uint32_t plane = 0;
  Iscm iscm;
  std::vector<MwsSlot> slots;
  bool operator==(const MwsCmd&) const = default;
};
/// C-latch = S-latch XOR C-latch.
struct XorCmd {
  uint32_t plane = 0;
  bool operator==(const XorCmd&) const = default;
};
/// dst-latch = src-latch (between S, C and the data latches).
struct LatchCopyCmd {
  uint32_t plane = 0;
  Latch src = Latch::C, dst = Latch::D0;
  bool operator==(const LatchCopyCmd&) const = default;
};
/// Moves bytes of the C-latch out over the channel.
struct DataOutCmd {
  uint32_t plane = 0;
  uint32_t column = 0, length = 0;
  bool operator==(const DataOutCmd&) const = default;
};

/// Every visit of a Command is an overloaded{...} with one lambda per alternative
/// and no catch-all (core/overloaded.hpp), so a new alternative does not compile
/// until each visitor handles it. Adding a command, say `SuspendCmd`:
///   1. add the struct above and to this variant;
///   2. build: each visitor that misses it fails to compile ("no type named
///      'type' in std::invoke_result<overloaded<...>, const SuspendCmd&>") --
///      encode(), check() and describe() in command.cpp, Die::execute() in
///      die.cpp, CostModel::command() in cost_model.cpp (its cost) and role_of()
///      in cosmos/cosmos_ssd.cpp (a sensing, die work or data-out to the SSD
///      pipeline); add a lambda to each (and a Die::do_suspend());
///   3. give it opcodes (namespace op below) and a case in decode_one(), the
///      decoder's switch over the opcode byte, and document it in docs/nand-commands.md.
using Command = std::variant<ReadCmd, ProgramCmd, EraseCmd, MwsCmd, XorCmd, LatchCopyCmd, DataOutCmd>;
std::string describe(const Command& c);

// Opcodes of the byte encoding.
namespace op {
constexpr uint8_t kRead = 0x00, kReadConfirm = 0x30;
constexpr uint8_t kProgram = 0x80, kProgramConfirm = 0x10;
constexpr uint8_t kErase = 0x60, kEraseConfirm = 0xD0;
constexpr uint8_t kDataOut = 0x05, kDataOutConfirm = 0xE0;
constexpr uint8_t kMws = 0xC0, kMwsCont = 0xC1, kMwsConf = 0xC2;
constexpr uint8_t kXor = 0xC5, kLatchCopy = 0xC6;
}  // namespace op

/// Encodes a command. The page-bitmap width is ceil(wordlines_per_string / 8) bytes.
std::vector<uint8_t> encode(const Command& c, const Geometry& g);
/// Decodes exactly one command from `bytes`; throws CommandError on malformed
/// input (unknown opcode, truncated, missing confirm, trailing bytes, too many slots).
Command decode(std::span<const uint8_t> bytes, const Geometry& g, const CommandParams& limits);
/// Decodes a stream of concatenated commands.
std::vector<Command> decode_stream(std::span<const uint8_t> bytes, const Geometry& g, const CommandParams& limits);

/// Static legality checks against the geometry and the command limits
/// (address ranges, empty bitmap, too many slots, power limit, inverse without
/// S-latch init, ...). State-dependent checks (program of a programmed page,
/// MWS over MLC data) are made by the die. Throws CommandError.
void check(const Command& c, const Geometry& g, const CommandParams& limits);

}  // namespace bitline::nand
