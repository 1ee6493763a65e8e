// The general SSD's device (config section `ssd_device`): host link, controller, mapping, GC and flash geometry and
// timing, the quantities of MQSim's device file (Execution_Parameter_Set) as typed parameters. Every default is
// MQSim's (its ssdconfig.xml defaults, as its Device_Parameter_Set constructor sets them) and lives only in `.def`.
// The MQSim XML reader (mqsim_xml.cpp) maps each element onto its key here; `bitline ssd run --set
// ssd_device.KEY=VALUE` overrides a value of the file; `bitline describe ssd_device` lists them; every result
// carries the resolved values. The keys of kBitlineOnlyKeys are bitline's own, for what MQSim does not model (the SLC
// write cache, slc_cache.cpp): off by default, as MQSim; a device file sets them in <Bitline_Parameter_Set>, one
// element per key (MQSim skips the element).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/params.hpp"
#include "ssd/mqsim_choices.hpp"

namespace bitline::ssd {

/// Plane_Allocation_Scheme: the 24 fully static schemes, named by their letters (CWDP, ...).
const Registry<PlaneAllocation>& plane_allocations();

/// ssd_device.slc_cache: the drive's SLC write cache (slc_cache.cpp).
enum class SlcCache { Off, Static, TurboWrite };
const Registry<SlcCache>& slc_cache_modes();

/// The keys of ssd_device that no MQSim element sets: a device file gives them in <Bitline_Parameter_Set>.
inline constexpr std::array<std::string_view, 10> kBitlineOnlyKeys{
    "slc_cache",      "slc_static_bytes",   "slc_dynamic_max_bytes",   "slc_program_latency", "slc_read_latency",
    "slc_idle_delay", "slc_fold_when_full", "independent_plane_reads", "mapping_unit",        "cache_program"};

struct DeviceParams {
  // Host_Parameter_Set
  Bandwidth pcie_lane_bandwidth{};
  int64_t pcie_lane_count = 0;
  // Device_Parameter_Set
  int64_t seed = 0;
  bool preconditioning = false;
  Choice<HostInterface, modelled_of<HostInterface, host_interfaces>> host_interface;
  int64_t io_queue_depth = 0;
  int64_t queue_fetch_size = 0;
  Choice<CachingMechanism, modelled_of<CachingMechanism, caching_mechanisms>> caching_mechanism;
  Choice<DataCacheSharing, modelled_of<DataCacheSharing, data_cache_sharing_modes>> data_cache_sharing;
  Bytes data_cache_capacity{};
  Bytes dram_row_size{};
  int64_t dram_data_rate = 0;  // MT/s
  Bytes dram_burst_size{};
  Time dram_trcd{}, dram_tcl{}, dram_trp{};
  Choice<AddressMapping, modelled_of<AddressMapping, address_mappings>> address_mapping;
  bool ideal_mapping_table = false;
  Bytes cmt_capacity{};
  Choice<CmtSharing, modelled_of<CmtSharing, cmt_sharing_modes>> cmt_sharing;
  Choice<PlaneAllocation, plane_allocations> plane_allocation;
  Choice<Scheduling, modelled_of<Scheduling, scheduling_policies>> scheduling;
  double overprovisioning = 0;
  double gc_exec_threshold = 0;
  Choice<GcPolicy, modelled_of<GcPolicy, gc_policies>> gc_policy;
  bool gc_copyback = false;
  bool gc_preemptible = false;
  double gc_hard_threshold = 0;
  bool dynamic_wl = false, static_wl = false;
  int64_t static_wl_threshold = 0;
  int64_t channels = 0;
  int64_t channel_width = 0;          // bytes
  int64_t channel_transfer_rate = 0;  // MT/s
  int64_t chips_per_channel = 0;
  Choice<CommProtocol, modelled_of<CommProtocol, comm_protocols>> comm_protocol;
  // Flash_Parameter_Set
  Choice<FlashTechnology, modelled_of<FlashTechnology, flash_technologies>> technology;
  Time read_latency[3] = {};  // LSB, CSB, MSB
  Time program_latency[3] = {};
  Time erase_latency{};
  int64_t pe_cycles_limit = 0;
  int64_t dies_per_chip = 0;
  int64_t planes_per_die = 0;
  int64_t blocks_per_plane = 0;
  int64_t pages_per_block = 0;
  int64_t page_size = 0;  // bytes
  int64_t page_metadata = 0;
  // bitline's own (kBitlineOnlyKeys): the SLC write cache
  Choice<SlcCache, slc_cache_modes> slc_cache;
  Bytes slc_static_bytes{}, slc_dynamic_max_bytes{};
  Time slc_program_latency{}, slc_read_latency{}, slc_idle_delay{};
  bool slc_fold_when_full = false;
  // bitline's own: multi-plane reads of independent pages (transaction_scheduler.cpp)
  bool independent_plane_reads = false;
  // bitline's own: the FTL's mapping unit (0: the flash page, MQSim's page-level mapping)
  Bytes mapping_unit{};
  // bitline's own: a plane takes its next page into its cache register while it programs (the write cache's back-pressure)
  bool cache_program = false;

