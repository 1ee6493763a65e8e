// libFuzzer harness: the NAND command decoder (byte encoding of docs/commands.md).
//
// Input: 6 bytes that choose a die geometry and command limits inside their
// declared ranges, then a byte stream of commands. The stream is decoded
// (decode_stream, and decode for a single command); every decoded command is
// checked against the geometry (check), described, and encoded again: the
// encoding of the decoded commands must be the bytes that were decoded.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/params.hpp"
#include "harness.hpp"
#include "nand/command.hpp"
#include "nand/params.hpp"

namespace {

using namespace bitline;
using namespace bitline::nand;

constexpr size_t kHeader = 6;

/// Geometry and limits from the header bytes (each within the range its parameter declares).
void configure(const uint8_t* h, Geometry& g, CommandParams& lim) {
  g.planes_per_die = 1 + h[0] % 8;
  g.blocks_per_plane = 1 + (int64_t(h[1]) << 4 | h[2] >> 4);  // 1 .. 4096
  g.subblocks_per_block = 1 + h[2] % 8;
  g.wordlines_per_string = 1 + h[3];  // 1 .. 256: page bitmaps of 1 .. 32 bytes
  lim.max_mws_slots = 1 + h[4] % 8;
  lim.max_inter_block = 1 + h[4] / 32;
  lim.data_latches = h[5] % 9;
  g.page_size = Bytes(int64_t(8) << (h[5] >> 4));  // 8 B .. 256 KiB
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeader) return 0;
  static const NandParams defaults = default_params<NandParams>();
  Geometry g = defaults.geometry;
  CommandParams lim = defaults.command;
  configure(data, g, lim);
  const std::span<const uint8_t> bytes(data + kHeader, size - kHeader);
  fuzz::expect_documented_errors([&] {
    const std::vector<Command> cmds = decode_stream(bytes, g, lim);
    std::vector<uint8_t> again;
    for (const Command& c : cmds) {
      const std::vector<uint8_t> e = encode(c, g);
      again.insert(again.end(), e.begin(), e.end());
      if (decode(e, g, lim) != c) fuzz::property_failed("decode(encode(c)) != c");
      (void)describe(c);
      fuzz::expect_documented_errors([&] { check(c, g, lim); });
    }
    if (!std::equal(again.begin(), again.end(), bytes.begin(), bytes.end())) fuzz::property_failed("encode(decode_stream(bytes)) != bytes");
    if (cmds.size() == 1 && decode(bytes, g, lim) != cmds[0]) fuzz::property_failed("decode and decode_stream disagree");
  });
  fuzz::expect_documented_errors([&] { (void)decode(bytes, g, lim); });
  return 0;
}
