#include "cosmos/ssb/index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace bitline::cosmos::ssb {
namespace {

/// Most products (ANDs of sensings) one rendered expression may have.
constexpr int64_t kMaxProducts = 4096;

/// Transposes an 8 x 8 bit matrix held in a word, byte j = row j (Hacker's Delight, 2nd ed., sec. 7-3).
uint64_t transpose8(uint64_t x) {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  return x ^ t ^ (t << 28);
}

bool has_inverse_literal(const Term& t) { return (t.slices.mask & ~t.slices.value) != 0; }

/// Every code's value on every LINEORDER row (dimension codes through per-key tables).
std::vector<uint32_t> code_values(const Data& d, int code) {
  const auto& lo = d.lineorder;
  std::vector<uint32_t> v(lo.size());
  const Code& c = codes()[size_t(code)];
  switch (c.dim) {
    case Dimension::Date: {
      std::vector<uint32_t> by_day(kDays);
      for (int i = 0; i < kDays; ++i) by_day[size_t(i)] = date_code(day_of(i));
      for (size_t r = 0; r < v.size(); ++r) v[r] = by_day[lo.orderdate[r]];
      return v;
    }
    case Dimension::Customer: {
      std::vector<uint32_t> by_key(d.customer.size());
      for (size_t k = 0; k < by_key.size(); ++k) by_key[k] = geo_code(d.customer.nation[k], d.customer.city[k]);
      for (size_t r = 0; r < v.size(); ++r) v[r] = by_key[lo.custkey[r] - 1];
      return v;
    }
    case Dimension::Supplier: {
      std::vector<uint32_t> by_key(d.supplier.size());
      for (size_t k = 0; k < by_key.size(); ++k) by_key[k] = geo_code(d.supplier.nation[k], d.supplier.city[k]);
      for (size_t r = 0; r < v.size(); ++r) v[r] = by_key[lo.suppkey[r] - 1];
      return v;
    }
    case Dimension::Part: {
      std::vector<uint32_t> by_key(d.part.size());
      for (size_t k = 0; k < by_key.size(); ++k) by_key[k] = part_code(d.part.mfgr[k], d.part.category[k], d.part.brand[k]);
      for (size_t r = 0; r < v.size(); ++r) v[r] = by_key[lo.partkey[r] - 1];
      return v;
    }
    case Dimension::Lineorder:
      break;
  }
  const Column* m = nullptr;
  for (const auto& col : columns())
    if (col.measure && col.code == code) m = &col;
  if (!m) throw ModelError(fmt::format("internal: code {} has no measure", c.name));
  auto copy = [&](const auto& src) { std::copy(src.begin(), src.end(), v.begin()); };
  switch (m->attr) {
    case Attr::Quantity:
      copy(lo.quantity);
      break;
    case Attr::Discount:
      copy(lo.discount);
      break;
    case Attr::Tax:
      copy(lo.tax);
      break;
    case Attr::ExtendedPrice:
      copy(lo.extendedprice);
      break;
    case Attr::OrdTotalPrice:
      copy(lo.ordtotalprice);
      break;
    case Attr::Revenue:
      copy(lo.revenue);
      break;
    case Attr::SupplyCost:
      copy(lo.supplycost);
      break;
    default:
      for (size_t r = 0; r < v.size(); ++r) v[r] = row_code(d, code, r);
  }
  return v;
}

}  // namespace

int64_t IndexLayout::bitmaps_stored() const {
  int64_t n = 0;
  for (size_t c = 0; c < lanes.size(); ++c) n += int64_t(lanes[c]) * int64_t(bitmaps[c].size());
  return n;
}

std::string IndexLayout::name(int code, int lane, const Bitmap& b) const {
  const std::string& cn = codes()[size_t(code)].name;
  switch (b.kind) {
    case Bitmap::Kind::Slice:
      return fmt::format("{}.r{}.b{}", cn, lane, b.bit);
    case Bitmap::Kind::Inverse:
      return fmt::format("{}.r{}.n{}", cn, lane, b.bit);
    case Bitmap::Kind::Equal:
      return fmt::format("{}.r{}.{}.v{}", cn, lane, b.eq.column->name, b.eq.value);
  }
  return {};
}

