#include "cosmos/ssb/query.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"

namespace bitline::cosmos::ssb {

const Registry<CmpOp>& comparison_ops() {
  static const Registry<CmpOp> r("comparison operator", {{"=", "equal", CmpOp::Eq},
                                                         {"<>", "not equal", CmpOp::Ne},
                                                         {"<", "less than", CmpOp::Lt},
                                                         {"<=", "at most", CmpOp::Le},
                                                         {">", "greater than", CmpOp::Gt},
                                                         {">=", "at least", CmpOp::Ge},
                                                         {"between", "between A and B, both included", CmpOp::Between},
                                                         {"in", "one of a list (A, B, ...)", CmpOp::In}});
  return r;
}

namespace {

/// SQL comparison of two values of one column: numbers as numbers, text as text (byte order).
int compare(const Value& a, const Value& b) {
  if (a.index() != b.index()) throw ModelError("internal: comparing a number with a string");
  if (const auto* x = std::get_if<int64_t>(&a)) {
    const int64_t y = std::get<int64_t>(b);
    return *x < y ? -1 : *x > y ? 1 : 0;
  }
  const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

struct Token {
  enum class Kind { Word, Number, String, Symbol, End } kind = Kind::End;
  std::string text;
  int64_t number = 0;
};

class Lexer {
 public:
  Lexer(const std::string& s, std::string origin, std::string key) : s_(s), origin_(std::move(origin)), key_(std::move(key)) {}
  [[noreturn]] void fail(const std::string& why) const {
    throw ConfigError(fmt::format("{}: {}: '{}': {}", origin_, key_, text_brief(s_), why));
  }
  Token next() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    Token t;
    if (i_ >= s_.size()) return t;
    const char c = s_[i_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::Kind::Word;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) t.text += s_[i_++];
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
      t.kind = Token::Kind::Number;
      t.text += s_[i_++];
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) t.text += s_[i_++];
      if (t.text.size() > 18) fail(fmt::format("the number {} is too long", t.text));
      if (!parse_decimal_integer(t.text, t.number)) fail(fmt::format("{}: write the number in decimal, without a leading 0", t.text));
      return t;
    }
    if (c == '\'') {
      t.kind = Token::Kind::String;
      ++i_;
      while (true) {
        if (i_ >= s_.size()) fail("a string without its closing quote");
        if (s_[i_] == '\'') {
          if (i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
            t.text += '\'';
            i_ += 2;
            continue;
          }
          ++i_;
          break;
        }
        t.text += s_[i_++];
      }
      return t;
    }
    t.kind = Token::Kind::Symbol;
    if (c == '(' || c == ')' || c == ',') {
      t.text = std::string(1, s_[i_++]);
      return t;
    }
    while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) && !std::isalnum(static_cast<unsigned char>(s_[i_])) &&
           s_[i_] != '\'' && s_[i_] != '(' && s_[i_] != ')' && s_[i_] != ',' && s_[i_] != '_')
      t.text += s_[i_++];
    return t;
  }

 private:
  const std::string& s_;
  std::string origin_, key_;
  size_t i_ = 0;
};

const Column& column_named(const std::string& name, const Lexer& lx) {
  const Column* c = find_column(name);
  if (c) return *c;
  const std::string_view near = closest_name(name, column_names());
  lx.fail(fmt::format("unknown column '{}'{} (columns: {})", text_brief(name),
                      near.empty() ? "" : fmt::format("; did you mean '{}'?", near), fmt::join(column_names(), ", ")));
}

