// Property test of the functional runtime: random sequences of store / map /
// write / append / group / arrange / flush / prefetch / release / evict, checked
// after every step against a plain reference model. Whatever the interleaving:
//   - every byte written reads back identically through the interface;
//   - no physical megapage (or block) belongs to two live objects;
//   - an eviction erases exactly the whole blocks owned by the evicted object;
//   - SRAM slots in use are exactly those of the live prefetches.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "hbf/runtime.hpp"
#include "helpers.hpp"

namespace bitline::hbf {
namespace {

constexpr int64_t kUnit = 128;  // megapage of the system below

System property_system() {
  // K = 8 megaplanes (2 stacks x 2 dies x 2), 64 B pages, M = 2, 16 blocks x 4 pages.
  return System(load_system_params(
      test::tree_of("",
                    "hbf:\n  stacks: 2\n  geometry:\n    dies_per_stack: 2\n    planes_per_die: 4\n    planes_per_megaplane: 2\n"
                    "    blocks_per_plane: 16\n    pages_per_block: 4\n    page_size: 64B\n"
                    "  sram:\n    plane_sram: 128B\n    base_sram: 256B\nhbm:\n  stacks: 1\n  capacity_per_stack: 16KiB\n")));
}

struct Coverage {
  std::map<std::string, int> ops;
  int errors_expected = 0, evicted_blocks = 0, base_sram = 0, replicated = 0, hyperpages = 0, scattered = 0, spilled = 0;
};

class PropertyRun {
 public:
  PropertyRun(const System& s, uint64_t seed, Coverage& cov) : sys_(s), rt_(s, Mode::Functional, seed), rng_(seed), cov_(cov) {}

  void step() {
    const int op = int(rng_.below(15));
    switch (op) {
      case 0:
        store();
        break;
      case 1:
        map_weights();
        break;
      case 2:
        unmap();
        break;
      case 3:
        hbm();
        break;
      case 4:
        kv_create();
        break;
      case 5:
      case 6:
        kv_append();
        break;
      case 7:
        group_create();
        break;
      case 8:
        group_mmap();
        break;
      case 9:
        group_arrange();
        break;
      case 10:
        group_write();
        break;
      case 11:
        group_destroy();
        break;
      case 12:
        prefetch();
        break;
      case 13:
        release();
        break;
      case 14:
        evict();
        break;
    }
    check();
  }

 private:
  struct Weights {
    ObjectId id;
    std::vector<std::vector<uint8_t>> tensors;
    VAddr va = 0;
  };
  struct Kv {
    ObjectId id;
    std::vector<std::vector<uint8_t>> streams;
    int group = -1;
    int64_t token = 0, cap = kUnit;  // token bytes (0: plain bytes), bytes of a full slice
  };
  struct Hbm {
    VAddr va;
    std::vector<uint8_t> bytes;
  };
  struct Group {
    GroupId id;
    std::vector<size_t> members;  // indices into kvs_
    VAddr base = 0;
  };
  struct Pf {
    VAddr va, mapping;
    int64_t slots;
  };

