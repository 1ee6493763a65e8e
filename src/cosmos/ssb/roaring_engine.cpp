#include "cosmos/ssb/roaring_engine.hpp"

#include <fmt/format.h>
#include <roaring/roaring.h>

#include <vector>

#include "core/error.hpp"

namespace bitline::cosmos::ssb {
namespace {

roaring_bitmap_t* rb(void* p) { return static_cast<roaring_bitmap_t*>(p); }

/// A bitmap that is either borrowed from the index or owned (and freed) here.
class Held {
 public:
  Held() = default;
  Held(const roaring_bitmap_t* p, bool owned) : p_(p), owned_(owned) {}
  Held(Held&& o) noexcept : p_(o.p_), owned_(o.owned_) { o.p_ = nullptr; }
  Held& operator=(Held&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(owned_, o.owned_);
    return *this;
  }
  ~Held() {
    if (owned_ && p_) roaring_bitmap_free(p_);
  }
  const roaring_bitmap_t* get() const { return p_; }
  /// A bitmap this holder may change (copied when borrowed).
  roaring_bitmap_t* mutate() {
    if (!owned_) p_ = roaring_bitmap_copy(p_), owned_ = true;
    return const_cast<roaring_bitmap_t*>(p_);
  }

 private:
  const roaring_bitmap_t* p_ = nullptr;
  bool owned_ = false;
};

class Evaluator {
 public:
  Evaluator(const std::map<std::string, void*>& b, int64_t rows) : b_(b), rows_(uint64_t(rows)) {}
  Held eval(const Expr& e) const {
    using Op = Expr::Op;
    switch (e.op) {
      case Op::Var: {
        auto it = b_.find(e.name);
        if (it == b_.end()) throw ModelError(fmt::format("internal: the host engine has no bitmap '{}'", e.name));
        return Held(rb(it->second), false);
      }
      case Op::And: {
        std::vector<const Expr*> pos, neg;
        for (const auto& k : e.kids) (k.op == Op::Not ? neg : pos).push_back(k.op == Op::Not ? &k.kids[0] : &k);
        Held acc = pos.empty() ? Held(roaring_bitmap_from_range(0, rows_, 1), true) : eval(*pos[0]);
        for (size_t i = 1; i < pos.size(); ++i) {
          Held x = eval(*pos[i]);
          roaring_bitmap_and_inplace(acc.mutate(), x.get());
        }
        for (const Expr* n : neg) {
          Held x = eval(*n);
          roaring_bitmap_andnot_inplace(acc.mutate(), x.get());
        }
        return acc;
      }
      case Op::Or: {
        std::vector<Held> kids;
        std::vector<const roaring_bitmap_t*> ptrs;
        for (const auto& k : e.kids) kids.push_back(eval(k)), ptrs.push_back(kids.back().get());
        return Held(roaring_bitmap_or_many(ptrs.size(), ptrs.data()), true);
      }
      case Op::Not: {
        Held x = eval(e.kids[0]);
        return Held(roaring_bitmap_flip(x.get(), 0, rows_), true);
      }
      case Op::Xor:
        break;
    }
    throw ModelError("internal: the host engine evaluates AND, OR and NOT");
  }

