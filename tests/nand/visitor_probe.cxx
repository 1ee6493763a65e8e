// Compiled (not run) by two ctest entries, NandVisitor.* in tests/CMakeLists.txt:
// a visitor of the real nand::Command built with overloaded{...} compiles when
// it handles every alternative, and does not compile with one missing
// (-DMISSING_CASE: the DATA-OUT lambda left out). This is what makes adding a
// Command alternative fail to build until encode, check, describe and
// Die::execute handle it (see the comment at nand::Command).
#include <variant>

#include "nand/command.hpp"

using namespace bitline;
using namespace bitline::nand;

int probe(const Command& cmd) {
  return std::visit(overloaded{
                        [](const ReadCmd&) { return 0; },
                        [](const ProgramCmd&) { return 1; },
                        [](const EraseCmd&) { return 2; },
                        [](const MwsCmd&) { return 3; },
                        [](const XorCmd&) { return 4; },
                        [](const LatchCopyCmd&) { return 5; },
#ifndef MISSING_CASE
                        [](const DataOutCmd&) { return 6; },
#endif
                    },
                    cmd);
}
