#include "cosmos/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/error.hpp"

namespace bitline::cosmos {
namespace {

using Op = Expr::Op;

class Builder {
 public:
  Builder(const Firmware& fw, const PlanLimits& lim) : fw_(&fw), lim_(lim) {}

  std::optional<CopyRef> positive(const Expr& e) const {
    if (e.is_var()) return fw_->operand(e.name).normal;
    if (e.op == Op::Not && e.kids[0].is_var()) return fw_->operand(e.kids[0].name).inverted;
    return std::nullopt;
  }
  std::optional<CopyRef> complement(const Expr& e) const {
    if (e.is_var()) return fw_->operand(e.name).inverted;
    if (e.op == Op::Not && e.kids[0].is_var()) return fw_->operand(e.kids[0].name).normal;
    return std::nullopt;
  }
  /// The positive copies of an AND of literals (or of one literal); nullopt if some literal has none.
  std::optional<std::vector<CopyRef>> and_literals(const Expr& e) const {
    std::vector<CopyRef> out;
    auto add = [&](const Expr& x) {
      auto c = positive(x);
      if (!c) return false;
      out.push_back(*c);
      return true;
    };
    if (e.op == Op::And) {
      for (const auto& k : e.kids)
        if (!add(k)) return std::nullopt;
    } else if (!add(e)) {
      return std::nullopt;
    }
    return out;
  }
  /// Groups copies by string (pool, chunk) and splits them into sensings of <= `wordlines` WLs.
  std::vector<SlotPlan> pieces(const std::vector<CopyRef>& copies) const {
    std::vector<SlotPlan> groups;
    for (const auto& c : copies) {
      uint32_t chunk = fw_->chunk_of(c), off = fw_->offset_of(c);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const SlotPlan& s) { return s.pool == c.pool && s.chunk == chunk; });
      if (it == groups.end()) groups.push_back(SlotPlan{c.pool, chunk, {}}), it = groups.end() - 1;
      if (std::find(it->offsets.begin(), it->offsets.end(), off) == it->offsets.end()) it->offsets.push_back(off);
    }
    std::vector<SlotPlan> out;
    for (const auto& g : groups)
      for (size_t i = 0; i < g.offsets.size(); i += size_t(lim_.wordlines)) {
        SlotPlan s{g.pool, g.chunk, {}};
        s.offsets.assign(g.offsets.begin() + long(i), g.offsets.begin() + long(std::min(g.offsets.size(), i + size_t(lim_.wordlines))));
        out.push_back(s);
      }
    return out;
  }

  void emit(bool inverse, bool init_s, bool transfer, std::vector<SlotPlan> slots) {
    OpPlan op;
    op.iscm = nand::Iscm{inverse, init_s, first_c_, transfer};
    if (transfer || first_c_) first_c_ = false;
    op.slots = std::move(slots);
    ops_.push_back(std::move(op));
  }
  /// AND of copies accumulated in S (one sensing per piece); the last sensing moves it to C.
  void and_ops(const std::vector<CopyRef>& copies, bool into_c) {
    auto ps = pieces(copies);
    for (size_t i = 0; i < ps.size(); ++i) emit(false, i == 0, into_c && i + 1 == ps.size(), {ps[i]});
  }

  bool compile_c(const Expr& e) {
    Builder save = *this;
    if (try_compile_c(e)) return true;
    *this = save;
    return false;
  }

  bool try_compile_c(const Expr& e) {
    if (auto lits = and_literals(e)) {
      and_ops(*lits, true);
      return true;
    }
    if (auto ss = and_sensings(e)) {  // AND of ORs: one sensing per factor, ANDed in S
      for (size_t i = 0; i < ss->size(); ++i) emit(false, i == 0, i + 1 == ss->size(), (*ss)[i]);
      return true;
    }
    switch (e.op) {
      case Op::Or:
        return compile_or(e);
      case Op::Not:
        return compile_not(e.kids[0]);
      case Op::Xor:
        return compile_xor(e.kids[0], e.kids[1], false) || compile_xor(e.kids[1], e.kids[0], false);
      case Op::Var: {
        // Only an inverted copy is stored: an inverse read of it.
        auto c = complement(e);
        if (!c) return false;
        emit_single(true, true, *c);
        return true;
      }
      default:
        return false;
    }
  }

  void emit_single(bool inverse, bool transfer, const CopyRef& c) { emit(inverse, true, transfer, pieces({c})); }