 private:
  const std::map<std::string, void*>& b_;
  uint64_t rows_;
};

}  // namespace

roaring_bitmap_t* to_roaring(const BitVector& v) {
  // Roaring's portable serialization (RoaringFormatSpec, https://github.com/RoaringBitmap/RoaringFormatSpec), written
  // from the bits and read with roaring_bitmap_portable_deserialize_safe: the containers' bitsets are copied whole
  // instead of adding every set bit one by one. Cookie 12346 (no run containers), then per 2^16-bit chunk its key and
  // cardinality - 1, a 32-bit offset per container, and the containers: a sorted uint16 array up to 4096 values,
  // otherwise a 2^16-bit bitset.
  constexpr size_t kChunkWords = 1024;  // 2^16 bits
  const size_t words = v.word_count();
  struct Chunk {
    uint16_t key;
    uint32_t card;
    size_t first;
  };
  std::vector<Chunk> chunks;
  for (size_t w0 = 0; w0 < words; w0 += kChunkWords) {
    uint32_t card = 0;
    for (size_t w = w0; w < std::min(words, w0 + kChunkWords); ++w) card += uint32_t(popcount64(v.data()[w]));
    if (card) chunks.push_back({uint16_t(w0 / kChunkWords), card, w0});
  }
  if (chunks.size() > 65536) throw ModelError("internal: more than 2^32 rows in one Roaring bitmap");
  std::vector<char> buf;
  auto put = [&](const void* p, size_t n) { buf.insert(buf.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n); };
  const uint32_t cookie = 12346, size = uint32_t(chunks.size());
  put(&cookie, 4);
  put(&size, 4);
  for (const Chunk& ch : chunks) {
    const uint16_t key = ch.key, card1 = uint16_t(ch.card - 1);
    put(&key, 2);
    put(&card1, 2);
  }
  uint32_t offset = uint32_t(buf.size() + 4 * chunks.size());
  for (const Chunk& ch : chunks) {
    put(&offset, 4);
    offset += ch.card <= 4096 ? 2 * ch.card : 8192;
  }
  for (const Chunk& ch : chunks) {
    const size_t end = std::min(words, ch.first + kChunkWords);
    if (ch.card <= 4096) {
      for (size_t w = ch.first; w < end; ++w)
        for (uint64_t x = v.data()[w]; x; x &= x - 1) {
          const uint16_t low = uint16_t((w - ch.first) * 64 + size_t(__builtin_ctzll(x)));
          put(&low, 2);
        }
    } else {
      uint64_t block[kChunkWords] = {};
      std::copy(v.data() + ch.first, v.data() + end, block);
      put(block, sizeof block);  // little-endian 64-bit words, as the format and x86 store them
    }
  }
  roaring_bitmap_t* r = roaring_bitmap_portable_deserialize_safe(buf.data(), buf.size());
  if (!r) throw ModelError("internal: CRoaring rejected a serialized bitmap");
  return r;
}

RoaringIndex::RoaringIndex(const IndexLayout& L, const IndexData& data) : rows_(L.rows) {
  for (size_t c = 0; c < codes().size(); ++c) {
    if (!L.lanes[c]) continue;
    for (size_t i = 0; i < L.bitmaps[c].size(); ++i) {
      const Bitmap& b = L.bitmaps[c][i];
      if (b.kind == Bitmap::Kind::Inverse) continue;  // the host computes AND NOT
      roaring_bitmap_t* r = to_roaring(data.at(c).at(i));
      roaring_bitmap_run_optimize(r);
      bitmaps_[L.name(int(c), 0, b)] = r;
    }
  }
}

RoaringIndex::~RoaringIndex() {
  for (auto& [n, p] : bitmaps_) roaring_bitmap_free(rb(p));
}

int64_t RoaringIndex::bytes() const {
  int64_t n = 0;
  for (const auto& [name, p] : bitmaps_) n += int64_t(roaring_bitmap_size_in_bytes(rb(p)));
  return n;
}

Answer RoaringIndex::run(const QueryPlan& p, const std::vector<Expr>& reads) const {
  const Evaluator ev(bitmaps_, rows_);
  std::vector<Held> results;
  for (const auto& e : reads) results.push_back(ev.eval(e));
  OpResults r;
  r.count = [&](size_t i) { return uint64_t(roaring_bitmap_get_cardinality(results.at(i).get())); };
  r.rows = [&](size_t i) {
    std::vector<uint32_t> out(size_t(roaring_bitmap_get_cardinality(results.at(i).get())));
    roaring_bitmap_to_uint32_array(results.at(i).get(), out.data());
    return out;
  };
  r.test = [&](size_t i, uint32_t row) { return roaring_bitmap_contains(results[i].get(), row); };
  // A fetched slice: intersected with F (read 0, when the plan has a filter), then walked beside F's rows.
  const bool filtered = !p.ops.empty() && p.ops[0].use == FlashOp::Use::Filter;
  r.mark = [&](size_t i, const std::vector<uint32_t>& f, std::vector<uint32_t>& code, uint32_t bit) {
    Held x = filtered ? Held(roaring_bitmap_and(results[0].get(), results[i].get()), true) : Held(results[i].get(), false);
    std::vector<uint32_t> in(size_t(roaring_bitmap_get_cardinality(x.get())));
    roaring_bitmap_to_uint32_array(x.get(), in.data());
    size_t k = 0;
    for (uint32_t row : in) {
      while (k < f.size() && f[k] < row) ++k;
      if (k < f.size() && f[k] == row) code[k] |= bit;
    }
  };
  return assemble_answer(p, r, rows_);
}

}  // namespace bitline::cosmos::ssb
