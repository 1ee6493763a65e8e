#include "ssd/ftl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"

namespace bitline::ssd {

// ---- Ftl -----------------------------------------------------------------------

Ftl::Ftl(const DeviceXml& d)
    : C_(d.channels),
      W_(d.chips_per_channel),
      D_(d.dies_per_chip),
      P_(d.planes_per_die),
      B_(d.blocks_per_plane),
      G_(d.pages_per_block),
      bits_(d.bits_per_cell()),
      units_(d.units_per_flash_page),
      planes_(d.planes()),
      planes_per_die_(d.planes_per_die),
      logical_pages_(d.logical_pages()),
      scheme_(*d.plane_allocation),
      policy_(*d.gc_policy),
      map_(size_t(std::max<int64_t>(0, d.logical_pages()))),
      rng_(Rng::derive(uint64_t(d.seed), "ftl")) {
  if (d.pages() >= int64_t(PagedMap32::kEmpty))
    throw ConfigError(fmt::format("{}: {} physical pages: bitline's FTL addresses at most 2^32-2", d.file, d.pages()));
  pages_per_plane32_ = uint32_t(B_ * G_);
  pages_per_block32_ = uint32_t(G_);
  bits32_ = uint32_t(bits_);
  units32_ = uint32_t(units_);
  if (units_ < 1 || G_ % units_ != 0) throw ModelError("FTL: a block's units are not whole flash pages");
  gc_threshold_blocks_ = std::max<int64_t>(1, int64_t(std::ceil(d.gc_exec_threshold * double(B_))));
  hard_reserve_blocks_ = std::max<int64_t>(1, int64_t(std::ceil(d.gc_hard_threshold * double(B_))));
  rga_set_ = std::max<int64_t>(1, int64_t(std::log2(double(B_))));
  blocks_.resize(size_t(planes_ * B_));
  planes_state_.resize(size_t(planes_));
  for (int64_t p = 0; p < planes_; ++p)
    for (int64_t b = 0; b < B_; ++b) planes_state_[p].free.push_back(uint32_t(b));
  residue_of_plane_.assign(size_t(planes_), 0);
  plane_of_residue_.assign(size_t(planes_), 0);
  for (int64_t r = 0; r < planes_; ++r) {
    plane_of_residue_[r] = scheme_plane(uint64_t(r));
    residue_of_plane_[plane_of_residue_[r]] = uint32_t(r);
  }
}

int64_t Ftl::extent(PlaneDim dim) const {
  switch (dim) {
    case PlaneDim::Channel:
      return C_;
    case PlaneDim::Way:
      return W_;
    case PlaneDim::Die:
      return D_;
    case PlaneDim::Plane:
      return P_;
  }
  throw std::logic_error("unhandled plane allocation dimension");
}

uint32_t Ftl::scheme_plane(uint64_t r) const {
  std::array<int64_t, 4> at{};  // the coordinate along each PlaneDim
  for (PlaneDim dim : scheme_) {
    const uint64_t n = uint64_t(extent(dim));
    at[size_t(dim)] = int64_t(r % n);
    r /= n;
  }
  const auto c = at[size_t(PlaneDim::Channel)], w = at[size_t(PlaneDim::Way)], dd = at[size_t(PlaneDim::Die)],
             p = at[size_t(PlaneDim::Plane)];
  return uint32_t(((c * W_ + w) * D_ + dd) * P_ + p);
}

uint32_t Ftl::lookup(uint32_t lpa) const {
  if (const uint32_t* v = map_.find(lpa)) return *v;
  return preconditioned_ && int64_t(lpa) < logical_pages_ ? implicit_ppa(lpa) : PagedMap32::kEmpty;
}

uint32_t Ftl::unwritten_ppa(uint32_t lpa) const {
  int64_t p = plane_of(lpa);
  uint64_t i = lpa / uint64_t(planes_);
  return uint32_t(p * B_ * G_ + int64_t(i % uint64_t(B_ * G_)));
}

Ftl::BlockData& Ftl::data_of(int64_t block) {
  Block& b = blocks_[block];
  if (b.data < 0) {
    if (!data_free_.empty()) {
      b.data = data_free_.back();
      data_free_.pop_back();
    } else {
      b.data = int32_t(data_.size());
      data_.emplace_back();
    }
    BlockData& bd = data_[b.data];
    bd.valid_bits.assign(size_t((G_ + 63) / 64), 0);
    bd.lpa.clear();
    for (uint32_t pg = 0; pg < b.implicit; ++pg) bd.valid_bits[pg / 64] |= uint64_t(1) << (pg % 64);
  }
  return data_[b.data];
}

bool Ftl::is_valid(int64_t block, int64_t page) const {
  const Block& b = blocks_[block];
  if (b.data < 0) return page < int64_t(b.implicit);
  return (data_[b.data].valid_bits[size_t(page / 64)] >> (page % 64)) & 1;
}

void Ftl::invalidate(uint32_t ppa) {
  int64_t block = block_of_ppa(ppa), page = page_of_ppa(ppa);
  BlockData& bd = data_of(block);
  uint64_t bit = uint64_t(1) << (page % 64);
  if (!(bd.valid_bits[size_t(page / 64)] & bit)) throw ModelError("FTL: invalidating a page that is not valid");
  bd.valid_bits[size_t(page / 64)] &= ~bit;
  --blocks_[block].valid;
}

int64_t Ftl::take_free(int64_t plane) {
  PlaneState& ps = planes_state_[plane];
  if (ps.free.empty()) throw ModelError(fmt::format("FTL: plane {} has no free block", plane));
  int64_t block = plane * B_ + ps.free.front();
  ps.free.pop_front();
  Block& b = blocks_[block];
  b.state = BlockState::Open;
  b.written = 0;
  b.valid = 0;
  b.implicit = 0;
  data_of(block).lpa.assign(size_t(G_), PagedMap32::kEmpty);
  return block;
}

uint32_t Ftl::write(uint32_t lpa, int64_t plane, bool gc, uint32_t* old_out) {
  PlaneState& ps = planes_state_[plane];
  int64_t& frontier = ps.frontier[gc];
  if (frontier < 0) frontier = take_free(plane);
  Block& b = blocks_[frontier];
  uint32_t page = b.written++;
  uint32_t ppa = uint32_t(frontier * G_ + page);
  BlockData& bd = data_[b.data];
  bd.lpa[page] = lpa;
  bd.valid_bits[page / 64] |= uint64_t(1) << (page % 64);
  ++b.valid;
  uint32_t old = lookup(lpa);
  if (old_out) *old_out = old;
  if (old != PagedMap32::kEmpty) invalidate(old);
  map_.set(lpa, ppa);
  if (int64_t(b.written) == G_) {
    b.state = BlockState::Full;
    b.seq = ++full_seq_;
    frontier = -1;
  }
  (gc ? stats_.gc_page_writes : int64_t(lpa) >= logical_pages_ ? stats_.mapping_page_writes : stats_.host_page_writes) += 1;
  return ppa;
}

void Ftl::close_flash_page(int64_t plane, bool gc) {
  if (units_ == 1) return;
  int64_t& frontier = planes_state_[plane].frontier[gc];
  if (frontier < 0) return;
  Block& b = blocks_[frontier];
  const uint32_t rest = uint32_t((units_ - int64_t(b.written) % units_) % units_);
  if (rest == 0) return;
  b.written += rest;  // written, never valid: GC reclaims them with the block
  stats_.unwritten_units += rest;
  if (int64_t(b.written) == G_) {
    b.state = BlockState::Full;
    b.seq = ++full_seq_;
    frontier = -1;
  }
}

bool Ftl::gc_candidate(int64_t block) const { return blocks_[block].state == BlockState::Full && int64_t(blocks_[block].valid) < G_; }

std::vector<int64_t> Ftl::gc_candidates(int64_t plane) const {
  std::vector<int64_t> cands;
  for (int64_t b = plane * B_; b < (plane + 1) * B_; ++b)
    if (gc_candidate(b)) cands.push_back(b);
  return cands;
}

int64_t Ftl::pick_victim(int64_t plane) {
  int64_t best = -1;
  // is block x a better victim than y (none yet: y < 0)
  auto fewer_valid = [&](int64_t x, int64_t y) { return y < 0 || blocks_[x].valid < blocks_[y].valid; };
  auto older = [&](int64_t x, int64_t y) { return y < 0 || blocks_[x].seq < blocks_[y].seq; };
  switch (policy_) {
    case GcPolicy::Greedy:
      for (int64_t x = plane * B_; x < (plane + 1) * B_; ++x)
        if (gc_candidate(x) && fewer_valid(x, best)) best = x;
      break;
    case GcPolicy::Fifo:
      for (int64_t x = plane * B_; x < (plane + 1) * B_; ++x)
        if (gc_candidate(x) && older(x, best)) best = x;
      break;
    case GcPolicy::Random: {
      const auto cands = gc_candidates(plane);
      if (cands.empty()) return -1;
      best = cands[rng_.below(cands.size())];
      break;
    }
    case GcPolicy::Rga: {  // the best of a random set of log2(blocks per plane) candidates (Van Houdt's d-choices)
      const auto cands = gc_candidates(plane);
      if (cands.empty()) return -1;
      for (int64_t k = 0; k < rga_set_; ++k) {
        const int64_t x = cands[rng_.below(cands.size())];
        if (fewer_valid(x, best)) best = x;
      }
      break;
    }
  }
  if (best < 0) return -1;
  blocks_[best].state = BlockState::Victim;
  ++stats_.gc_victims;
  return best;
}

int64_t Ftl::next_valid(int64_t block, int64_t from, uint32_t& lpa) const {
  const Block& b = blocks_[block];
  for (int64_t pg = from; pg < G_; ++pg) {
    if (!is_valid(block, pg)) continue;
    lpa = pg < int64_t(b.implicit) ? implicit_lpa(block, pg) : data_[b.data].lpa[size_t(pg)];
    return pg;
  }
  return G_;
}

void Ftl::erase(int64_t block) {
  Block& b = blocks_[block];
  if (b.valid != 0)
    throw ModelError(fmt::format("FTL: erasing block {} of plane {} that still holds {} valid pages ({} written, state {})", block % B_,
                                 block / B_, b.valid, b.written, int(b.state)));
  ++b.erase_count;
  b.written = 0;
  b.implicit = 0;
  b.state = BlockState::Free;
  if (b.data >= 0) {
    data_[b.data].lpa.clear();
    data_[b.data].lpa.shrink_to_fit();
    data_free_.push_back(b.data);
    b.data = -1;
  }
  planes_state_[block / B_].free.push_back(uint32_t(block % B_));
  ++stats_.erases;
}

void Ftl::collect_now(int64_t plane) {
  while (needs_gc(plane)) {
    int64_t v = pick_victim(plane);
    if (v < 0) return;
    uint32_t lpa = 0;
    for (int64_t pg = next_valid(v, 0, lpa); pg < G_; pg = next_valid(v, pg + 1, lpa)) write(lpa, plane, true);
    erase(v);
  }
}

// ---- preconditioning -----------------------------------------------------------

void Ftl::precondition(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  if (preconditioned_ || map_.size() != 0) throw ModelError("FTL: preconditioning a device that was already written");
  const uint64_t np = uint64_t(planes_);
  const int64_t n_used = B_ - gc_threshold_blocks_ - 1;
  for (int64_t p = 0; p < planes_; ++p) {
    PlaneState& ps = planes_state_[p];
    uint64_t r = residue_of_plane_[p], cum = 0;
    for (auto [lo, hi] : ranges) {
      uint64_t ilo = lo <= r ? 0 : (lo - r + np - 1) / np;
      uint64_t ihi = hi <= r ? 0 : (hi - r + np - 1) / np;
      if (ihi > ilo) {
        ps.implicit_ranges.push_back({ilo, ihi, cum});
        cum += ihi - ilo;
      }
    }
    const int64_t U = int64_t(cum);
    if (U == 0) continue;
    if (n_used < 1 || U > n_used * G_)
      throw ModelError(fmt::format("FTL: preconditioning puts {} valid pages in plane {}, more than its {} usable pages", U, p,
                                   std::max<int64_t>(0, n_used) * G_));
    std::vector<int64_t> v(size_t(B_), 0);
    double m = double(U) / double(n_used * G_);
    int64_t used;
    if (m >= 0.5) {
      // Greedy GC under uniform random writes leaves the valid fraction of the blocks spread evenly
      // between the victim's u and 1 (Bux & Iliadis 2010; Desnoyers 2012), with mean m: u = 2m - 1.
      used = n_used;
      double u = 2 * m - 1;
      int64_t sum = 0;
      for (int64_t k = 0; k < used; ++k) {
        v[k] = std::min<int64_t>(G_, int64_t(double(G_) * (u + (1 - u) * (double(k) + 0.5) / double(used))));
        sum += v[k];
      }
      for (int64_t k = used - 1; sum < U; k = (k == 0 ? used - 1 : k - 1))
        if (v[k] < G_) ++v[k], ++sum;
      for (int64_t k = 0; sum > U; k = (k + 1) % used)
        if (v[k] > 0) --v[k], --sum;
    } else {
      used = (U + G_ - 1) / G_;
      for (int64_t k = 0; k < used; ++k) v[k] = std::min<int64_t>(G_, U - k * G_);
    }
    ps.prefix.assign(size_t(B_ + 1), 0);
    for (int64_t k = 0; k < B_; ++k) ps.prefix[k + 1] = ps.prefix[k] + uint32_t(v[k]);
    ps.free.clear();
    for (int64_t k = 0; k < B_; ++k) {
      Block& b = blocks_[p * B_ + k];
      if (k < used) {
        b.state = BlockState::Full;
        b.written = uint32_t(G_);
        b.valid = b.implicit = uint32_t(v[k]);
        b.seq = ++full_seq_;
      } else {
        ps.free.push_back(uint32_t(k));
      }
    }
  }
  preconditioned_ = true;
}

uint32_t Ftl::implicit_ppa(uint32_t lpa) const {
  int64_t p = plane_of(lpa);
  const PlaneState& ps = planes_state_[p];
  uint64_t i = lpa / uint64_t(planes_);
  for (const Interval& iv : ps.implicit_ranges) {
    if (i < iv.lo || i >= iv.hi) continue;
    uint64_t rank = iv.cum + (i - iv.lo);
    auto it = std::upper_bound(ps.prefix.begin(), ps.prefix.end(), uint32_t(rank));
    int64_t local = int64_t(it - ps.prefix.begin()) - 1;
    return uint32_t((p * B_ + local) * G_ + int64_t(rank - ps.prefix[local]));
  }
  return PagedMap32::kEmpty;
}

uint32_t Ftl::implicit_lpa(int64_t block, int64_t page) const {
  int64_t p = block / B_, local = block % B_;
  const PlaneState& ps = planes_state_[p];
  uint64_t rank = ps.prefix[local] + uint64_t(page);
  for (const Interval& iv : ps.implicit_ranges)
    if (rank >= iv.cum && rank < iv.cum + (iv.hi - iv.lo))
      return uint32_t((iv.lo + (rank - iv.cum)) * uint64_t(planes_) + residue_of_plane_[p]);
  throw ModelError("FTL: implicit page outside the preconditioned ranges");
}

// ---- statistics ----------------------------------------------------------------

int64_t Ftl::max_erase_count() const {
  uint32_t m = 0;
  for (auto& b : blocks_) m = std::max(m, b.erase_count);
  return m;
}

double Ftl::mean_erase_count() const {
  double s = 0;
  for (auto& b : blocks_) s += b.erase_count;
  return blocks_.empty() ? 0 : s / double(blocks_.size());
}

size_t Ftl::memory_bytes() const {
  size_t m = blocks_.capacity() * sizeof(Block) + map_.bytes();
  for (auto& d : data_) m += d.valid_bits.capacity() * 8 + d.lpa.capacity() * 4 + sizeof(BlockData);
  for (auto& ps : planes_state_) m += ps.prefix.capacity() * 4 + ps.free.size() * 4 + sizeof(PlaneState);
  return m;
}

}  // namespace bitline::ssd