  template <class V>
  void visit(V& v) {
    static constexpr std::string_view src = "MQSim default (Tavakkol et al., FAST 2018; its Device_Parameter_Set)";
    v(pcie_lane_bandwidth, {.name = "pcie_lane_bandwidth",
                            .def = "1GB/s",
                            .desc = "PCIe bandwidth per lane (<PCIe_Lane_Bandwidth>)",
                            .source = src,
                            .min = 1e6,
                            .max = 1e12});
    v(pcie_lane_count,
      {.name = "pcie_lane_count", .def = "4", .desc = "PCIe lanes (<PCIe_Lane_Count>)", .source = src, .min = 1, .max = 64});
    v(seed,
      {.name = "seed", .def = "321", .desc = "seed of the device's random choices (<Seed>)", .source = src, .min = 0, .max = 2147483647});
    v(preconditioning, {.name = "preconditioning",
                        .def = "true",
                        .desc = "the flows' initial occupancy is written before the run (<Enabled_Preconditioning>)",
                        .source = src});
    v(host_interface, {.name = "host_interface", .def = "NVME", .desc = "host interface (<HostInterface_Type>)", .source = src});
    v(io_queue_depth, {.name = "io_queue_depth",
                       .def = "1024",
                       .desc = "entries of an NVMe submission queue (<IO_Queue_Depth>)",
                       .source = src,
                       .min = 1,
                       .max = 65535});
    v(queue_fetch_size, {.name = "queue_fetch_size",
                         .def = "512",
                         .desc = "requests the device takes from a submission queue at most at once (<Queue_Fetch_Size>)",
                         .source = src,
                         .min = 1,
                         .max = 65535});
    v(caching_mechanism,
      {.name = "caching_mechanism", .def = "ADVANCED", .desc = "data cache manager (<Caching_Mechanism>)", .source = src});
    v(data_cache_sharing,
      {.name = "data_cache_sharing", .def = "SHARED", .desc = "data cache over flows (<Data_Cache_Sharing_Mode>)", .source = src});
    v(data_cache_capacity, {.name = "data_cache_capacity",
                            .def = "256MiB",
                            .desc = "DRAM data cache (<Data_Cache_Capacity>)",
                            .source = src,
                            .min = 0,
                            .max = 1099511627776.0});
    v(dram_row_size, {.name = "dram_row_size",
                      .def = "8192B",
                      .desc = "cache DRAM row (<Data_Cache_DRAM_Row_Size>)",
                      .source = src,
                      .min = 1,
                      .max = 1048576});
    v(dram_data_rate, {.name = "dram_data_rate",
                       .def = "800",
                       .desc = "cache DRAM data rate, MT/s (<Data_Cache_DRAM_Data_Rate>)",
                       .source = src,
                       .min = 1,
                       .max = 100000});
    v(dram_burst_size, {.name = "dram_burst_size",
                        .def = "4B",
                        .desc = "cache DRAM burst (<Data_Cache_DRAM_Data_Busrt_Size>)",
                        .source = src,
                        .min = 1,
                        .max = 4096});
    v(dram_trcd,
      {.name = "dram_trcd", .def = "13ns", .desc = "cache DRAM tRCD (<Data_Cache_DRAM_tRCD>)", .source = src, .min = 0, .max = 1e-3});
    v(dram_tcl,
      {.name = "dram_tcl", .def = "13ns", .desc = "cache DRAM tCL (<Data_Cache_DRAM_tCL>)", .source = src, .min = 0, .max = 1e-3});
    v(dram_trp,
      {.name = "dram_trp", .def = "13ns", .desc = "cache DRAM tRP (<Data_Cache_DRAM_tRP>)", .source = src, .min = 0, .max = 1e-3});
    v(address_mapping, {.name = "address_mapping", .def = "PAGE_LEVEL", .desc = "address mapping (<Address_Mapping>)", .source = src});
    v(ideal_mapping_table, {.name = "ideal_mapping_table",
                            .def = "false",
                            .desc = "the whole mapping table is in DRAM: no translation reads (<Ideal_Mapping_Table>)",
                            .source = src});
    v(cmt_capacity, {.name = "cmt_capacity",
                     .def = "2MiB",
                     .desc = "cached mapping table (<CMT_Capacity>)",
                     .source = src,
                     .min = 0,
                     .max = 68719476736.0});
    v(cmt_sharing, {.name = "cmt_sharing", .def = "SHARED", .desc = "mapping table cache over flows (<CMT_Sharing_Mode>)", .source = src});
    v(plane_allocation, {.name = "plane_allocation",
                         .def = "CWDP",
                         .desc = "order in which consecutive pages stripe over channel, way, die, plane (<Plane_Allocation_Scheme>)",
                         .source = src});
    v(scheduling, {.name = "scheduling",
                   .def = "PRIORITY_OUT_OF_ORDER",
                   .desc = "transaction scheduling (<Transaction_Scheduling_Policy>)",
                   .source = src});
    v(overprovisioning, {.name = "overprovisioning",
                         .def = "0.07",
                         .desc = "physical space the host cannot address (<Overprovisioning_Ratio>)",
                         .source = src,
                         .min = 0,
                         .max = 0.9});
    v(gc_exec_threshold, {.name = "gc_exec_threshold",
                          .def = "0.05",
                          .desc = "free-block fraction of a plane below which GC runs (<GC_Exec_Threshold>)",
                          .source = src,
                          .min = 0,
                          .max = 0.5});
    v(gc_policy, {.name = "gc_policy", .def = "GREEDY", .desc = "GC victim selection (<GC_Block_Selection_Policy>)", .source = src});
    v(gc_copyback, {.name = "gc_copyback", .def = "false", .desc = "GC moves pages by copyback (<Use_Copyback_for_GC>)", .source = src});
    v(gc_preemptible,
      {.name = "gc_preemptible", .def = "false", .desc = "user requests preempt GC (<Preemptible_GC_Enabled>)", .source = src});
    v(gc_hard_threshold, {.name = "gc_hard_threshold",
                          .def = "0.005",
                          .desc = "free-block fraction below which GC is not preemptible (<GC_Hard_Threshold>)",
                          .source = src,
                          .min = 0,
                          .max = 0.5});
    v(dynamic_wl,
      {.name = "dynamic_wearleveling", .def = "true", .desc = "dynamic wear leveling (<Dynamic_Wearleveling_Enabled>)", .source = src});
    v(static_wl,
      {.name = "static_wearleveling", .def = "true", .desc = "static wear leveling (<Static_Wearleveling_Enabled>)", .source = src});
    v(static_wl_threshold, {.name = "static_wearleveling_threshold",
                            .def = "100",
                            .desc = "erase-count gap that triggers static wear leveling (<Static_Wearleveling_Threshold>)",
                            .source = src,
                            .min = 0,
                            .max = 1e9});
    v(channels, {.name = "channels", .def = "8", .desc = "flash channels (<Flash_Channel_Count>)", .source = src, .min = 1, .max = 256});
    v(channel_width,
      {.name = "channel_width", .def = "1", .desc = "channel width, bytes (<Flash_Channel_Width>)", .source = src, .min = 1, .max = 8});
    v(channel_transfer_rate, {.name = "channel_transfer_rate",
                              .def = "333",
                              .desc = "channel transfer rate, MT/s (<Channel_Transfer_Rate>)",
                              .source = src,
                              .min = 1,
                              .max = 100000});
    v(chips_per_channel,
      {.name = "chips_per_channel", .def = "4", .desc = "chips on a channel (<Chip_No_Per_Channel>)", .source = src, .min = 1, .max = 256});
    v(comm_protocol, {.name = "comm_protocol", .def = "NVDDR2", .desc = "channel protocol (<Flash_Comm_Protocol>)", .source = src});
    v(technology, {.name = "technology", .def = "MLC", .desc = "bits per cell (<Flash_Technology>)", .source = src});
    static constexpr std::string_view rd[3] = {"read_latency_lsb", "read_latency_csb", "read_latency_msb"};
    static constexpr std::string_view pr[3] = {"program_latency_lsb", "program_latency_csb", "program_latency_msb"};
    static constexpr std::string_view rd_desc[3] = {"LSB page read (<Page_Read_Latency_LSB>)", "CSB page read (<Page_Read_Latency_CSB>)",
                                                    "MSB page read (<Page_Read_Latency_MSB>)"};
    static constexpr std::string_view pr_desc[3] = {"LSB page program (<Page_Program_Latency_LSB>)",
                                                    "CSB page program (<Page_Program_Latency_CSB>)",
                                                    "MSB page program (<Page_Program_Latency_MSB>)"};
    for (int i = 0; i < 3; ++i) {
      v(read_latency[i], {.name = rd[i], .def = "75us", .desc = rd_desc[i], .source = src, .min = 0, .max = 0.1});
      v(program_latency[i], {.name = pr[i], .def = "750us", .desc = pr_desc[i], .source = src, .min = 0, .max = 0.1});
    }
    v(erase_latency,
      {.name = "erase_latency", .def = "3800us", .desc = "block erase (<Block_Erase_Latency>)", .source = src, .min = 0, .max = 1});
    v(pe_cycles_limit, {.name = "pe_cycles_limit",
                        .def = "10000",
                        .desc = "program/erase cycles of a block (<Block_PE_Cycles_Limit>)",
                        .source = src,
                        .min = 1,
                        .max = 1e9});
    v(dies_per_chip,
      {.name = "dies_per_chip", .def = "2", .desc = "dies in a chip (<Die_No_Per_Chip>)", .source = src, .min = 1, .max = 64});
    v(planes_per_die,
      {.name = "planes_per_die", .def = "2", .desc = "planes in a die (<Plane_No_Per_Die>)", .source = src, .min = 1, .max = 16});
    v(blocks_per_plane, {.name = "blocks_per_plane",
                         .def = "2048",
                         .desc = "blocks in a plane (<Block_No_Per_Plane>)",
                         .source = src,
                         .min = 4,
                         .max = 1048576});
    v(pages_per_block,
      {.name = "pages_per_block", .def = "256", .desc = "pages in a block (<Page_No_Per_Block>)", .source = src, .min = 1, .max = 16384});
    v(page_size, {.name = "page_size",
                  .def = "8192",
                  .desc = "page data, bytes: a multiple of the 512-byte sector, at most 64 sectors (<Page_Capacity>)",
                  .source = src,
                  .min = 512,
                  .max = 32768});
    v(page_metadata, {.name = "page_metadata",
                      .def = "448",
                      .desc = "page spare area, bytes (<Page_Metadat_Capacity>)",
                      .source = src,
                      .min = 0,
                      .max = 1048576});
    // ---- bitline's own: the SLC write cache (slc_cache.cpp, docs/ssd.md "SLC caching"); MQSim has none ----
    v(slc_cache, {.name = "slc_cache",
                  .def = "off",
                  .desc = "SLC write cache: host page programs go to an SLC region at slc_program_latency while it has room, "
                          "then directly to TLC (MLC); folding moves them to TLC in idle time (docs/ssd.md, SLC caching)",
                  .source = "bitline's model of Samsung's TurboWrite / Intelligent TurboWrite; off by default, as MQSim (no SLC cache)"});
    v(slc_static_bytes, {.name = "slc_static_bytes",
                         .def = "0B",
                         .desc = "data the static SLC region holds (its flash, bits per cell times this, comes out of the "
                                 "over-provisioning)",
                         .source = "per drive (the drive files cite theirs); 0 without a cache",
                         .min = 0,
                         .max = 1e15});
    v(slc_dynamic_max_bytes, {.name = "slc_dynamic_max_bytes",
                              .def = "0B",
                              .desc = "turbowrite: most data the dynamic SLC region holds; it holds at most the free logical "
                                      "space / bits per cell, so it shrinks as the drive fills",
                              .source = "per drive (the drive files cite theirs); 0 without a cache",
                              .min = 0,
                              .max = 1e15});
    v(slc_program_latency, {.name = "slc_program_latency",
                            .def = "200us",
                            .desc = "tPROG of a page programmed in SLC mode (a host page into the SLC region)",
                            .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology: SLC tPROG = 200 us (bitline's "
                                      "nand.timing.t_prog_slc)",
                            .min = 0,
                            .max = 0.1});
    v(slc_read_latency, {.name = "slc_read_latency",
                         .def = "22.5us",
                         .desc = "tR of a page in SLC mode (a fold's read of a cached page)",
                         .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology: SLC tR = 22.5 us (bitline's "
                                   "nand.timing.t_read_slc)",
                         .min = 0,
                         .max = 0.1});
    v(slc_idle_delay, {.name = "slc_idle_delay",
                       .def = "1ms",
                       .desc = "folding starts once the host has had no request in the device this long, and pauses at "
                               "its next request",
                       .source = "assumption: no drive publishes it; techpowerup's 980 PRO review: 'Any pause in write "
                                 "activity, even for a second, will give the drive time to free up some SLC cache'",
                       .min = 0,
                       .max = 1e3});
    v(slc_fold_when_full, {.name = "slc_fold_when_full",
                           .def = "false",
                           .desc = "folding also starts when a host program finds the SLC region full and then runs to the end "
                                   "of the run, after every other transaction of its die; false: folding in idle time only",
                           .source = "assumption: the data sheets rate the writes past TurboWrite at one constant speed (the "
                                     "TLC written directly), without folding beside them"});
    // ---- bitline's own: multi-plane reads (transaction_scheduler.cpp, docs/ssd.md "Host queues and multi-plane reads") ----
    v(independent_plane_reads, {.name = "independent_plane_reads",
                                .def = "false",
                                .desc = "a multi-plane read may read a different page offset in each plane of its die (an "
                                        "independent, or asynchronous, multi-plane read: one tR for the die's planes, then "
                                        "their pages over the channel one after the other); false: a multi-plane read needs "
                                        "the same page offset in every plane, as MQSim (with ssd_model.multiplane_same_page). "
                                        "Programs keep the same-offset rule either way",
                                .source = "ONFI's multi-plane read: 'Page address for reads have to be the same' (MEMCON "
                                          "tutorial, https://jaehyek.github.io/2016/12/07/eMMC-UFS-FTL-4); independent "
                                          "plane reads: asynchronous multi-plane independent (AMPI) read, US patent 11657861 "
                                          "B2; off by default, as MQSim"});
    // ---- bitline's own: the mapping unit (docs/ssd.md "Mapping units") ----
    v(mapping_unit, {.name = "mapping_unit",
                     .def = "0B",
                     .desc = "what one entry of the FTL's mapping table maps: 0 maps whole flash pages (MQSim's page-level "
                             "mapping: a write smaller than a page programs a page of its own); a divisor of the page, a "
                             "multiple of 512 B (4KiB), maps units of that size: a host write of a unit is one mapping entry, "
                             "and one program packs up to page / unit queued units of its plane into a flash page (a page "
                             "programmed with fewer keeps the rest unwritten); reads sense the page once for every unit of "
                             "it they want",
                     .source = "drives map 4 KiB units: their DRAM is sized for one 4-byte entry per 4 KiB (1 GB per 1 TB, "
                               "e.g. the 980 PRO's 1 GB LPDDR4, techpowerup: 'to store the mapping tables'); 0 by default, "
                               "as MQSim",
                     .min = 0,
                     .max = 32768});
    v(cache_program, {.name = "cache_program",
                      .def = "false",
                      .desc = "the flash takes a program's next page into a plane's cache register while the plane programs "
                              "(ONFI's PAGE CACHE PROGRAM): the write cache hands the back end up to one more page per plane "
                              "(ssd_model.destage_pages_per_plane counts the pages per plane besides it); the transfer of "
                              "the next page during the program is not modelled (it waits for the die, as without)",
                      .source = "ONFI 4.2, PAGE CACHE PROGRAM (80h-15h); off by default, as MQSim (whose back-pressure is one "
                                "page per plane)"});
  }
};

}  // namespace bitline::ssd
