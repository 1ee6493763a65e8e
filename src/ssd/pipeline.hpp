// The event-driven timing model of an SSD serving one bulk bitwise request.
//
// Every die works through a list of jobs (one job = one page column of one
// query on the die's active planes, multi-plane). A job is a fixed sequence of
// steps (sensings and latch operations); a step may leave a page in the
// C-latch to move out. Resources and their rules:
//   die      one step at a time on all its active planes (multi-plane op);
//            with cache read, the next sensing starts while the C-latch still
//            holds the previous page, but a new page can enter the C-latch only
//            once the previous one has left over the channel;
//   channel  one transfer at a time, first come first served among its dies;
//   ISP      the controller's bit logic (FIFO) with a SRAM pool of slots: a
//            job takes a slot (its partial result) when its first operand page
//            starts over the channel, the slot then holds the finished result
//            until it has left over PCIe (DMA from SRAM, no copy). Sensing
//            never waits for SRAM; a page that would open a job without a free
//            slot waits, and pages of jobs holding a slot pass it;
//   PCIe     one transfer at a time (FIFO), plus a fixed latency;
//   host     CPU work in arrival order (combining operands, bit count);
//   writes   a program step waits for its data: `data_in` slices (one page on
//            each active plane) streamed by the host over PCIe (FIFO) into the
//            controller's write buffer while it has room, then over the die's
//            channel into its latches; a channel with no page to move out
//            loads its dies round robin. While a program runs, the latches it
//            leaves free (`overlap`: cache program) take the next program's
//            first slices; the rest load after it ends (docs/cosmos.md,
//            "Sequential writes").
// Stages overlap exactly as these rules allow; the time is when the last
// piece of work finishes. Nothing here is a closed formula.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "core/units.hpp"
#include "nand/params.hpp"
#include "ssd/params.hpp"

namespace bitline::ssd {

/// Where the page a step leaves in the C-latch goes.
enum class Route : uint8_t {
  None,    // stays in the latches (accumulation)
  ToHost,  // an operand page, to be combined by the host CPU (OSP)
  ToIsp,   // an operand page, to be combined by the controller's ISP logic
  Result,  // the job's result page, to the host
};

struct Step {
  Time die_time{};  // how long the die is busy (all active planes in parallel)
  Energy energy{};  // NAND energy of this step: the die's power x its time, once per die (a datasheet
                    // ICC is a die figure; a multi-plane operation is not charged per plane)
  Route route = Route::None;
  bool sensing = true;  // counts as a sensing (vs. a latch operation)
  // A program: the die starts it once `data_in` slices are in its latches; while it runs, `overlap` slices of
  // the die's next program may load (cache program). 0: not a program.
  uint16_t data_in = 0, overlap = 0;
};

/// What the host does with what arrives.
struct HostWork {
  bool combine_operands = false;  // OSP: the CPU combines every operand page
  bool popcount_result = false;   // BMI: the CPU counts the bits of each result page
};

/// One job of a die: a page column on `active` planes (multi-plane), running step template `tmpl`.
struct Job {
  uint16_t active = 0;
  uint16_t tmpl = 0;
};

struct PipelineSpec {
  std::vector<std::vector<Step>> templates;  // step sequences (one per query shape)
  std::vector<std::vector<Job>> die_jobs;    // per die, in order
  HostWork host;
  // Sequential writes: the host streams `write_slices` slices in order; slice i belongs to program operation
  // i / slices_per_program, on die program_die(op) (round robin over the dies, channel-interleaved), the next
  // program job in that die's list. Every die's program jobs must have the same data_in (= slices_per_program).
  int64_t write_slices = 0;
  int64_t slices_per_program = 1;
};

/// The die of program operation `op` of a sequential write: round robin over the dies, channel-interleaved
/// (die 0 of every channel, then die 1, ...).
inline uint32_t program_die(int64_t op, int64_t channels, int64_t dies_per_channel) {
  const int64_t k = op % (channels * dies_per_channel);
  return uint32_t((k % channels) * dies_per_channel + k / channels);
}

struct PipelineResult {
  Time total{};
  uint64_t events = 0, die_steps = 0, sensings = 0, jobs = 0, programs = 0;
  int64_t channel_bytes = 0, pcie_bytes = 0, host_bytes = 0;
  Time die_busy{}, channel_busy{}, pcie_busy{}, isp_busy{}, host_busy{};
  int64_t isp_sram_peak = 0;  // most ISP SRAM bytes held at once
  Time isp_link_wait{};       // time finished ISP results waited for PCIe (summed)
  Time ssd_active{};          // from the start until the SSD's last transfer to the host has ended
  // Energy per operation / per bit, counted as the run goes (the power x time terms are the accounting's,
  // cosmos/energy.hpp): NAND steps, channel and PCIe bits, ISP operand bits, host DRAM bits.
  Energy nand_sense{}, nand_io{}, pcie{}, isp{}, dram_access{};
  std::string bottleneck;

  /// Registers the run's statistics (time, busy times, bytes, the bottleneck) into a stats group.
  void register_stats(StatGroup& g) const;
};

/// Runs the event-driven model (page size, channel rate and channel energy come from `nand`).
PipelineResult run_pipeline(const PipelineSpec& spec, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand);

}  // namespace bitline::ssd
