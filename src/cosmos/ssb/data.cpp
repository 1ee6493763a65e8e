#include "cosmos/ssb/data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace bitline::cosmos::ssb {
namespace {

/// Uniform integer in [lo, hi] (TPC-H's RANDOM(v, lo, hi)).
int64_t uniform(Rng& r, int64_t lo, int64_t hi) { return lo + int64_t(r.below(uint64_t(hi - lo + 1))); }

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

constexpr int kMonthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
constexpr const char* kMonthNames[12] = {"January", "February", "March",     "April",   "May",      "June",
                                         "July",    "August",   "September", "October", "November", "December"};

// Value counts of the coded columns no SSB query reads (TPC-H sec. 4.2.2.13 and 4.2.3).
constexpr int kSegments = 5;     // C_MKTSEGMENT: AUTOMOBILE, BUILDING, FURNITURE, MACHINERY, HOUSEHOLD
constexpr int kPriorities = 5;   // LO_ORDERPRIORITY: 1-URGENT .. 5-LOW
constexpr int kShipModes = 7;    // LO_SHIPMODE: REG AIR, AIR, RAIL, SHIP, TRUCK, MAIL, FOB
constexpr int kTypes = 150;      // P_TYPE: 6 x 5 x 5 syllables
constexpr int kContainers = 40;  // P_CONTAINER: 5 x 8 syllables

/// "first 8 of each 32 keys used" (SSB spec, LO_ORDERKEY; TPC-H's sparse order keys), order index i >= 1.
uint32_t sparse_orderkey(int64_t i) {
  const int64_t k = ((i >> 3) << 5) | (i & 7);
  if (k > int64_t(std::numeric_limits<uint32_t>::max()))
    throw ConfigError("LO_ORDERKEY past 2^32: the scale factor is too large to generate");
  return uint32_t(k);
}

/// O_CUSTKEY: uniform over the customer keys not divisible by 3 (TPC-H sec. 4.2.3: a third of the customers
/// never order; SSB keeps TPC-H's ORDERS generation for LINEORDER).
uint32_t draw_custkey(Rng& r, int64_t customers) {
  const int64_t m = customers - customers / 3;  // keys in [1, customers] not divisible by 3
  const int64_t j = int64_t(r.below(uint64_t(m)));
  return uint32_t(j + j / 2 + 1);  // the j-th of 1, 2, 4, 5, 7, 8, ...
}

}  // namespace

Cardinalities cardinalities(double sf, const std::string& what) {
  if (!std::isfinite(sf) || sf < kMinSf || sf > kMaxSf)
    throw ConfigError(
        fmt::format("{} {:g}: the scale factor must be a number in [{:g}, {:g}] (SF 1 = 6 M LINEORDER rows)", what, sf, kMinSf, kMaxSf));
  Cardinalities c;
  c.sf = sf;
  auto scaled = [&](double base) { return std::max<int64_t>(1, int64_t(std::floor(base * sf + 1e-9))); };
  c.orders = scaled(1500000);
  c.customers = scaled(30000);
  c.suppliers = scaled(2000);
  // PART: 200,000 x floor(1 + log2 SF) (SSB spec, PART layout); the formula is for SF >= 1, below it the table
  // scales linearly like the others (assumption).
  c.parts = sf >= 1 ? 200000 * int64_t(std::floor(1 + std::log2(sf) + 1e-12)) : scaled(200000);
  c.dates = kDays;
  return c;
}

const std::array<NationInfo, kNations>& nations() {
  // TPC-H sec. 4.2.3, N_NATIONKEY 0..24 with N_REGIONKEY.
  static const std::array<NationInfo, kNations> n = {
      {{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1},         {"CANADA", 1},       {"EGYPT", 4}, {"ETHIOPIA", 0}, {"FRANCE", 3},
       {"GERMANY", 3}, {"INDIA", 2},     {"INDONESIA", 2},      {"IRAN", 4},         {"IRAQ", 4},  {"JAPAN", 2},    {"JORDAN", 4},
       {"KENYA", 0},   {"MOROCCO", 0},   {"MOZAMBIQUE", 0},     {"PERU", 1},         {"CHINA", 2}, {"ROMANIA", 3},  {"SAUDI ARABIA", 4},
       {"VIETNAM", 2}, {"RUSSIA", 3},    {"UNITED KINGDOM", 3}, {"UNITED STATES", 1}}};
  return n;
}

