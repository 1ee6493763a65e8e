#!/usr/bin/env python3
"""Writes the seed corpus of the NAND command harness (fuzz/corpus/nand_command/).

Each seed is the harness's 6-byte header (geometry and limits, see
fuzz_nand_command.cpp) followed by commands in the byte encoding of
docs/commands.md. Run from anywhere: python3 fuzz/gen_nand_seeds.py
"""
import pathlib
import struct

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "nand_command"
# 2 planes, 1656 blocks, 4 sub-blocks, 48 wordlines, 4 MWS slots, 4 blocks per MWS, 3 data latches, 16 KiB pages.
HDR = bytes([1, 0x67, 0x73, 47, 99, 0xB7])


def u24(v): return struct.pack("<I", v)[:3]
def u32(v): return struct.pack("<I", v)
def page(pl, b, sb, wl, bit): return bytes([pl]) + u24(b) + bytes([sb, wl, bit])


def pbm(bits, n=6):
    v = 0
    for b in bits:
        v |= 1 << b
    return v.to_bytes(n, "little")


CMDS = {
    "read": bytes([0x00]) + page(1, 1000, 2, 47, 2) + bytes([0x30]),
    "program-esp": bytes([0x80, 0x03]) + page(0, 17, 0, 5, 0) + u32(0) + bytes([0x10]),
    "program-data": bytes([0x80, 0x80]) + page(0, 3, 1, 2, 0) + u32(16) + bytes(range(16)) + bytes([0x10]),
    "erase": bytes([0x60, 1]) + u24(1655) + bytes([0xD0]),
    "data-out": bytes([0x05, 0]) + u32(128) + u32(4096) + bytes([0xE0]),
    "xor": bytes([0xC5, 1]),
    "latch-copy": bytes([0xC6, 0, 1, 4]),
    "mws-one": bytes([0xC0, 0x0F, 0]) + u24(12) + bytes([1]) + pbm([0, 5, 47]) + bytes([0xC2]),
    "mws-four": bytes([0xC0, 0x06, 1]) + u24(1) + bytes([0]) + pbm([1]) + bytes([0xC1]) + u24(2) + bytes([1])
    + pbm(range(48)) + bytes([0xC1]) + u24(3) + bytes([2]) + pbm([7, 8]) + bytes([0xC1]) + u24(1655) + bytes([3])
    + pbm([46]) + bytes([0xC2]),
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, cmd in CMDS.items():
        (OUT / f"{name}.bin").write_bytes(HDR + cmd)
    (OUT / "stream-all.bin").write_bytes(HDR + b"".join(CMDS.values()))
    # A small die: 1 plane, 17 blocks, 1 sub-block, 9 wordlines (2-byte bitmaps), 1 slot, no data latch, 8-byte pages.
    small = bytes([0, 1, 0x00, 8, 0, 0])
    (OUT / "small-die-mws.bin").write_bytes(small + bytes([0xC0, 0x02, 0]) + u24(16) + bytes([0]) + pbm([0, 8], 2)
                                            + bytes([0xC2]))
    # 256 wordlines: 32-byte bitmaps.
    wide = bytes([1, 0x67, 0x73, 255, 99, 0xB7])
    (OUT / "wide-bitmap-mws.bin").write_bytes(wide + bytes([0xC0, 0x0E, 0]) + u24(5) + bytes([0]) + pbm([0, 128, 255], 32)
                                              + bytes([0xC2]))


if __name__ == "__main__":
    main()
