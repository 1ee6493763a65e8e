// How a run of the general SSD is set up (ssd/device.hpp runs it): the model's switches (SsdModelOptions, config
// section `ssd_model`), the run's options (RunOptions: progress, the work budget) and the work a scenario is estimated
// to take (WorkEstimate). Its own header so that the engine's internals (device_parts.hpp, device_sim.hpp) need not
// include the public device.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::ssd {

/// How closely the general SSD follows MQSim's firmware (config section `ssd_model`, `bitline ssd run --set
/// ssd_model.KEY=VALUE`). The defaults do what MQSim's source does; each switch turns one mechanism off.
struct SsdModelOptions {
  bool chip_scheduling = false;
  bool issue_on_idle_channel = false;
  bool cmt_per_flow = false;
  bool multiplane_same_page = false;
  bool write_translation = false;
  bool translation_writeback = false;
  bool translation_programs = false;
  bool unwritten_read_dirty = false;
  bool update_reads = false;
  double destage_pages_per_plane = 0;
  bool hot_cold_cache = false;
  Time hot_window{};
  bool dram_serial = false;
  bool cache_read = false;

  /// Every switch at its declared default (the `.def` below is the only place a default is written).
  SsdModelOptions() {
    ParamLoader defaults(nullptr, "ssd_model");
    visit(defaults);
  }

  template <class V>
  void visit(V& v) {
    v(chip_scheduling,
      {.name = "chip_scheduling",
       .def = "true",
       .desc = "a chip runs one die operation at a time (MQSim's TSU issues to idle chips only); false: dies run independently",
       .source = "MQSim source: TSU_Priority_OutOfOrder / TSU_Base::issue_command_to_chip"});
    v(issue_on_idle_channel,
      {.name = "issue_on_idle_channel",
       .def = "true",
       .desc = "an operation is issued to a chip only while its channel is idle (MQSim's TSU schedules a channel's "
               "chips only when the channel is free, in round-robin order); false: a chip starts when it is idle and "
               "only its transfers wait for the channel",
       .source = "MQSim source: TSU_Priority_OutOfOrder::Schedule (Get_channel_status == IDLE)"});
    v(cmt_per_flow, {.name = "cmt_per_flow",
                     .def = "true",
                     .desc = "with CMT_Sharing_Mode SHARED every flow gets a CMT of its own with the whole CMT_Capacity (MQSim "
                             "creates the shared table inside its per-flow loop); false: one table shared by all flows",
                     .source = "MQSim source: Address_Mapping_Unit_Page_Level constructor (sharedCMT)"});
    v(multiplane_same_page, {.name = "multiplane_same_page",
                             .def = "true",
                             .desc = "a multi-plane operation needs the same page offset in every plane",
                             .source = "MQSim source: TSU_Base::issue_command_to_chip"});
    v(write_translation, {.name = "write_translation",
                          .def = "true",
                          .desc = "a write whose mapping entry misses the CMT reads its translation page first",
                          .source = "MQSim source: Address_Mapping_Unit_Page_Level::query_cmt"});
    v(translation_writeback, {.name = "translation_writeback",
                              .def = "true",
                              .desc = "evicting a dirty CMT entry writes its translation page back: a read of the page's clean "
                                      "cached entries, all its dirty entries cleaned",
                              .source = "MQSim source: generate_flash_writeback_request_for_mapping_data"});
    v(translation_programs, {.name = "translation_programs",
                             .def = "false",
                             .desc = "the translation-page program of a write-back runs; false as in MQSim, whose TSUs queue it "
                                     "but never service it (that page then stays in memory: later misses on it read nothing)",
                             .source = "MQSim source: MappingWriteTRQueue is filled but read by no TSU"});
    v(unwritten_read_dirty, {.name = "unwritten_read_dirty",
                             .def = "true",
                             .desc = "a read of a never-written page creates its mapping entry (dirty in the CMT)",
                             .source = "MQSim source: online_create_entry_for_reads"});
    v(update_reads, {.name = "update_reads",
                     .def = "true",
                     .desc = "a write covering part of a flash page first reads the page's other written sectors",
                     .source = "MQSim source: allocate_page_in_plane_for_user_write"});
    v(destage_pages_per_plane, {.name = "destage_pages_per_plane",
                                .def = "1",
                                .desc = "write-cache back-pressure: sectors being programmed from the cache at most this many "
                                        "pages per plane (0: unlimited)",
                                .source = "MQSim source: back_pressure_buffer_max_depth = planes x sectors per page",
                                .min = 0,
                                .max = 1e6});
    v(hot_cold_cache, {.name = "hot_cold_cache",
                       .def = "true",
                       .desc = "a cached page first written in the current window is programmed at once (cold); one written "
                               "again stays in the cache, absorbing later writes, until LRU-evicted",
                       .source = "MQSim source: Data_Cache_Manager_Flash_Advanced bloom filter"});
    v(hot_window, {.name = "hot_window",
                   .def = "1s",
                   .desc = "how long a written page counts as hot",
                   .source = "MQSim source: bloom_filter_reset_step = 1 s",
                   .min = 1e-9});
    v(dram_serial, {.name = "dram_serial",
                    .def = "true",
                    .desc = "the cache DRAM serves one access at a time (FIFO)",
                    .source = "MQSim source: memory_channel_is_busy"});
    v(cache_read, {.name = "cache_read",
                   .def = "false",
                   .desc = "Flash-Cosmos operations (run_compute) use cache read: once a page is sensed it moves to the "
                           "cache latch and the die may sense the next while it leaves; a sensed page waits for the "
                           "latch to empty. false as in MQSim (a die is busy until its page has left); host reads and "
                           "writes never use it",
                   .source = "MQSim has no cache read; the Flash-Cosmos SSD's ssd.cache_read (docs/cosmos.md)"});
  }
};