const std::array<std::string_view, kRegions>& regions() {
  static const std::array<std::string_view, kRegions> r = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
  return r;
}

int nation_in_region(int nation) {
  int k = 0;
  for (int i = 0; i < nation; ++i) k += nations()[size_t(i)].region == nations()[size_t(nation)].region;
  return k;
}

int nation_at(int region, int k) {
  for (int i = 0; i < kNations; ++i)
    if (nations()[size_t(i)].region == region && k-- == 0) return i;
  throw ModelError(fmt::format("internal: no nation {} in region {}", k, region));
}

std::string city_name(int nation, int digit) {
  std::string s(nations()[size_t(nation)].name.substr(0, 9));
  s.resize(9, ' ');
  return s + char('0' + digit);
}

std::string mfgr_name(int m) { return fmt::format("MFGR#{}", m); }
std::string category_name(int m, int c) { return fmt::format("MFGR#{}{}", m, c); }
std::string brand_name(int m, int c, int b) { return fmt::format("MFGR#{}{}{}", m, c, b); }

Day day_of(int d) {
  if (d < 0 || d >= kDays) throw ModelError(fmt::format("internal: day {} outside the DATE dimension", d));
  Day r;
  int y = kFirstYear, left = d;
  while (left >= (leap(y) ? 366 : 365)) left -= leap(y) ? 366 : 365, ++y;
  r.year = y;
  r.day_of_year = left + 1;
  int m = 0;
  while (true) {
    const int len = kMonthDays[m] + (m == 1 && leap(y) ? 1 : 0);
    if (left < len) break;
    left -= len;
    ++m;
  }
  r.month = m + 1;
  r.day = left + 1;
  r.week = r.day_of_year / 7 + 1;
  r.yearmonthnum = r.year * 100 + r.month;
  r.datekey = r.yearmonthnum * 100 + r.day;
  return r;
}

std::string yearmonth_name(int year, int month) { return fmt::format("{:.3}{}", kMonthNames[month - 1], year); }

int64_t retail_price(int64_t partkey) { return 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000); }

int64_t lineorder_rows(const Cardinalities& c, uint64_t seed) {
  Rng lines = Rng::derive(seed, "ssb.lineorder.lines");
  int64_t n = 0;
  for (int64_t o = 0; o < c.orders; ++o) n += uniform(lines, 1, 7);
  return n;
}

