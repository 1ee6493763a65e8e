// The FTL-less runtime in functional mode: the interface of the paper, the
// page table, isolation and wear, and the errors for bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "hbf/runtime.hpp"
#include "helpers.hpp"

namespace bitline::hbf {
namespace {

// 2 stacks x 2 dies x 4 planes, M = 2: K = 8 megaplanes; 64 B pages -> 128 B megapages;
// `blocks` blocks of 4 pages per plane. Plane SRAM 128 B = 2 megapages per megaplane;
// base SRAM 256 B = 2 megapages per stack; one HBM stack of 4 KiB unless `extra` says otherwise.
System tiny(const std::string& extra = "", int blocks = 16) {
  ConfigTree t = test::tree_of("",
                               "hbf:\n  stacks: 2\n  geometry:\n    dies_per_stack: 2\n    planes_per_die: 4\n"
                               "    planes_per_megaplane: 2\n    blocks_per_plane: " +
                                   std::to_string(blocks) +
                                   "\n    pages_per_block: 4\n    page_size: 64B\n"
                                   "  sram:\n    plane_sram: 128B\n    base_sram: 256B\n"
                                   "hbm:\n  stacks: 1\n  capacity_per_stack: 4KiB\n");
  if (!extra.empty()) t.load_text(extra, "extra.yaml");
  return System(load_system_params(t));
}

std::vector<uint8_t> bytes_of(Rng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng.next());
  return v;
}

std::vector<uint8_t> read(Runtime& rt, VAddr va, size_t n) {
  std::vector<uint8_t> v(n);
  rt.read(va, v);
  return v;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(HbfRuntime, WeightsReadBackThroughTheirVirtualAddress) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(1);
  WeightSpec w{"w", {{"a", Bytes(300)}, {"b", Bytes(5)}, {"c", Bytes(128)}}, {2, 0, 1}};
  auto data = bytes_of(rng, 433);
  ObjectId id = rt.store_weights(w, data);
  VAddr va = rt.nand_mmap(id);
  EXPECT_EQ(rt.tensor_offset(id, 0), Bytes(0));
  EXPECT_EQ(rt.tensor_offset(id, 1), Bytes(384));  // tensors start on megapage boundaries
  EXPECT_EQ(rt.tensor_offset(id, 2), Bytes(512));
  EXPECT_EQ(read(rt, va, 300), std::vector<uint8_t>(data.begin(), data.begin() + 300));
  EXPECT_EQ(read(rt, va + 384, 5), std::vector<uint8_t>(data.begin() + 300, data.begin() + 305));
  EXPECT_EQ(read(rt, va + 512, 128), std::vector<uint8_t>(data.begin() + 305, data.end()));
  EXPECT_EQ(rt.translate(va).kind, Location::Kind::Flash);
  EXPECT_EQ(rt.page_table_entries(), 5);  // 3 + 1 + 1 megapages
  EXPECT_EQ(rt.flash().stats().units_programmed, 5);
  // Weights are read-only.
  std::string e = error_of([&] { rt.write(va + 10, std::vector<uint8_t>{1}); });
  EXPECT_NE(e.find("read-only"), std::string::npos) << e;
  EXPECT_NE(e.find("'w'"), std::string::npos) << e;
  // Reading past the end of the mapping is an error.
  EXPECT_NE(error_of([&] { read(rt, va + 600, 100); }).find("past the end"), std::string::npos);
}

TEST(HbfRuntime, PrefetchRepointsTheEntryAndReleaseRestoresIt) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(2);
  // 48 megapages dealt over 8 megaplanes: 6 per megaplane, more than their 2 plane-SRAM slots.
  auto data = bytes_of(rng, 48 * 128);
  ObjectId id = rt.store_weights(WeightSpec{"w", {{"t", Bytes(48 * 128)}}, {}}, data);
  VAddr va = rt.nand_mmap(id);
  PrefetchResult p = rt.sram_prefetch(va, Bytes(48 * 128));
  EXPECT_EQ(p.address, va);             // the caller keeps its virtual address
  EXPECT_EQ(p.plane_sram, 8 * 2);       // plane SRAM first
  EXPECT_EQ(p.base_sram, 2 * 2);        // then the base die of each stack
  EXPECT_EQ(p.left_in_flash, 48 - 20);  // the rest stays in flash
  EXPECT_EQ(rt.translate(va).kind, Location::Kind::PlaneSram);
  EXPECT_EQ(rt.translate(va + 47 * 128).kind, Location::Kind::Flash);
  EXPECT_EQ(read(rt, va, data.size()), data);  // same bytes wherever they are
  EXPECT_NE(error_of([&] { rt.sram_prefetch(va, Bytes(10)); }).find("already prefetched"), std::string::npos);
  rt.sram_release(va);
  EXPECT_EQ(rt.translate(va).kind, Location::Kind::Flash);
  EXPECT_EQ(rt.sram().used_plane() + rt.sram().used_base(), 0);
  EXPECT_EQ(read(rt, va, data.size()), data);
  // Releasing what was not prefetched (or twice) is an error.
  std::string e = error_of([&] { rt.sram_release(va); });
  EXPECT_NE(e.find("nothing is prefetched"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { rt.sram_release(va + 128); }).find("nothing is prefetched"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.sram_prefetch(va + 100 * 128, Bytes(1)); }).find("not mapped"), std::string::npos);
}