/// The constant `t` as a value of `c`: of the column's type and within its values.
Value constant(const Token& t, const Column& c, const Lexer& lx) {
  if (t.kind == Token::Kind::String) {
    if (!c.is_string) lx.fail(fmt::format("{} is a number; '{}' is a string", c.name, text_brief(t.text)));
    Value v = t.text;
    if (c.code_of(v) < 0) {
      std::vector<std::string_view> names;
      for (const auto& x : c.values) names.push_back(std::get<std::string>(x));
      const std::string_view near = closest_name(t.text, names);
      lx.fail(fmt::format("'{}' is not a value of {} ({} values{}{})", text_brief(t.text), c.name, c.values.size(),
                          c.values.size() <= 10 ? fmt::format(": {}", fmt::join(names, ", ")) : std::string(),
                          near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
    return v;
  }
  if (t.kind != Token::Kind::Number) lx.fail(fmt::format("expected a constant, got '{}'", text_brief(t.text)));
  if (c.is_string) lx.fail(fmt::format("{} is text: write the constant in quotes ('...')", c.name));
  const Value v = t.number;
  if (c.measure) {
    if (t.number < c.min || t.number > c.max) lx.fail(fmt::format("{} is out of the range of {} [{}, {}]", t.number, c.name, c.min, c.max));
    return v;
  }
  const int64_t lo = std::get<int64_t>(c.values.front()), hi = std::get<int64_t>(c.values.back());
  if (t.number < lo || t.number > hi) lx.fail(fmt::format("{} is out of the range of {} [{}, {}]", t.number, c.name, lo, hi));
  if (c.code_of(v) < 0) lx.fail(fmt::format("{} is not a value of {}", t.number, c.name));
  return v;
}

std::string scalar_at(const ConfigNode& n, const std::string& path) {
  if (n.kind != ConfigNode::Kind::Scalar || n.scalar.empty()) experiment_error(n, path, "expected a non-empty string");
  return n.scalar;
}

std::vector<ProductTerm> parse_sum(const std::string& text, const std::string& origin, const std::string& key) {
  Lexer lx(text, origin, key);
  std::vector<ProductTerm> out;
  Token t = lx.next();
  int sign = 1;
  if (t.kind == Token::Kind::Symbol && (t.text == "-" || t.text == "+")) sign = t.text == "-" ? -1 : 1, t = lx.next();
  while (true) {
    ProductTerm term;
    term.sign = sign;
    while (true) {
      if (t.kind != Token::Kind::Word) lx.fail(fmt::format("expected a measure, got '{}'", text_brief(t.text)));
      const Column& c = column_named(t.text, lx);
      if (!c.measure) lx.fail(fmt::format("{} is not a LINEORDER measure (sum over lo_* columns)", c.name));
      term.factors.push_back(&c);
      t = lx.next();
      if (t.kind == Token::Kind::Symbol && t.text == "*") {
        t = lx.next();
        continue;
      }
      break;
    }
    if (term.factors.size() > 2)
      lx.fail("a product of more than two measures (the in-flash product ANDs one slice of each with the filter)");
    out.push_back(std::move(term));
    if (out.size() > 8) lx.fail("more than 8 terms");
    if (t.kind == Token::Kind::End) break;
    if (t.kind == Token::Kind::Symbol && (t.text == "+" || t.text == "-")) {
      sign = t.text == "-" ? -1 : 1;
      t = lx.next();
      continue;
    }
    lx.fail(fmt::format("expected '+', '-', '*' or the end, got '{}'", text_brief(t.text)));
  }
  return out;
}

}  // namespace

bool Predicate::holds(const Value& v) const {
  switch (op) {
    case CmpOp::Eq:
      return compare(v, values[0]) == 0;
    case CmpOp::Ne:
      return compare(v, values[0]) != 0;
    case CmpOp::Lt:
      return compare(v, values[0]) < 0;
    case CmpOp::Le:
      return compare(v, values[0]) <= 0;
    case CmpOp::Gt:
      return compare(v, values[0]) > 0;
    case CmpOp::Ge:
      return compare(v, values[0]) >= 0;
    case CmpOp::Between:
      return compare(v, values[0]) >= 0 && compare(v, values[1]) <= 0;
    case CmpOp::In:
      return std::any_of(values.begin(), values.end(), [&](const Value& x) { return compare(v, x) == 0; });
  }
  return false;
}

Predicate parse_predicate(const std::string& text, const std::string& origin, const std::string& key) {
  Lexer lx(text, origin, key);
  Predicate p;
  p.text = text;
  Token t = lx.next();
  if (t.kind != Token::Kind::Word) lx.fail("expected COLUMN OP CONSTANT, e.g. lo_quantity < 25");
  p.column = &column_named(t.text, lx);
  Token op = lx.next();
  if (op.kind != Token::Kind::Word && op.kind != Token::Kind::Symbol) lx.fail("expected an operator after the column");
  std::string name = op.text;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  const int64_t i = comparison_ops().find(name);
  if (i < 0) lx.fail(fmt::format("unknown operator: {}", comparison_ops().unknown_message(op.text)));
  p.op = comparison_ops().value(size_t(i));
  const Column& c = *p.column;
  switch (p.op) {
    case CmpOp::Between: {
      p.values.push_back(constant(lx.next(), c, lx));
      Token a = lx.next();
      if (a.kind != Token::Kind::Word || (a.text != "and" && a.text != "AND")) lx.fail("expected 'between A and B'");
      p.values.push_back(constant(lx.next(), c, lx));
      if (compare(p.values[0], p.values[1]) > 0)
        lx.fail(fmt::format("between {} and {}: the lower bound is above the upper", to_string(p.values[0]), to_string(p.values[1])));
      break;
    }
    case CmpOp::In: {
      Token open = lx.next();
      if (open.text != "(") lx.fail("expected 'in (A, B, ...)'");
      while (true) {
        p.values.push_back(constant(lx.next(), c, lx));
        if (p.values.size() > 4096) lx.fail("more than 4096 values in the list");
        Token sep = lx.next();
        if (sep.text == ")") break;
        if (sep.text != ",") lx.fail("expected ',' or ')' in the list");
      }
      break;
    }
    case CmpOp::Eq:
    case CmpOp::Ne:
    case CmpOp::Lt:
    case CmpOp::Le:
    case CmpOp::Gt:
    case CmpOp::Ge:
      p.values.push_back(constant(lx.next(), c, lx));
      break;
  }
  if (lx.next().kind != Token::Kind::End) lx.fail("unexpected text after the predicate");
  return p;
}

QuerySpec load_query(const std::filesystem::path& file) {
  const ConfigNode root = ConfigNode::parse(read_input_file(file, kMaxQueryFileBytes, "query file"), file.string());
  if (root.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of a query file must be a map of keys", file.string()));
  ExperimentMap top(root, "");
  QuerySpec q;
  q.file = file.string();
  q.name = top.string("query");
  q.sql = top.string_or("sql", "");
  top.string_or("description", "");
  if (const ConfigNode* w = top.optional("where")) {
    if (w->kind != ConfigNode::Kind::Sequence || w->items.empty())
      experiment_error(*w, "where", "expected a list of predicates, e.g. [lo_quantity < 25, d_year = 1993]");
    if (w->items.size() > 64) experiment_error(*w, "where", fmt::format("{} predicates (at most 64)", w->items.size()));
    for (size_t i = 0; i < w->items.size(); ++i) {
      const std::string key = fmt::format("where[{}]", i);
      q.where.push_back(parse_predicate(scalar_at(w->items[i], key), w->items[i].origin, key));
    }
  }
  for (const std::string& g : top.strings_or_empty("group_by")) {
    const Column* c = find_column(g);
    const ConfigNode& n = *top.optional("group_by");
    if (!c) {
      const std::string_view near = closest_name(g, column_names());
      experiment_error(n, "group_by",
                       fmt::format("unknown column '{}'{}", g, near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
    if (c->measure) experiment_error(n, "group_by", fmt::format("{} is a measure: group by dimension attributes", g));
    q.group_by.push_back(c);
  }
  if (q.group_by.size() > 4) experiment_error(*top.optional("group_by"), "group_by", "at most 4 columns");
  const ConfigNode& s = top.required("sum");
  q.sum = parse_sum(scalar_at(s, "sum"), s.origin, "sum");
  q.alias = top.string_or("as", "sum");
  if (find_column(q.alias)) experiment_error(*top.optional("as"), "as", fmt::format("'{}' is a column name", q.alias));
  for (const std::string& o : top.strings_or_empty("order_by")) {
    const ConfigNode& n = *top.optional("order_by");
    std::istringstream in(o);
    std::string name, dir, extra;
    in >> name >> dir >> extra;
    OrderKey k;
    if (!extra.empty() || (!dir.empty() && dir != "asc" && dir != "desc"))
      experiment_error(n, "order_by", fmt::format("'{}': expected NAME, NAME asc or NAME desc", o));
    k.desc = dir == "desc";
    if (name != q.alias) {
      auto it = std::find_if(q.group_by.begin(), q.group_by.end(), [&](const Column* c) { return c->name == name; });
      if (it == q.group_by.end())
        experiment_error(n, "order_by", fmt::format("'{}' is neither a group_by column nor the aggregate '{}'", name, q.alias));
      k.group_column = int(it - q.group_by.begin());
    }
    q.order_by.push_back(k);
  }
  top.finish();
  return q;
}

std::filesystem::path shipped_query_dir() { return default_preset_dir() / "ssb"; }

std::vector<QuerySpec> load_query_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw ConfigError(fmt::format("{}: not a folder of query files", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw ConfigError(fmt::format("{}: no *.yaml query files", dir.string()));
  if (files.size() > 1000) throw ConfigError(fmt::format("{}: {} query files (at most 1000)", dir.string(), files.size()));
  std::vector<QuerySpec> out;
  for (const auto& f : files) out.push_back(load_query(f));
  return out;
}

}  // namespace bitline::cosmos::ssb
