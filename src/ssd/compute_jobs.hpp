// Stage: compute jobs (Flash-Cosmos reads and sequential writes on the general SSD, ssd/device.hpp).
//
// Contract. A JobSpec gives every die a list of jobs; a job is one page column of one query on the die's active
// planes (multi-plane), running a fixed step template (sensings and latch operations; a step may leave a page in
// the C-latch to move out, or program slices the host streamed in). The device runs them as transactions of its
// one engine (the same dies, channels, transaction scheduler and PCIe link as host I/O), under these rules:
//   die      one step at a time on all its active planes; a job's steps are cut into segments where a page
//            leaves, one die operation each. With cache read (ssd.cache_read) the next sensing starts while the
//            C-latch still holds the previous page; a new page enters the C-latch only once the previous one
//            has left over the channel (a sensed page waits in the die, busy);
//   channel  one transfer at a time; a page out is served in the order it was sensed; a channel with no page
//            to move out loads write slices into its dies round robin;
//   ISP      the controller's bit logic (FIFO at ssd.isp_throughput) with an SRAM pool: a job takes a slot (its
//            partial result) when its first operand page starts over the channel (without a free slot the page
//            waits in the latches), and the slot holds the finished result until it has left over PCIe;
//   PCIe     to the host one transfer at a time (FIFO), from the host likewise, each arriving ssd.pcie_latency
//            after its transfer ends;
//   host     CPU work in arrival order (combining operands, counting result bits);
//   writes   a program waits for its `data_in` slices (one page on each active plane), streamed by the host over
//            PCIe into the controller's write buffer while it has room, then over the die's channel into its
//            latches; while a program runs, `overlap` slices of the die's next program may load (cache program).
// The run's time is when the last piece of work ends; energy is counted per operation as it goes (the power x
// time terms are cosmos::account's). Nothing here is a closed formula (docs/ssd.md, "Flash-Cosmos on the
// general device"; docs/cosmos.md, "Timing").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.hpp"
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

struct JobSpec {
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

/// The controller's ISP, the PCIe link's latency, the host CPU, the write buffer and the energies per bit, for
/// jobs that use them (the device itself gives dies, channels and the link's rate).
struct ComputeRates {
  Bandwidth isp{};       // ISP bit logic throughput
  int64_t isp_sram = 0;  // ISP SRAM bytes
  Bandwidth host_bitwise{}, host_popcount{};
  Time pcie_latency{};                                   // from the end of a transfer over PCIe to its arrival
  int64_t write_buffer = 0;                              // the controller's write buffer, bytes (sequential writes)
  EnergyPerBit channel_io{}, pcie{}, isp_bit{}, dram{};  // NAND data-out, PCIe payload, ISP operand, host DRAM
  // The channel's rate exactly (nand.timing.channel_rate), where the device's file can hold only whole MT/s;
  // 0: the device's own.
  Bandwidth channel{};
  static ComputeRates of(const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand) {
    return {ssd.isp_throughput, ssd.isp_sram.raw(),     host.bitwise_throughput, host.popcount_throughput,
            ssd.pcie_latency,   ssd.write_buffer.raw(), nand.energy.io_energy,   ssd.pcie_energy,
            ssd.isp_energy,     host.dram_energy,       nand.timing.channel_rate};
  }
};

/// The most utilised resource of a run (busy time over the run's time; dies and channels per die and per channel).
/// None: a run of no time.
enum class Bottleneck { None, Dies, Channels, Pcie, Isp, Host };
/// Its name in results and messages: none | dies | channels | pcie | isp | host.
const char* to_string(Bottleneck b);

/// What a run of jobs did: one stats tree (register_stats) for every system and for writes.
struct ComputeResult {
  Time total{};                                                              // until the last piece of work has ended (the host's included)
  uint64_t events = 0, die_steps = 0, sensings = 0, jobs = 0, programs = 0;  // sensings: per plane
  int64_t channel_bytes = 0, pcie_bytes = 0, host_bytes = 0;
  Time die_busy{}, channel_busy{}, pcie_busy{}, isp_busy{}, host_busy{};
  int64_t isp_sram_peak = 0;  // most ISP SRAM bytes held at once
  Time isp_link_wait{};       // time finished ISP results waited for PCIe (summed)
  Time ssd_active{};          // from the start until the SSD's last transfer over PCIe has ended
  // Energy per operation / per bit, counted as the run goes: NAND steps, channel and PCIe bits, ISP operand bits,
  // host DRAM bits.
  Energy nand_sense{}, nand_io{}, pcie{}, isp{}, dram_access{};
  Bottleneck bottleneck = Bottleneck::None;

  /// Registers the run's statistics (time, busy times, bytes, the bottleneck) into a stats group.
  void register_stats(StatGroup& g) const;
};

/// How the general device starts Flash-Cosmos operations: eager (a chip starts when it is free: the paper's SSD)
/// or mqsim (a chip starts only while its channel is idle, MQSim's scheduler; cosmos run/eval --general-device).
enum class DeviceScheduling { Mqsim, Eager };
const Registry<DeviceScheduling>& device_schedulings();  // ssd/device.cpp

/// Runs `spec` on the Flash-Cosmos SSD as a general device (ssd::device_of), with its cache read and `scheduling`,
/// its ISP, link and host (ComputeRates::of). ModelError when the spec does not fit the SSD or deadlocks.
ComputeResult run_jobs(const JobSpec& spec, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand,
                       DeviceScheduling scheduling = DeviceScheduling::Eager);

}  // namespace bitline::ssd