  std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng_.next());
    return v;
  }
  template <class V>
  size_t pick(const V& v) {
    return size_t(rng_.below(v.size()));
  }
  void count(const std::string& op) { ++cov_.ops[op]; }
  template <class F>
  void expect_model_error(F&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "expected a ModelError: " << what;
    } catch (const ModelError&) {
      ++cov_.errors_expected;
    }
  }
  void drop_prefetches(VAddr mapping) {
    std::erase_if(pfs_, [&](const Pf& p) { return p.mapping == mapping; });
  }

  void store() {
    WeightSpec w;
    w.name = fmt::format("w{}", weights_.size());
    const int n = 1 + int(rng_.below(3));
    Weights ref;
    std::vector<uint8_t> data;
    for (int t = 0; t < n; ++t) {
      auto b = random_bytes(1 + rng_.below(400));
      w.tensors.push_back({fmt::format("t{}", t), Bytes(int64_t(b.size()))});
      data.insert(data.end(), b.begin(), b.end());
      ref.tensors.push_back(std::move(b));
    }
    for (int t = n - 1; t >= 0; --t) w.execution_order.push_back(uint32_t(t));
    auto layout = make_weight_layout(rng_.chance(0.5) ? "execution" : "declaration");
    const int64_t free = rt_.flash().free_blocks();
    try {
      ref.id = rt_.store_weights(w, data, layout.get());
      weights_.push_back(std::move(ref));
      count("store");
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
      EXPECT_EQ(rt_.flash().free_blocks(), free);  // a failed store allocates nothing
      count("store-full");
    }
  }

  void map_weights() {
    std::vector<size_t> live;
    for (size_t i = 0; i < weights_.size(); ++i)
      if (rt_.is_live(weights_[i].id)) live.push_back(i);
    if (live.empty()) return;
    Weights& w = weights_[live[pick(live)]];
    if (w.va) {
      expect_model_error([&] { rt_.nand_mmap(w.id); }, "map twice");
      return;
    }
    w.va = rt_.nand_mmap(w.id);
    count("nand_mmap");
    // Weights are read-only.
    expect_model_error([&] { rt_.write(w.va, random_bytes(1)); }, "write weights");
  }

  void unmap() {
    if (!weights_.empty() && rng_.chance(0.5)) {
      Weights& w = weights_[pick(weights_)];
      if (!w.va) return;
      rt_.munmap(w.va);
      drop_prefetches(w.va);
      w.va = 0;
      count("munmap-weights");
    } else if (!hbms_.empty()) {
      size_t i = pick(hbms_);
      rt_.munmap(hbms_[i].va);
      drop_prefetches(hbms_[i].va);
      hbms_.erase(hbms_.begin() + long(i));
      count("munmap-hbm");
    }
  }

  void hbm() {
    if (hbms_.empty() || rng_.chance(0.3)) {
      const int64_t n = 1 + int64_t(rng_.below(600));
      try {
        VAddr va = rt_.hbm_alloc(Bytes(n));
        hbms_.push_back({va, std::vector<uint8_t>(size_t(n), 0)});
        count("hbm_alloc");
      } catch (const ModelError&) {
        count("hbm-full");
        return;
      }
    }
    Hbm& h = hbms_[pick(hbms_)];
    const size_t off = pick(h.bytes), len = 1 + size_t(rng_.below(h.bytes.size() - off));
    auto b = random_bytes(len);
    rt_.write(h.va + off, b);
    std::copy(b.begin(), b.end(), h.bytes.begin() + long(off));
    count("write-hbm");
  }

  void kv_create() {
    Kv k;
    const uint32_t streams = 1 + uint32_t(rng_.below(3));
    const int64_t tokens[] = {0, 0, 40, 48, 128};
    k.token = tokens[rng_.below(5)];
    if (k.token) k.cap = kUnit / k.token * k.token;
    // Half the requests say how much KV they expect (a window of megaplanes under kv_span = fit), the rest do not.
    const Bytes expected(rng_.chance(0.5) ? int64_t(kUnit) * int64_t(1 + rng_.below(40)) : 0);
    k.id = rt_.kv_create(fmt::format("kv{}", kvs_.size()), streams, Bytes(k.token), expected);
    k.streams.resize(streams);
    kvs_.push_back(std::move(k));
    count("kv_create");
  }

  void kv_append() {
    std::vector<size_t> live;
    for (size_t i = 0; i < kvs_.size(); ++i)
      if (rt_.is_live(kvs_[i].id)) live.push_back(i);
    if (live.empty()) return;
    Kv& k = kvs_[live[pick(live)]];
    const uint32_t s = uint32_t(rng_.below(k.streams.size()));
    auto b = random_bytes(k.token ? size_t(k.token) * (1 + rng_.below(6)) : 1 + rng_.below(300));
    try {
      rt_.kv_append(k.id, s, b);
      k.streams[s].insert(k.streams[s].end(), b.begin(), b.end());
      count("kv_append");
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("HBM is full"), std::string::npos) << e.what();
      count("kv_append-full");
    }
  }

  void group_create() {
    std::vector<size_t> free;
    for (size_t i = 0; i < kvs_.size(); ++i)
      if (rt_.is_live(kvs_[i].id) && kvs_[i].group < 0) free.push_back(i);
    if (free.empty()) return;
    std::vector<size_t> members;
    const size_t n = 1 + size_t(rng_.below(std::min<size_t>(4, free.size())));
    for (size_t j = 0; j < n; ++j) {
      size_t i = free[pick(free)];
      if (std::find(members.begin(), members.end(), i) == members.end()) members.push_back(i);
    }
    std::vector<ObjectId> ids;
    for (size_t i : members) ids.push_back(kvs_[i].id);
    Group g{rt_.group_create(ids), members, 0};
    for (size_t i : members) kvs_[i].group = int(groups_.size());
    groups_.push_back(g);
    count("group_create");
  }

  Group* live_group() {
    std::vector<size_t> live;
    for (size_t i = 0; i < groups_.size(); ++i)
      if (groups_[i].id != UINT32_MAX) live.push_back(i);
    return live.empty() ? nullptr : &groups_[live[pick(live)]];
  }

  void group_mmap() {
    Group* g = live_group();
    if (!g) return;
    if (g->base) {
      expect_model_error([&] { rt_.group_mmap(g->id); }, "group_mmap twice");
      return;
    }
    g->base = rt_.group_mmap(g->id);
    count("group_mmap");
  }

  void group_arrange() {
    Group* g = live_group();
    if (!g || !g->base) return;
    ArrangeReport a = rt_.group_arrange(g->id);
    cov_.replicated += int(a.replicated);
    bool prefetched = false;
    for (auto& p : pfs_) prefetched |= p.mapping == g->base;
    if (!a.hbm_full && !prefetched) {  // (megapages held in SRAM are not replicated)
      auto loads = rt_.group_loads(g->id);
      int64_t total = a.replicated;
      for (int64_t l : loads) total += l;
      EXPECT_LE(*std::max_element(loads.begin(), loads.end()), (total + 7) / 8);  // none above the mean, rounded up
    }
    count("group_arrange");
  }

  void group_write() {
    Group* g = live_group();
    if (!g) return;
    try {
      WriteReport w = rt_.group_write(g->id, rng_.chance(0.5) ? Remainder::Scatter : Remainder::Hold);
      cov_.hyperpages += int(w.hyperpages);
      cov_.scattered += int(w.scattered);
      cov_.spilled += int(w.spilled);
      count("group_write");
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("HBF is full"), std::string::npos) << e.what();
      count("group_write-full");
    }
  }

  void group_destroy() {
    Group* g = live_group();
    if (!g) return;
    rt_.group_destroy(g->id);
    if (g->base) drop_prefetches(g->base);
    for (size_t i : g->members) kvs_[i].group = -1;
    g->id = UINT32_MAX;
    g->base = 0;
    count("group_destroy");
  }

  void prefetch() {
    // A mapped range: weights, a group, or an HBM buffer.
    std::vector<std::pair<VAddr, int64_t>> maps;  // (base, bytes)
    for (auto& w : weights_)
      if (w.va) {
        int64_t units = 0;
        for (auto& t : w.tensors) units += (int64_t(t.size()) + kUnit - 1) / kUnit;
        maps.emplace_back(w.va, units * kUnit);
      }
    for (auto& g : groups_)
      if (g.id != UINT32_MAX && g.base && !rt_.read_table(g.id).empty())
        maps.emplace_back(g.base, int64_t(rt_.read_table(g.id).size()) * kUnit);
    for (auto& h : hbms_) maps.emplace_back(h.va, int64_t(h.bytes.size()));
    if (maps.empty()) return;
    auto [base, bytes] = maps[pick(maps)];
    const int64_t off = int64_t(rng_.below(uint64_t(bytes))), len = 1 + int64_t(rng_.below(uint64_t(bytes - off)));
    const VAddr va = base + VAddr(off);
    bool dup = false;
    for (auto& p : pfs_) dup |= p.va == va;
    if (dup) {
      expect_model_error([&] { rt_.sram_prefetch(va, Bytes(len)); }, "prefetch twice");
      return;
    }
    PrefetchResult r = rt_.sram_prefetch(va, Bytes(len));
    EXPECT_EQ(r.address, va);
    cov_.base_sram += int(r.base_sram);
    pfs_.push_back({va, base, r.plane_sram + r.base_sram});
    count("sram_prefetch");
  }

  void release() {
    if (pfs_.empty() || rng_.chance(0.15)) {
      expect_model_error([&] { rt_.sram_release(VAddr(1) << 20); }, "release what was not prefetched");
      return;
    }
    size_t i = pick(pfs_);
    rt_.sram_release(pfs_[i].va);
    pfs_.erase(pfs_.begin() + long(i));
    count("sram_release");
  }

  void evict() {
    std::vector<ObjectId> cand;
    for (auto& w : weights_)
      if (rt_.is_live(w.id) && !w.va) cand.push_back(w.id);
    for (auto& k : kvs_)
      if (rt_.is_live(k.id) && k.group < 0) cand.push_back(k.id);
    if (cand.empty()) return;
    const ObjectId id = cand[pick(cand)];
    auto owned = rt_.owned_blocks(id);
    std::map<std::pair<MegaplaneId, uint32_t>, int64_t> pe;
    for (auto b : owned) {
      EXPECT_EQ(rt_.flash().owner(b.first, b.second), id);  // owned by this object alone
      pe[b] = rt_.flash().megablock_pe_cycles(b.first, b.second);
    }
    auto erased = rt_.evict(id);
    std::sort(owned.begin(), owned.end());
    std::sort(erased.begin(), erased.end());
    EXPECT_EQ(erased, owned);  // exactly its whole blocks, nothing else
    for (auto b : erased) {
      EXPECT_EQ(rt_.flash().owner(b.first, b.second), kNoObject);
      EXPECT_EQ(rt_.flash().write_pointer(b.first, b.second), 0u);
      EXPECT_EQ(rt_.flash().megablock_pe_cycles(b.first, b.second), pe[b] + 1);
    }
    cov_.evicted_blocks += int(erased.size());
    count("evict");
  }

  void check() {
    for (auto& w : weights_) {
      if (!rt_.is_live(w.id) || !w.va) continue;
      for (size_t t = 0; t < w.tensors.size(); ++t) {
        std::vector<uint8_t> got(w.tensors[t].size());
        rt_.read(w.va + VAddr(rt_.tensor_offset(w.id, t).raw()), got);
        ASSERT_EQ(got, w.tensors[t]) << "weights " << w.id << " tensor " << t;
      }
    }
    for (auto& h : hbms_) {
      std::vector<uint8_t> got(h.bytes.size());
      rt_.read(h.va, got);
      ASSERT_EQ(got, h.bytes);
    }
    for (auto& k : kvs_) {
      if (!rt_.is_live(k.id)) continue;
      for (uint32_t s = 0; s < k.streams.size(); ++s) ASSERT_EQ(rt_.kv_read(k.id, s), k.streams[s]) << "kv " << k.id;
    }
    for (auto& g : groups_) {
      if (g.id == UINT32_MAX || !g.base) continue;
      const auto& table = rt_.read_table(g.id);
      for (size_t i = 0; i < table.size(); ++i) {
        const auto& e = table[i];
        const Kv* k = nullptr;
        for (auto& kv : kvs_)
          if (kv.id == e.object) k = &kv;
        ASSERT_NE(k, nullptr);
        const auto& stream = k->streams[e.stream];
        const size_t off = size_t(e.slice) * size_t(k->cap);
        ASSERT_LT(off, stream.size());
        const size_t n = std::min<size_t>(size_t(k->cap), stream.size() - off);
        std::vector<uint8_t> got(n);
        rt_.read(g.base + VAddr(i) * VAddr(kUnit), got);
        ASSERT_TRUE(std::equal(got.begin(), got.end(), stream.begin() + long(off))) << "group " << g.id << " entry " << i;
      }
    }
    // No physical megapage or block is given to two live objects.
    std::set<uint64_t> units;
    std::set<std::pair<MegaplaneId, uint32_t>> blocks;
    for (ObjectId id : rt_.live_objects()) {
      for (const PhysUnit& u : rt_.flash_units(id)) {
        ASSERT_TRUE(units.insert(u.key()).second) << "megapage shared by two objects";
        ASSERT_EQ(rt_.flash().owner(u.megaplane, u.block), id);
        ASSERT_LT(u.page, rt_.flash().write_pointer(u.megaplane, u.block));
      }
      for (auto b : rt_.owned_blocks(id)) ASSERT_TRUE(blocks.insert(b).second) << "block shared by two objects";
    }
    int64_t slots = 0;
    for (auto& p : pfs_) slots += p.slots;
    ASSERT_EQ(rt_.sram().used_plane() + rt_.sram().used_base(), slots);
  }

  const System& sys_;
  Runtime rt_;
  Rng rng_;
  Coverage& cov_;
  std::vector<Weights> weights_;
  std::vector<Kv> kvs_;
  std::vector<Hbm> hbms_;
  std::vector<Group> groups_;
  std::vector<Pf> pfs_;
};

