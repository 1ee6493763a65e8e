#include "cosmos/ssb/answer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/error.hpp"

namespace bitline::cosmos::ssb {
namespace {

int compare_values(const Value& a, const Value& b) {
  if (const auto* x = std::get_if<int64_t>(&a)) {
    const int64_t y = std::get<int64_t>(b);
    return *x < y ? -1 : *x > y ? 1 : 0;
  }
  const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

std::string int128_text(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  std::string s;
  while (u) s += char('0' + int(u % 10)), u /= 10;
  if (neg) s += '-';
  std::reverse(s.begin(), s.end());
  return s;
}

Json sum_json(__int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max()) return int64_t(v);
  return int128_text(v);
}

Json value_json(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return std::get<int64_t>(v);
}

// ---- The reference engine's view of the rows: values computed from the raw fields, as the SSB spec defines them.

Value date_value(Attr a, const Day& d) {
  switch (a) {
    case Attr::Year:
      return int64_t(d.year);
    case Attr::YearMonthNum:
      return int64_t(d.yearmonthnum);
    case Attr::YearMonth:
      return yearmonth_name(d.year, d.month);
    case Attr::WeekNumInYear:
      return int64_t(d.week);
    default:
      break;
  }
  throw ModelError("internal: not a DATE attribute");
}

Value geo_value(Attr a, int nation, int digit) {
  switch (a) {
    case Attr::CRegion:
    case Attr::SRegion:
      return std::string(regions()[size_t(nations()[size_t(nation)].region)]);
    case Attr::CNation:
    case Attr::SNation:
      return std::string(nations()[size_t(nation)].name);
    case Attr::CCity:
    case Attr::SCity:
      return city_name(nation, digit);
    default:
      break;
  }
  throw ModelError("internal: not a geography attribute");
}

Value part_value(Attr a, int m, int c, int b) {
  switch (a) {
    case Attr::PMfgr:
      return mfgr_name(m);
    case Attr::PCategory:
      return category_name(m, c);
    case Attr::PBrand1:
      return brand_name(m, c, b);
    default:
      break;
  }
  throw ModelError("internal: not a PART attribute");
}

int64_t measure_value(const LineOrders& lo, Attr a, size_t r) {
  switch (a) {
    case Attr::Quantity:
      return lo.quantity[r];
    case Attr::Discount:
      return lo.discount[r];
    case Attr::Tax:
      return lo.tax[r];
    case Attr::ExtendedPrice:
      return lo.extendedprice[r];
    case Attr::OrdTotalPrice:
      return lo.ordtotalprice[r];
    case Attr::Revenue:
      return lo.revenue[r];
    case Attr::SupplyCost:
      return lo.supplycost[r];
    default:
      break;
  }
  throw ModelError("internal: not a measure");
}

/// A dimension attribute's value on every row of its dimension table (DATE: per day).
std::vector<Value> dimension_values(const Data& d, const Column& c) {
  std::vector<Value> v;
  switch (c.dim) {
    case Dimension::Date:
      for (int i = 0; i < kDays; ++i) v.push_back(date_value(c.attr, day_of(i)));
      break;
    case Dimension::Customer:
      for (size_t i = 0; i < d.customer.size(); ++i) v.push_back(geo_value(c.attr, d.customer.nation[i], d.customer.city[i]));
      break;
    case Dimension::Supplier:
      for (size_t i = 0; i < d.supplier.size(); ++i) v.push_back(geo_value(c.attr, d.supplier.nation[i], d.supplier.city[i]));
      break;
    case Dimension::Part:
      for (size_t i = 0; i < d.part.size(); ++i) v.push_back(part_value(c.attr, d.part.mfgr[i], d.part.category[i], d.part.brand[i]));
      break;
    case Dimension::Lineorder:
      throw ModelError("internal: a measure is not a dimension attribute");
  }
  return v;
}

/// The dimension row a LINEORDER row joins for a column's dimension.
size_t join(const LineOrders& lo, Dimension dim, size_t r) {
  switch (dim) {
    case Dimension::Date:
      return lo.orderdate[r];
    case Dimension::Customer:
      return lo.custkey[r] - 1;
    case Dimension::Supplier:
      return lo.suppkey[r] - 1;
    case Dimension::Part:
      return lo.partkey[r] - 1;
    case Dimension::Lineorder:
      break;
  }
  return r;
}

/// Sums and row counts per group (a key: one index per group column, below radix[k]): dense arrays while the key
/// space is at most 2^22 groups, a map beyond.
class GroupSums {
 public:
  explicit GroupSums(std::vector<size_t> radix) : radix_(std::move(radix)) {
    size_t n = 1;
    for (size_t r : radix_) {
      r = std::max<size_t>(r, 1);
      if (n > (size_t(1) << 22) / r) dense_ = false;
      n *= r;
    }
    if (dense_) sum_.assign(n, 0), count_.assign(n, 0);
  }
  void add(const std::vector<int>& key, __int128 v) {
    if (!dense_) {
      auto& g = map_[key];
      g.first += v;
      ++g.second;
      return;
    }
    size_t i = 0;
    for (size_t k = 0; k < key.size(); ++k) i = i * std::max<size_t>(radix_[k], 1) + size_t(key[k]);
    sum_[i] += v;
    ++count_[i];
  }
  /// f(key, sum, count) for every group with a row.
  template <class F>
  void each(F&& f) const {
    if (!dense_) {
      for (const auto& [k, v] : map_) f(k, v.first, v.second);
      return;
    }
    std::vector<int> key(radix_.size());
    for (size_t i = 0; i < sum_.size(); ++i) {
      if (!count_[i]) continue;
      size_t x = i;
      for (size_t k = radix_.size(); k-- > 0;) {
        const size_t r = std::max<size_t>(radix_[k], 1);
        key[k] = int(x % r);
        x /= r;
      }
      f(key, sum_[i], count_[i]);
    }
  }