IndexLayout plan_layout(System s, const std::vector<QueryPlan>& plans, int64_t rows, const CompileOptions& o) {
  IndexLayout L;
  L.system = s;
  L.rows = rows;
  L.max_terms = o.max_terms;
  const size_t n = codes().size();
  L.lanes.assign(n, 0);
  L.bitmaps.assign(n, {});
  std::vector<bool> inverses(n, false);
  std::vector<std::vector<const Column*>> eq_columns(n);
  auto add_eq_column = [&](const Column* c) {
    if (std::find(eq_columns[size_t(c->code)].begin(), eq_columns[size_t(c->code)].end(), c) == eq_columns[size_t(c->code)].end())
      eq_columns[size_t(c->code)].push_back(c);
  };
  for (const auto& p : plans) {
    const QuerySpec& q = *p.spec;
    // The attributes the query filters and groups on: their codes, and all values of the equality-encoded ones.
    for (const auto& pr : q.where) {
      L.lanes[size_t(pr.column->code)] = std::max(L.lanes[size_t(pr.column->code)], 1);
      if (equality_encoded(*pr.column, o)) add_eq_column(pr.column);
    }
    for (const Column* c : q.group_by) {
      L.lanes[size_t(c->code)] = std::max(L.lanes[size_t(c->code)], 1);
      if (equality_encoded(*c, o)) add_eq_column(c);
    }
    for (const auto& op : p.ops)
      for (const auto& f : op.expr) {
        int& lanes = L.lanes[size_t(f.code)];
        lanes = std::max(lanes, s == System::Fc ? std::min<int>(int(f.terms.size()), o.max_terms) : 1);
        for (const auto& t : f.terms) {
          if (has_inverse_literal(t)) inverses[size_t(f.code)] = true;
          for (const auto& e : t.eqs) add_eq_column(e.column);
        }
      }
  }
  const bool stores_inverses = s == System::Fc || s == System::ParaBit;
  for (size_t c = 0; c < n; ++c) {
    if (!L.lanes[c]) continue;
    const int bits = codes()[c].bits;
    for (int b = 0; b < bits; ++b) L.bitmaps[c].push_back(Bitmap{Bitmap::Kind::Slice, b, {}});
    if (stores_inverses && inverses[c])
      for (int b = 0; b < bits; ++b) L.bitmaps[c].push_back(Bitmap{Bitmap::Kind::Inverse, b, {}});
    for (const Column* col : eq_columns[c])
      for (size_t v = 0; v < col->values.size(); ++v) L.bitmaps[c].push_back(Bitmap{Bitmap::Kind::Equal, 0, EqLit{col, int(v)}});
  }
  return L;
}

