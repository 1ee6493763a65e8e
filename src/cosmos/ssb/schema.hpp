// The columns SSB queries name, their values, and the bit-sliced index ("code") each one lives in.
//
// Every query-visible column is a bit field of one physical code over the LINEORDER rows:
//   code        bits  fields (high to low)                         columns
//   date         13   year-1992 (3) | month-1 (4) | week (6)         d_year, d_yearmonthnum, d_yearmonth, d_weeknuminyear
//   cgeo         10   region (3) | nation in region (3) | digit (4)  c_region, c_nation, c_city
//   sgeo         10   the same for the supplier                      s_region, s_nation, s_city
//   part         12   mfgr-1 (3) | category-1 (3) | brand-1 (6)      p_mfgr, p_category, p_brand1
//   lo_<measure>  w   the value itself                               lo_quantity, lo_discount, lo_revenue, ...
// so a parent level of a hierarchy is the high bits of its children's codes (c_nation is the high 6 bits of
// c_city): a bitmap join index (O'Neil and Graefe, SIGMOD Record 1995) in bit-sliced form (O'Neil and Quass,
// SIGMOD 1997), whose slices every level shares. Codes a field never takes (nation 5..7 of a region, digit 10..15)
// are don't-cares for the predicate compiler.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cosmos/ssb/data.hpp"

namespace bitline::cosmos::ssb {

/// A value as a query writes it and an answer reports it: a number, or a string compared as SQL compares text.
using Value = std::variant<int64_t, std::string>;
std::string to_string(const Value& v);

enum class Dimension { Lineorder, Date, Customer, Supplier, Part };
/// What a column is, for the code that reads it from the rows (the reference engine switches on it).
enum class Attr {
  Year,
  YearMonthNum,
  YearMonth,
  WeekNumInYear,
  CRegion,
  CNation,
  CCity,
  SRegion,
  SNation,
  SCity,
  PMfgr,
  PCategory,
  PBrand1,
  Quantity,
  Discount,
  Tax,
  ExtendedPrice,
  OrdTotalPrice,
  Revenue,
  SupplyCost
};

/// A physical code: one bit-sliced index over the LINEORDER rows.
struct Code {
  std::string name;
  int bits = 0;
  Dimension dim = Dimension::Lineorder;
};

struct Column {
  std::string name;
  Attr attr = Attr::Year;
  Dimension dim = Dimension::Lineorder;
  bool is_string = false;
  bool measure = false;      // a LINEORDER number: its code is the value (sums, ranges over [min, max])
  int64_t min = 0, max = 0;  // measures: the values it can take
  // Dictionary columns (every attribute): the values, in field-code order, and each one's field code.
  std::vector<Value> values;
  std::vector<uint32_t> codes;
  std::vector<int32_t> index_of_code;  // field code -> index in values (-1: never taken); dictionary columns
  int code = 0;                        // index in codes()
  int lo_bit = 0, width = 0;           // its field in that code
  /// The field code of a value, or -1 when the column never takes it.
  int64_t code_of(const Value& v) const;
  /// The value of a field code (dictionary columns).
  const Value& value_of(uint32_t field_code) const;
};

const std::vector<Code>& codes();
const std::vector<Column>& columns();
/// The column named `name`, or nullptr.
const Column* find_column(std::string_view name);
/// The column names, for messages.
std::vector<std::string_view> column_names();

// ---- Per-row codes and values (the index builder's and the reference engine's views of a row) ----
/// Field-level codes of a dimension row (the index builder): date(day), geo(nation, digit), part(m, c, b).
uint32_t date_code(const Day& d);
uint32_t geo_code(int nation, int digit);
uint32_t part_code(int mfgr, int category, int brand);
/// The code `code_index` takes on LINEORDER row `row`.
uint32_t row_code(const Data& data, int code_index, size_t row);

}  // namespace bitline::cosmos::ssb
