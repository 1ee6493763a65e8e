// Stage: transaction scheduling (the general SSD, device_sim.hpp).
//
// Contract. Transactions from every source (host reads and writes, the write cache, mapping, GC, compute jobs) wait
// in their scheduling unit's queues (a chip with chip_scheduling, else a die) by level: translation reads, user reads
// by priority class, translation programs, user programs by class, GC (served first unless Preemptible_GC_Enabled).
// An idle unit starts the first ready transaction of its lowest non-empty level, with same-kind transactions for its
// die's other planes (multi-plane; at the same page offset with multiplane_same_page, but for reads with
// ssd_device.independent_plane_reads: any page of each plane, one tR for all); with issue_on_idle_channel
// (MQSim's TSU) it starts only while its channel is idle, a channel-idle pass visiting its units round robin. A read
// senses (tR of its page type), then moves its page over the channel; a program moves its data in, then programs
// (tPROG); an erase takes tBERS. A channel carries one transfer at a time, reserved in the order they are asked for.
// A program without a free page waits until GC has erased a block of its plane. With the SLC cache (slc_cache.cpp) a host
// page's program takes the SLC program time while the region has room, and folds run after everything else.
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>

#include "core/bitvector.hpp"

namespace bitline::ssd::detail {

/// Starts the highest-priority ready transaction on an idle unit, with same-kind transactions on the
/// other planes of its die (multi-plane operation).
void Sim::start_die(int64_t unit) {
  Die& D = scheduler_.units[unit];
  if (D.busy) return;
  if (model_.issue_on_idle_channel) {
    size_t ch = size_t(scheduler_.channel_of_unit[size_t(unit)]);
    if (scheduler_.channel_free[ch] > events_.now()) {  // wait for the channel (see on_channel_idle)
      if (!scheduler_.channel_wake_pending[ch]) {
        scheduler_.channel_wake_pending[ch] = 1;
        events_.push(scheduler_.channel_free[ch], {Ev::ChannelIdle, uint32_t(ch)});
      }
      return;
    }
  }
  uint32_t first = kNone;
  size_t lvl = 0;
  // Planes of this unit with a program blocked for want of a free page: their GC starts after the scan, because
  // starting it enqueues its reads, which starts this (still idle) unit from inside the scan. (Empty, it
  // allocates nothing.)
  std::vector<int64_t> gc_planes;
  while (D.nonempty) {  // the lowest level first, in queue order; GC first unless it is preemptible
    lvl = !device_.gc_preemptible && (D.nonempty & kGcLevelBit) ? kGcLevel : size_t(std::countr_zero(D.nonempty));
    uint32_t tx = D.pop_front(lvl);
    if (!ready(scheduler_.transactions[tx])) {
      gc_.blocked_programs[scheduler_.transactions[tx].plane].push_back(tx);  // no free page until GC erases a block
      if (std::find(gc_planes.begin(), gc_planes.end(), scheduler_.transactions[tx].plane) == gc_planes.end())
        gc_planes.push_back(scheduler_.transactions[tx].plane);
      continue;
    }
    first = tx;
    break;
  }
  if (first == kNone && jobs_.spec) {     // a die that takes its Flash-Cosmos segments itself (DieCursor::pull)
    const uint32_t die = uint32_t(unit);  // (such a die is a unit of its own)
    if (size_t(die) < jobs_.cursor.size() && jobs_.cursor[die].pull) {
      first = next_segment(die);
      lvl = compute_level_;
    }
  }
  if (first == kNone) {
    for (int64_t p : gc_planes) maybe_start_gc(p);
    return;
  }
  D.group.clear();
  D.group.push_back(first);
  const Tx& f = scheduler_.transactions[first];
  // (a Flash-Cosmos job already holds every plane of its die that it uses: no companions)
  const bool grouped = f.kind == TxKind::Read || f.kind == TxKind::Program;
  // the companions' page offsets must equal the first's (MQSim's rule), unless the die reads its planes independently
  const bool same_page = model_.multiplane_same_page && !(f.kind == TxKind::Read && device_.independent_plane_reads);
  int64_t off = same_page && grouped ? page_offset(f) : 0;
  const int64_t units = ftl_.units_per_flash_page();
  if (grouped && units > 1) {
    gather_units(unit, lvl, same_page, off);
  } else if (grouped && device_.planes_per_die > 1 && (f.kind == TxKind::Read || program_companion_possible(f, off))) {
    int32_t die = scheduler_.die_of_plane[size_t(f.plane)];
    uint32_t used_planes = 1u << scheduler_.plane_in_die[size_t(f.plane)];
    bool read = f.kind == TxKind::Read;
    // levels 0-4 hold reads, 5-9 programs, 10 GC (both): the non-empty ones from the first's, of its kind
    uint32_t levels = D.nonempty & ~((1u << lvl) - 1) & (read ? 0x41Fu : 0x7E0u);
    for (; levels && int64_t(D.group.size()) < device_.planes_per_die; levels &= levels - 1) {
      size_t l = size_t(std::countr_zero(levels));
      auto& q = D.q[l];
      for (size_t i = 0; i < q.size() && i < 32 && int64_t(D.group.size()) < device_.planes_per_die; ++i) {
        const Tx& c = scheduler_.transactions[q[i]];
        if (c.kind != f.kind) continue;
        uint32_t bit = 1u << scheduler_.plane_in_die[size_t(c.plane)];  // cheap tests first: tables, not divisions
        if ((used_planes & bit) || scheduler_.die_of_plane[size_t(c.plane)] != die) continue;
        if (same_page && page_offset(c) != off) continue;
        if (!ready(c)) continue;
        used_planes |= bit;
        D.group.push_back(q[i]);
        D.erase(l, i);
        --i;
      }
    }
  }
  if (D.group.size() > 1 && op_planes(D.group) > 1) ++stats_.multiplane_ops;  // (one transaction: one plane)
  D.busy = true;
  execute(unit);
  for (int64_t p : gc_planes) maybe_start_gc(p);
}

/// Mapping units (ssd_device.mapping_unit): the operation that starts with D.group's first transaction f also takes,
/// from the queues of f's kind (first 32 of each level from f's), the transactions of the same flash page: per plane of
/// the die, reads of one flash page (f's on its plane; on the others at f's page offset unless the die reads its planes
/// independently), or up to units-per-page programs into one flash page (of one write frontier: host or GC; on the other
/// planes at f's page offset, with multiplane_same_page).
void Sim::gather_units(int64_t unit, size_t lvl, bool same_page, int64_t off) {
  Die& D = scheduler_.units[unit];
  const Tx& f = scheduler_.transactions[D.group[0]];
  const int64_t units = ftl_.units_per_flash_page(), planes = device_.planes_per_die;
  const int32_t die = scheduler_.die_of_plane[size_t(f.plane)];
  const bool read = f.kind == TxKind::Read;
  if (!read && f.src != TxSource::Gc) return gather_host_units(unit, lvl);
  // per plane of the die: the transactions taken, and the flash page read (reads) or the frontier written (programs:
  // 1 for GC's). Every program ends its flash page (close_flash_page), so a frontier is at a page's first unit here.
  std::array<int64_t, 16> taken{};
  std::array<uint32_t, 16> page{};
  auto key = [&](const Tx& t) { return read ? ftl_.flash_page_of_ppa(t.ppa) : uint32_t(t.src == TxSource::Gc); };
  const size_t pf = scheduler_.plane_in_die[size_t(f.plane)];
  taken[pf] = 1;
  page[pf] = key(f);
  const int64_t most = planes * units;
  uint32_t levels = D.nonempty & ~((1u << lvl) - 1) & (read ? 0x41Fu : 0x7E0u);
  for (; levels && int64_t(D.group.size()) < most; levels &= levels - 1) {
    size_t l = size_t(std::countr_zero(levels));
    auto& q = D.q[l];
    for (size_t i = 0; i < q.size() && i < 32 && int64_t(D.group.size()) < most; ++i) {
      const Tx& c = scheduler_.transactions[q[i]];
      if (c.kind != f.kind || scheduler_.die_of_plane[size_t(c.plane)] != die) continue;
      const size_t pc = scheduler_.plane_in_die[size_t(c.plane)];
      if (taken[pc] > 0) {  // another unit of a plane already in the operation: the same flash page, or frontier
        if (key(c) != page[pc] || taken[pc] >= units) continue;
      } else {  // the first of its plane: a multi-plane companion
        if (same_page && page_offset(c) != off) continue;
        if (!ready(c)) continue;
        page[pc] = key(c);
      }
      ++taken[pc];
      D.group.push_back(q[i]);
      D.erase(l, i);
      --i;
    }
  }
}

/// Mapping units, a host program first (a user write's unit, one written back from the cache, a translation unit): the
/// die's queued host programs, up to a flash page on each plane that can take one, go into the die's planes, whatever
/// plane their address gave them (the write allocates the die by address and the plane at program time, as a drive
/// programming multi-plane pages does): the planes at the lowest page offset (all of them when programs need not share
/// one, multiplane_same_page off), as many as the units fill, the units dealt round robin.
void Sim::gather_host_units(int64_t unit, size_t lvl) {
  Die& D = scheduler_.units[unit];
  const int64_t units = ftl_.units_per_flash_page(), planes = device_.planes_per_die;
  const int32_t die = scheduler_.die_of_plane[size_t(scheduler_.transactions[D.group[0]].plane)];
  const int64_t first_plane = int64_t(die) * planes;
  // the die's planes that can take a host page: all of them, or (multiplane_same_page) those at one page offset
  std::array<int64_t, 16> chosen{}, offset{};
  int64_t m = 0;
  for (int64_t p = first_plane; p < first_plane + planes; ++p)
    if (ftl_.can_allocate(p, false)) {
      offset[size_t(m)] = ftl_.next_flash_page(p, false);
      chosen[size_t(m++)] = p;
    }
  if (model_.multiplane_same_page && m > 1) {
    // the planes at one page offset: the first unit's plane (its address's, as page-level mapping programs a page
    // there) and those at its offset, unless the die holds more units than they take: then the offset most planes
    // share (below: among equals, the lagging planes')
    const int64_t anchor = scheduler_.transactions[D.group[0]].plane;
    int64_t queued = 0;  // the die's queued host units (up to a page on each plane)
    for (uint32_t levels = D.nonempty & 0x3E0u; levels && queued < planes * units; levels &= levels - 1)
      queued += int64_t(D.q[size_t(std::countr_zero(levels))].size());
    queued = std::min(queued + 1, planes * units);
    int64_t best = -1, best_n = 0;
    for (int64_t i = 0; i < m; ++i)
      if (chosen[size_t(i)] == anchor) best = offset[size_t(i)], best_n = std::count(offset.begin(), offset.begin() + m, best);
    if (best < 0 || queued > best_n * units) {
      // the offset most planes share; among equals the lagging planes' (the fewest host pages programmed: an offset
      // compares planes only within their blocks), so that they catch up
      best = -1, best_n = 0;
      int64_t best_done = INT64_MAX;
      for (int64_t i = 0; i < m; ++i) {
        const int64_t n = std::count(offset.begin(), offset.begin() + m, offset[size_t(i)]);
        const int64_t done = scheduler_.host_pages[size_t(chosen[size_t(i)])];
        if (n > best_n || (n == best_n && done < best_done)) best = offset[size_t(i)], best_n = n, best_done = done;
      }
    }
    int64_t k = 0;
    for (int64_t i = 0; i < m; ++i)
      if (offset[size_t(i)] == best) chosen[size_t(k++)] = chosen[size_t(i)];
    m = k;
  }
  const int64_t most = std::max<int64_t>(1, m) * units;
  uint32_t levels = D.nonempty & ~((1u << lvl) - 1) & 0x7E0u;  // the program levels from the first's
  for (; levels && int64_t(D.group.size()) < most; levels &= levels - 1) {
    size_t l = size_t(std::countr_zero(levels));
    auto& q = D.q[l];
    for (size_t i = 0; i < q.size() && i < 32 && int64_t(D.group.size()) < most; ++i) {
      const Tx& c = scheduler_.transactions[q[i]];
      if (c.kind != TxKind::Program || c.src == TxSource::Gc || scheduler_.die_of_plane[size_t(c.plane)] != die) continue;
      D.group.push_back(q[i]);
      D.erase(l, i);
      --i;
    }
  }
  if (m == 0) return;  // (the first was ready on its plane: not reached)
  // as many planes as the units fill, those most of the units name (their address's plane) first; each unit into its
  // own plane where that plane is used and has room, the rest dealt round robin into the room left
  const int64_t used = std::min<int64_t>(m, (int64_t(D.group.size()) + units - 1) / units);
  std::array<int64_t, 16> named{}, fill{};
  for (uint32_t tx : D.group)
    for (int64_t i = 0; i < m; ++i)
      if (chosen[size_t(i)] == scheduler_.transactions[tx].plane) ++named[size_t(i)];
  for (int64_t i = 0; i < m; ++i)  // a stable selection sort by named, descending
    for (int64_t j = i + 1; j < m; ++j)
      if (named[size_t(j)] > named[size_t(i)]) {
        std::rotate(chosen.begin() + i, chosen.begin() + j, chosen.begin() + j + 1);
        std::rotate(named.begin() + i, named.begin() + j, named.begin() + j + 1);
      }
  std::vector<uint32_t>& rest = scheduler_.unplaced;
  rest.clear();
  for (uint32_t tx : D.group) {
    Tx& t = scheduler_.transactions[tx];
    const auto at = std::find(chosen.begin(), chosen.begin() + used, t.plane) - chosen.begin();
    if (at < used && fill[size_t(at)] < units)
      ++fill[size_t(at)];
    else
      rest.push_back(tx);
  }
  size_t next = 0;
  for (uint32_t tx : rest) {
    while (fill[next] >= units) next = (next + 1) % size_t(used);
    ++fill[next];
    scheduler_.transactions[tx].plane = chosen[next];
    next = (next + 1) % size_t(used);
  }
  rest.clear();
}

/// The planes an operation's transactions are on (a multi-plane operation: more than one).
int64_t Sim::op_planes(const std::vector<uint32_t>& group) const {
  uint32_t planes = 0;
  for (uint32_t tx : group) planes |= 1u << scheduler_.plane_in_die[size_t(scheduler_.transactions[tx].plane)];
  return popcount64(planes);
}

/// Whether another plane of program f's die could take a program with it now: its next page is f's (with
/// multiplane_same_page) and it can allocate a page (as a host or a GC program: their frontiers differ). When none can, the
/// queues hold no companion for f and need no scan.
bool Sim::program_companion_possible(const Tx& f, int64_t off) const {
  int64_t first = int64_t(scheduler_.die_of_plane[size_t(f.plane)]) * device_.planes_per_die;
  for (int64_t q = first; q < first + device_.planes_per_die; ++q) {
    if (q == f.plane) continue;
    for (bool gc : {false, true})  // a host or a GC program
      if ((!model_.multiplane_same_page || ftl_.next_page(q, gc) == off) && ftl_.can_allocate(q, gc)) return true;
  }
  return false;
}

/// issue_on_idle_channel: the channel's transfers have ended; its units are visited once each in round-robin
/// order, the turn moving on with every visit (MQSim's TSU_Base::handle_channel_idle_signal), an idle one with work
/// starting it, until one of them occupies the channel.
void Sim::on_channel_idle(uint32_t ch) {
  scheduler_.channel_wake_pending[ch] = 0;
  auto& units = scheduler_.units_of_channel[ch];
  if (units.empty()) return;
  for (size_t k = 0; k < units.size(); ++k) {
    if (scheduler_.channel_free[ch] > events_.now()) {
      if (!scheduler_.channel_wake_pending[ch]) {
        scheduler_.channel_wake_pending[ch] = 1;
        events_.push(scheduler_.channel_free[ch], {Ev::ChannelIdle, ch});
      }
      return;
    }
    const size_t i = scheduler_.channel_turn[ch];
    scheduler_.channel_turn[ch] = uint32_t((i + 1) % units.size());
    const int64_t u = units[i];
    if (!scheduler_.units[size_t(u)].busy) start_die(u);
  }
}

void Sim::execute(int64_t unit) {
  Die& D = scheduler_.units[unit];
  const Tx& f = scheduler_.transactions[D.group[0]];
  Time now = events_.now();
  if (f.kind == TxKind::Compute) {
    const Segment& sg = jobs_.segment_of(f);
    jobs_.result.die_busy += sg.die_time;
    jobs_.result.die_steps += uint64_t(sg.steps);
    jobs_.result.sensings += uint64_t(sg.sensings * f.job.active);  // per plane
    jobs_.result.nand_sense += sg.energy;
    if (sg.data_in > 0) {  // a program: its slices leave the latches' count, the next program's may load
      writes_.loaded[f.job.die] -= sg.data_in;
      writes_.claimed[f.job.die] -= sg.data_in;
      writes_.programming[f.job.die] = 1;
      ++jobs_.result.programs;
      try_data_in(uint32_t(channel_of_plane(f.plane)));
    }
    // Cache read: a page sensed while the latch's page is still to cross the channel (its end scheduled, and later)
    // waits in the die for the latch, and its sensing's end changes nothing else: it is marked waiting now, with no
    // event, and the latch's end (cache_emptied) moves it on, as it would have. (OSP and ISP reads, whose dies mostly
    // wait for the channel or the link, run about half the events.)
    const Time sensed = now + sg.die_time;
    if (model_.cache_read && f.bytes > 0 && D.c_tx != UINT32_MAX && D.latch_until > sensed) {
      D.s_tx = D.group[0];
      return;
    }
    events_.push(sensed, {Ev::ReadSensed, uint32_t(unit)});
  } else if (f.kind == TxKind::Read) {
    Time t_r{};
    for (uint32_t tx : D.group) t_r = std::max(t_r, device_.read_latency[int(ftl_.page_type(scheduler_.transactions[tx].ppa))]);
    stats_.flash_reads += ftl_.units_per_flash_page() == 1 ? int64_t(D.group.size()) : op_planes(D.group);  // a sensing per plane
    events_.push(now + t_r, {Ev::ReadSensed, uint32_t(unit)});
  } else if (f.kind == TxKind::Program) {
    int64_t b = 0;
    Time t_p{};
    int64_t plane0 = f.plane;
    uint32_t programmed = 0;  // planes with a page programmed (mapping units: one flash page for all of a plane's)
    if (D.group.size() > 1)
      for (uint32_t tx : D.group) ftl_.prefetch(scheduler_.transactions[tx].lpa);  // the mapping's slots, all at once
    for (uint32_t tx : D.group) {
      Tx& t = scheduler_.transactions[tx];
      if (t.src == TxSource::Gc) {
        // a relocated page is skipped when the host overwrote it since the GC read
        if (ftl_.lookup(t.lpa) != t.ppa) {
          t.ppa = kNone;
          continue;
        }
        if (!device_.gc_copyback) b += t.bytes;
      } else {
        b += t.bytes;
      }
      const uint32_t bit = 1u << scheduler_.plane_in_die[size_t(t.plane)];
      const bool page_first = ftl_.units_per_flash_page() == 1 || !(programmed & bit);  // the first unit of its flash page
      programmed |= bit;
      if (slc_.on && (t.src == TxSource::User || t.src == TxSource::Cache)) [[unlikely]] {
        uint32_t old = 0;
        t.ppa = ftl_.write(t.lpa, t.plane, false, &old);
        t_p = std::max(t_p, slc_program(t.ppa, t.plane, old == FlatMap32::kEmpty, page_first));
      } else {
        t.ppa = ftl_.write(t.lpa, t.plane, t.src == TxSource::Gc);
        t_p = std::max(t_p, device_.program_latency[int(ftl_.page_type(t.ppa))]);
      }
      if (page_first) {
        ++stats_.flash_programs;
        if (t.src != TxSource::Gc) ++scheduler_.host_pages[size_t(t.plane)];
      }
      maybe_start_gc(t.plane);
    }
    if (ftl_.units_per_flash_page() > 1)  // the flash pages are programmed: their units left out stay unwritten
      for (uint32_t tx : D.group) {
        const Tx& t = scheduler_.transactions[tx];
        ftl_.close_flash_page(t.plane, t.src == TxSource::Gc);
      }
    Time data_in = b > 0 ? xfer_end(plane0, b) : now;
    events_.push(data_in + t_p, {Ev::DieOpDone, uint32_t(unit)});
  } else if (f.kind == TxKind::Fold) {
    events_.push(now + fold_time(f), {Ev::DieOpDone, uint32_t(unit)});
  } else {
    ++stats_.flash_erases;
    events_.push(now + device_.erase_latency, {Ev::DieOpDone, uint32_t(unit)});
  }
}

void Sim::on_read_sensed(int64_t unit) {
  Die& D = scheduler_.units[unit];
  if (scheduler_.transactions[D.group[0]].src == TxSource::Compute) {
    const uint32_t tx = D.group[0];
    if (scheduler_.transactions[tx].bytes == 0) {  // no page leaves (latch operations, a program): the die is free, the job goes on
      D.busy = false;
      D.group.clear();
      read_done(tx);
      return start_die(unit);
    }
    if (model_.cache_read) return sensed_to_cache(unit, tx);
  }
  D.pending_xfers = 0;
  for (uint32_t tx : D.group) {
    Tx& t = scheduler_.transactions[tx];
    ++D.pending_xfers;
    if (t.src == TxSource::Compute) {
      compute_out(tx);
      continue;
    }
    bool xfer = !(t.src == TxSource::Gc && device_.gc_copyback) && t.bytes > 0;
    Time end = xfer ? xfer_end(t.plane, t.bytes) : events_.now();
    events_.push(end, {Ev::XferDone, tx});
  }
}

void Sim::on_xfer_done(uint32_t tx) {
  int64_t unit = unit_of(scheduler_.transactions[tx].plane);
  if (model_.cache_read && scheduler_.transactions[tx].src == TxSource::Compute) return cache_emptied(unit, tx);
  read_done(tx);
  Die& D = scheduler_.units[unit];
  if (--D.pending_xfers == 0) {
    D.busy = false;
    D.group.clear();
    start_die(unit);
  }
}

void Sim::read_done(uint32_t tx) {
  Tx t = scheduler_.transactions[tx];
  scheduler_.free_transactions.push_back(tx);
  switch (t.src) {
    case TxSource::Mapping:
      arrived(t.lpa);
      return;
    case TxSource::Gc:
      enqueue(new_tx_from([&] { return Tx::gc_program(t); }));
      return;
    case TxSource::Update:
      enqueue(t.update_program());
      return;
    case TxSource::Compute:
      job_done(t);
      return;
    default:
      break;
  }
  if (--host_.requests[t.request()].pending == 0) finish_read(t.request());
}

void Sim::on_die_op_done(int64_t unit) {
  Die& D = scheduler_.units[unit];
  // the finished group moves to a scratch vector (the unit may start its next operation in the loop);
  // the vectors trade buffers, so nothing is allocated per operation
  std::vector<uint32_t>& group = scheduler_.finished_group;
  group.swap(D.group);
  D.group.clear();
  D.busy = false;
  // (mapping units: what the ends admit is queued together before idle dies start)
  enqueue_together([&] { finish_op(group); });
  group.clear();
  start_die(unit);
}

/// The transactions of a finished die operation end, each as its source says.
void Sim::finish_op(const std::vector<uint32_t>& group) {
  for (uint32_t tx : group) {
    Tx t = scheduler_.transactions[tx];
    scheduler_.free_transactions.push_back(tx);
    if (t.src == TxSource::Fold) {
      slc_op_done(t);
    } else if (t.kind == TxKind::Erase) {
      ftl_.erase(t.block);
      GcJob& g = gc_.jobs[t.plane];
      g.active = false;
      auto& bl = gc_.blocked_programs[t.plane];
      std::vector<uint32_t> again(bl.begin(), bl.end());
      bl.clear();
      for (uint32_t b : again) enqueue(b);
      maybe_start_gc(t.plane);
    } else if (t.src == TxSource::Gc) {
      gc_page_done(t.plane);
    } else if (t.src == TxSource::Mapping) {
      uint32_t page = uint32_t(int64_t(t.lpa) - ftl_.logical_pages());
      if (mapping_.departing[page]) --mapping_.departing[page];
    } else if (t.src == TxSource::Cache) {
      cache_program_done(t);
    } else if (--host_.requests[t.request()].pending == 0) {
      events_.push(link(host_.link_up_free, host_.cqe_time), {Ev::Complete, t.request()});
    }
  }
}

}  // namespace bitline::ssd::detail
