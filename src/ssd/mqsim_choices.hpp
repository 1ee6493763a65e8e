// MQSim's named choices (the values of its XML elements that select a mechanism) as enums with their tables,
// shared by the device parameters (device_params.hpp) and the MQSim readers (mqsim_xml.hpp).
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hpp"
#include "core/units.hpp"

namespace bitline::ssd {

enum class PageType { LSB = 0, CSB = 1, MSB = 2 };

// ---- MQSim's choices ------------------------------------------------------------------
// An element whose value is one of MQSim's named choices is resolved once, when the file is
// read, to one of these enums; the model switches on the enum and never compares names.
// Each enum has its table (below, defined in mqsim_xml.cpp): the MQSim names bitline models,
// each with its value, and the MQSim names it knows but does not model (refused with an
// error saying so). Names match ignoring case, as in MQSim.

enum class MemoryType { Flash };                                              // Memory_Type
enum class HostInterface { Nvme };                                            // HostInterface_Type
enum class CachingMechanism { Simple, Advanced };                             // Caching_Mechanism
enum class DataCacheSharing { Shared, EqualPartitioning };                    // Data_Cache_Sharing_Mode
enum class AddressMapping { PageLevel };                                      // Address_Mapping
enum class CmtSharing { Shared, EqualSizePartitioning };                      // CMT_Sharing_Mode
enum class Scheduling { OutOfOrder, PriorityOutOfOrder };                     // Transaction_Scheduling_Policy
enum class GcPolicy { Greedy, Rga, Random, Fifo };                            // GC_Block_Selection_Policy
enum class CommProtocol { Nvddr2 };                                           // Flash_Comm_Protocol
enum class FlashTechnology { Slc, Mlc, Tlc };                                 // Flash_Technology
enum class Suspension { None, Program, ProgramErase, Erase };                 // CMD_Suspension_Support
enum class PlaneDim { Channel, Way, Die, Plane };                             // a letter C|W|D|P of Plane_Allocation_Scheme
enum class Priority { Urgent, High, Medium, Low };                            // Priority_Class
enum class CachingMode { TurnedOff, WriteCache, ReadCache, WriteReadCache };  // Device_Level_Data_Caching_Mode
enum class Generator { QueueDepth, Bandwidth };                               // Synthetic_Generator_Type
enum class AddressDistribution { RandomUniform, RandomHotCold, Streaming };   // Address_Distribution
enum class SizeDistribution { Fixed, Normal };                                // Request_Size_Distribution

/// The table of one element's choices: the MQSim names bitline models (a Registry of
/// {name as MQSim spells it, description, value}, in the order error messages list them)
/// and those it refuses as not modelled.
template <class T>
struct MqsimChoices {
  Registry<T> modelled;
  std::vector<std::string_view> unmodelled;

  /// The MQSim name of `v` (for echoing a resolved value back).
  std::string_view name(const T& v) const {
    for (size_t i = 0; i < modelled.size(); ++i)
      if (modelled.value(i) == v) return modelled.names()[i];
    throw std::logic_error(std::string("no ") + std::string(modelled.kind()) + " name for this value");
  }
};

const MqsimChoices<MemoryType>& memory_types();
const MqsimChoices<HostInterface>& host_interfaces();
const MqsimChoices<CachingMechanism>& caching_mechanisms();
const MqsimChoices<DataCacheSharing>& data_cache_sharing_modes();
const MqsimChoices<AddressMapping>& address_mappings();
const MqsimChoices<CmtSharing>& cmt_sharing_modes();
const MqsimChoices<Scheduling>& scheduling_policies();
const MqsimChoices<GcPolicy>& gc_policies();
const MqsimChoices<CommProtocol>& comm_protocols();
const MqsimChoices<FlashTechnology>& flash_technologies();
const MqsimChoices<Suspension>& suspension_supports();
const MqsimChoices<PlaneDim>& plane_dims();
const MqsimChoices<Priority>& priority_classes();
const MqsimChoices<CachingMode>& caching_modes();
const MqsimChoices<Generator>& generators();
const MqsimChoices<AddressDistribution>& address_distributions();
const MqsimChoices<SizeDistribution>& size_distributions();
/// Time_Unit: the value is the unit itself (PICOSECOND = 1 ps, ...).
const MqsimChoices<Time>& time_units();

/// Plane_Allocation_Scheme: the order in which consecutive pages stripe over the dimensions, first the
/// fastest-varying one (CWDP: channel, then way, then die, then plane).
using PlaneAllocation = std::array<PlaneDim, 4>;
/// Its MQSim name, e.g. "CWDP".
std::string plane_allocation_name(const PlaneAllocation& a);

/// The modelled choices of one element as a registry, for a typed parameter: Choice<T, modelled_of<T, F>>.
template <class T, const MqsimChoices<T>& (*F)()>
const Registry<T>& modelled_of() {
  return F().modelled;
}

}  // namespace bitline::ssd