  /// The slots of one inter-block MWS computing `e`, an OR of ANDs of literals, each AND within one string
  /// (one piece), from distinct pools, at most `blocks` of them; nullopt otherwise.
  std::optional<std::vector<SlotPlan>> or_sensing(const Expr& e) const {
    if (e.op != Op::Or || int(e.kids.size()) > lim_.blocks) return std::nullopt;
    std::vector<SlotPlan> slots;
    for (const auto& k : e.kids) {
      auto lits = and_literals(k);
      if (!lits) return std::nullopt;
      auto ps = pieces(*lits);
      if (ps.size() != 1) return std::nullopt;
      if (std::any_of(slots.begin(), slots.end(), [&](const SlotPlan& s) { return s.pool == ps[0].pool; })) return std::nullopt;
      slots.push_back(ps[0]);
    }
    return slots;
  }
  /// The sensings of an AND whose kids are literals or single-sensing ORs (or_sensing): the literals grouped
  /// by string (pieces), each OR one sensing; the die ANDs them in the S-latch. nullopt for any other form.
  std::optional<std::vector<std::vector<SlotPlan>>> and_sensings(const Expr& e) const {
    if (e.op != Op::And) return std::nullopt;
    std::vector<CopyRef> lits;
    std::vector<std::vector<SlotPlan>> out;
    for (const auto& k : e.kids) {
      if (auto c = positive(k)) {
        lits.push_back(*c);
        continue;
      }
      auto s = or_sensing(k);
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    if (out.empty()) return std::nullopt;  // an AND of literals only: and_literals' case
    for (auto& p : pieces(lits)) out.push_back({p});
    return out;
  }

  bool compile_or(const Expr& e) {
    // Candidate 1: De Morgan over stored complements, one inverse MWS per chunk.
    std::optional<std::vector<OpPlan>> demorgan;
    {
      std::vector<CopyRef> comps;
      bool ok = true;
      for (const auto& k : e.kids) {
        auto c = complement(k);
        if (!c)
          ok = false;
        else
          comps.push_back(*c);
      }
      if (ok) {
        Builder b = *this;
        auto ps = b.pieces(comps);
        for (const auto& p : ps) b.emit(true, true, true, {p});
        demorgan = std::vector<OpPlan>(b.ops_.begin() + long(ops_.size()), b.ops_.end());
      }
    }
    // Candidate 2: OR of AND-terms, single-sensing terms merged into inter-block MWS.
    std::optional<std::vector<OpPlan>> dnf;
    {
      Builder b = *this;
      bool ok = true;
      std::vector<std::vector<SlotPlan>> simple, complex;
      std::vector<std::vector<std::vector<SlotPlan>>> products;  // terms that are ANDs of sensings (and_sensings)
      for (const auto& k : e.kids) {
        auto lits = and_literals(k);
        if (!lits) {
          if (auto ss = and_sensings(k)) {
            products.push_back(std::move(*ss));
            continue;
          }
          ok = false;
          break;
        }
        auto ps = pieces(*lits);
        (ps.size() == 1 ? simple : complex).push_back(ps);
      }
      if (ok) {
        // Greedy: fill sensings with up to `blocks` slots from distinct pools.
        std::vector<std::vector<SlotPlan>> merged;
        for (auto& t : simple) {
          bool placed = false;
          for (auto& m : merged) {
            if (int(m.size()) >= lim_.blocks) continue;
            if (std::any_of(m.begin(), m.end(), [&](const SlotPlan& s) { return s.pool == t[0].pool; })) continue;
            m.push_back(t[0]);
            placed = true;
            break;
          }
          if (!placed) merged.push_back({t[0]});
        }
        for (auto& m : merged) b.emit(false, true, true, m);
        for (auto& ps : complex)
          for (size_t i = 0; i < ps.size(); ++i) b.emit(false, i == 0, i + 1 == ps.size(), {ps[i]});
        for (auto& ss : products)
          for (size_t i = 0; i < ss.size(); ++i) b.emit(false, i == 0, i + 1 == ss.size(), ss[i]);
        dnf = std::vector<OpPlan>(b.ops_.begin() + long(ops_.size()), b.ops_.end());
      }
    }
    const std::vector<OpPlan>* best = nullptr;
    if (demorgan) best = &*demorgan;
    if (dnf && (!best || dnf->size() < best->size())) best = &*dnf;
    if (!best) return false;
    for (const auto& op : *best) ops_.push_back(op);
    first_c_ = false;
    return true;
  }

  bool compile_not(const Expr& x) {
    if (x.op == Op::Xor) {  // XNOR: one side sensed inverted into S, then the latch XOR
      Expr a = Expr::make(Op::Not, {x.kids[0]}), b = Expr::make(Op::Not, {x.kids[1]});
      return compile_xor(normalize(a), x.kids[1], false) || compile_xor(normalize(b), x.kids[0], false);
    }
    if (auto c = complement(x)) {  // the complement is stored: a plain sensing of it
      emit_single(false, true, *c);
      return true;
    }
    if (auto lits = and_literals(x)) {
      auto ps = pieces(*lits);
      if (ps.size() == 1) {  // NAND in one inverse MWS
        emit(true, true, true, ps);
        return true;
      }
      return false;
    }
    if (x.op == Op::Or) {
      // NOR: AND of stored complements...
      std::vector<CopyRef> comps;
      bool ok = true;
      for (const auto& k : x.kids) {
        auto c = complement(k);
        if (!c)
          ok = false;
        else
          comps.push_back(*c);
      }
      if (ok) {
        and_ops(comps, true);
        return true;
      }
      // ... or one inverse inter-block MWS over single-sensing terms.
      std::vector<SlotPlan> slots;
      for (const auto& k : x.kids) {
        auto lits = and_literals(k);
        if (!lits) return false;
        auto ps = pieces(*lits);
        if (ps.size() != 1) return false;
        if (std::any_of(slots.begin(), slots.end(), [&](const SlotPlan& s) { return s.pool == ps[0].pool; })) return false;
        slots.push_back(ps[0]);
      }
      if (int(slots.size()) > lim_.blocks) return false;
      emit(true, true, true, slots);
      return true;
    }
    return false;
  }

  /// Leaves `e` in the S-latch without touching C (no C init, no transfer).
  bool compile_s(const Expr& e) {
    bool saved = first_c_;
    first_c_ = false;
    bool ok = false;
    if (auto lits = and_literals(e)) {
      auto ps = pieces(*lits);
      for (size_t i = 0; i < ps.size(); ++i) emit(false, i == 0, false, {ps[i]});
      ok = true;
    } else if (e.op == Op::Not) {
      if (auto c = complement(e.kids[0])) {
        emit(false, true, false, pieces({*c}));
        ok = true;
      } else if (auto lits2 = and_literals(e.kids[0])) {
        auto ps = pieces(*lits2);
        if (ps.size() == 1) {
          emit(true, true, false, ps);
          ok = true;
        }
      }
    }
    first_c_ = ok ? false : saved;
    return ok;
  }

  bool compile_xor(const Expr& a, const Expr& b, bool) {
    Builder save = *this;
    if (compile_c(b) && compile_s(a)) {
      OpPlan x;
      x.kind = OpPlan::Kind::Xor;
      ops_.push_back(x);
      return true;
    }
    *this = save;
    return false;
  }

  std::vector<OpPlan> ops_;
  bool first_c_ = true;

 private:
  const Firmware* fw_;
  PlanLimits lim_;
};

}  // namespace

