#include "cosmos/ssb/schema.hpp"

#include <fmt/format.h>

#include <bit>

#include "core/error.hpp"

namespace bitline::cosmos::ssb {
namespace {

// Code indices in codes().
enum CodeIndex : int { kDate, kCgeo, kSgeo, kPart, kFirstMeasure };

struct MeasureDef {
  const char* name;
  Attr attr;
  int64_t min, max;
};
// The LINEORDER measures (SSB spec, LINEORDER layout; maxima from the generation rules in data.cpp).
constexpr MeasureDef kMeasures[] = {
    {"lo_quantity", Attr::Quantity, 1, 50},
    {"lo_discount", Attr::Discount, 0, 10},
    {"lo_tax", Attr::Tax, 0, 8},
    {"lo_extendedprice", Attr::ExtendedPrice, 0, 50 * kMaxRetailPrice},
    {"lo_ordtotalprice", Attr::OrdTotalPrice, 0, 7 * (50 * kMaxRetailPrice) * 108 / 100},
    {"lo_revenue", Attr::Revenue, 0, 50 * kMaxRetailPrice},
    {"lo_supplycost", Attr::SupplyCost, 0, 6 * kMaxRetailPrice / 10},
};

int bits_for(int64_t max) { return std::max(1, int(std::bit_width(uint64_t(max)))); }

struct Catalog {
  std::vector<Code> codes;
  std::vector<Column> columns;
};

Column dictionary(std::string name, Attr attr, Dimension dim, int code, int lo_bit, int width) {
  Column c;
  c.name = std::move(name);
  c.attr = attr;
  c.dim = dim;
  c.code = code;
  c.lo_bit = lo_bit;
  c.width = width;
  return c;
}

// (Two overloads, not one taking a Value: GCC 12 warns, wrongly, of a maybe-uninitialised string when a variant
// holding a number is moved into the vector.)
void add(Column& c, int64_t v, uint32_t field) {
  c.is_string = false;
  c.values.emplace_back(std::in_place_type<int64_t>, v);
  c.codes.push_back(field);
}
void add(Column& c, std::string v, uint32_t field) {
  c.is_string = true;
  c.values.emplace_back(std::in_place_type<std::string>, std::move(v));
  c.codes.push_back(field);
}

void finish(Column& c) {
  c.index_of_code.assign(size_t(1) << c.width, -1);
  for (size_t i = 0; i < c.codes.size(); ++i) c.index_of_code.at(c.codes[i]) = int32_t(i);
}

void add_geo(Catalog& cat, const char* prefix, Dimension dim, int code, Attr region, Attr nation, Attr city) {
  Column r = dictionary(fmt::format("{}_region", prefix), region, dim, code, 7, 3);
  for (int i = 0; i < kRegions; ++i) add(r, std::string(regions()[size_t(i)]), uint32_t(i));
  Column n = dictionary(fmt::format("{}_nation", prefix), nation, dim, code, 4, 6);
  Column ci = dictionary(fmt::format("{}_city", prefix), city, dim, code, 0, 10);
  for (int reg = 0; reg < kRegions; ++reg)
    for (int k = 0; k < 5; ++k) {
      const int nat = nation_at(reg, k);
      add(n, std::string(nations()[size_t(nat)].name), uint32_t(reg << 3 | k));
      for (int dgt = 0; dgt < kCityDigits; ++dgt) add(ci, city_name(nat, dgt), geo_code(nat, dgt));
    }
  for (Column* c : {&r, &n, &ci}) finish(*c), cat.columns.push_back(std::move(*c));
}

Catalog build() {
  Catalog cat;
  cat.codes = {
      {"date", 13, Dimension::Date}, {"cgeo", 10, Dimension::Customer}, {"sgeo", 10, Dimension::Supplier}, {"part", 12, Dimension::Part}};
  {
    Column y = dictionary("d_year", Attr::Year, Dimension::Date, kDate, 10, 3);
    Column ymn = dictionary("d_yearmonthnum", Attr::YearMonthNum, Dimension::Date, kDate, 6, 7);
    Column ym = dictionary("d_yearmonth", Attr::YearMonth, Dimension::Date, kDate, 6, 7);
    Column w = dictionary("d_weeknuminyear", Attr::WeekNumInYear, Dimension::Date, kDate, 0, 6);
    for (int i = 0; i < kYears; ++i) {
      add(y, int64_t(kFirstYear + i), uint32_t(i));
      for (int m = 1; m <= 12; ++m) {
        add(ymn, int64_t((kFirstYear + i) * 100 + m), uint32_t(i << 4 | (m - 1)));
        add(ym, yearmonth_name(kFirstYear + i, m), uint32_t(i << 4 | (m - 1)));
      }
    }
    for (int wk = 1; wk <= 53; ++wk) add(w, int64_t(wk), uint32_t(wk));
    for (Column* c : {&y, &ymn, &ym, &w}) finish(*c), cat.columns.push_back(std::move(*c));
  }
  add_geo(cat, "c", Dimension::Customer, kCgeo, Attr::CRegion, Attr::CNation, Attr::CCity);
  add_geo(cat, "s", Dimension::Supplier, kSgeo, Attr::SRegion, Attr::SNation, Attr::SCity);
  {
    Column mf = dictionary("p_mfgr", Attr::PMfgr, Dimension::Part, kPart, 9, 3);
    Column ca = dictionary("p_category", Attr::PCategory, Dimension::Part, kPart, 6, 6);
    Column br = dictionary("p_brand1", Attr::PBrand1, Dimension::Part, kPart, 0, 12);
    for (int m = 1; m <= 5; ++m) {
      add(mf, mfgr_name(m), uint32_t(m - 1));
      for (int c = 1; c <= 5; ++c) {
        add(ca, category_name(m, c), uint32_t((m - 1) << 3 | (c - 1)));
        for (int b = 1; b <= 40; ++b) add(br, brand_name(m, c, b), part_code(m, c, b));
      }
    }
    for (Column* c : {&mf, &ca, &br}) finish(*c), cat.columns.push_back(std::move(*c));
  }
  for (const auto& m : kMeasures) {
    Column c;
    c.name = m.name;
    c.attr = m.attr;
    c.dim = Dimension::Lineorder;
    c.measure = true;
    c.min = m.min;
    c.max = m.max;
    c.code = int(cat.codes.size());
    c.lo_bit = 0;
    c.width = bits_for(m.max);
    cat.codes.push_back({m.name, c.width, Dimension::Lineorder});
    cat.columns.push_back(std::move(c));
  }
  return cat;
}

const Catalog& catalog() {
  static const Catalog c = build();
  return c;
}

}  // namespace

std::string to_string(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return fmt::format("'{}'", *s);
  return std::to_string(std::get<int64_t>(v));
}

int64_t Column::code_of(const Value& v) const {
  if (measure) {
    const int64_t* x = std::get_if<int64_t>(&v);
    return x && *x >= min && *x <= max ? *x : -1;
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] == v) return codes[i];
  return -1;
}