Data generate(const Cardinalities& c, uint64_t seed, const std::string& what) {
  if (c.sf > kMaxGeneratedSf)
    throw ConfigError(
        fmt::format("{} {:g}: rows are generated (functional runs, the reference and host engines) up to SF {:g}; "
                    "use a timing-only run for larger scale factors",
                    what, c.sf, kMaxGeneratedSf));
  Data d;
  d.card = c;
  d.seed = seed;
  {
    Rng r = Rng::derive(seed, "ssb.customer");
    auto& t = d.customer;
    for (int64_t i = 0; i < c.customers; ++i) {
      t.nation.push_back(uint8_t(uniform(r, 0, kNations - 1)));  // C_NATION uniform over the 25 nations
      t.city.push_back(uint8_t(uniform(r, 0, kCityDigits - 1)));
      t.segment.push_back(uint8_t(uniform(r, 0, kSegments - 1)));
    }
  }
  {
    Rng r = Rng::derive(seed, "ssb.supplier");
    auto& t = d.supplier;
    for (int64_t i = 0; i < c.suppliers; ++i) {
      t.nation.push_back(uint8_t(uniform(r, 0, kNations - 1)));
      t.city.push_back(uint8_t(uniform(r, 0, kCityDigits - 1)));
    }
  }
  {
    Rng r = Rng::derive(seed, "ssb.part");
    auto& t = d.part;
    for (int64_t i = 0; i < c.parts; ++i) {
      t.mfgr.push_back(uint8_t(uniform(r, 1, 5)));      // P_MFGR: MFGR#1-5
      t.category.push_back(uint8_t(uniform(r, 1, 5)));  // P_CATEGORY: MFGR#(1-5)(1-5)
      t.brand.push_back(uint8_t(uniform(r, 1, 40)));    // P_BRAND1: CATEGORY(1-40)
      t.psize.push_back(uint8_t(uniform(r, 1, 50)));
      t.type.push_back(uint8_t(uniform(r, 0, kTypes - 1)));
      t.container.push_back(uint8_t(uniform(r, 0, kContainers - 1)));
    }
  }
  {
    Rng lines = Rng::derive(seed, "ssb.lineorder.lines");  // the stream lineorder_rows() replays
    Rng r = Rng::derive(seed, "ssb.lineorder");
    auto& t = d.lineorder;
    const size_t expect = size_t(c.orders) * 4 + 16;
    for (auto* v : {&t.orderkey, &t.custkey, &t.partkey, &t.suppkey, &t.extendedprice, &t.ordtotalprice, &t.revenue, &t.supplycost})
      v->reserve(expect);
    for (auto* v : {&t.linenumber, &t.orderpriority, &t.quantity, &t.discount, &t.tax, &t.shipmode}) v->reserve(expect);
    t.orderdate.reserve(expect);
    t.commitdate.reserve(expect);
    for (int64_t o = 1; o <= c.orders; ++o) {
      const int64_t odate = uniform(r, 0, kLastOrderDay);  // O_ORDERDATE uniform in [STARTDATE, ENDDATE - 151]
      const uint32_t cust = draw_custkey(r, c.customers);
      const uint8_t prio = uint8_t(uniform(r, 0, kPriorities - 1));
      const int64_t n = uniform(lines, 1, 7);
      const uint32_t okey = sparse_orderkey(o);
      int64_t total = 0;
      const size_t first = t.size();
      for (int64_t l = 1; l <= n; ++l) {
        const int64_t pk = uniform(r, 1, c.parts), sk = uniform(r, 1, c.suppliers);
        const int64_t qty = uniform(r, 1, 50), disc = uniform(r, 0, 10), tax = uniform(r, 0, 8);
        const int64_t commit = odate + uniform(r, 30, 90);  // L_COMMITDATE = O_ORDERDATE + [30, 90] days
        const uint8_t mode = uint8_t(uniform(r, 0, kShipModes - 1));
        const int64_t price = retail_price(pk);
        const int64_t ext = price * qty;                   // LO_EXTENDEDPRICE = P_RETAILPRICE x LO_QUANTITY
        const int64_t revenue = ext * (100 - disc) / 100;  // LO_REVENUE = extendedprice x (100 - discount) / 100
        total += revenue * (100 + tax) / 100;              // LO_ORDTOTALPRICE: the order's sum with tax
        t.orderkey.push_back(okey);
        t.linenumber.push_back(uint8_t(l));
        t.custkey.push_back(cust);
        t.partkey.push_back(uint32_t(pk));
        t.suppkey.push_back(uint32_t(sk));
        t.orderdate.push_back(uint16_t(odate));
        t.orderpriority.push_back(prio);
        t.quantity.push_back(uint8_t(qty));
        t.extendedprice.push_back(uint32_t(ext));
        t.discount.push_back(uint8_t(disc));
        t.revenue.push_back(uint32_t(revenue));
        t.supplycost.push_back(uint32_t(6 * price / 10));  // LO_SUPPLYCOST: 6/10 of the retail price (the SSB generator)
        t.tax.push_back(uint8_t(tax));
        t.commitdate.push_back(uint16_t(commit));
        t.shipmode.push_back(mode);
        t.ordtotalprice.push_back(0);
      }
      for (size_t i = first; i < t.size(); ++i) t.ordtotalprice[i] = uint32_t(total);
    }
  }
  return d;
}

}  // namespace bitline::cosmos::ssb
