#include "ssd/mqsim_xml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"

namespace bitline::ssd {

DeviceXml::DeviceXml() : DeviceParams(defaults()) {}

const DeviceParams& DeviceXml::defaults() {
  static const DeviceParams d = default_params<DeviceParams>();  // parsed once: the declarations do not change
  return d;
}

int64_t DeviceXml::bits_per_cell() const {
  switch (*technology) {
    case FlashTechnology::Slc:
      return 1;
    case FlashTechnology::Mlc:
      return 2;
    case FlashTechnology::Tlc:
      return 3;
  }
  throw std::logic_error("unhandled flash technology");
}

int64_t DeviceXml::cmt_entry_bytes() const {
  const double lg = std::log2(double(pages()));
  return int64_t(std::ceil((2 * lg + double(sectors_per_page())) / 8));
}

DeviceXml mapped_view(const DeviceXml& d) {
  DeviceXml v = d;
  const int64_t unit = d.mapping_unit.raw();
  if (unit == 0 || unit == d.page_size || d.units_per_flash_page != 1) return v;
  const int64_t k = d.page_size / unit;  // check_device: unit divides the page
  v.page_size = unit;
  v.pages_per_block = d.pages_per_block * k;
  v.units_per_flash_page = k;
  return v;
}

namespace {

constexpr int64_t kMaxXmlBytes = 16 << 20;  // a configuration file, not a data set

std::string slurp(const std::string& path, const char* what) { return read_input_file(path, kMaxXmlBytes, fmt::format("{} file", what)); }

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && sp(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && sp(s[i])) ++i;
  return s.substr(i);
}

std::string upper(std::string s) {
  for (auto& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string shown(std::string_view v) { return text_brief(v); }

namespace {

/// The children of one element, each handled by name; unknown and duplicated names are errors.
class Section {
 public:
  Section(const std::string& file, pugi::xml_node node) : file_(file), node_(node) {}

  using Handler = std::function<void(const std::string& value, pugi::xml_node child)>;

  void on(const std::string& name, Handler h) { handlers_[name] = std::move(h); }

  /// Runs the handlers; returns the names that were absent.
  std::vector<std::string> run() {
    std::set<std::string> seen;
    for (auto child : node_.children()) {
      if (child.type() != pugi::node_element) continue;
      std::string name = child.name();
      auto it = handlers_.find(name);
      if (it == handlers_.end())
        throw ConfigError(fmt::format("{}: <{}> inside <{}>: unknown or unsupported element (see docs/ssd.md for the list)", file_,
                                      shown(name), shown(node_.name())));
      if (!seen.insert(name).second)
        throw ConfigError(fmt::format("{}: <{}> inside <{}>: given twice", file_, shown(name), shown(node_.name())));
      current_ = name;
      it->second(trim(child.child_value()), child);
    }
    std::vector<std::string> absent;
    for (auto& [name, h] : handlers_)
      if (!seen.count(name)) absent.push_back(name);
    return absent;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw ConfigError(fmt::format("{}: <{}> inside <{}>: {}", file_, current_, node_.name(), why));
  }

  int64_t integer(const std::string& v, int64_t lo, int64_t hi) const {
    if (v.empty()) fail("empty value, expected an integer");
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (errno == ERANGE || *end != '\0') fail(fmt::format("'{}' is not an integer", shown(v)));
    if (x < lo || x > hi) fail(fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    return x;
  }
  double real(const std::string& v, double lo, double hi) const {
    if (v.empty()) fail("empty value, expected a number");
    errno = 0;
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (errno == ERANGE || *end != '\0' || !std::isfinite(x)) fail(fmt::format("'{}' is not a number", shown(v)));
    if (x < lo || x > hi) fail(fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    return x;
  }
  bool boolean(const std::string& v) const {
    std::string u = upper(v);
    if (u == "TRUE") return true;
    if (u == "FALSE") return false;
    fail(fmt::format("'{}' is not true or false", shown(v)));
  }
  /// The value of one of MQSim's names in `t`, ignoring case.
  template <class T>
  T choice(const std::string& v, const MqsimChoices<T>& t) const {
    const std::string u = upper(v);
    if (int64_t i = t.modelled.find(u); i >= 0) return t.modelled.value(size_t(i));
    if (std::find(t.unmodelled.begin(), t.unmodelled.end(), u) != t.unmodelled.end())
      fail(fmt::format("'{}' is an MQSim choice that bitline does not model (supported: {})", shown(v), t.modelled.joined(", ")));
    fail(fmt::format("'{}' is not one of {}", shown(v), t.modelled.joined(", ")));
  }
  std::vector<int64_t> id_list(const std::string& v, int64_t hi) const {
    std::vector<int64_t> ids;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      item = trim(item);
      int64_t x = integer(item, 0, hi);
      if (std::find(ids.begin(), ids.end(), x) != ids.end()) fail(fmt::format("id {} listed twice", x));
      ids.push_back(x);
      if (ids.size() > 4096) fail("more than 4096 ids");
    }
    if (ids.empty()) fail("empty id list");
    return ids;
  }
  Time nanoseconds(const std::string& v, int64_t hi_ns) const { return ns(double(integer(v, 0, hi_ns))); }
  /// The element being handled, as a config origin ("file: <Element>").
  std::string where() const { return fmt::format("{}: <{}>", file_, current_); }

 private:
  std::string file_;
  pugi::xml_node node_;
  std::map<std::string, Handler> handlers_;
  std::string current_;
};

pugi::xml_document parse_doc(const std::string& text, const std::string& name) {
  pugi::xml_document doc;
  // As a fragment, so that text outside the root element is kept (a document drops it without a word) and refused by
  // only_root.
  auto r = doc.load_buffer(text.data(), text.size(), pugi::parse_default | pugi::parse_fragment, pugi::encoding_utf8);
  if (!r) throw ConfigError(fmt::format("{}: not well-formed XML at byte {}: {}", name, r.offset, r.description()));
  return doc;
}

pugi::xml_node only_root(const pugi::xml_document& doc, const std::string& name, const char* expected) {
  pugi::xml_node root;
  for (auto c : doc.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata)
      throw ConfigError(fmt::format("{}: text {} the root element: '{}' (a file holds one element and its contents)", name,
                                    root ? "after" : "before", text_brief(c.value())));
    if (c.type() != pugi::node_element) continue;
    if (root) throw ConfigError(fmt::format("{}: more than one root element", name));
    root = c;
  }
  if (!root) throw ConfigError(fmt::format("{}: no root element (expected <{}>)", name, expected));
  if (std::string(root.name()) != expected)
    throw ConfigError(fmt::format("{}: root element <{}> is not <{}>", name, shown(root.name()), expected));
  return root;
}

constexpr int64_t kMaxNs = int64_t(1e15);  // ~11.6 days of simulated time in ns; fits picoseconds in int64

// The device file's values, mapped onto the keys of DeviceParams (section ssd_device) with their units; each
// remembers its element, so that a value the parameter declaration refuses is reported at its element.
class DeviceValues {
 public:
  void put(const Section& s, std::string_view key, const std::string& value) {
    tree_.apply_set(fmt::format("ssd_device.{}={}", key, value), s.where());
  }
  void integer(const Section& s, std::string_view key, int64_t v) { put(s, key, std::to_string(v)); }
  void boolean(const Section& s, std::string_view key, bool v) { put(s, key, v ? "true" : "false"); }
  void time(const Section& s, std::string_view key, Time t) { put(s, key, fmt::format("{}ps", t.raw())); }
  void bytes(const Section& s, std::string_view key, int64_t b) { put(s, key, fmt::format("{}B", b)); }
  /// One of MQSim's names (ignoring case), under the name the table gives it.
  template <class T>
  void choice(const Section& s, std::string_view key, const std::string& v, const MqsimChoices<T>& t) {
    put(s, key, std::string(t.name(s.choice(v, t))));
  }
  ConfigTree& tree() { return tree_; }

 private:
  ConfigTree tree_;
};

void read_flash(const std::string& file, pugi::xml_node node, DeviceValues& d, std::vector<std::string>& defaulted) {
  Section s(file, node);
  s.on("Flash_Technology", [&](auto& v, auto) { d.choice(s, "technology", v, flash_technologies()); });
  // suspension is not modelled: operations run to completion (docs/ssd.md)
  s.on("CMD_Suspension_Support", [&](auto& v, auto) { s.choice(v, suspension_supports()); });
  // the latencies of page types a technology lacks are read and ignored (MQSim reads them too)
  const char* types[3] = {"LSB", "CSB", "MSB"};
  const char* keys[3] = {"lsb", "csb", "msb"};
  for (int i = 0; i < 3; ++i) {
    s.on(std::string("Page_Read_Latency_") + types[i],
         [&, i](auto& v, auto) { d.time(s, fmt::format("read_latency_{}", keys[i]), s.nanoseconds(v, 100'000'000)); });
    s.on(std::string("Page_Program_Latency_") + types[i],
         [&, i](auto& v, auto) { d.time(s, fmt::format("program_latency_{}", keys[i]), s.nanoseconds(v, 100'000'000)); });
  }
  s.on("Block_Erase_Latency", [&](auto& v, auto) { d.time(s, "erase_latency", s.nanoseconds(v, 1'000'000'000)); });
  s.on("Block_PE_Cycles_Limit", [&](auto& v, auto) { d.integer(s, "pe_cycles_limit", s.integer(v, 1, 1'000'000'000)); });
  s.on("Suspend_Erase_Time", [&](auto& v, auto) { s.nanoseconds(v, 1'000'000'000); });
  s.on("Suspend_Program_Time", [&](auto& v, auto) { s.nanoseconds(v, 1'000'000'000); });
  s.on("Die_No_Per_Chip", [&](auto& v, auto) { d.integer(s, "dies_per_chip", s.integer(v, 1, 64)); });
  s.on("Plane_No_Per_Die", [&](auto& v, auto) { d.integer(s, "planes_per_die", s.integer(v, 1, 16)); });
  s.on("Block_No_Per_Plane", [&](auto& v, auto) { d.integer(s, "blocks_per_plane", s.integer(v, 4, 1 << 20)); });
  s.on("Page_No_Per_Block", [&](auto& v, auto) { d.integer(s, "pages_per_block", s.integer(v, 1, 16384)); });
  s.on("Page_Capacity", [&](auto& v, auto) {
    const int64_t page = s.integer(v, 512, 1 << 20);
    if (page % 512) s.fail(fmt::format("{} bytes is not a multiple of the 512-byte sector", page));
    if (page / 512 > 64) s.fail(fmt::format("{} bytes: more than 64 sectors per page (32 KiB) is not supported", page));
    d.integer(s, "page_size", page);
  });
  s.on("Page_Metadat_Capacity", [&](auto& v, auto) { d.integer(s, "page_metadata", s.integer(v, 0, 1 << 20)); });
  for (auto& n : s.run()) defaulted.push_back(n);
}

void read_device(const std::string& file, pugi::xml_node node, DeviceValues& d, std::vector<std::string>& defaulted) {
  Section s(file, node);
  bool flash_seen = false;
  s.on("Seed", [&](auto& v, auto) { d.integer(s, "seed", s.integer(v, 0, INT32_MAX)); });
  s.on("Enabled_Preconditioning", [&](auto& v, auto) { d.boolean(s, "preconditioning", s.boolean(v)); });
  s.on("Memory_Type", [&](auto& v, auto) { s.choice(v, memory_types()); });
  s.on("HostInterface_Type", [&](auto& v, auto) { d.choice(s, "host_interface", v, host_interfaces()); });
  s.on("IO_Queue_Depth", [&](auto& v, auto) { d.integer(s, "io_queue_depth", s.integer(v, 1, 65535)); });
  s.on("Queue_Fetch_Size", [&](auto& v, auto) { d.integer(s, "queue_fetch_size", s.integer(v, 1, 65535)); });
  s.on("Caching_Mechanism", [&](auto& v, auto) { d.choice(s, "caching_mechanism", v, caching_mechanisms()); });
  s.on("Data_Cache_Sharing_Mode", [&](auto& v, auto) { d.choice(s, "data_cache_sharing", v, data_cache_sharing_modes()); });
  s.on("Data_Cache_Capacity", [&](auto& v, auto) { d.bytes(s, "data_cache_capacity", s.integer(v, 0, 1LL << 40)); });
  s.on("Data_Cache_DRAM_Row_Size", [&](auto& v, auto) { d.bytes(s, "dram_row_size", s.integer(v, 1, 1 << 20)); });
  s.on("Data_Cache_DRAM_Data_Rate", [&](auto& v, auto) { d.integer(s, "dram_data_rate", s.integer(v, 1, 100000)); });
  s.on("Data_Cache_DRAM_Data_Busrt_Size", [&](auto& v, auto) { d.bytes(s, "dram_burst_size", s.integer(v, 1, 4096)); });
  s.on("Data_Cache_DRAM_tRCD", [&](auto& v, auto) { d.time(s, "dram_trcd", s.nanoseconds(v, 1000000)); });
  s.on("Data_Cache_DRAM_tCL", [&](auto& v, auto) { d.time(s, "dram_tcl", s.nanoseconds(v, 1000000)); });
  s.on("Data_Cache_DRAM_tRP", [&](auto& v, auto) { d.time(s, "dram_trp", s.nanoseconds(v, 1000000)); });
  s.on("Address_Mapping", [&](auto& v, auto) { d.choice(s, "address_mapping", v, address_mappings()); });
  s.on("Ideal_Mapping_Table", [&](auto& v, auto) { d.boolean(s, "ideal_mapping_table", s.boolean(v)); });
  s.on("CMT_Capacity", [&](auto& v, auto) { d.bytes(s, "cmt_capacity", s.integer(v, 0, 1LL << 36)); });
  s.on("CMT_Sharing_Mode", [&](auto& v, auto) { d.choice(s, "cmt_sharing", v, cmt_sharing_modes()); });
  s.on("Plane_Allocation_Scheme", [&](auto& v, auto) {
    // one letter per dimension, each once: the 24 fully static schemes
    const std::string u = upper(v);
    if (plane_allocations().find(u) < 0)
      s.fail(
          fmt::format("'{}' is not supported: bitline models the 24 fully static schemes, a permutation of C, W, D, P "
                      "(e.g. CWDP)",
                      shown(v)));
    d.put(s, "plane_allocation", u);
  });
  s.on("Transaction_Scheduling_Policy", [&](auto& v, auto) { d.choice(s, "scheduling", v, scheduling_policies()); });
  s.on("Overprovisioning_Ratio", [&](auto& v, auto) { d.put(s, "overprovisioning", fmt::format("{}", s.real(v, 0.0, 0.9))); });
  s.on("GC_Exec_Threshold", [&](auto& v, auto) { d.put(s, "gc_exec_threshold", fmt::format("{}", s.real(v, 0.0, 0.5))); });
  s.on("GC_Block_Selection_Policy", [&](auto& v, auto) { d.choice(s, "gc_policy", v, gc_policies()); });
  s.on("Use_Copyback_for_GC", [&](auto& v, auto) { d.boolean(s, "gc_copyback", s.boolean(v)); });
  s.on("Preemptible_GC_Enabled", [&](auto& v, auto) { d.boolean(s, "gc_preemptible", s.boolean(v)); });
  s.on("GC_Hard_Threshold", [&](auto& v, auto) { d.put(s, "gc_hard_threshold", fmt::format("{}", s.real(v, 0.0, 0.5))); });
  s.on("Dynamic_Wearleveling_Enabled", [&](auto& v, auto) { d.boolean(s, "dynamic_wearleveling", s.boolean(v)); });
  s.on("Static_Wearleveling_Enabled", [&](auto& v, auto) { d.boolean(s, "static_wearleveling", s.boolean(v)); });
  s.on("Static_Wearleveling_Threshold",
       [&](auto& v, auto) { d.integer(s, "static_wearleveling_threshold", s.integer(v, 0, 1'000'000'000)); });
  // MQSim's own file spells the first one both ways over its history; both are accepted.
  for (auto name : {"Preferred_suspend_erase_time_for_read", "Prefered_suspend_erase_time_for_read",
                    "Preferred_suspend_erase_time_for_write", "Preferred_suspend_write_time_for_read"})
    s.on(name, [&](auto& v, auto) { s.integer(v, 0, kMaxNs); });
  s.on("Flash_Channel_Count", [&](auto& v, auto) { d.integer(s, "channels", s.integer(v, 1, 256)); });
  s.on("Flash_Channel_Width", [&](auto& v, auto) { d.integer(s, "channel_width", s.integer(v, 1, 8)); });
  s.on("Channel_Transfer_Rate", [&](auto& v, auto) { d.integer(s, "channel_transfer_rate", s.integer(v, 1, 100000)); });
  s.on("Chip_No_Per_Channel", [&](auto& v, auto) { d.integer(s, "chips_per_channel", s.integer(v, 1, 256)); });
  s.on("Flash_Comm_Protocol", [&](auto& v, auto) { d.choice(s, "comm_protocol", v, comm_protocols()); });
  s.on("Flash_Parameter_Set", [&](auto&, pugi::xml_node child) {
    flash_seen = true;
    read_flash(file, child, d, defaulted);
  });
  for (auto& n : s.run())
    if (n.rfind("Pref", 0) != 0) defaulted.push_back(n);
  if (!flash_seen) throw ConfigError(fmt::format("{}: <Device_Parameter_Set> has no <Flash_Parameter_Set>", file));
}

/// The MQSim element whose value a key of ssd_device holds ("" for bitline's own keys): its declaration's "(<Element>)".
std::string mqsim_element_of(std::string_view key) {
  for (const ParamRow& r : describe_params<DeviceParams>("")) {
    if (r.path != key) continue;
    const size_t a = r.desc.find("(<"), b = r.desc.find(">)", a);
    return a == std::string::npos || b == std::string::npos ? std::string() : r.desc.substr(a + 1, b - a);
  }
  return {};
}

/// <Bitline_Parameter_Set>: bitline's own keys of ssd_device (kBitlineOnlyKeys), one element each, the value in the
/// config syntax with its unit (<slc_static_bytes>6GB</slc_static_bytes>). A key an MQSim element sets is refused here.
void read_bitline(const std::string& file, pugi::xml_node node, DeviceValues& d) {
  for (auto child : node.children()) {
    if (child.type() != pugi::node_element) continue;
    const std::string el = mqsim_element_of(child.name());
    if (!el.empty())
      throw ConfigError(fmt::format("{}: <{}> inside <Bitline_Parameter_Set>: ssd_device.{} is MQSim's element {}; set it there", file,
                                    shown(child.name()), shown(child.name()), el));
  }
  Section s(file, node);
  for (std::string_view key : kBitlineOnlyKeys) s.on(std::string(key), [&d, &s, key](auto& v, auto) { d.put(s, key, v); });
  s.run();
}

void check_device(const DeviceXml& d) {
  const std::string& f = d.file;
  if (d.dies() > 65536) throw ConfigError(fmt::format("{}: {} dies (channels x chips x dies per chip) exceed 65536", f, d.dies()));
  if (d.blocks() > (int64_t(1) << 24))
    throw ConfigError(fmt::format("{}: {} blocks in the device exceed the 16 Mi bitline accepts", f, d.blocks()));
  if (d.pages() > (int64_t(1) << 36)) throw ConfigError(fmt::format("{}: {} pages exceed 2^36", f, d.pages()));
  if (d.gc_hard_threshold > d.gc_exec_threshold)
    throw ConfigError(fmt::format("{}: GC_Hard_Threshold {} is above GC_Exec_Threshold {}", f, d.gc_hard_threshold, d.gc_exec_threshold));
  // GC starts when a plane has fewer free blocks than this; with 1 it would start only with none left, when the valid
  // pages it must move have nowhere to go (the drive stops).
  const int64_t gc_blocks = std::max<int64_t>(1, int64_t(std::ceil(d.gc_exec_threshold * double(d.blocks_per_plane))));
  if (gc_blocks < 2)
    throw ConfigError(
        fmt::format("{}: GC_Exec_Threshold {} x Block_No_Per_Plane {} = {} free block: garbage collection would "
                    "start only when a plane has no free block left, with nowhere to move its valid pages; it "
                    "needs at least 2 (GC_Exec_Threshold >= {:.4g}, or more blocks per plane)",
                    f, d.gc_exec_threshold, d.blocks_per_plane, gc_blocks, 2.0 / double(d.blocks_per_plane)));
  int64_t reserve = std::max<int64_t>(2, gc_blocks + 1);
  double usable = double(d.blocks_per_plane - reserve) / double(d.blocks_per_plane);
  if (1.0 - d.overprovisioning >= usable)
    throw ConfigError(
        fmt::format("{}: Overprovisioning_Ratio {} leaves no room for garbage collection: the logical space "
                    "must be below {:.4f} of the device with GC_Exec_Threshold {} and {} blocks per plane",
                    f, d.overprovisioning, usable, d.gc_exec_threshold, d.blocks_per_plane));
  if (d.logical_pages() < 1) throw ConfigError(fmt::format("{}: no logical pages", f));
  if (const int64_t unit = d.mapping_unit.raw(); unit != 0 && (unit % 512 != 0 || unit > d.page_size || d.page_size % unit != 0))
    throw ConfigError(
        fmt::format("{}: ssd_device.mapping_unit {} B: a mapping unit is a multiple of the 512-byte sector that divides "
                    "the flash page (<Page_Capacity> {} B), or 0 for page-level mapping",
                    f, unit, d.page_size));
  if (*d.slc_cache != SlcCache::Off) {
    if (d.bits_per_cell() == 1)
      throw ConfigError(fmt::format("{}: ssd_device.slc_cache {}: the flash is SLC already (<Flash_Technology>)", f, d.slc_cache.name()));
    // the static region lives in the over-provisioning, at bits per cell times the data it holds
    const double spare = double(d.pages() - d.logical_pages()) * double(d.page_size);
    const double need = double(d.slc_static_bytes.raw()) * double(d.bits_per_cell());
    if (need > spare)
      throw ConfigError(
          fmt::format("{}: ssd_device.slc_static_bytes {}: a static SLC region of that size takes {:.4g} GB of the flash ({} bits per "
                      "cell), more than the {:.4g} GB of over-provisioning (<Overprovisioning_Ratio> {}) that holds it",
                      f, d.slc_static_bytes.raw(), need * 1e-9, d.bits_per_cell(), spare * 1e-9, d.overprovisioning));
    if (d.slc_static_bytes.raw() + (*d.slc_cache == SlcCache::TurboWrite ? d.slc_dynamic_max_bytes.raw() : 0) < d.page_size)
      throw ConfigError(fmt::format("{}: ssd_device.slc_cache {}: the SLC region holds less than one page (slc_static_bytes{})", f,
                                    d.slc_cache.name(), *d.slc_cache == SlcCache::TurboWrite ? ", slc_dynamic_max_bytes" : ""));
  }
}

}  // namespace

DeviceXml parse_device_xml(const std::string& text, const std::string& name, const std::vector<std::string>& sets) {
  auto doc = parse_doc(text, name);
  auto root = only_root(doc, name, "Execution_Parameter_Set");
  DeviceValues values;
  std::vector<std::string> defaulted;
  Section s(name, root);
  bool dev_seen = false;
  s.on("Host_Parameter_Set", [&](auto&, pugi::xml_node node) {
    Section h(name, node);
    h.on("PCIe_Lane_Bandwidth",
         [&](auto& v, auto) { values.put(h, "pcie_lane_bandwidth", fmt::format("{}GB/s", h.real(v, 1e-3, 1000.0))); });
    h.on("PCIe_Lane_Count", [&](auto& v, auto) { values.integer(h, "pcie_lane_count", h.integer(v, 1, 64)); });
    h.on("SATA_Processing_Delay", [&](auto& v, auto) { h.integer(v, 0, kMaxNs); });
    h.on("Enable_ResponseTime_Logging", [&](auto& v, auto) { h.boolean(v); });
    h.on("ResponseTime_Logging_Period_Length", [&](auto& v, auto) { h.integer(v, 0, kMaxNs); });
    for (auto& n : h.run()) defaulted.push_back(n);
  });
  s.on("Device_Parameter_Set", [&](auto&, pugi::xml_node node) {
    dev_seen = true;
    read_device(name, node, values, defaulted);
  });
  s.on("Bitline_Parameter_Set", [&](auto&, pugi::xml_node node) { read_bitline(name, node, values); });
  s.run();
  if (!dev_seen) throw ConfigError(fmt::format("{}: <Execution_Parameter_Set> has no <Device_Parameter_Set>", name));
  for (const std::string& set : sets)
    if (set.rfind("ssd_device.", 0) == 0) values.tree().apply_set(set);
  DeviceXml d(load_params<DeviceParams>(values.tree(), "ssd_device"));
  d.file = name;
  d.defaulted = std::move(defaulted);
  check_device(d);
  return d;
}

DeviceXml read_device_xml(const std::string& path, const std::vector<std::string>& sets) {
  return parse_device_xml(slurp(path, "device"), path, sets);
}

namespace {

void read_flow_common(Section& s, FlowXml& f) {
  s.on("Priority_Class", [&](auto& v, auto) { f.priority = s.choice(v, priority_classes()); });
  s.on("Device_Level_Data_Caching_Mode", [&](auto& v, auto) { f.caching_mode = s.choice(v, caching_modes()); });
  s.on("Channel_IDs", [&](auto& v, auto) { f.channel_ids = s.id_list(v, 255); });
  s.on("Chip_IDs", [&](auto& v, auto) { f.chip_ids = s.id_list(v, 255); });
  s.on("Die_IDs", [&](auto& v, auto) { f.die_ids = s.id_list(v, 63); });
  s.on("Plane_IDs", [&](auto& v, auto) { f.plane_ids = s.id_list(v, 15); });
  s.on("Initial_Occupancy_Percentage", [&](auto& v, auto) { f.initial_occupancy = double(s.integer(v, 0, 100)) / 100.0; });
}

FlowXml read_synthetic(const std::string& file, pugi::xml_node node, std::vector<std::string>* notes) {
  FlowXml f;
  f.kind = FlowKind::Synthetic;
  Section s(file, node);
  read_flow_common(s, f);
  s.on("Working_Set_Percentage", [&](auto& v, auto) { f.working_set = double(s.integer(v, 1, 100)) / 100.0; });
  s.on("Synthetic_Generator_Type", [&](auto& v, auto) { f.generator = s.choice(v, generators()); });
  s.on("Read_Percentage", [&](auto& v, auto) { f.read_ratio = double(s.integer(v, 0, 100)) / 100.0; });
  s.on("Address_Distribution", [&](auto& v, auto) { f.address_distribution = s.choice(v, address_distributions()); });
  s.on("Percentage_of_Hot_Region", [&](auto& v, auto) { f.hot_region = double(s.integer(v, 0, 100)) / 100.0; });
  s.on("Generated_Aligned_Addresses", [&](auto& v, auto) { f.aligned = s.boolean(v); });
  s.on("Address_Alignment_Unit", [&](auto& v, auto) { f.alignment_unit = s.integer(v, 1, 1 << 20); });
  s.on("Request_Size_Distribution", [&](auto& v, auto) { f.size_distribution = s.choice(v, size_distributions()); });
  s.on("Average_Request_Size", [&](auto& v, auto) { f.avg_size = s.integer(v, 1, 1 << 16); });
  s.on("Variance_Request_Size", [&](auto& v, auto) { f.size_variance = s.integer(v, 0, 1 << 16); });
  s.on("Seed", [&](auto& v, auto) { f.seed = s.integer(v, 0, INT32_MAX); });
  s.on("Average_No_of_Reqs_in_Queue", [&](auto& v, auto) { f.queue_depth = s.integer(v, 1, 65535); });
  s.on("Bandwidth", [&](auto& v, auto) { f.bandwidth = s.integer(v, 0, int64_t(1e12)); });
  s.on("Intensity", [&](auto& v, auto) {
    s.integer(v, 0, int64_t(1e12));
    if (notes)
      notes->push_back(
          fmt::format("{}: <Intensity> is ignored: MQSim does not read it either (the arrival rate of a "
                      "BANDWIDTH flow is <Bandwidth>, bytes per second)",
                      file));
  });
  s.on("Stop_Time", [&](auto& v, auto) { f.stop_time = s.nanoseconds(v, kMaxNs); });
  s.on("Total_Requests_To_Generate", [&](auto& v, auto) { f.total_requests = s.integer(v, 0, int64_t(1e10)); });
  std::vector<std::string> absent;
  for (std::string& n : s.run()) {
    // what the flow does not use: <Intensity> (nobody reads it), the other generator's rate, the other end condition
    const bool unused = n == "Intensity" || (n == "Bandwidth" && f.generator == Generator::QueueDepth) ||
                        (n == "Average_No_of_Reqs_in_Queue" && f.generator == Generator::Bandwidth) ||
                        (n == "Total_Requests_To_Generate" && f.stop_time > Time{}) || (n == "Stop_Time" && f.total_requests > 0);
    if (!unused) absent.push_back(std::move(n));
  }
  if (notes && !absent.empty()) {
    // Once per file: the flows of a many-queue scenario usually leave out the same elements.
    std::string note =
        fmt::format("{}: a synthetic flow: {} elements absent, at MQSim's defaults: {}", file, absent.size(), fmt::join(absent, ", "));
    if (std::find(notes->begin(), notes->end(), note) == notes->end()) notes->push_back(std::move(note));
  }
  if (f.stop_time == Time{} && f.total_requests == 0)
    throw ConfigError(
        fmt::format("{}: a synthetic flow needs <Stop_Time> or <Total_Requests_To_Generate> above zero "
                    "(otherwise it never ends)",
                    file));
  switch (f.generator) {
    case Generator::QueueDepth:
      break;
    case Generator::Bandwidth:
      if (f.bandwidth == 0) throw ConfigError(fmt::format("{}: a BANDWIDTH flow needs <Bandwidth> above zero (bytes per second)", file));
      break;
  }
  return f;
}

FlowXml read_trace_flow(const std::string& file, pugi::xml_node node, const std::string& base_dir) {
  FlowXml f;
  f.kind = FlowKind::Trace;
  Section s(file, node);
  read_flow_common(s, f);
  bool path_seen = false;
  s.on("File_Path", [&](auto& v, auto) {
    if (v.empty()) s.fail("empty path");
    if (v.size() > 4096) s.fail(fmt::format("'{}' is longer than 4096 characters", shown(v)));
    f.trace_file = v;
    std::filesystem::path p(v);
    if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
    f.trace_path = p.string();
    path_seen = true;
  });
  s.on("Percentage_To_Be_Executed", [&](auto& v, auto) { f.percentage_executed = double(s.integer(v, 1, 100)) / 100.0; });
  s.on("Relay_Count", [&](auto& v, auto) { f.relay_count = s.integer(v, 1, 1000); });
  s.on("Time_Unit", [&](auto& v, auto) { f.time_unit = s.choice(v, time_units()); });
  s.run();
  if (!path_seen) throw ConfigError(fmt::format("{}: a trace-based flow needs <File_Path>", file));
  return f;
}

}  // namespace

WorkloadXml parse_workload_xml(const std::string& text, const std::string& name, const std::string& base_dir,
                               std::vector<std::string>* notes) {
  auto doc = parse_doc(text, name);
  auto root = only_root(doc, name, "MQSim_IO_Scenarios");
  WorkloadXml w;
  w.file = name;
  for (auto sc : root.children()) {
    if (sc.type() != pugi::node_element) continue;
    if (std::string(sc.name()) != "IO_Scenario")
      throw ConfigError(
          fmt::format("{}: <{}> inside <MQSim_IO_Scenarios>: unknown element (expected <IO_Scenario>)", name, shown(sc.name())));
    ScenarioXml scen;
    for (auto fl : sc.children()) {
      if (fl.type() != pugi::node_element) continue;
      std::string n = fl.name();
      if (n == "IO_Flow_Parameter_Set_Synthetic")
        scen.flows.push_back(read_synthetic(name, fl, notes));
      else if (n == "IO_Flow_Parameter_Set_Trace_Based")
        scen.flows.push_back(read_trace_flow(name, fl, base_dir));
      else
        throw ConfigError(
            fmt::format("{}: <{}> inside <IO_Scenario>: unknown element (expected "
                        "<IO_Flow_Parameter_Set_Synthetic> or <IO_Flow_Parameter_Set_Trace_Based>)",
                        name, shown(n)));
      if (scen.flows.size() > 64) throw ConfigError(fmt::format("{}: more than 64 flows in one <IO_Scenario>", name));
    }
    if (scen.flows.empty()) throw ConfigError(fmt::format("{}: an <IO_Scenario> without flows", name));
    w.scenarios.push_back(std::move(scen));
    if (w.scenarios.size() > 1024) throw ConfigError(fmt::format("{}: more than 1024 scenarios", name));
  }
  if (w.scenarios.empty()) throw ConfigError(fmt::format("{}: no <IO_Scenario>", name));
  return w;
}

WorkloadXml read_workload_xml(const std::string& path, std::vector<std::string>* notes) {
  std::string base = std::filesystem::path(path).parent_path().string();
  return parse_workload_xml(slurp(path, "workload"), path, base, notes);
}

namespace {

/// The data cache and the CMT must each hold at least one entry where a flow uses them (an empty write cache
/// has nothing to evict; a CMT smaller than one entry cannot hold the entry it looks up).
void check_caches(const WorkloadXml& w, const DeviceXml& d, const ScenarioXml& sc, const FlowXml& f) {
  const int64_t nflows = int64_t(sc.flows.size());
  switch (f.caching_mode) {
    case CachingMode::WriteCache:
    case CachingMode::WriteReadCache: {
      const bool whole = d.data_cache_sharing == DataCacheSharing::Shared;
      const int64_t share = whole ? d.data_cache_capacity.raw() : d.data_cache_capacity.raw() / nflows;
      if (share / d.page_size < 1)
        throw ConfigError(
            fmt::format("{}: <Data_Cache_Capacity> {} bytes{} holds no page of {} bytes (Page_Capacity), but a flow of {} caches "
                        "its writes (Device_Level_Data_Caching_Mode {}): give the cache at least one page, or TURNED_OFF / READ_CACHE",
                        d.file, d.data_cache_capacity.raw(),
                        whole ? "" : fmt::format(" ({} per flow, EQUAL_PARTITIONING over {} flows)", share, nflows), d.page_size, w.file,
                        caching_modes().name(f.caching_mode)));
      break;
    }
    case CachingMode::TurnedOff:
    case CachingMode::ReadCache:
      break;
  }
  if (!d.ideal_mapping_table) {
    const bool whole = d.cmt_sharing == CmtSharing::Shared;
    const int64_t share = whole ? d.cmt_capacity.raw() : d.cmt_capacity.raw() / nflows;
    if (share < d.cmt_entry_bytes())
      throw ConfigError(fmt::format(
          "{}: <CMT_Capacity> {} bytes{} is below one mapping entry ({} bytes on this device): give it at least {} "
          "bytes, or <Ideal_Mapping_Table> true for a mapping table wholly in DRAM",
          d.file, d.cmt_capacity.raw(), whole ? "" : fmt::format(" ({} per flow, EQUAL_SIZE_PARTITIONING over {} flows)", share, nflows),
          d.cmt_entry_bytes(), d.cmt_entry_bytes() * (whole ? 1 : nflows)));
  }
}

}  // namespace

void check_workload(const WorkloadXml& w, const DeviceXml& d) {
  auto check_ids = [&](const std::vector<int64_t>& ids, int64_t n, const char* what, const char* singular, const char* plural) {
    if (ids.empty()) return;
    for (int64_t x : ids)
      if (x >= n)
        throw ConfigError(fmt::format("{}: <{}> lists {}, but the device ({}) has {} {}, numbered 0 to {}", w.file, what, x, d.file, n,
                                      n == 1 ? singular : plural, n - 1));
    if (int64_t(ids.size()) != n)
      throw ConfigError(
          fmt::format("{}: <{}> lists {} of the device's {}: flows confined to part of the device are not "
                      "modelled by bitline (list all of them)",
                      w.file, what, ids.size(), n));
  };
  for (auto& sc : w.scenarios)
    for (auto& f : sc.flows) {
      check_ids(f.channel_ids, d.channels, "Channel_IDs", "channel", "channels");
      check_ids(f.chip_ids, d.chips_per_channel, "Chip_IDs", "chip per channel", "chips per channel");
      check_ids(f.die_ids, d.dies_per_chip, "Die_IDs", "die per chip", "dies per chip");
      check_ids(f.plane_ids, d.planes_per_die, "Plane_IDs", "plane per die", "planes per die");
      check_caches(w, d, sc, f);
      if (f.kind == FlowKind::Synthetic) {
        int64_t range = d.logical_pages() * d.sectors_per_page() / int64_t(sc.flows.size());
        if (f.avg_size + 4 * f.size_variance > range)
          throw ConfigError(
              fmt::format("{}: request size {} sectors is larger than the flow's address range ({} sectors)", w.file, f.avg_size, range));
      }
    }
}

// ---- trace -----------------------------------------------------------------

bool parse_trace_line(const std::string& line, TraceRecord& r, std::string& why) {
  // Fields separated by white space as istream >> reads them (space, \t, \n, \v, \f, \r), without a stream per
  // line: the 10-million-line traces of issue 27 spent most of their time in std::istringstream.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  std::string_view tok[6];
  int n = 0;
  const char* p = line.data();
  const char* const e = p + line.size();
  while (n < 6) {
    while (p < e && space(*p)) ++p;
    if (p == e) break;
    const char* b = p;
    while (p < e && !space(*p)) ++p;
    tok[n++] = std::string_view(b, size_t(p - b));
  }
  if (n == 0) return false;
  if (n != 5) {
    why = fmt::format("expected 5 fields (arrival time, device, start LBA, size in sectors, type), found {}",
                      n == 6 ? "more" : std::to_string(n));
    return false;
  }
  int64_t v[5];
  const char* names[5] = {"arrival time", "device", "start LBA", "size", "type"};
  for (int i = 0; i < 5; ++i) {
    const char* b = tok[i].data();
    const char* const te = b + tok[i].size();
    if (*b == '+') ++b;  // a sign, as strtoll takes it
    long long x = 0;
    const auto [ptr, ec] = std::from_chars(b, te, x);
    if (ec != std::errc() || ptr != te || x < 0) {
      why = fmt::format("{} '{}' is not a non-negative integer", names[i], shown(tok[i]));
      return false;
    }
    v[i] = x;
  }
  if (v[0] > int64_t(1e18)) {
    why = "arrival time beyond 1e18";
    return false;
  }
  if (v[3] < 1 || v[3] > (1 << 16)) {
    why = fmt::format("size {} sectors is out of range [1, 65536]", v[3]);
    return false;
  }
  if (v[4] > 1) {
    why = fmt::format("type {} is neither 1 (read) nor 0 (write)", v[4]);
    return false;
  }
  if (v[2] > (int64_t(1) << 48)) {
    why = fmt::format("start LBA {} beyond 2^48", v[2]);
    return false;
  }
  r = TraceRecord{v[0], v[1], v[2], v[3], v[4] == 1};
  return true;
}

TraceReader::TraceReader(const std::string& path, Time unit)
    : path_(path), unit_ps_(std::max<int64_t>(1, unit.raw())), max_raw_(kMaxSimulatedPs / unit_ps_), buf_(size_t(1) << 16) {
  // Checked before opening: a FIFO would block the open until a writer came, and Relay_Count rereads the file.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) throw ConfigError(fmt::format("{}: the trace file is a directory", path));
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw ConfigError(fmt::format("{}: the trace is not a regular file (a pipe or device cannot be reread for Relay_Count)", path));
  in_.open(path, std::ios::binary);
  if (!in_) throw ConfigError(fmt::format("{}: cannot open trace file", path));  // a File_Path is at most 4096 characters
}

bool TraceReader::read_line(std::string& line) {
  line.clear();
  bool any = false;
  while (true) {
    if (pos_ == end_) {
      if (eof_) return any;
      in_.read(buf_.data(), std::streamsize(buf_.size()));
      pos_ = 0;
      end_ = size_t(in_.gcount());
      if (end_ == 0) {
        eof_ = true;
        return any;
      }
    }
    const char* start = buf_.data() + pos_;
    const size_t avail = end_ - pos_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    const size_t take = nl ? size_t(nl - start) : avail;
    any = true;
    // bounded line length: a binary file or a missing newline cannot make one huge string
    if (line.size() + take > 4096) throw ConfigError(fmt::format("{}:{}: line longer than 4096 characters", path_, line_no_ + 1));
    line.append(start, take);
    pos_ += take;
    if (nl) {
      ++pos_;
      return true;
    }
  }
}

bool TraceReader::next(TraceRecord& r) {
  std::string& line = line_;
  while (true) {
    if (!read_line(line)) return false;
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string why;
    if (parse_trace_line(line, r, why)) {
      // checked in the trace's unit before it becomes picoseconds: 1e17 ns would wrap past 2^63 ps
      if (r.arrival_raw > max_raw_)
        throw ConfigError(fmt::format(
            "{}:{}: arrival time {} (Time_Unit {} ps) is {:.4g} s, past the {:.4g} s (1e18 ps, 11.6 days) a run "
            "may simulate",
            path_, line_no_, r.arrival_raw, unit_ps_, double(r.arrival_raw) * double(unit_ps_) * 1e-12, double(kMaxSimulatedPs) * 1e-12));
      if (r.arrival_raw < last_arrival_)
        throw ConfigError(
            fmt::format("{}:{}: arrival time {} is earlier than the previous line's {} (a trace must be in "
                        "time order)",
                        path_, line_no_, r.arrival_raw, last_arrival_));
      last_arrival_ = r.arrival_raw;
      return true;
    }
    if (!why.empty()) throw ConfigError(fmt::format("{}:{}: {}", path_, line_no_, why));
  }
}

void TraceReader::rewind() {
  in_.clear();
  in_.seekg(0);
  pos_ = end_ = 0;
  eof_ = false;
  line_no_ = 0;
  last_arrival_ = 0;
}

int64_t TraceReader::count(int64_t* sectors) {
  rewind();
  int64_t n = 0, sum = 0;
  TraceRecord r;
  while (next(r)) {
    ++n;
    sum += r.sectors;
  }
  rewind();
  if (sectors) *sectors = sum;
  return n;
}

}  // namespace bitline::ssd
