#include "cosmos/expr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace bitline::cosmos {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  Expr parse() {
    Expr e = expr();
    skip();
    if (i_ != s_.size()) fail("unexpected text after the expression");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument(fmt::format("expression '{}': {} at position {}", s_, why, i_));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-'; }
  Expr expr() {
    skip();
    size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (start == i_) fail("expected an operand name or AND/OR/NOT/NAND/NOR/XOR/XNOR");
    std::string word = s_.substr(start, i_ - start);
    skip();
    if (i_ >= s_.size() || s_[i_] != '(') return Expr::var(word);
    ++i_;
    std::vector<Expr> args;
    while (true) {
      args.push_back(expr());
      skip();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ')') {
        ++i_;
        break;
      }
      fail("expected ',' or ')'");
    }
    std::string up = word;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    using Op = Expr::Op;
    auto need = [&](size_t lo, size_t hi) {
      if (args.size() < lo || args.size() > hi) fail(fmt::format("{} takes {} to {} arguments, got {}", up, lo, hi, args.size()));
    };
    if (up == "AND") return need(1, 1u << 20), Expr::make(Op::And, std::move(args));
    if (up == "OR") return need(1, 1u << 20), Expr::make(Op::Or, std::move(args));
    if (up == "NOT") return need(1, 1), Expr::make(Op::Not, std::move(args));
    if (up == "NAND") return need(1, 1u << 20), Expr::make(Op::Not, {Expr::make(Op::And, std::move(args))});
    if (up == "NOR") return need(1, 1u << 20), Expr::make(Op::Not, {Expr::make(Op::Or, std::move(args))});
    if (up == "XOR") return need(2, 2), Expr::make(Op::Xor, std::move(args));
    if (up == "XNOR") return need(2, 2), Expr::make(Op::Not, {Expr::make(Op::Xor, std::move(args))});
    fail(fmt::format("unknown operation '{}'", word));
  }
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

std::vector<std::string> Expr::operands() const {
  std::vector<std::string> out;
  auto walk = [&](const Expr& e, auto&& self) -> void {
    if (e.is_var()) {
      if (std::find(out.begin(), out.end(), e.name) == out.end()) out.push_back(e.name);
      return;
    }
    for (const auto& k : e.kids) self(k, self);
  };
  walk(*this, walk);
  return out;
}

std::string Expr::to_string() const {
  if (is_var()) return name;
  const char* n = op == Op::And ? "AND" : op == Op::Or ? "OR" : op == Op::Not ? "NOT" : "XOR";
  std::string s = std::string(n) + "(";
  for (size_t i = 0; i < kids.size(); ++i) s += (i ? ", " : "") + kids[i].to_string();
  return s + ")";
}

Expr parse_expr(const std::string& text) { return Parser(text).parse(); }

Expr normalize(const Expr& e) {
  if (e.is_var()) return e;
  std::vector<Expr> kids;
  for (const auto& k : e.kids) kids.push_back(normalize(k));
  if (e.op == Expr::Op::Not && kids[0].op == Expr::Op::Not) return kids[0].kids[0];
  if ((e.op == Expr::Op::And || e.op == Expr::Op::Or)) {
    std::vector<Expr> flat;
    for (auto& k : kids) {
      if (k.op == e.op)
        flat.insert(flat.end(), k.kids.begin(), k.kids.end());
      else
        flat.push_back(std::move(k));
    }
    if (flat.size() == 1) return flat[0];
    return Expr::make(e.op, std::move(flat));
  }
  return Expr::make(e.op, std::move(kids));
}

BitVector evaluate(const Expr& e, const std::map<std::string, BitVector>& values) {
  if (e.is_var()) {
    auto it = values.find(e.name);
    if (it == values.end()) throw std::invalid_argument(fmt::format("unknown operand '{}'", e.name));
    return it->second;
  }
  BitVector acc = evaluate(e.kids[0], values);
  switch (e.op) {
    case Expr::Op::And:
      for (size_t i = 1; i < e.kids.size(); ++i) acc &= evaluate(e.kids[i], values);
      break;
    case Expr::Op::Or:
      for (size_t i = 1; i < e.kids.size(); ++i) acc |= evaluate(e.kids[i], values);
      break;
    case Expr::Op::Xor:
      acc ^= evaluate(e.kids[1], values);
      break;
    case Expr::Op::Not:
      acc.invert();
      break;
    case Expr::Op::Var:
      break;
  }
  return acc;
}

}  // namespace bitline::cosmos
