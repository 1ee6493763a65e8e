// An SSB query as data: configs/ssb/*.yaml (the 13 queries of the SSB spec sec. 3, Q1.1 .. Q4.3). Format:
//
//   query: Q2.1                          # its name
//   sql: select sum(lo_revenue), ...     # the SSB spec's text (reported, not parsed)
//   where:                               # conjunction of single-column predicates
//     - p_category = 'MFGR#12'           #   COLUMN OP CONSTANT, OP one of = <> < <= > >=
//     - s_region = 'AMERICA'
//     - lo_discount between 1 and 3      #   COLUMN between A and B
//     - c_city in ('UNITED KI1', 'UNITED KI5')   #   COLUMN in (A, B, ...)
//   group_by: [d_year, p_brand1]         # optional
//   sum: lo_revenue - lo_supplycost      # a sum of signed products of at most two measures
//   as: profit                           # the aggregate's name (default: sum)
//   order_by: [d_year, profit desc]      # group-by columns or the aggregate, asc (default) or desc
//
// Every problem is a ConfigError naming the file, the line and the key: an unknown key, column or operator, a
// constant of the wrong type, outside the column's range or not one of its values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "cosmos/ssb/schema.hpp"

namespace bitline::cosmos::ssb {

enum class CmpOp { Eq, Ne, Lt, Le, Gt, Ge, Between, In };
/// The comparison operators by name ("=", "<>", ..., "between", "in"); table in query.cpp.
const Registry<CmpOp>& comparison_ops();

struct Predicate {
  const Column* column = nullptr;
  CmpOp op = CmpOp::Eq;
  std::vector<Value> values;  // one constant; two for between; one or more for in
  std::string text;           // as written
  /// SQL's truth for a value of the column (numbers compare as numbers, strings as text).
  bool holds(const Value& v) const;
};

/// One signed product of the aggregate: sign x factors[0] x factors[1] ...
struct ProductTerm {
  int sign = 1;
  std::vector<const Column*> factors;  // measures, 1 or 2
};

struct OrderKey {
  int group_column = -1;  // index into group_by, or -1: the aggregate
  bool desc = false;
};

struct QuerySpec {
  std::string name, sql, file;
  std::vector<Predicate> where;
  std::vector<const Column*> group_by;
  std::vector<ProductTerm> sum;
  std::string alias = "sum";
  std::vector<OrderKey> order_by;
};

/// Largest query file: the shipped ones are under 1 KB.
inline constexpr int64_t kMaxQueryFileBytes = int64_t(1) << 20;
/// Reads one query file (a regular file of at most kMaxQueryFileBytes).
QuerySpec load_query(const std::filesystem::path& file);
/// The shipped queries: every *.yaml of `dir` (default PRESET_DIR/ssb), in the order of their names.
std::vector<QuerySpec> load_query_dir(const std::filesystem::path& dir);
std::filesystem::path shipped_query_dir();

/// Parses one predicate ("lo_quantity < 25"); ConfigError "ORIGIN: KEY: why" on a bad one.
Predicate parse_predicate(const std::string& text, const std::string& origin, const std::string& key);

}  // namespace bitline::cosmos::ssb
