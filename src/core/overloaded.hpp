// A visitor made of lambdas, one per alternative of a std::variant:
//
//   std::visit(overloaded{
//                  [&](const ReadCmd& c) { ... },
//                  [&](const EraseCmd& c) { ... },
//              },
//              cmd);
//
// Exhaustive by construction when no lambda is a catch-all (no `auto`
// parameter): std::visit requires the visitor to be callable with every
// alternative, so adding an alternative to the variant without a lambda for it
// is a compile error at every such visit, naming the alternative (g++ 12):
//   error: no type named 'type' in 'struct std::invoke_result<
//          bitline::overloaded<...>, const bitline::nand::NewCmd&>'
// That holds as long as no alternative converts implicitly to another one's
// parameter type (distinct structs do not). tests/nand/visitor_probe.cxx checks
// it for the NAND command set.
#pragma once

namespace bitline {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace bitline
