// The general SSD's engine: its construction (the device's tables, flows, caches and CMTs), the event loop and its
// dispatch to the stages (device_sim.hpp lists them), and the entry points of ssd/device.hpp.
#include "ssd/device.hpp"
#include <nlohmann/json.hpp>
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "core/param_dump.hpp"
#include "core/rng.hpp"
#include "ssd/cmt.hpp"
#include "ssd/ftl.hpp"

namespace bitline::ssd {
namespace detail {

Sim::Sim(const DeviceXml& physical, const ScenarioXml& s, const RunOptions& opt, const JobSpec* compute, const ComputeRates& rates,
         const std::string& label)
    : mapped_(mapped_view(physical)), device_(mapped_), options_(opt), model_(opt.model), ftl_(device_), label_(label) {
  const DeviceXml& d = device_;  // pages are mapping units from here on (mapped_view)
  if (compute && d.units_per_flash_page > 1)
    throw ConfigError(
        fmt::format("{}: ssd_device.mapping_unit {} B: Flash-Cosmos jobs address whole flash pages; they run with "
                    "page-level mapping (mapping_unit 0)",
                    d.file, physical.mapping_unit.raw()));
  jobs_.spec = compute;
  jobs_.rates = rates;
  setup_topology();
  setup_links(rates);
  const int64_t nflows = int64_t(s.flows.size());
  const int64_t per_flow = nflows > 0 ? d.logical_pages() * sectors_per_page_ / nflows : 0;  // sectors of each flow's share
  setup_mapping(nflows, per_flow);
  setup_data_cache(nflows);
  host_.series = BandwidthSeries(opt.throughput_bin);
  const std::vector<std::pair<uint64_t, uint64_t>> precond = setup_flows(s, per_flow);
  if (!precond.empty()) ftl_.precondition(precond);
  int64_t precond_pages = 0;
  for (auto [lo, hi] : precond) precond_pages += int64_t(hi - lo);
  setup_slc(precond_pages);
  for (int64_t p = 0; p < ftl_.planes(); ++p) maybe_start_gc(p);
  if (jobs_.spec) setup_compute();
  work_ = estimate_work();
  if (work_.page_transactions > opt.max_transactions)
    throw ConfigError(
        fmt::format("{}: the estimated work, {} page transactions ({} requests; {}), is more than the budget of {} page transactions{} "
                    "(--max-transactions N raises it; each is about 5-7 events of the engine, docs/ssd.md \"Work budget\")",
                    label, work_.page_transactions, work_.requests, work_.why, opt.max_transactions, opt.budget_note));
}

/// The scheduling units, the tables of the device's topology by plane, unit and channel, and the channels' state.
void Sim::setup_topology() {
  const DeviceXml& d = device_;
  scheduler_.units.resize(size_t(model_.chip_scheduling ? d.dies() / d.dies_per_chip : d.dies()));
  gc_.jobs.resize(size_t(d.planes()));
  gc_.blocked_programs.resize(size_t(d.planes()));
  scheduler_.host_pages.assign(size_t(d.planes()), 0);
  scheduler_.channel_free.assign(size_t(d.channels), Time{});
  for (int64_t p = 0; p < d.planes(); ++p) {
    int64_t die = ftl_.die_of_plane(p);
    scheduler_.die_of_plane.push_back(int32_t(die));
    scheduler_.plane_in_die.push_back(uint8_t(ftl_.plane_in_die(p)));
    scheduler_.unit_of_plane.push_back(int32_t(model_.chip_scheduling ? die / d.dies_per_chip : die));
    scheduler_.channel_of_plane.push_back(int32_t(die / (d.chips_per_channel * d.dies_per_chip)));
  }
  scheduler_.channel_of_unit.assign(scheduler_.units.size(), 0);
  scheduler_.units_of_channel.resize(size_t(d.channels));
  for (int64_t p = 0; p < d.planes(); ++p) {
    size_t u = size_t(scheduler_.unit_of_plane[size_t(p)]);
    if (p == 0 || scheduler_.unit_of_plane[size_t(p) - 1] != int32_t(u))
      scheduler_.units_of_channel[size_t(scheduler_.channel_of_plane[size_t(p)])].push_back(int64_t(u));
    scheduler_.channel_of_unit[u] = scheduler_.channel_of_plane[size_t(p)];
  }
  compute_level_ = 1 + size_t(priority_class(*d.scheduling, Priority::High));
  scheduler_.channel_turn.assign(size_t(d.channels), 0);
  scheduler_.channel_wake_pending.assign(size_t(d.channels), 0);
  sectors_per_page_ = d.sectors_per_page();
  if (sectors_per_page_ > 0 && std::has_single_bit(uint64_t(sectors_per_page_)))
    page_shift_ = std::countr_zero(uint64_t(sectors_per_page_));
}

/// The channels' and the PCIe link's rates and their transfer times, computed once (Flash-Cosmos jobs may give the
/// channel's exact rate), and the DRAM's access times.
void Sim::setup_links(const ComputeRates& rates) {
  const DeviceXml& d = device_;
  scheduler_.channel_rate =
      jobs_.spec && rates.channel.raw() > 0 ? rates.channel : bytes_per_s(double(d.channel_transfer_rate) * 1e6 * double(d.channel_width));
  host_.pcie_rate = bytes_per_s(d.pcie_lane_bandwidth.raw() * double(d.pcie_lane_count));
  host_.sqe_time = bytes(kSqeBytes) / host_.pcie_rate;
  host_.cqe_time = bytes(kCqeBytes) / host_.pcie_rate;
  host_.pcie_data_time = XferTimes(host_.pcie_rate, 0);
  host_.pcie_data_cqe_time = XferTimes(host_.pcie_rate, kCqeBytes);
  scheduler_.channel_time = XferTimes(scheduler_.channel_rate, 0);
  for (int64_t k = 0; k <= XferTimes::kSectors; ++k) data_cache_.dram_times.push_back(dram_time(k * 512));
  host_.submission_queue_depth = d.io_queue_depth;
}

/// MQSim's cached mapping: the translation pages per flow (`per_flow` sectors each), their entries, and the CMTs.
void Sim::setup_mapping(int64_t nflows, int64_t per_flow) {
  const DeviceXml& d = device_;
  // CMT: MQSim's entry is (2 log2(pages) + sectors per page) bits; translation pages hold page / GTD entry entries
  double lg = std::log2(double(d.pages()));
  int64_t cmt_entry = d.cmt_entry_bytes();
  int64_t gtd_entry = int64_t(std::ceil((lg + double(sectors_per_page_)) / 8));
  mapping_.entries_per_tpage = std::max<int64_t>(1, d.page_size / gtd_entry);
  mapping_.gtd_entry_bytes = gtd_entry;
  sectors_per_group_ = (sectors_per_page_ + 31) / 32;
  full_page_bits_ = bits_of(0, sectors_per_page_);
  // Translation pages are per flow, as MQSim's address-mapping domains: flow f's logical pages from its first
  // one, mapping_.entries_per_tpage to a page, numbered from mapping_.first_tpage[f].
  mapping_.first_tpage.push_back(0);
  for (int64_t f = 0; f < nflows; ++f) {
    int64_t lo = f * per_flow / sectors_per_page_, hi = ((f + 1) * per_flow + sectors_per_page_ - 1) / sectors_per_page_;
    mapping_.first_lpa.push_back(lo);
    mapping_.first_tpage.push_back(mapping_.first_tpage.back() +
                                   uint32_t((hi - lo + mapping_.entries_per_tpage - 1) / mapping_.entries_per_tpage));
  }
  int64_t tpages = mapping_.first_tpage.back();
  if (model_.translation_programs && d.logical_pages() + tpages >= int64_t(0xFFFFFFFFll))
    throw ConfigError(
        fmt::format("{}: ssd_model.translation_programs: the device's {} logical pages and {} translation "
                    "pages exceed 2^32-1 page keys",
                    d.file, d.logical_pages(), tpages));
  int64_t cmt_entries = d.cmt_capacity.raw() / cmt_entry;
  if (cmt_entries > (int64_t(1) << 31)) cmt_entries = int64_t(1) << 31;
  mapping_.ideal = d.ideal_mapping_table;
  // SHARED: MQSim's constructor creates the "shared" table inside its loop over flows, so each flow gets a
  // table of the whole capacity (cmt_per_flow); EQUAL_SIZE_PARTITIONING: each flow gets capacity / flows.
  const bool shared_cmt = shared(*d.cmt_sharing);
  int ncmt = shared_cmt && !model_.cmt_per_flow ? 1 : int(nflows);
  int64_t per_cmt = shared_cmt || nflows == 0 ? cmt_entries : cmt_entries / nflows;
  for (int i = 0; i < ncmt; ++i) {
    uint32_t lo = ncmt == 1 ? 0 : mapping_.first_tpage[size_t(i)], hi = ncmt == 1 ? uint32_t(tpages) : mapping_.first_tpage[size_t(i) + 1];
    mapping_.cmts.push_back(std::make_unique<Cmt>(size_t(per_cmt), lo, hi, int(d.page_size / 512)));
  }
  mapping_.arriving.assign(size_t(tpages), kNotArriving);
  mapping_.departing.assign(size_t(tpages), 0);
}

/// The DRAM write cache: one partition shared, or one per flow, and MQSim's destage back-pressure.
void Sim::setup_data_cache(int64_t nflows) {
  const DeviceXml& d = device_;
  int ncache = shared(*d.data_cache_sharing) ? 1 : int(nflows);
  for (int i = 0; i < ncache; ++i)
    data_cache_.partitions.push_back(std::make_unique<WriteCache>(d.data_cache_capacity.raw() / d.page_size / ncache));
  data_cache_.programming_sectors.assign(size_t(ncache), 0);
  data_cache_.waiting_writes.resize(size_t(ncache));
  data_cache_.max_programming_sectors = model_.destage_pages_per_plane > 0
                                            ? std::max<int64_t>(1, int64_t((model_.destage_pages_per_plane + (d.cache_program ? 1 : 0)) *
                                                                           double(d.planes() * sectors_per_page_ * d.units_per_flash_page)))
                                            : INT64_MAX;
}

/// The host's flows, each over its share of `per_flow` sectors (or its explicit range in it), with its generator or
/// trace; returns the logical page ranges to precondition.
std::vector<std::pair<uint64_t, uint64_t>> Sim::setup_flows(const ScenarioXml& s, int64_t per_flow) {
  const DeviceXml& d = device_;
  std::vector<std::pair<uint64_t, uint64_t>> precond;
  const int64_t nflows = int64_t(s.flows.size());
  for (int64_t f = 0; f < nflows; ++f) {
    const FlowXml& x = s.flows[f];
    Flow fl;
    fl.x = &x;
    fl.priority = priority_class(*d.scheduling, x.priority);
    const CacheUse cache = cache_use(x.caching_mode);
    fl.write_cache = cache.writes;
    fl.any_cache = cache.reads;
    fl.closed_loop = x.kind == FlowKind::Synthetic && closed_loop(x.generator);
    fl.normal_size = normal_size(x.size_distribution);
    fl.start_lba = f * per_flow;
    fl.range_end = fl.start_lba + per_flow;
    fl.end_lba =
        x.kind == FlowKind::Synthetic ? fl.start_lba + std::max<int64_t>(1, int64_t(double(per_flow) * x.working_set)) : fl.range_end;
    const int64_t share_start = fl.start_lba;
    if (x.kind == FlowKind::Synthetic && x.range_sectors > 0) {  // an explicit range in the flow's share (bitline ssd fio)
      if (x.range_offset < 0 || x.range_offset + x.range_sectors > per_flow)
        throw ConfigError(fmt::format("{}: flow {}: its range, sectors {} to {}, is outside its share of the logical space ({} sectors)",
                                      label_, f, x.range_offset, x.range_offset + x.range_sectors, per_flow));
      fl.start_lba = share_start + x.range_offset;
      fl.end_lba = fl.start_lba + x.range_sectors;
    }
    if (options_.io_stats) {
      fl.io = std::make_unique<FlowIoStats>();
      fl.io->stats_from_ps = fl.io->last_done_ps = x.stats_from.raw();
      fl.io->log.window_ps = x.io_log_window.raw();
      fl.io->bw_samples.window_ps = x.bw_sample_window.raw();
      fl.io->iops_samples.window_ps = x.iops_sample_window.raw();
      fl.io->bw_samples.start_ps = fl.io->iops_samples.start_ps = x.stats_from.raw();
    }
    fl.rng = Rng::derive(uint64_t(x.seed) * 1000003u + uint64_t(f), "flow");
    if (x.kind == FlowKind::Trace) {
      fl.trace = std::make_unique<TraceReader>(x.trace_path, x.time_unit);
      int64_t n = fl.trace->count(&fl.trace_sectors);
      fl.trace_lines = n;
      fl.trace_limit = std::max<int64_t>(1, int64_t(std::floor(double(n) * x.percentage_executed)));
      if (n == 0) throw ConfigError(fmt::format("{}: trace has no requests", x.trace_path));
    }
    if (d.preconditioning && x.initial_occupancy > 0) {
      uint64_t lo = uint64_t(share_start / sectors_per_page_), hi = uint64_t(fl.range_end / sectors_per_page_);
      precond.push_back({lo, lo + uint64_t(double(hi - lo) * x.initial_occupancy)});
    }
    host_.flows.push_back(std::move(fl));
  }
  return precond;
}

nlohmann::json Sim::run() { return results(simulate()); }

double Sim::simulate() {
  auto wall0 = std::chrono::steady_clock::now();
  for (uint32_t f = 0; f < host_.flows.size(); ++f) {
    Flow& fl = host_.flows[f];
    if (fl.closed_loop) {
      for (int64_t i = 0; i < fl.x->queue_depth; ++i) generate(f, Time{});
    } else {
      events_.push(Time{}, {Ev::Arrival, f});
    }
  }
  if (jobs_.spec) {  // dies channel-interleaved (die 0 of every channel, then die 1, ...), so that a limited resource
                     // (the ISP's SRAM slots) is spread over the channels, not taken by the dies of channel 0
    const int64_t per_channel = device_.chips_per_channel * device_.dies_per_chip;
    for (int64_t k = 0; k < per_channel; ++k)
      for (int64_t c = 0; c < device_.channels; ++c) {
        const uint32_t die = uint32_t(c * per_channel + k);
        if (jobs_.cursor[die].pull)
          start_die(unit_of(int64_t(die) * device_.planes_per_die));
        else
          fill_jobs(die);
      }
    feed_host();
  }
  auto last_report = wall0;
  while (!events_.empty()) {
    auto e = events_.pop();
    dispatch(e.payload);
    if ((events_.executed() & 0xFFFF) != 0) continue;
    // The estimate leaves out GC's reads and programs, which can multiply a write-heavy scenario's work: the run is
    // stopped (no result) past 8 events per budgeted page transaction, about what the budget's transactions cost.
    if (!jobs_.spec && double(events_.executed()) > 8.0 * double(options_.max_transactions))
      throw ConfigError(
          fmt::format("{}: stopped after {} engine events at {:.6g} s simulated, {} requests done: past 8 events per "
                      "page transaction of the budget ({}; garbage collection's reads and programs are not in "
                      "the estimate); raise --max-transactions or shorten the scenario",
                      label_, events_.executed(), to_s(events_.now()), host_.completed, options_.max_transactions));
    if (options_.progress) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(2)) {
        last_report = now;
        options_.progress(Progress{to_s(events_.now()), host_.completed, work_.requests});
      }
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  // No event left while requests wait for the device: the run stalled (a plane out of free pages whose garbage
  // collection cannot proceed); its numbers would describe a shorter run than asked, so there is no result.
  for (size_t f = 0; f < host_.flows.size(); ++f)
    if (host_.flows[f].outstanding > 0)
      throw ModelError(
          fmt::format("{}: the simulation stalled at {:.6g} s simulated: flow {} has {} requests in the device and "
                      "nothing left to happen (no free page and no garbage collection under way); {} requests "
                      "completed. Check GC_Exec_Threshold, Overprovisioning_Ratio and Block_No_Per_Plane",
                      device_.file, to_s(events_.now()), f, host_.flows[f].outstanding, host_.completed));
  if (jobs_.spec) {
    for (size_t die = 0; die < jobs_.cursor.size(); ++die)
      if (const auto& c = jobs_.cursor[die]; c.next != c.end || c.queued > 0)
        throw ModelError(fmt::format("general device: die {} never finished its Flash-Cosmos jobs ({} of {} queued, {} pending)", die,
                                     jobs_.spec->die_jobs[die].size() - size_t(c.end - c.next), jobs_.spec->die_jobs[die].size(),
                                     c.queued));
    finish_compute();
  }
  return wall;
}

/// The scenario's work, estimated before it runs (WorkEstimate). Rates in requests per second.
WorkEstimate Sim::estimate_work() const {
  WorkEstimate w;
  const double pcie = host_.pcie_rate.raw(), sqe = to_s(host_.sqe_time);
  const Time tr_min = std::min({device_.read_latency[0], device_.read_latency[1], device_.read_latency[2]});
  Time tprog_min = std::min({device_.program_latency[0], device_.program_latency[1], device_.program_latency[2]});
  if (slc_.on) tprog_min = std::min(tprog_min, device_.slc_program_latency);
  std::vector<std::string> why;
  // a read can be served from the cache only if some flow writes into it
  bool writes = false;
  for (const Flow& fl : host_.flows) writes = writes || (fl.write_cache && (fl.x->kind == FlowKind::Trace || fl.x->read_ratio < 1));
  for (size_t f = 0; f < host_.flows.size(); ++f) {
    const Flow& fl = host_.flows[f];
    const FlowXml& x = *fl.x;
    double requests = 0, pages = 1;
    if (x.kind == FlowKind::Trace) {
      const double n = double(fl.trace_limit) * double(x.relay_count);
      requests = n;
      const double lines = double(std::max<int64_t>(1, fl.trace_lines));
      pages = 1 + double(fl.trace_sectors) / lines / double(sectors_per_page_);  // its mean request's pages, one more for alignment
      why.push_back(fmt::format("flow {}: {} trace requests x <Relay_Count> {}", f, fl.trace_limit, x.relay_count));
    } else {
      const double bytes = double(x.avg_size) * 512;
      // the most pages a request spans: its start sits on a multiple of gcd(alignment, sectors per page) in a page
      const int64_t g = x.aligned ? std::gcd(x.alignment_unit, sectors_per_page_) : 1;
      pages = double((x.avg_size + sectors_per_page_ - g + sectors_per_page_ - 1) / sectors_per_page_);
      double rate = 0;  // the flow's highest possible request rate
      if (!fl.closed_loop) {
        rate = double(x.bandwidth) / bytes;
      } else {
        // the least latency of a request: its command fetch, its data over PCIe, and a read's sense and channel
        // transfer of a page (or a cache DRAM access), a write's DRAM access (cached) or channel transfer and program
        const double data = bytes / pcie,
                     page_xfer = double(std::min<int64_t>(x.avg_size * 512, device_.page_size)) / scheduler_.channel_rate.raw();
        const double dram = to_s(cache_dram_time(device_, std::min<int64_t>(x.avg_size * 512, device_.page_size)));
        double least = 1e30;
        if (x.read_ratio > 0) least = std::min(least, fl.any_cache && writes ? dram : to_s(tr_min) + page_xfer);
        if (x.read_ratio < 1) least = std::min(least, fl.write_cache ? dram : page_xfer + to_s(tprog_min));
        rate = double(x.queue_depth) / (sqe + data + least);
        rate = std::min(rate, pcie / (bytes + kCqeBytes));  // the link carries each request's data
        if (x.read_ratio == 0 && fl.write_cache && model_.dram_serial) rate = std::min(rate, 1 / dram);  // one DRAM access at a time
      }
      double by_time = x.stop_time > Time{} ? rate * to_s(x.stop_time) : 1e300;
      requests = x.total_requests > 0 ? std::min(double(x.total_requests), by_time) : by_time;
      if (x.total_requests > 0 && double(x.total_requests) <= by_time)
        why.push_back(x.origin_requests.empty() ? fmt::format("flow {}: <Total_Requests_To_Generate> {}", f, x.total_requests)
                                                : fmt::format("flow {}: {}", f, x.origin_requests));
      else if (!x.origin_time.empty())
        why.push_back(fmt::format("flow {}: {} at up to {:.4g} requests/s", f, x.origin_time, rate));
      else
        why.push_back(fmt::format("flow {}: <Stop_Time> {} ns at up to {:.4g} requests/s{}", f, x.stop_time.raw() / 1000, rate,
                                  fl.closed_loop ? "" : fmt::format(" (<Bandwidth> {} B/s)", x.bandwidth)));
    }
    w.requests = int64_t(std::min(4e18, double(w.requests) + requests));
    w.page_transactions = int64_t(std::min(4e18, double(w.page_transactions) + requests * pages));
  }
  w.why = fmt::format("{}", fmt::join(why, ", "));
  return w;
}

void Sim::dispatch(const Payload& p) {
  switch (p.kind) {
    case Ev::Arrival:
      on_arrival(p.a);
      break;
    case Ev::SqeFetched:
      on_sqe_fetched(p.a);
      break;
    case Ev::WriteDmaDone:
      on_write_dma_done(p.a);
      break;
    case Ev::DramWriteDone:
      on_dram_write_done(p.a);
      break;
    case Ev::DramReadDone:
      on_dram_read_done(p.a);
      break;
    case Ev::EvictionRead:
      enqueue_together([&] { on_eviction_read(p.a); });
      break;
    case Ev::Complete:
      on_complete(p.a);
      break;
    case Ev::ReadSensed:
      on_read_sensed(p.a);
      break;
    case Ev::XferDone:
      on_xfer_done(p.a);
      break;
    case Ev::DieOpDone:
      on_die_op_done(p.a);
      break;
    case Ev::ChannelIdle:
      on_channel_idle(p.a);
      break;
    case Ev::IspResult:
      on_isp_result(p.a);
      break;
    case Ev::SlotRelease:
      on_slot_release(p.a);
      break;
    case Ev::WriteArrive:
      on_write_arrive(p.a);
      break;
    case Ev::DataInDone:
      on_data_in_done(p.a);
      break;
    case Ev::SlcIdle:
      on_slc_idle(p.a);
      break;
  }
}

}  // namespace detail

using detail::Sim;

namespace {

ConfigError out_of_memory(const DeviceXml& device, const std::string& label) {
  // what grows with the inputs: the tables of the device's pages and translation pages, and the requests in flight
  return ConfigError(fmt::format(
      "{}: {}: out of memory: the device's {} pages (<Flash_Channel_Count> {} x <Chip_No_Per_Channel> {} x <Die_No_Per_Chip> {} x "
      "<Plane_No_Per_Die> {} x <Block_No_Per_Plane> {} x <Page_No_Per_Block> {}) and the scenario's requests need more memory "
      "than this machine has",
      device.file, label, device.pages(), device.channels, device.chips_per_channel, device.dies_per_chip, device.planes_per_die,
      device.blocks_per_plane, device.pages_per_block));
}

}  // namespace

ScenarioRun run_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt, const std::string& label) {
  try {
    Sim sim(device, scenario, opt, nullptr, {}, label);
    ScenarioRun r;
    r.result = sim.run();
    r.result["work_estimate"] = {{"requests", sim.work().requests}, {"page_transactions", sim.work().page_transactions}};
    r.flows = sim.io_stats();
    return r;
  } catch (const std::bad_alloc&) {
    throw out_of_memory(device, label);
  }
}