TEST(HbfRuntime, HbmBuffersAreWritableAndBounded) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  VAddr b = rt.hbm_alloc(Bytes(200), "act");
  std::vector<uint8_t> v = {1, 2, 3};
  rt.write(b + 197, v);
  EXPECT_EQ(read(rt, b + 197, 3), v);
  EXPECT_EQ(rt.translate(b).kind, Location::Kind::Hbm);
  EXPECT_NE(error_of([&] { rt.write(b + 199, v); }).find("past the end"), std::string::npos);
  std::string e = error_of([&] { rt.hbm_alloc(KiB(8), "huge"); });
  EXPECT_NE(e.find("HBM is full"), std::string::npos) << e;
  rt.munmap(b);
  EXPECT_EQ(rt.hbm().used(), Bytes(0));
  EXPECT_NE(error_of([&] { rt.write(b, v); }).find("not mapped"), std::string::npos);
}

TEST(HbfRuntime, KvGroupWriteFormsHyperpagesAndReadsBack) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(3);
  std::vector<ObjectId> reqs;
  std::vector<std::vector<uint8_t>> ref(3);
  for (int r = 0; r < 3; ++r) {
    reqs.push_back(rt.kv_create(fmt::format("req{}", r)));
    ref[size_t(r)] = bytes_of(rng, size_t(128 * (3 + r) + 17 * r));  // 3, 4, 5 full slices (+ a partial one)
    rt.kv_append(reqs.back(), 0, ref[size_t(r)]);
  }
  GroupId g = rt.group_create(reqs);
  VAddr base = rt.group_mmap(g);
  EXPECT_EQ(rt.read_table(g).size(), 12u + 2u);  // 12 full slices + 2 partial, all still in HBM
  EXPECT_EQ(rt.translate(base).kind, Location::Kind::Hbm);
  WriteReport w = rt.group_write(g);  // 12 full slices: one hyperpage of 8, 4 held in HBM
  EXPECT_EQ(w.hyperpages, 1);
  EXPECT_EQ(w.units, 8);
  EXPECT_EQ(w.held, 4);
  std::set<MegaplaneId> mps(w.programmed.begin(), w.programmed.end());
  EXPECT_EQ(mps.size(), 8u);  // one slice per megaplane
  for (int r = 0; r < 3; ++r) EXPECT_EQ(rt.kv_read(reqs[size_t(r)], 0), ref[size_t(r)]);
  // The read table still says which request each megapage of the group belongs to.
  const auto& table = rt.read_table(g);
  for (size_t i = 0; i < table.size(); ++i) {
    const auto& e = table[i];
    size_t r = size_t(std::find(reqs.begin(), reqs.end(), e.object) - reqs.begin());
    ASSERT_LT(r, 3u);
    const size_t off = size_t(e.slice) * 128, n = std::min<size_t>(128, ref[r].size() - off);
    EXPECT_EQ(read(rt, base + i * 128, n), std::vector<uint8_t>(ref[r].begin() + off, ref[r].begin() + off + n));
  }
  // Scatter flushes the remaining full slices to random megaplanes.
  WriteReport w2 = rt.group_write(g, Remainder::Scatter);
  EXPECT_EQ(w2.scattered, 4);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(rt.kv_read(reqs[size_t(r)], 0), ref[size_t(r)]);
  // Each request owns its own blocks.
  std::set<std::pair<MegaplaneId, uint32_t>> seen;
  for (ObjectId id : reqs)
    for (auto b : rt.owned_blocks(id)) {
      EXPECT_TRUE(seen.insert(b).second);
      EXPECT_EQ(rt.flash().owner(b.first, b.second), id);
    }
}

