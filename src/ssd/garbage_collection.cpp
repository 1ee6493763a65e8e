// Stage: garbage collection (the general SSD, device_sim.hpp).
//
// Contract. A plane whose free blocks fall below the FTL's threshold (GC_Exec_Threshold) starts one GC job at a time:
// it picks a victim block (ftl.hpp, GC_Block_Selection_Policy), reads each valid page and programs it elsewhere in
// the plane (or copies it back inside the die, CopyBack_for_GC), then erases the block; programs blocked for want of
// a free page are queued again after the erase. GC transactions go before every other in their unit unless
// Preemptible_GC_Enabled (transaction_scheduler).
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

namespace bitline::ssd::detail {

void Sim::maybe_start_gc(int64_t plane) {
  GcJob& g = gc_.jobs[plane];
  if (g.active || !ftl_.needs_gc(plane)) return;
  int64_t v = ftl_.pick_victim(plane);
  if (v < 0) return;
  g.active = true;
  g.victim = v;
  g.outstanding = 1;  // guard
  uint32_t lpa = 0;
  int64_t G = ftl_.pages_per_block();
  for (int64_t pg = ftl_.next_valid(v, 0, lpa); pg < G; pg = ftl_.next_valid(v, pg + 1, lpa)) {
    ++g.outstanding;
    uint32_t ppa = uint32_t(v * G + pg);
    enqueue(new_tx_from([&] { return Tx::gc_read(plane, lpa, ppa, device_.page_size); }));
  }
  gc_page_done(plane);
}

}  // namespace bitline::ssd::detail