Expr IndexLayout::render(const Conjunction& conj) const {
  using Op = Expr::Op;
  if (conj.empty()) throw ModelError("internal: rendering an empty conjunction (every row)");
  const bool complements_on_host = system == System::Osp || system == System::Isp;
  auto term_expr = [&](int code, const Term& t, int lane) {
    std::vector<Expr> lits;
    for (int b = 31; b >= 0; --b) {
      if (!(t.slices.mask >> b & 1)) continue;
      const bool one = t.slices.value >> b & 1;
      if (one)
        lits.push_back(Expr::var(name(code, lane, Bitmap{Bitmap::Kind::Slice, b, {}})));
      else if (complements_on_host)
        lits.push_back(Expr::make(Op::Not, {Expr::var(name(code, lane, Bitmap{Bitmap::Kind::Slice, b, {}}))}));
      else
        lits.push_back(Expr::var(name(code, lane, Bitmap{Bitmap::Kind::Inverse, b, {}})));
    }
    for (const auto& e : t.eqs) lits.push_back(Expr::var(name(code, lane, Bitmap{Bitmap::Kind::Equal, 0, e})));
    if (lits.empty()) throw ModelError("internal: a term without literals in a factor");
    return lits.size() == 1 ? lits[0] : Expr::make(Op::And, std::move(lits));
  };
  auto any_of_terms = [&](int code, const std::vector<const Term*>& ts, bool by_lane) {
    std::vector<Expr> kids;
    for (size_t k = 0; k < ts.size(); ++k) kids.push_back(term_expr(code, *ts[k], by_lane ? int(k) : 0));
    return kids.size() == 1 ? kids[0] : Expr::make(Op::Or, std::move(kids));
  };
  auto and_of = [](std::vector<Expr> v) { return v.size() == 1 ? v[0] : Expr::make(Op::And, std::move(v)); };

  // Per factor, its pieces: each piece an OR of terms that one sensing computes (fc: up to the code's lanes, one
  // term per lane; parabit: one term, a product of single-bitmap sensings; osp/isp: the whole factor).
  std::vector<std::vector<Expr>> pieces;
  int64_t products = 1;
  for (const auto& f : conj) {
    if (f.terms.empty()) throw ModelError("internal: a factor without terms");
    std::vector<const Term*> ts;
    for (const auto& t : f.terms) ts.push_back(&t);
    std::vector<Expr> alt;
    switch (system) {
      case System::Fc: {
        const size_t per = size_t(std::max(1, lanes[size_t(f.code)]));
        for (size_t i = 0; i < ts.size(); i += per)
          alt.push_back(
              any_of_terms(f.code, std::vector<const Term*>(ts.begin() + long(i), ts.begin() + long(std::min(ts.size(), i + per))), true));
        break;
      }
      case System::ParaBit:
        for (const Term* t : ts) alt.push_back(term_expr(f.code, *t, 0));
        break;
      case System::Osp:
      case System::Isp:
        alt.push_back(any_of_terms(f.code, ts, false));
        break;
    }
    products *= int64_t(alt.size());
    if (products > kMaxProducts)
      throw ModelError(fmt::format("a filter of {} factors expands to more than {} products on {}: simplify the predicates", conj.size(),
                                   kMaxProducts, to_string(system)));
    pieces.push_back(std::move(alt));
  }
  if (products == 1) {
    std::vector<Expr> v;
    for (auto& p : pieces) v.push_back(p[0]);
    return and_of(std::move(v));
  }
  std::vector<Expr> sum;
  std::vector<size_t> at(pieces.size(), 0);
  while (true) {
    std::vector<Expr> v;
    for (size_t k = 0; k < pieces.size(); ++k) v.push_back(pieces[k][at[k]]);
    sum.push_back(and_of(std::move(v)));
    size_t k = at.size();
    while (k > 0 && ++at[k - 1] == pieces[k - 1].size()) at[--k] = 0;
    if (k == 0) break;
  }
  return Expr::make(Op::Or, std::move(sum));
}