TEST(HbfRuntime, ArrangeReplicatesOverloadedMegaplanesToHbm) {
  System s = tiny("hbm:\n  capacity_per_stack: 64KiB\n");
  Runtime rt(s, Mode::Functional);
  Rng rng(4);
  std::vector<ObjectId> reqs;
  std::vector<std::vector<uint8_t>> ref;
  for (int r = 0; r < 16; ++r) {
    reqs.push_back(rt.kv_create(fmt::format("r{}", r)));
    ref.push_back(bytes_of(rng, 128 * (1 + rng.below(5))));
    rt.kv_append(reqs.back(), 0, ref.back());
  }
  GroupId all = rt.group_create(reqs);
  rt.group_write(all, Remainder::Scatter);
  rt.group_destroy(all);
  std::vector<ObjectId> active = {reqs[0], reqs[3], reqs[5], reqs[6], reqs[11]};
  GroupId g = rt.group_create(active);
  VAddr base = rt.group_mmap(g);
  const size_t n = rt.read_table(g).size();
  std::vector<uint8_t> before = read(rt, base, n * 128);
  ArrangeReport a = rt.group_arrange(g);
  auto loads = rt.group_loads(g);
  const int64_t total = std::accumulate(loads.begin(), loads.end(), int64_t(0)) + a.replicated;
  EXPECT_LE(*std::max_element(loads.begin(), loads.end()), (total + 7) / 8);
  EXPECT_EQ(a.max_load_after, *std::max_element(loads.begin(), loads.end()));
  EXPECT_EQ(read(rt, base, n * 128), before);  // same virtual addresses, same bytes
  const Bytes hbm_used = rt.hbm().used();
  EXPECT_EQ(hbm_used, Bytes(a.replicated * 128));
  rt.group_destroy(g);
  EXPECT_EQ(rt.hbm().used(), Bytes(0));  // replicas freed, no flash written
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(rt.kv_read(reqs[i], 0), ref[i]);
}

// The scatter KV layout (hbf::KvPlacement, shared with the serving model): GroupWrite puts every full slice on the
// megaplane its stream's draw names, stream by stream, request by request, slice by slice; nothing is held in HBM;
// the data reads back unchanged. The paged layout is refused (the serving model's only).
TEST(HbfRuntime, ScatterLayoutPlacesEverySliceOnItsStreamsDraw) {
  System s = tiny();
  KvPolicy policy;
  policy.layout = KvLayout::Scatter;
  policy.seed = 7;
  Runtime rt(s, Mode::Functional, 1, policy);
  Rng rng(5);
  const uint32_t streams = 2;
  std::vector<ObjectId> reqs;
  std::vector<std::vector<std::vector<uint8_t>>> data;
  for (int r = 0; r < 3; ++r) {
    reqs.push_back(rt.kv_create(fmt::format("r{}", r), streams));
    data.emplace_back();
    for (uint32_t st = 0; st < streams; ++st) {
      data.back().push_back(bytes_of(rng, 128 * size_t(2 + r)));  // 2..4 full slices per stream
      rt.kv_append(reqs.back(), st, data.back().back());
    }
  }
  const GroupId g = rt.group_create(reqs);
  const WriteReport w = rt.group_write(g, Remainder::Hold);
  EXPECT_EQ(w.held, 0);
  EXPECT_EQ(w.hyperpages, 0);
  EXPECT_EQ(w.units, 2 * (2 + 3 + 4));
  EXPECT_EQ(w.scattered, w.units);
  for (uint32_t st = 0; st < streams; ++st) {
    Rng draws = rt.kv_placement().scatter_stream(int32_t(st));
    for (size_t r = 0; r < reqs.size(); ++r) {
      const auto units = rt.flash_units(reqs[r]);  // stream 0's slices, then stream 1's
      const size_t n = 2 + r;
      for (size_t j = 0; j < n; ++j)
        EXPECT_EQ(units[st * n + j].megaplane, s.dealt(rt.kv_placement().scatter_pick(draws))) << "stream " << st << " request " << r;
    }
  }
  rt.group_destroy(g);
  for (size_t r = 0; r < reqs.size(); ++r)
    for (uint32_t st = 0; st < streams; ++st) EXPECT_EQ(rt.kv_read(reqs[r], st), data[r][st]);
}

