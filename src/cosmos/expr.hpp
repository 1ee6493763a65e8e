// Bitwise expressions over stored operands, e.g. "OR(AND(a1, a2, a3), c)".
// Grammar: E := NAME | AND(E, ...) | OR(E, ...) | NOT(E) | NAND(E, ...) |
//               NOR(E, ...) | XOR(E, E) | XNOR(E, E)      (names: [A-Za-z0-9_.:-]+)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/bitvector.hpp"

namespace bitline::cosmos {

struct Expr {
  enum class Op { Var, And, Or, Not, Xor };
  Op op = Op::Var;
  std::string name;  // Var
  std::vector<Expr> kids;

  static Expr var(std::string n) { return Expr{Op::Var, std::move(n), {}}; }
  static Expr make(Op op, std::vector<Expr> k) { return Expr{op, {}, std::move(k)}; }
  bool is_var() const { return op == Op::Var; }
  /// Every operand name, in first-use order, without duplicates.
  std::vector<std::string> operands() const;
  std::string to_string() const;
};

/// Parses the text form; throws std::invalid_argument naming the position.
Expr parse_expr(const std::string& text);
/// Flattens nested AND/OR, removes double negation, turns NAND/NOR/XNOR into NOT(...).
Expr normalize(const Expr& e);
/// CPU reference: evaluates over full vectors (all the same size).
BitVector evaluate(const Expr& e, const std::map<std::string, BitVector>& values);

}  // namespace bitline::cosmos