IndexData build_bitmaps(const Data& d, const IndexLayout& L) {
  IndexData out(codes().size());
  const size_t rows = d.lineorder.size();
  // Whole bytes (what the SSD stores): the bits past the last row are 0 in every bitmap, inverses included.
  BitVector valid(size_t(L.bitmap_bytes()) * 8);
  for (size_t r = 0; r < rows; ++r) valid.set(r, true);
  for (size_t c = 0; c < codes().size(); ++c) {
    if (!L.lanes[c]) continue;
    const std::vector<uint32_t> v = code_values(d, int(c));
    // Every slice of the code in one pass: 64 rows at a time, one word per slice, through 8 x 8 bit transposes.
    const int bits = codes()[c].bits, bytes = (bits + 7) / 8;
    std::vector<BitVector> slices(size_t(bits), BitVector(valid.size()));
    for (size_t r0 = 0; r0 < rows; r0 += 64) {
      uint64_t w[32] = {};
      const size_t n = std::min<size_t>(64, rows - r0);
      for (size_t j0 = 0; j0 < n; j0 += 8)
        for (int b = 0; b < bytes; ++b) {
          uint64_t x = 0;  // byte t: byte b of row j0 + t's code
          for (size_t t = 0; t < 8 && j0 + t < n; ++t) x |= uint64_t((v[r0 + j0 + t] >> (8 * b)) & 0xFF) << (8 * t);
          x = transpose8(x);  // byte i: bit i of the 8 rows
          for (int i = 0; i < 8 && 8 * b + i < 32; ++i) w[8 * b + i] |= ((x >> (8 * i)) & 0xFF) << j0;
        }
      for (int k = 0; k < bits; ++k) slices[size_t(k)].data()[r0 >> 6] = w[k];
    }
    // Every equality bitmap of an attribute in one pass too: each row sets the bit of its value's bitmap.
    std::map<const Column*, std::vector<BitVector>> equal;
    for (const Bitmap& b : L.bitmaps[c])
      if (b.kind == Bitmap::Kind::Equal && !equal.count(b.eq.column)) {
        const Column& col = *b.eq.column;
        auto& vs = equal[&col];
        vs.assign(col.values.size(), BitVector(valid.size()));
        const uint32_t mask = (uint32_t(1) << col.width) - 1;
        for (size_t r = 0; r < rows; ++r) {
          const int32_t i = col.index_of_code[(v[r] >> col.lo_bit) & mask];
          if (i >= 0) vs[size_t(i)].data()[r >> 6] |= uint64_t(1) << (r & 63);
        }
      }
    for (const Bitmap& b : L.bitmaps[c]) {
      switch (b.kind) {
        case Bitmap::Kind::Slice:
          out[c].push_back(slices[size_t(b.bit)]);
          break;
        case Bitmap::Kind::Inverse: {
          BitVector bits = slices[size_t(b.bit)];
          bits.invert();
          bits &= valid;
          out[c].push_back(std::move(bits));
          break;
        }
        case Bitmap::Kind::Equal:
          out[c].push_back(equal.at(b.eq.column).at(size_t(b.eq.value)));
          break;
      }
    }
  }
  return out;
}

IndexData pick_bitmaps(const IndexLayout& from, const IndexData& data, const IndexLayout& to) {
  IndexData out(codes().size());
  for (size_t c = 0; c < codes().size(); ++c)
    for (const Bitmap& b : to.bitmaps[c]) {
      const auto& fb = from.bitmaps[c];
      auto it = std::find_if(fb.begin(), fb.end(), [&](const Bitmap& x) { return x == b; });
      if (it == fb.end()) throw ModelError(fmt::format("internal: a bitmap of {} is missing from the built index", codes()[c].name));
      out[c].push_back(data[c][size_t(it - fb.begin())]);
    }
  return out;
}

void write_index(CosmosSsd& ssd, const IndexLayout& L, const IndexData* data, std::optional<nand::ProgramMode> mode) {
  const int64_t wordlines = ssd.nand_params().geometry.wordlines_per_string;
  for (size_t c = 0; c < codes().size(); ++c) {
    if (!L.lanes[c]) continue;
    const std::string group = "ssb." + codes()[c].name;
    if (int64_t(L.bitmaps[c].size()) > wordlines)
      throw ModelError(
          fmt::format("index of {}: {} bitmaps do not fit one string of {} wordlines (an AND of them would not be one sensing)",
                      codes()[c].name, L.bitmaps[c].size(), wordlines));
    ssd.declare_group(group, uint32_t(L.bitmaps[c].size()));
    for (int lane = 0; lane < L.lanes[c]; ++lane) {
      WriteOptions o = write_options_for(L.system, group, uint32_t(lane));
      if (mode) o.mode = *mode;
      for (size_t i = 0; i < L.bitmaps[c].size(); ++i) {
        const std::string n = L.name(int(c), lane, L.bitmaps[c][i]);
        if (data)
          ssd.write(n, (*data)[c][i], o);
        else
          ssd.write(n, L.bitmap_bytes(), o);
      }
    }
  }
}

}  // namespace bitline::cosmos::ssb