// The paged layout (PagedAttention): every whole block of serving.kv_block_bytes goes to the megaplane and page offset
// its stream's draw names, as the megapages it runs over (a block at an offset spans one megapage more); a partial
// last block stays in HBM. The bytes read back unchanged through kv_read and through the group mapping, whose entries
// for the staged slices are re-pointed to the blocks' pieces.
TEST(HbfRuntime, PagedLayoutPlacesEveryBlockAtItsStreamsDrawAndReadsBack) {
  System s = tiny();
  KvPolicy policy;
  policy.layout = KvLayout::Paged;
  policy.seed = 3;
  policy.block_bytes = 200;           // 5 tokens of 40 B: staged as 128 + 72 B; in flash 128 + 72 B, or 64 + 128 + 8 B at offset 64
  policy.align = KvBlockAlign::Page;  // the unaligned option (serving.kv_block_alignment = page): blocks at any page
  Runtime rt(s, Mode::Functional, 1, policy);
  EXPECT_NE(error_of([&] { rt.kv_create("p", 1); }).find("blocks of whole tokens"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.kv_create("p", 1, Bytes(256)); }).find("exceeds a KV block (serving.kv_block_bytes"), std::string::npos);
  Rng rng(9);
  const uint32_t streams = 2;
  const int64_t token = 40, blocks = 3;
  std::vector<ObjectId> reqs;
  std::vector<std::vector<std::vector<uint8_t>>> data(2, std::vector<std::vector<uint8_t>>(streams));
  const auto decode = [&](int64_t tokens) {  // decode steps: one token of every stream of every request
    for (int64_t t = 0; t < tokens; ++t)
      for (size_t r = 0; r < reqs.size(); ++r)
        for (uint32_t st = 0; st < streams; ++st) {
          const auto tok = bytes_of(rng, size_t(token));
          rt.kv_append(reqs[r], st, tok);
          data[r][st].insert(data[r][st].end(), tok.begin(), tok.end());
        }
  };
  for (int r = 0; r < 2; ++r) reqs.push_back(rt.kv_create(fmt::format("r{}", r), streams, Bytes(token)));
  decode(blocks * 5 + 2);
  const GroupId g = rt.group_create(reqs);
  const VAddr base = rt.group_mmap(g);  // mapped before the write: the staged slices' entries follow them into flash
  const WriteReport w = rt.group_write(g, Remainder::Scatter);
  EXPECT_EQ(w.held, 0);
  EXPECT_EQ(w.hyperpages, 0);
  // The placement's own draws, stream by stream, request by request, block by block: each piece's megaplane and bytes.
  struct Piece {
    bool flash = true;
    MegaplaneId megaplane{};
    int64_t offset = 0, bytes = 0;  // in the stream
  };
  std::map<std::tuple<ObjectId, uint32_t, uint32_t>, Piece> pieces;  // (request, stream, slice)
  int64_t units = 0, longer = 0;
  for (uint32_t st = 0; st < streams; ++st) {
    Rng draws = rt.kv_placement().paged_stream(int32_t(st));
    for (ObjectId r : reqs) {
      uint32_t j = 0;
      int64_t at = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const KvPlacement::PagedSpot spot = rt.kv_placement().paged_pick(draws, 200);
        int64_t n = 0;
        rt.kv_placement().paged_cut(spot.offset, 200, [&](int64_t bytes) {
          pieces[{r, st, j++}] = Piece{true, s.dealt(spot.megaplane), at, bytes};
          at += bytes, ++n;
        });
        units += n;
        longer += n == 3;
      }
      pieces[{r, st, j}] = Piece{false, {}, at, 80};  // the partial block (2 tokens), in HBM
    }
  }
  EXPECT_EQ(w.units, units);
  EXPECT_EQ(w.scattered, units);
  EXPECT_GT(longer, 0);  // some block sits at page offset 64 and costs a third megapage
  EXPECT_LT(longer, 12);
  const auto& table = rt.read_table(g);
  ASSERT_EQ(table.size(), pieces.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const ReadTableEntry& e = table[i];
    const auto it = pieces.find({e.object, e.stream, e.slice});
    ASSERT_NE(it, pieces.end()) << "entry " << i;
    const Piece& p = it->second;
    const auto& ref = data[e.object == reqs[0] ? 0 : 1][e.stream];
    EXPECT_EQ(read(rt, base + i * 128, size_t(p.bytes)), std::vector<uint8_t>(ref.begin() + p.offset, ref.begin() + p.offset + p.bytes))
        << "entry " << i;
    const Location l = rt.translate(base + i * 128);
    EXPECT_EQ(l.kind, p.flash ? Location::Kind::Flash : Location::Kind::Hbm) << "entry " << i;
    if (p.flash) {
      EXPECT_EQ(l.flash.megaplane, p.megaplane) << "entry " << i;
    }
  }
  rt.group_destroy(g);
  // Three more tokens make the partial blocks whole: the next GroupWrite places them from the same streams.
  decode(3);
  const GroupId g2 = rt.group_create(reqs);
  const WriteReport w2 = rt.group_write(g2, Remainder::Hold);
  EXPECT_GE(w2.units, 2 * 2 * 2);
  EXPECT_LE(w2.units, 2 * 2 * 3);
  for (size_t r = 0; r < reqs.size(); ++r)
    for (uint32_t st = 0; st < streams; ++st) EXPECT_EQ(rt.kv_read(reqs[r], st), data[r][st]);
}

