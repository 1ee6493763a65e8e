// Helpers the general-SSD tests share.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd::test {

/// A trace flow of `lines` ("time_ns device lba sectors type", type 1 = read, 0 = write), written as file `name` in a
/// folder of the temporary directory named after `folder` and this process.
inline FlowXml trace_flow(const std::string& folder, const std::string& name, const std::string& lines,
                          CachingMode caching = CachingMode::TurnedOff) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / (folder + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << lines;
  FlowXml f;
  f.kind = FlowKind::Trace;
  f.trace_path = p.string();
  f.caching_mode = caching;
  return f;
}

/// MQSim's default device with the whole mapping table in DRAM (no translation reads), `channels` channels of one chip
/// of one die each, and `blocks` blocks per plane: the small devices of the hand-timed tests.
inline DeviceXml die_per_channel(int64_t channels, int64_t blocks) {
  DeviceXml d;
  d.file = "test";
  d.ideal_mapping_table = true;
  d.channels = channels;
  d.chips_per_channel = 1;
  d.dies_per_chip = 1;
  d.blocks_per_plane = blocks;
  return d;
}

/// MQSim's default device file (configs/ssd/device.xml) with `extra` inside <Execution_Parameter_Set>.
inline std::string device_with(const std::string& extra) {
  std::ifstream in(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/device.xml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("</Execution_Parameter_Set>");
  return text.substr(0, at) + extra + text.substr(at);
}

}  // namespace bitline::ssd::test