/// Where a running scenario stands (RunOptions::progress).
struct Progress {
  double simulated_s = 0;         // simulated time so far
  int64_t requests_done = 0;      // requests completed so far
  int64_t requests_estimate = 0;  // the up-front estimate of the scenario's requests (an upper bound; WorkEstimate)
};

/// The work of one scenario, estimated from its inputs before it runs: host requests and the flash page
/// transactions they make (a request's pages; translation reads, GC and write-backs come on top). A synthetic
/// flow's requests are Total_Requests_To_Generate, or at most Stop_Time x its highest possible rate (BANDWIDTH:
/// Bandwidth / request size; QUEUE_DEPTH: queue depth / the least latency a request can have, below the PCIe
/// link's and, for cached writes, the cache DRAM's rate); a trace flow's are its lines x Percentage_To_Be_Executed
/// x Relay_Count. The engine runs about 5-7 events per page transaction.
struct WorkEstimate {
  int64_t requests = 0;
  int64_t page_transactions = 0;
  std::string why;  // which element sets it, per flow (for messages)
};

/// The default budget of estimated page transactions per scenario (bitline ssd run --max-transactions): 2^26, about
/// 30-60 s of this simulator on one core. A scenario estimated above it is refused (ConfigError) before it runs.
inline constexpr int64_t kDefaultMaxTransactions = int64_t(1) << 26;

struct RunOptions {
  /// Called about every 2 s of wall time while a scenario runs; may print progress.
  std::function<void(const Progress&)> progress;
  SsdModelOptions model;
  int64_t max_transactions = kDefaultMaxTransactions;
  /// Records the bytes of the requests completed per bin of this much simulated time (the result's `throughput`);
  /// 0: not recorded.
  Time throughput_bin{};
  std::string budget_note;  // where max_transactions came from when not the option (the workload's remainder)
  bool io_stats = false;    // collect each flow's FlowIoStats (ssd/io_stats.hpp; bitline ssd fio)
};

}  // namespace bitline::ssd