const Value& Column::value_of(uint32_t field_code) const {
  if (field_code >= index_of_code.size() || index_of_code[field_code] < 0)
    throw ModelError(fmt::format("internal: column {} has no value with code {}", name, field_code));
  return values[size_t(index_of_code[field_code])];
}

const std::vector<Code>& codes() { return catalog().codes; }
const std::vector<Column>& columns() { return catalog().columns; }

const Column* find_column(std::string_view name) {
  for (const auto& c : columns())
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string_view> column_names() {
  std::vector<std::string_view> v;
  for (const auto& c : columns()) v.push_back(c.name);
  return v;
}

uint32_t date_code(const Day& d) { return uint32_t((d.year - kFirstYear) << 10 | (d.month - 1) << 6 | d.week); }
uint32_t geo_code(int nation, int digit) { return uint32_t(nations()[size_t(nation)].region << 7 | nation_in_region(nation) << 4 | digit); }
uint32_t part_code(int mfgr, int category, int brand) { return uint32_t((mfgr - 1) << 9 | (category - 1) << 6 | (brand - 1)); }

uint32_t row_code(const Data& d, int code, size_t row) {
  const auto& lo = d.lineorder;
  switch (code) {
    case kDate:
      return date_code(day_of(lo.orderdate[row]));
    case kCgeo: {
      const size_t c = lo.custkey[row] - 1;
      return geo_code(d.customer.nation[c], d.customer.city[c]);
    }
    case kSgeo: {
      const size_t s = lo.suppkey[row] - 1;
      return geo_code(d.supplier.nation[s], d.supplier.city[s]);
    }
    case kPart: {
      const size_t p = lo.partkey[row] - 1;
      return part_code(d.part.mfgr[p], d.part.category[p], d.part.brand[p]);
    }
    default:
      break;
  }
  const Column* m = nullptr;
  for (const auto& c : columns())
    if (c.measure && c.code == code) m = &c;
  if (!m) throw ModelError(fmt::format("internal: no code {}", code));
  switch (m->attr) {
    case Attr::Quantity:
      return lo.quantity[row];
    case Attr::Discount:
      return lo.discount[row];
    case Attr::Tax:
      return lo.tax[row];
    case Attr::ExtendedPrice:
      return lo.extendedprice[row];
    case Attr::OrdTotalPrice:
      return lo.ordtotalprice[row];
    case Attr::Revenue:
      return lo.revenue[row];
    case Attr::SupplyCost:
      return lo.supplycost[row];
    case Attr::Year:
    case Attr::YearMonthNum:
    case Attr::YearMonth:
    case Attr::WeekNumInYear:
    case Attr::CRegion:
    case Attr::CNation:
    case Attr::CCity:
    case Attr::SRegion:
    case Attr::SNation:
    case Attr::SCity:
    case Attr::PMfgr:
    case Attr::PCategory:
    case Attr::PBrand1:
      break;
  }
  throw ModelError(fmt::format("internal: code {} is not a measure", code));
}

}  // namespace bitline::cosmos::ssb