// kv_offload = fill (KvPlacement::offload, as the serving model): GroupArrange lowers the megaplanes below the mean
// while HBM's transfer of the group's HBM bytes stays within the flash rounds; the bytes read back unchanged.
TEST(HbfRuntime, FillOffloadGoesBelowTheMean) {
  System s = tiny("hbm:\n  capacity_per_stack: 64KiB\n", 64);
  auto run = [&](KvOffload offload) {
    KvPolicy policy;
    policy.offload = offload;
    Runtime rt(s, Mode::Timing, 1, policy);
    std::vector<ObjectId> reqs;
    for (int r = 0; r < 6; ++r) {
      reqs.push_back(rt.kv_create(fmt::format("r{}", r), 1));
      rt.kv_append_zeros(reqs.back(), 0, Bytes(128 * (3 + 2 * r)));
    }
    GroupId all = rt.group_create(reqs);
    rt.group_write(all, Remainder::Scatter);
    rt.group_destroy(all);
    const GroupId g = rt.group_create(reqs);
    rt.group_mmap(g);
    const ArrangeReport a = rt.group_arrange(g);
    EXPECT_FALSE(a.hbm_full);
    return a;
  };
  const ArrangeReport mean = run(KvOffload::Mean), fill = run(KvOffload::Fill);
  EXPECT_EQ(mean.max_load_after, int64_t(std::ceil(mean.mean_load)));
  EXPECT_LT(fill.max_load_after, mean.max_load_after);
  EXPECT_GT(fill.replicated, mean.replicated);
}