TEST(HbfProperty, RandomInterleavingsNeverLoseOrShareData) {
  System s = property_system();
  Coverage cov;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    PropertyRun run(s, seed, cov);
    for (int i = 0; i < 500; ++i) {
      run.step();
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "seed " << seed << " step " << i;
        return;
      }
    }
  }
  // The sequences really exercised the interface.
  std::string summary;
  for (auto& [op, n] : cov.ops) summary += fmt::format("{} {}, ", op, n);
  RecordProperty("coverage", summary);
  std::printf(
      "coverage: %sevicted blocks %d, base-SRAM prefetches %d, replicated %d, hyperpages %d, scattered %d, spilled %d, "
      "expected errors %d\n",
      summary.c_str(), cov.evicted_blocks, cov.base_sram, cov.replicated, cov.hyperpages, cov.scattered, cov.spilled, cov.errors_expected);
  for (std::string op : {"store", "nand_mmap", "munmap-weights", "munmap-hbm", "write-hbm", "kv_create", "kv_append", "group_create",
                         "group_mmap", "group_arrange", "group_write", "group_destroy", "sram_prefetch", "sram_release", "evict"})
    EXPECT_GE(cov.ops[op], 20) << op;
  EXPECT_GT(cov.evicted_blocks, 50);
  EXPECT_GT(cov.base_sram, 0);
  EXPECT_GT(cov.replicated, 0);
  EXPECT_GT(cov.hyperpages, 0);
  EXPECT_GT(cov.scattered, 0);
  EXPECT_GT(cov.errors_expected, 20);
}

}  // namespace
}  // namespace bitline::hbf
