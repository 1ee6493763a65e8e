// Helpers the general-SSD tests share.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

}  // namespace bitline::ssd::test