// Per stream (layer), GroupArrange balances each stream's own slices: a layer's read is set by its fullest megaplane.
TEST(HbfRuntime, ArrangePerStreamCapsEveryStreamAtItsMean) {
  System s = tiny("hbm:\n  capacity_per_stack: 64KiB\n", 64);
  Runtime rt(s, Mode::Functional);
  Rng rng(9);
  const uint32_t streams = 3;
  std::vector<ObjectId> reqs;
  for (int r = 0; r < 12; ++r) {
    reqs.push_back(rt.kv_create(fmt::format("r{}", r), streams));
    for (uint32_t st = 0; st < streams; ++st) rt.kv_append(reqs.back(), st, bytes_of(rng, 128 * (1 + rng.below(6))));
  }
  GroupId all = rt.group_create(reqs);
  rt.group_write(all, Remainder::Scatter);
  rt.group_destroy(all);
  GroupId g = rt.group_create(reqs);
  const VAddr base = rt.group_mmap(g);
  const auto& table = rt.read_table(g);
  const size_t n = table.size();
  const std::vector<uint8_t> before = read(rt, base, n * 128);
  // Flash loads per stream and megaplane, through the page table.
  auto loads = [&] {
    std::vector<std::vector<int64_t>> l(streams, std::vector<int64_t>(8, 0));
    for (size_t i = 0; i < n; ++i) {
      const Location loc = rt.translate(base + i * 128);
      if (loc.kind == Location::Kind::Flash) ++l[table[i].stream][loc.flash.megaplane];
    }
    return l;
  };
  const auto l0 = loads();
  const ArrangeReport a = rt.group_arrange(g, ArrangeScope::PerStream);
  ASSERT_FALSE(a.hbm_full);
  const auto l1 = loads();
  int64_t moved = 0, worst_before = 0;
  for (uint32_t st = 0; st < streams; ++st) {
    const int64_t total = std::accumulate(l0[st].begin(), l0[st].end(), int64_t(0));
    const int64_t cap = (total + 7) / 8;
    worst_before = std::max(worst_before, *std::max_element(l0[st].begin(), l0[st].end()));
    for (int mp = 0; mp < 8; ++mp) {
      EXPECT_EQ(l1[st][mp], std::min(l0[st][mp], cap)) << "stream " << st << " megaplane " << mp;
      moved += l0[st][mp] - l1[st][mp];
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_EQ(moved, a.replicated);
  EXPECT_EQ(a.max_load_before, worst_before);
  EXPECT_EQ(read(rt, base, n * 128), before);  // same virtual addresses, same bytes
  rt.group_destroy(g);
  EXPECT_EQ(rt.hbm().used(), Bytes(0));
}

// kv_span = fit: a request created with its expected size gets a window of ceil(slices / pages per block)
// megaplanes after the previous request's; its slices go round-robin inside it; no room spills past it.
TEST(HbfRuntime, KvWindowsFitEachRequestInWholeBlocks) {
  System s = tiny();  // K = 8, 4 pages per block
  ASSERT_EQ(*s.hbf().runtime.kv_span, KvSpan::Fit);
  Runtime rt(s, Mode::Functional);
  Rng rng(11);
  const ObjectId a = rt.kv_create("a", 1, {}, Bytes(128 * 10));  // 10 slices -> 3 megaplanes
  const ObjectId b = rt.kv_create("b", 1, {}, Bytes(128 * 6));   // 6 slices -> 2 megaplanes, after a's
  const ObjectId c = rt.kv_create("c");                          // size unknown: all megaplanes
  EXPECT_EQ(rt.kv_window(a), std::make_pair(int64_t(0), int64_t(3)));
  EXPECT_EQ(rt.kv_window(b), std::make_pair(int64_t(3), int64_t(2)));
  EXPECT_EQ(rt.kv_window(c), std::make_pair(int64_t(0), int64_t(8)));
  const auto da = bytes_of(rng, 128 * 10), db = bytes_of(rng, 128 * 6);
  rt.kv_append(a, 0, da);
  rt.kv_append(b, 0, db);
  const WriteReport w = rt.group_write(rt.group_create(std::vector<ObjectId>{a, b}));
  EXPECT_EQ(w.hyperpages, 2);
  EXPECT_EQ(w.spilled, 0);
  auto deal = [&](ObjectId id) {
    std::vector<int64_t> d;
    for (const PhysUnit& u : rt.flash_units(id)) d.push_back(s.deal_index(u.megaplane));
    return d;
  };
  EXPECT_EQ(deal(a), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(deal(b), (std::vector<int64_t>{3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(rt.owned_blocks(a).size(), 3u);  // one block on each window megaplane
  EXPECT_EQ(rt.owned_blocks(b).size(), 2u);
  EXPECT_EQ(s.kv_megablocks(10), 3);
  EXPECT_EQ(rt.kv_read(a, 0), da);
  EXPECT_EQ(rt.kv_read(b, 0), db);

  // One block per plane: a request that outgrows its one-megaplane window spills to the next megaplanes.
  System s1 = tiny("", 1);
  Runtime r1(s1, Mode::Timing);
  const ObjectId x = r1.kv_create("x", 1, {}, Bytes(128 * 4));  // 4 slices -> 1 megaplane
  r1.kv_append_zeros(x, 0, Bytes(128 * 8));
  const WriteReport w1 = r1.group_write(r1.group_create(std::vector<ObjectId>{x}));
  EXPECT_EQ(w1.units, 8);
  EXPECT_EQ(w1.spilled, 4);
  EXPECT_EQ(r1.owned_blocks(x).size(), 2u);  // the spills fill one block on the next megaplane
  EXPECT_EQ(s1.deal_index(r1.flash_units(x)[7].megaplane), 1);
}

TEST(HbfRuntime, EvictErasesExactlyTheRequestsBlocksAndCountsWear) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(5);
  ObjectId a = rt.kv_create("a"), b = rt.kv_create("b");
  auto da = bytes_of(rng, 128 * 8), db = bytes_of(rng, 128 * 8);
  rt.kv_append(a, 0, da);
  rt.kv_append(b, 0, db);
  GroupId g = rt.group_create(std::vector<ObjectId>{a, b});
  rt.group_write(g);
  EXPECT_NE(error_of([&] { rt.evict(a); }).find("live group"), std::string::npos);
  rt.group_destroy(g);
  auto owned = rt.owned_blocks(a);
  auto erased = rt.evict(a);
  EXPECT_EQ(erased, owned);
  for (auto [m, blk] : erased) {
    EXPECT_EQ(rt.flash().owner(m, blk), kNoObject);
    EXPECT_EQ(rt.flash().megablock_pe_cycles(m, blk), 1);
    for (int64_t lane = 0; lane < s.lanes(); ++lane) EXPECT_EQ(rt.flash().pe_cycles(int64_t(m) * s.lanes() + lane, blk), 1);
  }
  for (auto [m, blk] : rt.owned_blocks(b)) EXPECT_EQ(rt.flash().megablock_pe_cycles(m, blk), 0);
  EXPECT_EQ(rt.kv_read(b, 0), db);  // no data movement for the survivor
  EXPECT_NE(error_of([&] { rt.kv_read(a, 0); }).find("evicted"), std::string::npos);
  EXPECT_EQ(rt.flash().stats().megablocks_erased, int64_t(erased.size()));
  // A mapped weight object cannot be evicted until it is unmapped.
  ObjectId w = rt.store_weights(WeightSpec{"w", {{"t", Bytes(64)}}, {}}, bytes_of(rng, 64));
  VAddr va = rt.nand_mmap(w);
  EXPECT_NE(error_of([&] { rt.evict(w); }).find("munmap"), std::string::npos);
  rt.munmap(va);
  EXPECT_EQ(rt.evict(w).size(), 1u);
}

TEST(HbfRuntime, FreeBlocksRotateAndRetireAtTheEnduranceLimit) {
  System s = tiny("hbf:\n  endurance:\n    pe_cycles: 2\n", 2);
  Runtime rt(s, Mode::Timing);
  EXPECT_EQ(rt.flash().free_blocks(), 16);
  for (int round = 0; round < 4; ++round) {
    ObjectId w = rt.store_weights(WeightSpec{"w", {{"t", Bytes(8 * 128)}}, {}});  // one megapage per megaplane
    rt.evict(w);
    if (round == 1) {  // first in, first out: both blocks of every megaplane were used once
      for (MegaplaneId m = 0; m < 8; ++m)
        for (uint32_t b = 0; b < 2; ++b) EXPECT_EQ(rt.flash().megablock_pe_cycles(m, b), 1);
    }
  }
  EXPECT_EQ(rt.flash().stats().blocks_retired, 16);
  EXPECT_EQ(rt.flash().free_blocks(), 0);
  EXPECT_NE(error_of([&] { rt.store_weights(WeightSpec{"w", {{"t", Bytes(1)}}, {}}); }).find("does not fit"), std::string::npos);
}

TEST(HbfRuntime, KvSlicesHoldWholeTokensAlignedToAMegapage) {
  System csi = test::system_of("csi");
  Runtime big(csi, Mode::Timing);
  // FlashAccel, Data layout: Qwen3-235B keeps 192,512 B of KV per token over 94 layers: 2 KiB per layer -> 64 tokens per 128 KiB megapage.
  EXPECT_EQ(big.tokens_per_slice(Bytes(192512 / 94)), 64);
  std::string e = error_of([&] { big.kv_create("r", 1, KiB(200)); });
  EXPECT_NE(e.find("KV layout does not fit"), std::string::npos) << e;

  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(8);
  ObjectId kv = rt.kv_create("r", 2, Bytes(40));  // 3 tokens (120 B) per 128 B megapage
  EXPECT_NE(error_of([&] { rt.kv_append(kv, 0, bytes_of(rng, 50)); }).find("whole number"), std::string::npos);
  std::vector<uint8_t> ref;
  for (int t = 0; t < 8; ++t) {  // one token per decode step
    auto tok = bytes_of(rng, 40);
    rt.kv_append(kv, 1, tok);
    ref.insert(ref.end(), tok.begin(), tok.end());
  }
  GroupId g = rt.group_create(std::vector<ObjectId>{kv});
  VAddr base = rt.group_mmap(g);
  WriteReport w = rt.group_write(g, Remainder::Scatter);
  EXPECT_EQ(w.units, 2);  // two full 3-token slices; the third (2 tokens) stays in HBM
  EXPECT_EQ(rt.kv_read(kv, 1), ref);
  const auto& table = rt.read_table(g);
  ASSERT_EQ(table.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const size_t n = i < 2 ? 120 : 80;
    EXPECT_EQ(read(rt, base + i * 128, n),
              std::vector<uint8_t>(ref.begin() + long(table[i].slice * 120), ref.begin() + long(table[i].slice * 120 + n)));
  }
}

TEST(HbfRuntime, PrefetchQueueRunsAheadWithinSramAndReadsTheSameBytes) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(9);
  auto data = bytes_of(rng, 40 * 128);  // 5 hyperpages of 8 megapages
  ObjectId id = rt.store_weights(WeightSpec{"w", {{"t", Bytes(40 * 128)}}, {}}, data);
  VAddr va = rt.nand_mmap(id);
  auto tiles = Runtime::tiles(va, Bytes(40 * 128), Bytes(8 * 128));
  for (int64_t distance : {0, 1, 3}) {
    std::vector<uint8_t> got;
    PrefetchQueueStats st = run_prefetch_queue(rt, tiles, distance, [&](size_t t) {
      // While the kernel of tile t runs its data is in SRAM (or still in flash): same bytes either way.
      if (distance <= 1) {
        EXPECT_NE(rt.translate(tiles[t].va).kind, Location::Kind::Flash);
      }
      auto v = read(rt, tiles[t].va, size_t(tiles[t].size.raw()));
      got.insert(got.end(), v.begin(), v.end());
    });
    EXPECT_EQ(got, data);
    EXPECT_EQ(rt.sram().used_plane() + rt.sram().used_base(), 0);  // everything released
    // SRAM holds 8 x 2 plane + 2 x 2 base = 20 megapages: (distance + 1) tiles of 8 fit up to distance 1.
    EXPECT_LE(st.max_slots_in_use, 20);
    EXPECT_EQ(st.sram + st.flash, 40);
    if (distance <= 1) {
      EXPECT_EQ(st.flash, 0);
    } else {
      EXPECT_GT(st.flash, 0);  // the queue ran into the SRAM capacity
    }
  }
}

TEST(HbfRuntime, BadInputGivesClearErrors) {
  System s = tiny();
  Runtime rt(s, Mode::Functional);
  Rng rng(6);
  // Mapping (storing) beyond capacity: 8 megaplanes x 16 blocks x 4 pages x 128 B = 64 KiB.
  std::string e = error_of([&] { rt.store_weights(WeightSpec{"big", {{"t", KiB(65)}}, {}}, bytes_of(rng, 65 * 1024)); });
  EXPECT_NE(e.find("'big'"), std::string::npos) << e;
  EXPECT_NE(e.find("does not fit"), std::string::npos) << e;
  EXPECT_NE(error_of([&] {
              rt.store_weights(WeightSpec{"w", {{"t", Bytes(10)}}, {}}, bytes_of(rng, 9));
            }).find("10 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { rt.store_weights(WeightSpec{"w", {}, {}}); }).find("at least one tensor"), std::string::npos);
  ObjectId kv = rt.kv_create("kv");
  EXPECT_NE(error_of([&] { rt.kv_append(kv, 3, bytes_of(rng, 4)); }).find("stream 3"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.kv_append(kv, 0, bytes_of(rng, 8 * 1024)); }).find("HBM is full"), std::string::npos);
  EXPECT_EQ(rt.kv_read(kv, 0).size(), 0u);  // the failed append changed nothing
  EXPECT_NE(error_of([&] { rt.nand_mmap(kv); }).find("not a weight object"), std::string::npos);
  GroupId g = rt.group_create(std::vector<ObjectId>{kv});
  EXPECT_NE(error_of([&] { rt.group_create(std::vector<ObjectId>{kv}); }).find("already in live group"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.group_arrange(g); }).find("not mapped"), std::string::npos);
  VAddr gb = rt.group_mmap(g);
  EXPECT_NE(error_of([&] { rt.write(gb, bytes_of(rng, 1)); }).find("append-only"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.munmap(gb); }).find("group_destroy"), std::string::npos);
  EXPECT_NE(error_of([&] { rt.sram_release(12345); }).find("nothing is prefetched"), std::string::npos);
  rt.group_destroy(g);
  EXPECT_NE(error_of([&] { rt.group_mmap(g); }).find("destroyed"), std::string::npos);
  Runtime timing(s, Mode::Timing);
  ObjectId w = timing.store_weights(WeightSpec{"w", {{"t", Bytes(64)}}, {}});
  EXPECT_NE(error_of([&] { read(timing, timing.nand_mmap(w), 4); }).find("timing mode"), std::string::npos);
}

}  // namespace
}  // namespace bitline::hbf
