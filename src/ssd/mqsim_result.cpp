#include "ssd/mqsim_result.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

namespace bitline::ssd {
namespace {

/// MQSim's XmlWriter: an element per value, indented by tabs, values as std::to_string writes them.
class Writer {
 public:
  void open(std::string_view tag) {
    out_ += std::string(size_t(depth_), '\t') + fmt::format("<{}>\n", tag);
    tags_.emplace_back(tag);
    ++depth_;
  }
  void close() {
    --depth_;
    out_ += std::string(size_t(depth_), '\t') + fmt::format("</{}>\n", tags_.back());
    tags_.pop_back();
  }
  void value(std::string_view name, const std::string& v) {
    out_ += std::string(size_t(depth_) + 1, '\t') + fmt::format(" <{}>{}</{}>\n", name, escape(v), name);
  }
  void count(std::string_view name, int64_t v) { value(name, std::to_string(v)); }
  void real(std::string_view name, double v) { value(name, fmt::format("{:.6f}", v)); }
  /// A time in microseconds as MQSim writes it: truncated to a whole number (uint32).
  void micros(std::string_view name, double us) { value(name, std::to_string(uint32_t(std::max(0.0, std::floor(us))))); }
  void raw(const std::string& s) { out_ += s; }
  int depth() const { return depth_; }
  std::string str() && { return std::move(out_); }

  static std::string escape(const std::string& v) {
    std::string e;
    for (char c : v) {
      switch (c) {
        case '&':
          e += "&amp;";
          break;
        case '<':
          e += "&lt;";
          break;
        case '>':
          e += "&gt;";
          break;
        case '"':
          e += "&quot;";
          break;
        default:
          e += c;
      }
    }
    return e;
  }

 private:
  std::string out_ = "<?xml version=\"1.0\" encoding=\"us-ascii\"?>\n";
  std::vector<std::string> tags_;
  int depth_ = 0;
};

std::string flow_name(const FlowXml& f, size_t i) {
  switch (f.kind) {
    case FlowKind::Synthetic:
      return fmt::format("Host.IO_Flow.Synth.No_{}", i);
    case FlowKind::Trace:
      return "Host.IO_Flow.Trace." + f.trace_file;
  }
  return {};
}

}  // namespace

std::string mqsim_result_xml(const nlohmann::json& r, const ScenarioXml& scenario) {
  Writer w;
  w.open("MQSim_Results");
  w.open("Host");
  const double secs = r.at("simulated_s").get<double>();
  for (const auto& fl : r.at("flows")) {
    const size_t i = fl.at("flow").get<size_t>();
    w.open("Host.IO_Flow");
    w.value("Name", flow_name(scenario.flows.at(i), i));
    w.count("Request_Count", fl.at("requests").get<int64_t>());
    w.count("Read_Request_Count", fl.at("reads").get<int64_t>());
    w.count("Write_Request_Count", fl.at("writes").get<int64_t>());
    w.real("IOPS", fl.at("iops").get<double>());
    w.real("IOPS_Read", fl.at("iops_read").get<double>());
    w.real("IOPS_Write", fl.at("iops_write").get<double>());
    const double rb = double(fl.at("bytes_read").get<int64_t>()), wb = double(fl.at("bytes_written").get<int64_t>());
    w.real("Bytes_Transferred", rb + wb);
    w.real("Bytes_Transferred_Read", rb);
    w.real("Bytes_Transferred_Write", wb);
    const double s = std::max(1e-12, secs);
    w.real("Bandwidth", (rb + wb) / s);
    w.real("Bandwidth_Read", rb / s);
    w.real("Bandwidth_Write", wb / s);
    const auto& dev = fl.at("device_response_time");
    const auto& e2e = fl.at("end_to_end_delay");
    w.micros("Device_Response_Time", dev.at("mean_us").get<double>());
    w.micros("Min_Device_Response_Time", dev.at("min_us").get<double>());
    w.micros("Max_Device_Response_Time", dev.at("max_us").get<double>());
    w.micros("End_to_End_Request_Delay", e2e.at("mean_us").get<double>());
    w.micros("Min_End_to_End_Request_Delay", e2e.at("min_us").get<double>());
    w.micros("Max_End_to_End_Request_Delay", e2e.at("max_us").get<double>());
    w.close();
  }
  w.close();
  w.open("SSDDevice");
  const auto& ftl = r.at("ftl");
  const auto& flash = r.at("flash");
  auto n = [](const nlohmann::json& j, const char* k) { return j.at(k).get<int64_t>(); };
  const int64_t rh = n(ftl, "cmt_hits"), wh = n(ftl, "cmt_write_hits"), rm = n(ftl, "cmt_misses"), wm = n(ftl, "cmt_write_misses");
  const int64_t gc = n(ftl, "gc_executions");
  const std::string gc_moves = gc > 0 ? fmt::format("{:.6f}", double(n(ftl, "gc_page_writes")) / double(gc)) : "-nan";
  std::string attrs;
  auto attr = [&](std::string_view k, const std::string& v) { attrs += fmt::format(" {}=\"{}\"", k, v); };
  attr("Issued_Flash_Read_CMD", std::to_string(n(flash, "reads")));
  attr("Issued_Flash_Program_CMD", std::to_string(n(flash, "programs")));
  attr("Issued_Flash_Erase_CMD", std::to_string(n(flash, "erases")));
  attr("Issued_Flash_Read_CMD_For_Mapping", std::to_string(n(ftl, "translation_reads")));
  attr("Issued_Flash_Program_CMD_For_Mapping", std::to_string(n(ftl, "translation_writebacks")));
  attr("CMT_Hits", std::to_string(rh + wh));
  attr("CMT_Hits_For_Read", std::to_string(rh));
  attr("CMT_Hits_For_Write", std::to_string(wh));
  attr("CMT_Misses", std::to_string(rm + wm));
  attr("CMT_Misses_For_Read", std::to_string(rm));
  attr("CMT_Misses_For_Write", std::to_string(wm));
  attr("Total_CMT_Queries", std::to_string(rh + wh + rm + wm));
  attr("Total_CMT_Queries_For_Reads", std::to_string(rh + rm));
  attr("Total_CMT_Queries_For_Writes", std::to_string(wh + wm));
  attr("Total_GC_Executions", std::to_string(gc));
  attr("Average_Page_Movement_For_GC", gc_moves);
  attr("Total_WL_Executions", "0");  // wear levelling is not modelled
  attr("Average_Page_Movement_For_WL", "-nan");
  w.raw(std::string(size_t(w.depth()), '\t') + "<SSDDevice.FTL" + attrs + "/>\n");
  w.close();
  w.close();
  return std::move(w).str();
}

}  // namespace bitline::ssd
