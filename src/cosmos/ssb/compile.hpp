// The query planner: SSB predicates, group-bys and sums compiled onto Flash-Cosmos operations.
//
// Predicates (O'Neil and Quass, SIGMOD 1997, bit-sliced indexes). A predicate on a column selects a set of the
// column's field codes; the compiler covers it with *cubes* (a cube fixes some bits of the field: an AND of
// slices and inverted slices), so the predicate is an OR of ANDs of stored bitmaps:
//   - a measure's range [lo, hi] (=, <, <=, >, >=, between, and <> / in as unions of ranges) by its dyadic prefix
//     decomposition, widened over the codes the column never takes (at most 2 (w - 1) cubes for w bits);
//   - a dictionary attribute's value set (any operator, text compared as text) by a greedy cover that frees the
//     low bits first and may use the codes the field never takes;
//   - an equality-encoded attribute (few values) by one equality bitmap per selected value, when that takes
//     fewer terms (then fewer literals) than the slices.
// A *term* (one cube) is one intra-block MWS when its bitmaps share a string; a *factor* (one predicate's terms)
// is one inter-block MWS when its terms are in different blocks (replicas of the code's bitmaps, one per term,
// up to nand.command.max_inter_block); the predicates' factors AND in the S-latch, sensing after sensing. Factors
// over one code are multiplied out when the product still fits one sensing (d_weeknuminyear = 6 AND d_year =
// 1994 is one term).
//
// Aggregates. Two strategies (Registry aggregations()):
//   flash  SUM(A x B) over F per group g = sum over i, j of 2^(i+j) popcount(F AND G_g AND A_i AND B_j): one
//          fc_read with a host bit count per (group, bit pair) and a count per group (the design);
//   host   F in flash, then the slices the answer needs (a group column's bits the filter leaves open, every bit
//          of each measure), each one fc_read; the host reads each row of F off them and aggregates.
//   auto   the one with fewer fc_reads: every fc_read moves one full result bitmap to the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "cosmos/ssb/query.hpp"

namespace bitline::cosmos::ssb {

/// The rows whose code has `value` on the bits of `mask` (mask 0: every row).
struct Cube {
  uint32_t mask = 0, value = 0;
  bool operator==(const Cube&) const = default;
  bool contains(uint32_t code) const { return (code & mask) == value; }
};
inline bool intersects(Cube a, Cube b) { return ((a.value ^ b.value) & a.mask & b.mask) == 0; }
inline Cube meet(Cube a, Cube b) { return {a.mask | b.mask, a.value | b.value}; }

/// Cubes covering exactly [lo, hi] of a w-bit field (its dyadic prefix decomposition).
std::vector<Cube> interval_cover(uint64_t lo, uint64_t hi, int width);
/// Cubes covering every code with flags[code] == 1 and only codes with flags 1 or 2 (don't care); width <= 16.
std::vector<Cube> set_cover(const std::vector<uint8_t>& flags, int width);
/// The cover of a predicate as cubes over its column's field (not yet shifted into the code).
std::vector<Cube> predicate_cover(const Predicate& p);

/// An equality bitmap of an equality-encoded attribute: the rows where `column` has values[value].
struct EqLit {
  const Column* column = nullptr;
  int value = 0;
  bool operator==(const EqLit&) const = default;
};

/// An AND of stored bitmaps of one code: slices (bit k of `slices.mask`: slice k when that bit of
/// `slices.value` is 1, its inverted copy when 0) and equality bitmaps. `meaning`: the rows it selects.
struct Term {
  Cube slices;
  std::vector<EqLit> eqs;
  Cube meaning;
  int literals() const;
};
/// An OR of terms over one code (no terms: no row; a term with no literal: every row).
struct Factor {
  int code = 0;
  std::vector<Term> terms;
};
/// An AND of factors: what one fc_read computes.
using Conjunction = std::vector<Factor>;

/// Planner options: the most terms one sensing may OR (nand.command.max_inter_block), the largest attribute that
/// also gets one equality bitmap per value.
struct CompileOptions {
  int max_terms = 4;
  int equality_max_values = 8;
};
bool equality_encoded(const Column& c, const CompileOptions& o);

/// A predicate as a factor over its column's code.
Factor compile_predicate(const Predicate& p, const CompileOptions& o);
/// The AND of predicates: factors over one code multiplied out while the product fits one sensing; `none` when
/// some factor has no term (no row qualifies; `factors` is then empty).
struct Filter {
  Conjunction factors;
  bool none = false;
};
Filter compile_filter(const std::vector<Predicate>& where, const CompileOptions& o);
/// `c` AND one term over `code` (folded into the factor of that code with the fewest terms, or a factor of its own);
/// false when it leaves no row.
bool and_term(Conjunction& c, int code, const Term& t);
/// The term "column = value" (an equality bitmap when the column has them, else its field's slices).
Term value_term(const Column& c, int value_index, const CompileOptions& o);
/// The term "slice `bit`" (of the code of the factor it joins).
Term slice_term(int bit);

enum class Aggregation { Auto, Flash, Host };
const Registry<Aggregation>& aggregations();

struct FlashOp {
  enum class Use { Filter, Count, Sum, Fetch } use = Use::Filter;
  Conjunction expr;
  int group = -1;                         // Count, Sum: index into QueryPlan::groups
  int term = -1, bit_a = -1, bit_b = -1;  // Sum: the product term and the bit of each factor (-1: none)
  int code = -1, bit = -1;                // Fetch: the slice
};

struct QueryPlan {
  const QuerySpec* spec = nullptr;
  Aggregation strategy = Aggregation::Flash;  // the one chosen (never Auto)
  Filter filter;
  std::vector<std::vector<int>> candidates;  // per group-by column: the value indices the filter allows
  std::vector<std::vector<int>> groups;      // flash: every combination of candidates (no group-by: one, empty)
  std::vector<FlashOp> ops;
  // host: per group-by column, the field bits the filter leaves open (the others are `known_value`)
  std::vector<uint32_t> open_bits, known_value;
  int flash_reads() const { return int(ops.size()); }
  /// Lines that say how the query was compiled (`--explain`).
  std::vector<std::string> explain() const;
};

/// Most fc_reads one query may plan (each is planned, priced and timed): 250,000.
inline constexpr int64_t kMaxReadsPerQuery = 250000;

/// Compiles a query; ConfigError (naming its file) when its plan would exceed kMaxReadsPerQuery reads.
QueryPlan plan_query(const QuerySpec& q, Aggregation strategy, const CompileOptions& o);

/// Text of a term / factor / conjunction over the stored bitmaps' names (`--explain`).
std::string describe(const Term& t, int code);
std::string describe(const Conjunction& c);

}  // namespace bitline::cosmos::ssb