WorkEstimate estimate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt, const std::string& label) {
  try {
    return Sim(device, scenario, opt, nullptr, {}, label).work();
  } catch (const std::bad_alloc&) {
    throw out_of_memory(device, label);
  }
}

nlohmann::json simulate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt, const std::string& label) {
  return run_scenario(device, scenario, opt, label).result;
}

nlohmann::json simulate_workload(const DeviceXml& device, const WorkloadXml& workload, const RunOptions& opt) {
  check_workload(workload, device);
  nlohmann::json out = {{"device", device.file}, {"workload", workload.file}, {"defaults_used", device.defaulted}};
  // The device as resolved (the file's values, MQSim's defaults for what it left out, --set overrides) and the
  // model's switches: a result says what it was computed from.
  out["resolved"] = {{"ssd_device", dump_params(static_cast<const DeviceParams&>(device))}, {"ssd_model", dump_params(opt.model)}};
  nlohmann::json sc = nlohmann::json::array();
  // The whole workload is held to 2 x the per-scenario budget: each scenario is checked before it runs, so a file of
  // many scenarios stops at the first that would pass the total (no result written), not after running them all.
  const double total_budget = 2.0 * double(opt.max_transactions);
  double spent = 0;
  for (size_t i = 0; i < workload.scenarios.size(); ++i) {
    RunOptions o = opt;
    o.max_transactions = std::min<int64_t>(opt.max_transactions, int64_t(std::max(0.0, total_budget - spent)));
    if (o.max_transactions < opt.max_transactions)
      o.budget_note =
          fmt::format(", what the workload's {:.0f} (2 x --max-transactions) leaves after the scenarios before it", total_budget);
    const std::string label = fmt::format("{}: scenario {}", workload.file, i + 1);
    if (o.max_transactions < 1)
      throw ConfigError(
          fmt::format("{}: the scenarios before it used the workload's budget of {:.0f} page transactions (2 x "
                      "--max-transactions); split the workload or raise --max-transactions",
                      label, total_budget));
    sc.push_back(simulate_scenario(device, workload.scenarios[i], o, label));
    spent += sc.back()["work_estimate"]["page_transactions"].get<double>();
  }
  out["scenarios"] = sc;
  return out;
}

ComputeResult run_compute(const JobSpec& spec, const DeviceXml& device, const SsdModelOptions& model, const ComputeRates& rates) {
  RunOptions opt;
  opt.model = model;
  const ScenarioXml none;  // no host flows: the device serves the jobs alone
  Sim sim(device, none, opt, &spec, rates);
  sim.simulate();  // (its results are compute_result()'s: the device's JSON is not built)
  return sim.compute_result();
}

}  // namespace bitline::ssd
