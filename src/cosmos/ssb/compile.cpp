#include "cosmos/ssb/compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "core/error.hpp"

namespace bitline::cosmos::ssb {
namespace {

uint64_t field_mask(int width) { return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1; }

Cube lift(Cube c, const Column& col) { return {c.mask << col.lo_bit, c.value << col.lo_bit}; }

/// The field cube of one value of a column (every bit of the field fixed), shifted into the code.
Cube value_cube(const Column& c, int value_index) {
  return {uint32_t(field_mask(c.width)) << c.lo_bit, c.codes[size_t(value_index)] << c.lo_bit};
}

/// a AND b, or false when they select no common row.
bool and_terms(const Term& a, const Term& b, Term& out) {
  if (!intersects(a.meaning, b.meaning) || !intersects(a.slices, b.slices)) return false;
  out.slices = meet(a.slices, b.slices);
  out.meaning = meet(a.meaning, b.meaning);
  out.eqs = a.eqs;
  for (const auto& e : b.eqs)
    if (std::find(out.eqs.begin(), out.eqs.end(), e) == out.eqs.end()) out.eqs.push_back(e);
  // An equality bitmap implied by the slices is redundant; slices inside an equality bitmap's field are implied by it.
  for (auto it = out.eqs.begin(); it != out.eqs.end();) {
    const Cube ec = value_cube(*it->column, it->value);
    if ((ec.mask & out.slices.mask) == ec.mask && intersects(ec, out.slices))
      it = out.eqs.erase(it);
    else
      ++it;
  }
  for (const auto& e : out.eqs) {
    const Cube ec = value_cube(*e.column, e.value);
    out.slices.mask &= ~ec.mask;
    out.slices.value &= ~ec.mask;
  }
  return true;
}

bool is_true(const Factor& f) {
  return std::any_of(f.terms.begin(), f.terms.end(), [](const Term& t) { return t.literals() == 0; });
}

Factor product(const Factor& a, const Factor& b) {
  Factor p;
  p.code = a.code;
  for (const auto& x : a.terms)
    for (const auto& y : b.terms) {
      Term t;
      if (and_terms(x, y, t)) p.terms.push_back(std::move(t));
    }
  return p;
}

std::vector<std::pair<int64_t, int64_t>> measure_intervals(const Predicate& p) {
  const Column& c = *p.column;
  auto v = [&](size_t i) { return std::get<int64_t>(p.values[i]); };
  std::vector<std::pair<int64_t, int64_t>> r;
  switch (p.op) {
    case CmpOp::Eq:
      r = {{v(0), v(0)}};
      break;
    case CmpOp::Ne:
      r = {{c.min, v(0) - 1}, {v(0) + 1, c.max}};
      break;
    case CmpOp::Lt:
      r = {{c.min, v(0) - 1}};
      break;
    case CmpOp::Le:
      r = {{c.min, v(0)}};
      break;
    case CmpOp::Gt:
      r = {{v(0) + 1, c.max}};
      break;
    case CmpOp::Ge:
      r = {{v(0), c.max}};
      break;
    case CmpOp::Between:
      r = {{v(0), v(1)}};
      break;
    case CmpOp::In: {
      std::vector<int64_t> xs;
      for (size_t i = 0; i < p.values.size(); ++i) xs.push_back(v(i));
      std::sort(xs.begin(), xs.end());
      xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
      for (int64_t x : xs) {
        if (!r.empty() && r.back().second + 1 == x)
          r.back().second = x;
        else
          r.push_back({x, x});
      }
      break;
    }
  }
  std::erase_if(r, [](const auto& iv) { return iv.first > iv.second; });
  return r;
}

}  // namespace

int Term::literals() const { return std::popcount(slices.mask) + int(eqs.size()); }

std::vector<Cube> interval_cover(uint64_t lo, uint64_t hi, int width) {
  std::vector<Cube> out;
  const uint64_t all = field_mask(width);
  if (lo > hi || hi > all) return out;
  while (true) {
    int k = 0;  // the largest aligned block starting at lo inside [lo, hi]
    while (k < width && (lo & ((uint64_t(1) << (k + 1)) - 1)) == 0 && lo + ((uint64_t(1) << (k + 1)) - 1) <= hi) ++k;
    const uint64_t mask = all & ~((uint64_t(1) << k) - 1);
    out.push_back({uint32_t(mask), uint32_t(lo & mask)});
    const uint64_t end = lo + ((uint64_t(1) << k) - 1);
    if (end >= hi) break;
    lo = end + 1;
  }
  return out;
}

std::vector<Cube> set_cover(const std::vector<uint8_t>& flags, int width) {
  if (width > 16 || flags.size() != (size_t(1) << width)) throw ModelError("internal: set_cover over more than 16 bits");
  const uint32_t all = uint32_t(field_mask(width));
  std::vector<uint8_t> covered(flags.size(), 0);
  std::vector<Cube> cubes;
  auto allowed = [&](Cube c) {
    // every code of the cube is ON or don't care
    const uint32_t free = all & ~c.mask;
    for (uint32_t sub = free;; sub = (sub - 1) & free) {
      if (flags[c.value | sub] == 0) return false;
      if (sub == 0) break;
    }
    return true;
  };
  for (uint32_t code = 0; code < flags.size(); ++code) {
    if (flags[code] != 1 || covered[code]) continue;
    Cube c{all, code};
    for (int k = 0; k < width; ++k) {  // free the low bits first: prefix-like cubes
      const Cube wider{c.mask & ~(uint32_t(1) << k), c.value & ~(uint32_t(1) << k)};
      if (allowed(wider)) c = wider;
    }
    const uint32_t free = all & ~c.mask;
    for (uint32_t sub = free;; sub = (sub - 1) & free) {
      covered[c.value | sub] = 1;
      if (sub == 0) break;
    }
    cubes.push_back(c);
  }
  // Drop a cube whose ON codes the others cover.
  for (size_t i = cubes.size(); i-- > 0;) {
    bool needed = false;
    const uint32_t free = all & ~cubes[i].mask;
    for (uint32_t sub = free;; sub = (sub - 1) & free) {
      const uint32_t code = cubes[i].value | sub;
      if (flags[code] == 1 &&
          std::none_of(cubes.begin(), cubes.end(), [&](const Cube& o) { return &o != &cubes[i] && o.contains(code); })) {
        needed = true;
        break;
      }
      if (sub == 0) break;
    }
    if (!needed) cubes.erase(cubes.begin() + long(i));
  }
  return cubes;
}

std::vector<Cube> predicate_cover(const Predicate& p) {
  const Column& c = *p.column;
  if (c.measure) {
    std::vector<Cube> out;
    const uint64_t top = field_mask(c.width);
    for (auto [lo, hi] : measure_intervals(p)) {
      // Widen over the codes the column never takes (below min, above max).
      const uint64_t a = lo == c.min ? 0 : uint64_t(lo), b = hi == c.max ? top : uint64_t(hi);
      for (const Cube& x : interval_cover(a, b, c.width)) out.push_back(x);
    }
    return out;
  }
  std::vector<uint8_t> flags(size_t(1) << c.width, 2);
  for (size_t i = 0; i < c.values.size(); ++i) flags[c.codes[i]] = p.holds(c.values[i]) ? 1 : 0;
  return set_cover(flags, c.width);
}

bool equality_encoded(const Column& c, const CompileOptions& o) {
  return !c.measure && int64_t(c.values.size()) <= int64_t(o.equality_max_values);
}

Factor compile_predicate(const Predicate& p, const CompileOptions& o) {
  const Column& c = *p.column;
  Factor f;
  f.code = c.code;
  for (const Cube& x : predicate_cover(p)) {
    const Cube l = lift(x, c);
    f.terms.push_back(Term{l, {}, l});
  }
  if (equality_encoded(c, o) && !is_true(f)) {
    Factor e;
    e.code = c.code;
    for (size_t i = 0; i < c.values.size(); ++i)
      if (p.holds(c.values[i])) e.terms.push_back(Term{{}, {EqLit{&c, int(i)}}, value_cube(c, int(i))});
    auto lits = [](const Factor& x) {
      int n = 0;
      for (const auto& t : x.terms) n += t.literals();
      return n;
    };
    if (e.terms.size() < f.terms.size() || (e.terms.size() == f.terms.size() && lits(e) < lits(f))) f = std::move(e);
  }
  return f;
}

Filter compile_filter(const std::vector<Predicate>& where, const CompileOptions& o) {
  Filter out;
  for (const auto& p : where) {
    Factor f = compile_predicate(p, o);
    if (f.terms.empty()) {
      out.none = true;
      continue;
    }
    if (is_true(f)) continue;
    auto it = std::find_if(out.factors.begin(), out.factors.end(), [&](const Factor& g) {
      return g.code == f.code && int64_t(g.terms.size()) * int64_t(f.terms.size()) <= o.max_terms;
    });
    if (it == out.factors.end()) {
      out.factors.push_back(std::move(f));
      continue;
    }
    *it = product(*it, f);
    if (it->terms.empty()) out.none = true;
  }
  if (out.none) out.factors.clear();
  return out;
}

bool and_term(Conjunction& c, int code, const Term& t) {
  Factor* best = nullptr;
  for (auto& f : c)
    if (f.code == code && (!best || f.terms.size() < best->terms.size())) best = &f;
  if (!best) {
    c.push_back(Factor{code, {t}});
    return true;
  }
  Factor p = product(*best, Factor{code, {t}});
  if (p.terms.empty()) return false;
  *best = std::move(p);
  return true;
}

Term value_term(const Column& c, int value_index, const CompileOptions& o) {
  const Cube cube = value_cube(c, value_index);
  if (equality_encoded(c, o)) return Term{{}, {EqLit{&c, value_index}}, cube};
  return Term{cube, {}, cube};
}

Term slice_term(int bit) {
  const Cube c{uint32_t(1) << bit, uint32_t(1) << bit};
  return Term{c, {}, c};
}

const Registry<Aggregation>& aggregations() {
  static const Registry<Aggregation> r(
      "aggregation strategy",
      {{"auto", "the strategy with fewer fc_reads (each moves one result bitmap to the host)", Aggregation::Auto},
       {"flash", "sums in flash: a host bit count of F AND group AND slice(s) per group and bit (pair)", Aggregation::Flash},
       {"host", "the filter in flash, then the slices the answer needs; the host aggregates F's rows", Aggregation::Host}});
  return r;
}

namespace {

/// Per group-by column, the value indices some row of the filter can take.
std::vector<std::vector<int>> candidates_of(const QuerySpec& q, const Filter& f) {
  std::vector<std::vector<int>> out;
  for (const Column* c : q.group_by) {
    std::vector<int> vs;
    if (!f.none)
      for (size_t i = 0; i < c->values.size(); ++i) {
        const Cube cube = value_cube(*c, int(i));
        bool ok = true;
        for (const auto& fac : f.factors)
          if (fac.code == c->code &&
              std::none_of(fac.terms.begin(), fac.terms.end(), [&](const Term& t) { return intersects(t.meaning, cube); }))
            ok = false;
        if (ok) vs.push_back(int(i));
      }
    out.push_back(std::move(vs));
  }
  return out;
}

int64_t flash_reads_estimate(const QuerySpec& q, const std::vector<std::vector<int>>& cand) {
  int64_t groups = 1;
  for (const auto& v : cand) groups = std::min<int64_t>(groups * int64_t(v.size()), kMaxReadsPerQuery + 1);
  int64_t per = 1;
  for (const auto& t : q.sum) {
    int64_t bits = 1;
    for (const Column* c : t.factors) bits *= c->width;
    per += bits;
  }
  return std::min<int64_t>(groups * per, int64_t(1) << 40);
}

void plan_flash(QueryPlan& p, const CompileOptions& o) {
  const QuerySpec& q = *p.spec;
  // Every combination of the group columns' candidate values (odometer order: the last column fastest).
  std::vector<size_t> at(q.group_by.size(), 0);
  bool any = !p.filter.none && std::all_of(p.candidates.begin(), p.candidates.end(), [](const auto& v) { return !v.empty(); });
  while (any) {
    std::vector<int> g;
    for (size_t k = 0; k < at.size(); ++k) g.push_back(p.candidates[k][at[k]]);
    p.groups.push_back(g);
    size_t k = at.size();
    while (k > 0 && ++at[k - 1] == p.candidates[k - 1].size()) at[--k] = 0;
    if (k == 0) break;
  }
  for (size_t gi = 0; gi < p.groups.size(); ++gi) {
    Conjunction base = p.filter.factors;
    bool ok = true;
    for (size_t k = 0; k < q.group_by.size() && ok; ++k)
      ok = and_term(base, q.group_by[k]->code, value_term(*q.group_by[k], p.groups[gi][k], o));
    if (!ok) continue;  // no row can be in this group
    if (!base.empty()) p.ops.push_back(FlashOp{FlashOp::Use::Count, base, int(gi)});
    for (size_t ti = 0; ti < q.sum.size(); ++ti) {
      const auto& f = q.sum[ti].factors;
      const int na = f[0]->width, nb = f.size() > 1 ? f[1]->width : 1;
      for (int i = 0; i < na; ++i)
        for (int j = 0; j < nb; ++j) {
          Conjunction e = base;
          if (!and_term(e, f[0]->code, slice_term(i))) continue;
          if (f.size() > 1 && !and_term(e, f[1]->code, slice_term(j))) continue;
          FlashOp op{FlashOp::Use::Sum, std::move(e), int(gi)};
          op.term = int(ti);
          op.bit_a = i;
          op.bit_b = f.size() > 1 ? j : -1;
          p.ops.push_back(std::move(op));
        }
    }
  }
}

void plan_host(QueryPlan& p) {
  const QuerySpec& q = *p.spec;
  if (p.filter.none) return;
  if (!p.filter.factors.empty()) p.ops.push_back(FlashOp{FlashOp::Use::Filter, p.filter.factors});
  std::vector<std::pair<int, int>> fetched;
  auto fetch = [&](int code, int bit) {
    if (std::find(fetched.begin(), fetched.end(), std::pair{code, bit}) != fetched.end()) return;
    fetched.emplace_back(code, bit);
    FlashOp op{FlashOp::Use::Fetch, {Factor{code, {slice_term(bit)}}}};
    op.code = code;
    op.bit = bit;
    p.ops.push_back(std::move(op));
  };
  for (size_t k = 0; k < q.group_by.size(); ++k) {
    const Column& c = *q.group_by[k];
    uint32_t open = 0, first = p.candidates[k].empty() ? 0 : c.codes[size_t(p.candidates[k][0])];
    for (int v : p.candidates[k]) open |= c.codes[size_t(v)] ^ first;
    p.open_bits.push_back(open);
    p.known_value.push_back(first & ~open);
    for (int b = 0; b < c.width; ++b)
      if (open >> b & 1) fetch(c.code, c.lo_bit + b);
  }
  for (const auto& t : q.sum)
    for (const Column* c : t.factors)
      for (int b = 0; b < c->width; ++b) fetch(c->code, b);
}

}  // namespace

QueryPlan plan_query(const QuerySpec& q, Aggregation strategy, const CompileOptions& o) {
  QueryPlan p;
  p.spec = &q;
  p.filter = compile_filter(q.where, o);
  p.candidates = candidates_of(q, p.filter);
  const int64_t flash_estimate = flash_reads_estimate(q, p.candidates);
  if (strategy == Aggregation::Auto) {
    QueryPlan h = p;
    plan_host(h);
    strategy = flash_estimate < int64_t(h.ops.size()) ? Aggregation::Flash : Aggregation::Host;
  }
  p.strategy = strategy;
  switch (strategy) {
    case Aggregation::Flash:
      if (flash_estimate > kMaxReadsPerQuery)
        throw ConfigError(
            fmt::format("{}: query {}: --aggregation flash takes about {} fc_reads (one per group and bit pair), more "
                        "than the {} a query may plan; use --aggregation host",
                        q.file, q.name, flash_estimate, kMaxReadsPerQuery));
      plan_flash(p, o);
      break;
    case Aggregation::Host:
      plan_host(p);
      break;
    case Aggregation::Auto:
      break;
  }
  return p;
}

std::string describe(const Term& t, int code) {
  std::vector<std::string> lits;
  const std::string& name = codes()[size_t(code)].name;
  for (int b = 31; b >= 0; --b)
    if (t.slices.mask >> b & 1) lits.push_back(fmt::format("{}{}.b{}", t.slices.value >> b & 1 ? "" : "~", name, b));
  for (const auto& e : t.eqs) lits.push_back(fmt::format("[{}={}]", e.column->name, to_string(e.column->values[size_t(e.value)])));
  if (lits.empty()) return "true";
  return fmt::format("{}", fmt::join(lits, " & "));
}

std::string describe(const Conjunction& c) {
  std::vector<std::string> fs;
  for (const auto& f : c) {
    std::vector<std::string> ts;
    for (const auto& t : f.terms) ts.push_back(describe(t, f.code));
    fs.push_back(ts.size() == 1 ? ts[0] : fmt::format("({})", fmt::join(ts, " | ")));
  }
  if (fs.empty()) return "true";
  return fmt::format("{}", fmt::join(fs, "  AND  "));
}

std::vector<std::string> QueryPlan::explain() const {
  std::vector<std::string> l;
  const QuerySpec& q = *spec;
  for (const auto& p : q.where) {
    const Column& c = *p.column;
    l.push_back(fmt::format("  predicate {}: {} term(s) over {} [{}] bits {}..{}", p.text, predicate_cover(p).size(),
                            codes()[size_t(c.code)].name, c.measure ? "bit-sliced measure" : "bit-sliced join index", c.lo_bit,
                            c.lo_bit + c.width - 1));
  }
  if (filter.none)
    l.push_back("  filter: no row can qualify (contradictory predicates)");
  else
    l.push_back(fmt::format("  filter F = {} sensing(s) per page column: {}", filter.factors.size(), describe(filter.factors)));
  int counts = 0, sums = 0, fetches = 0, filters = 0;
  for (const auto& op : ops) {
    switch (op.use) {
      case FlashOp::Use::Filter:
        ++filters;
        break;
      case FlashOp::Use::Count:
        ++counts;
        break;
      case FlashOp::Use::Sum:
        ++sums;
        break;
      case FlashOp::Use::Fetch:
        ++fetches;
        break;
    }
  }
  l.push_back(fmt::format("  aggregation: {} ({} fc_reads: {} filter, {} group counts, {} slice sums, {} slice fetches){}",
                          aggregations().names()[size_t(strategy)], ops.size(), filters, counts, sums, fetches,
                          groups.empty() ? "" : fmt::format("; {} groups", groups.size())));
  return l;
}

}  // namespace bitline::cosmos::ssb
