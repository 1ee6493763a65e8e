// A query's answer, and the engines that compute it:
//   reference  a plain row-at-a-time engine over the generated rows (each predicate evaluated on the column's
//              value as SQL compares it, each dimension joined by key; it shares no code with the bitmaps);
//   bitmaps    the answer assembled from a plan's fc_read results: bit counts (flash aggregation) or the result
//              bitmaps (host aggregation: F's rows read off the fetched slices).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/bitvector.hpp"
#include "core/json_io.hpp"
#include "core/stats.hpp"
#include "cosmos/ssb/compile.hpp"

namespace bitline::cosmos::ssb {

struct AnswerRow {
  std::vector<Value> keys;  // the group-by values, in group_by order
  __int128 sum = 0;
  int64_t count = 0;  // rows aggregated
  bool operator==(const AnswerRow&) const = default;
};

/// Groups with at least one row, in ORDER BY order (then by the group columns, ascending, for equal keys). A query
/// without group-by has one row (its sum is SQL's NULL, JSON null, when no row qualifies).
struct Answer {
  std::vector<AnswerRow> rows;
  bool operator==(const Answer&) const = default;
};

/// Sorts the groups of `q` into an answer (the groups may come in any order).
Answer finish_answer(const QuerySpec& q, std::vector<AnswerRow> groups);
/// {"columns": [...group_by, alias], "rows": [[...], ...]}; a sum past 2^63 is written as a decimal string.
Json answer_json(const QuerySpec& q, const Answer& a);

/// The reference engine.
Answer reference_answer(const Data& d, const QuerySpec& q);

/// What an engine returned for each fc_read of a plan: its bit count, and (host aggregation) its result's rows:
/// `rows(i)` lists the rows of result i in increasing order; `test(i, row)` says whether row is in result i.
struct OpResults {
  std::function<uint64_t(size_t)> count;
  std::function<std::vector<uint32_t>(size_t)> rows;
  std::function<bool(size_t, uint32_t)> test;
  /// Optional, for engines that intersect faster than they test: code[k] |= bit for every row f[k] in result i.
  std::function<void(size_t i, const std::vector<uint32_t>& f, std::vector<uint32_t>& code, uint32_t bit)> mark;
};
/// The answer from the results of a plan's fc_reads; `total_rows`: LINEORDER's rows (a filter of every row).
Answer assemble_answer(const QueryPlan& p, const OpResults& r, int64_t total_rows);
/// OpResults over result bitmaps (a functional read's results), read only on rows [0, rows): the bitmaps are whole
/// bytes, and the host knows where the table ends (a NOT the host computes sets the bits past it).
OpResults results_of(const std::vector<BitVector>& bits, int64_t rows);

}  // namespace bitline::cosmos::ssb