int OpPlan::wordlines() const {
  int w = 0;
  for (const auto& s : slots) w = std::max(w, int(s.offsets.size()));
  return w;
}

std::string Plan::describe() const {
  std::string s;
  for (const auto& op : ops) {
    if (op.kind == OpPlan::Kind::Xor) {
      s += "XOR(S,C)->C; ";
      continue;
    }
    s += fmt::format("MWS[{}{}{}{}] ", op.iscm.inverse ? "inv " : "", op.iscm.init_s ? "initS " : "", op.iscm.init_c ? "initC " : "",
                     op.iscm.transfer ? "S->C" : "");
    for (const auto& sl : op.slots) s += fmt::format("pool{}.chunk{}:{}wl ", sl.pool, sl.chunk, sl.offsets.size());
    s += "; ";
  }
  if (invert_output) s += "controller inverts the result";
  return s;
}

int64_t operand_bytes(const Expr& e, const Firmware& fw) {
  int64_t bytes = -1;
  std::string first;
  for (const auto& name : e.operands()) {
    const Operand& op = fw.operand(name);  // throws for an unknown operand
    if (bytes < 0)
      bytes = op.bytes, first = name;
    else if (op.bytes != bytes)
      throw ModelError(
          fmt::format("operands '{}' ({} bytes) and '{}' ({} bytes) cannot be co-located: different sizes", first, bytes, name, op.bytes));
  }
  return bytes;
}

Plan plan_expression(const Expr& raw, const Firmware& fw, const PlanLimits& limits) {
  Expr e = normalize(raw);
  operand_bytes(e, fw);
  Builder b(fw, limits);
  Plan p;
  if (b.compile_c(e)) {
    p.ops = std::move(b.ops_);
    return p;
  }
  if (e.op == Op::Not) {
    Builder b2(fw, limits);
    if (b2.compile_c(e.kids[0])) {
      p.ops = std::move(b2.ops_);
      p.invert_output = true;
      return p;
    }
  }
  throw ModelError(
      fmt::format("cannot compute '{}' in flash with the stored copies (store inverted copies for OR/NOT forms, "
                  "or simplify the expression)",
                  e.to_string()));
}

ColumnCommands resolve(const Plan& plan, const Firmware& fw, int64_t page) {
  ColumnCommands out;
  PlaneLoc pl = fw.plane_loc(page % fw.planes());
  out.die = pl.die;
  out.plane = pl.plane;
  for (const auto& op : plan.ops) {
    if (op.kind == OpPlan::Kind::Xor) {
      out.commands.emplace_back(std::in_place_type<nand::XorCmd>, nand::XorCmd{pl.plane});
      continue;
    }
    nand::MwsCmd c;
    c.plane = pl.plane;
    c.iscm = op.iscm;
    for (const auto& s : op.slots) {
      PageLoc l = fw.chunk_loc(s.pool, s.chunk, page);
      nand::MwsSlot slot;
      slot.block = l.block;
      slot.subblock = l.subblock;
      for (auto o : s.offsets) slot.pbm.set(l.wordline + o);
      c.slots.push_back(slot);
    }
    out.commands.push_back(std::move(c));
  }
  return out;
}

}  // namespace bitline::cosmos