 private:
  std::vector<size_t> radix_;
  bool dense_ = true;
  std::vector<__int128> sum_;
  std::vector<int64_t> count_;
  std::map<std::vector<int>, std::pair<__int128, int64_t>> map_;
};

__int128 row_sum(const QuerySpec& q, const std::vector<std::vector<int64_t>>& factor_values) {
  __int128 s = 0;
  for (size_t t = 0; t < q.sum.size(); ++t) {
    __int128 p = q.sum[t].sign;
    for (int64_t v : factor_values[t]) p *= v;
    s += p;
  }
  return s;
}

}  // namespace

Answer finish_answer(const QuerySpec& q, std::vector<AnswerRow> groups) {
  auto less = [&](const AnswerRow& a, const AnswerRow& b) {
    for (const auto& k : q.order_by) {
      int c = 0;
      if (k.group_column < 0)
        c = a.sum < b.sum ? -1 : a.sum > b.sum ? 1 : 0;
      else
        c = compare_values(a.keys[size_t(k.group_column)], b.keys[size_t(k.group_column)]);
      if (c) return k.desc ? c > 0 : c < 0;
    }
    for (size_t i = 0; i < a.keys.size(); ++i)
      if (int c = compare_values(a.keys[i], b.keys[i])) return c < 0;
    return false;
  };
  std::sort(groups.begin(), groups.end(), less);
  Answer a;
  a.rows = std::move(groups);
  if (q.group_by.empty() && a.rows.empty()) a.rows.push_back(AnswerRow{});
  return a;
}

Json answer_json(const QuerySpec& q, const Answer& a) {
  Json cols = Json::array();
  for (const Column* c : q.group_by) cols.push_back(c->name);
  cols.push_back(q.alias);
  Json rows = Json::array();
  for (const auto& r : a.rows) {
    Json row = Json::array();
    for (const auto& k : r.keys) row.push_back(value_json(k));
    row.push_back(r.count == 0 ? Json(nullptr) : sum_json(r.sum));
    rows.push_back(std::move(row));
  }
  return Json{{"columns", cols}, {"rows", rows}};
}

Answer reference_answer(const Data& d, const QuerySpec& q) {
  const LineOrders& lo = d.lineorder;
  // Each dimension predicate once per dimension row (a hash join's build side); measures per fact row.
  struct DimPredicate {
    Dimension dim;
    std::vector<uint8_t> pass;
  };
  std::vector<DimPredicate> dims;
  std::vector<const Predicate*> measures;
  for (const auto& p : q.where) {
    if (p.column->measure) {
      measures.push_back(&p);
      continue;
    }
    DimPredicate dp{p.column->dim, {}};
    for (const Value& v : dimension_values(d, *p.column)) dp.pass.push_back(p.holds(v) ? 1 : 0);
    dims.push_back(std::move(dp));
  }
  // Group keys: each group column's value per dimension row, as an index into its distinct values.
  struct GroupColumn {
    Dimension dim;
    std::vector<int> id;
    std::vector<Value> distinct;
  };
  std::vector<GroupColumn> gcols;
  for (const Column* c : q.group_by) {
    GroupColumn g{c->dim, {}, {}};
    std::map<Value, int> seen;
    for (const Value& v : dimension_values(d, *c)) {
      auto [it, fresh] = seen.emplace(v, int(g.distinct.size()));
      if (fresh) g.distinct.push_back(v);
      g.id.push_back(it->second);
    }
    gcols.push_back(std::move(g));
  }
  std::vector<size_t> radix;
  for (const auto& g : gcols) radix.push_back(g.distinct.size());
  GroupSums groups(radix);
  std::vector<int> key(gcols.size());
  std::vector<std::vector<int64_t>> fv(q.sum.size());
  for (size_t t = 0; t < q.sum.size(); ++t) fv[t].resize(q.sum[t].factors.size());
  for (size_t r = 0; r < lo.size(); ++r) {
    bool ok = true;
    for (const auto& dp : dims)
      if (!dp.pass[join(lo, dp.dim, r)]) {
        ok = false;
        break;
      }
    for (size_t i = 0; ok && i < measures.size(); ++i) ok = measures[i]->holds(measure_value(lo, measures[i]->column->attr, r));
    if (!ok) continue;
    for (size_t k = 0; k < gcols.size(); ++k) key[k] = gcols[k].id[join(lo, gcols[k].dim, r)];
    for (size_t t = 0; t < q.sum.size(); ++t)
      for (size_t f = 0; f < q.sum[t].factors.size(); ++f) fv[t][f] = measure_value(lo, q.sum[t].factors[f]->attr, r);
    groups.add(key, row_sum(q, fv));
  }
  std::vector<AnswerRow> rows;
  groups.each([&](const std::vector<int>& k, __int128 sum, int64_t count) {
    AnswerRow a;
    for (size_t i = 0; i < k.size(); ++i) a.keys.push_back(gcols[i].distinct[size_t(k[i])]);
    a.sum = sum;
    a.count = count;
    rows.push_back(std::move(a));
  });
  return finish_answer(q, std::move(rows));
}

OpResults results_of(const std::vector<BitVector>& bits, int64_t rows) {
  OpResults r;
  const size_t n = size_t(rows);
  auto word = [&bits, n](size_t i, size_t w) {
    const uint64_t x = bits[i].data()[w];
    const size_t end = (w + 1) * 64;
    return end <= n ? x : w * 64 >= n ? 0 : x & ((uint64_t(1) << (n - w * 64)) - 1);
  };
  r.count = [&bits, word](size_t i) {
    uint64_t c = 0;
    for (size_t w = 0; w < bits.at(i).word_count(); ++w) c += uint64_t(popcount64(word(i, w)));
    return c;
  };
  r.rows = [&bits, word](size_t i) {
    std::vector<uint32_t> out;
    for (size_t w = 0; w < bits.at(i).word_count(); ++w)
      for (uint64_t x = word(i, w); x; x &= x - 1) out.push_back(uint32_t(w * 64 + size_t(__builtin_ctzll(x))));
    return out;
  };
  r.test = [&bits, n](size_t i, uint32_t row) { return row < n && bits[i].get(row); };
  return r;
}

Answer assemble_answer(const QueryPlan& p, const OpResults& r, int64_t total_rows) {
  const QuerySpec& q = *p.spec;
  std::vector<AnswerRow> rows;
  switch (p.strategy) {
    case Aggregation::Flash: {
      std::vector<__int128> sum(p.groups.size(), 0);
      std::vector<int64_t> count(p.groups.size(), -1);    // -1: no count read (no filter, no group: every row)
      std::vector<bool> planned(p.groups.size(), false);  // false: the filter leaves the group no row
      for (size_t i = 0; i < p.ops.size(); ++i) {
        const FlashOp& op = p.ops[i];
        switch (op.use) {
          case FlashOp::Use::Count:
            planned[size_t(op.group)] = true;
            count[size_t(op.group)] = int64_t(r.count(i));
            break;
          case FlashOp::Use::Sum: {
            planned[size_t(op.group)] = true;
            const int shift = op.bit_a + std::max(0, op.bit_b);
            sum[size_t(op.group)] += __int128(q.sum[size_t(op.term)].sign) * (__int128(1) << shift) * __int128(r.count(i));
            break;
          }
          case FlashOp::Use::Filter:
          case FlashOp::Use::Fetch:
            throw ModelError("internal: a host-aggregation read in a flash-aggregation plan");
        }
      }
      for (size_t g = 0; g < p.groups.size(); ++g) {
        if (!planned[g]) continue;
        const int64_t n = count[g] < 0 ? total_rows : count[g];
        if (n == 0) continue;
        AnswerRow a;
        for (size_t k = 0; k < q.group_by.size(); ++k) a.keys.push_back(q.group_by[k]->values[size_t(p.groups[g][k])]);
        a.sum = sum[g];
        a.count = n;
        rows.push_back(std::move(a));
      }
      break;
    }
    case Aggregation::Host: {
      if (p.filter.none) break;
      std::vector<uint32_t> f;
      size_t first_fetch = 0;
      if (!p.ops.empty() && p.ops[0].use == FlashOp::Use::Filter) {
        f = r.rows(0);
        first_fetch = 1;
      } else {
        f.resize(size_t(total_rows));
        for (size_t i = 0; i < f.size(); ++i) f[i] = uint32_t(i);
      }
      // Each fetched slice's bit on every row of F, into the row's code values.
      std::vector<std::vector<uint32_t>> code(codes().size());
      for (size_t i = first_fetch; i < p.ops.size(); ++i) {
        const FlashOp& op = p.ops[i];
        if (op.use != FlashOp::Use::Fetch) throw ModelError("internal: a flash-aggregation read in a host-aggregation plan");
        auto& v = code[size_t(op.code)];
        if (v.empty()) v.assign(f.size(), 0);
        if (r.mark) {
          r.mark(i, f, v, uint32_t(1) << op.bit);
          continue;
        }
        for (size_t k = 0; k < f.size(); ++k)
          if (r.test(i, f[k])) v[k] |= uint32_t(1) << op.bit;
      }
      std::vector<size_t> radix;
      for (const Column* c : q.group_by) radix.push_back(c->values.size());
      GroupSums groups(radix);
      std::vector<int> key(q.group_by.size());
      std::vector<std::vector<int64_t>> fv(q.sum.size());
      for (size_t t = 0; t < q.sum.size(); ++t) fv[t].resize(q.sum[t].factors.size());
      for (size_t k = 0; k < f.size(); ++k) {
        bool valid = true;
        for (size_t g = 0; g < q.group_by.size(); ++g) {
          const Column& c = *q.group_by[g];
          const uint32_t fetched = code[size_t(c.code)].empty() ? 0 : code[size_t(c.code)][k] >> c.lo_bit;
          const uint32_t field = p.known_value[g] | (fetched & p.open_bits[g]);
          key[g] = field < c.index_of_code.size() ? c.index_of_code[field] : -1;
          valid &= key[g] >= 0;  // a code no value has: only a sensing error makes one (the answer will differ)
        }
        if (!valid) continue;
        for (size_t t = 0; t < q.sum.size(); ++t)
          for (size_t x = 0; x < q.sum[t].factors.size(); ++x) fv[t][x] = code[size_t(q.sum[t].factors[x]->code)][k];
        groups.add(key, row_sum(q, fv));
      }
      groups.each([&](const std::vector<int>& kk, __int128 sum, int64_t count) {
        AnswerRow a;
        for (size_t g = 0; g < kk.size(); ++g) a.keys.push_back(q.group_by[g]->values[size_t(kk[g])]);
        a.sum = sum;
        a.count = count;
        rows.push_back(std::move(a));
      });
      break;
    }
    case Aggregation::Auto:
      throw ModelError("internal: a plan without a strategy");
  }
  return finish_answer(q, std::move(rows));
}

}  // namespace bitline::cosmos::ssb
