// Stage: compute jobs (compute_jobs.hpp): their results' stats, the Flash-Cosmos SSD as a general device, and the
// scheduling choices. The jobs themselves run on the device's engine (device.cpp).
#include "ssd/compute_jobs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "ssd/device.hpp"

namespace bitline::ssd {

void ComputeResult::register_stats(StatGroup& g) const {
  g.add("time_s", total, "end-to-end time of the run")
      .add("events", events, "events the engine ran")
      .add("sensings", sensings, "plane-level sensings")
      .add("bytes_over_channels", channel_bytes, "bytes moved over the flash channels")
      .add("bytes_over_pcie", pcie_bytes, "bytes moved over PCIe")
      .add("bottleneck", bottleneck, "the most utilised resource");
  g.group("busy_s")
      .add("dies_sum", die_busy, "die busy time, summed over dies")
      .add("channels_sum", channel_busy, "channel busy time, summed over channels")
      .add("pcie", pcie_busy, "PCIe busy time")
      .add("isp", isp_busy, "in-storage accelerator busy time")
      .add("host", host_busy, "host computation busy time");
  g.group("isp")
      .add("sram_peak_bytes", isp_sram_peak, "most ISP SRAM held at once (partial results + results waiting for PCIe)")
      .add("link_wait_s", isp_link_wait, "time finished ISP results waited for PCIe, summed over results");
  g.add("ssd_active_s", ssd_active, "time the SSD is active (until its last transfer to the host)");
}

const Registry<DeviceScheduling>& device_schedulings() {
  static const Registry<DeviceScheduling> r(
      "general-device scheduling",
      {{"mqsim", "a chip starts an operation only while its channel is idle (MQSim's transaction scheduler)", DeviceScheduling::Mqsim},
       {"eager", "a chip starts an operation as soon as it is free (the Flash-Cosmos SSD's own)", DeviceScheduling::Eager}});
  return r;
}

SsdModelOptions model_options(DeviceScheduling s) {
  SsdModelOptions m;
  switch (s) {
    case DeviceScheduling::Mqsim:
      m.issue_on_idle_channel = true;
      break;
    case DeviceScheduling::Eager:
      m.issue_on_idle_channel = false;
      break;
  }
  return m;
}

DeviceXml device_of(const SsdParams& ssd, const nand::NandParams& nand) {
  DeviceXml d;
  d.file = "(the Flash-Cosmos SSD as a general device)";
  d.preconditioning = false;
  d.channels = ssd.channels;
  d.chips_per_channel = ssd.dies_per_channel;
  d.dies_per_chip = 1;
  const auto& g = nand.geometry;
  d.planes_per_die = g.planes_per_die;
  d.blocks_per_plane = g.blocks_per_plane;
  d.pages_per_block = g.subblocks_per_block * g.wordlines_per_string;  // SLC: a page per wordline
  d.page_size = g.page_size.raw();
  d.technology = FlashTechnology::Slc;
  // the channel: 1 byte wide at channel_rate (MT/s, rounded to a whole number as MQSim's XML has it)
  d.channel_width = 1;
  d.channel_transfer_rate = std::max<int64_t>(1, std::llround(nand.timing.channel_rate.raw() / 1e6));
  d.pcie_lane_count = std::max<int64_t>(1, ssd.pcie_lanes);
  d.pcie_lane_bandwidth = Bandwidth(ssd.pcie_effective_rate().raw() / 1e9 / double(d.pcie_lane_count) * 1e9);
  if (d.pages() >= int64_t(0xFFFFFFFFll))
    throw ConfigError(fmt::format("general device: {} pages do not fit 32-bit page numbers", d.pages()));
  return d;
}

ComputeResult run_jobs(const JobSpec& spec, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand,
                       DeviceScheduling scheduling) {
  SsdModelOptions model = model_options(scheduling);
  model.cache_read = ssd.cache_read;
  return run_compute(spec, device_of(ssd, nand), model, ComputeRates::of(ssd, host, nand));
}

}  // namespace bitline::ssd
