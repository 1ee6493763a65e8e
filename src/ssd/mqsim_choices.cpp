#include "ssd/mqsim_choices.hpp"

namespace bitline::ssd {

// ---- MQSim's choices: one table per element -------------------------------------------------
// Names as MQSim spells them (its enum names, upper case); the value read matches ignoring case.

const MqsimChoices<MemoryType>& memory_types() {
  static const MqsimChoices<MemoryType> t{{"Memory_Type", {{"FLASH", "NAND flash", MemoryType::Flash}}}, {}};
  return t;
}
const MqsimChoices<HostInterface>& host_interfaces() {
  static const MqsimChoices<HostInterface> t{{"HostInterface_Type", {{"NVME", "NVMe: per-flow submission queues", HostInterface::Nvme}}},
                                             {"SATA"}};
  return t;
}
const MqsimChoices<CachingMechanism>& caching_mechanisms() {
  static const MqsimChoices<CachingMechanism> t{{"Caching_Mechanism",
                                                 {{"SIMPLE", "write cache (same model as ADVANCED)", CachingMechanism::Simple},
                                                  {"ADVANCED", "write cache", CachingMechanism::Advanced}}},
                                                {}};
  return t;
}
const MqsimChoices<DataCacheSharing>& data_cache_sharing_modes() {
  static const MqsimChoices<DataCacheSharing> t{
      {"Data_Cache_Sharing_Mode",
       {{"SHARED", "one data cache for all flows", DataCacheSharing::Shared},
        {"EQUAL_PARTITIONING", "each flow its own cache of capacity / flows", DataCacheSharing::EqualPartitioning}}},
      {}};
  return t;
}
const MqsimChoices<AddressMapping>& address_mappings() {
  static const MqsimChoices<AddressMapping> t{{"Address_Mapping", {{"PAGE_LEVEL", "page-level mapping", AddressMapping::PageLevel}}},
                                              {"HYBRID"}};
  return t;
}
const MqsimChoices<CmtSharing>& cmt_sharing_modes() {
  static const MqsimChoices<CmtSharing> t{
      {"CMT_Sharing_Mode",
       {{"SHARED", "one mapping table cache (see ssd_model.cmt_per_flow)", CmtSharing::Shared},
        {"EQUAL_SIZE_PARTITIONING", "each flow a table of capacity / flows", CmtSharing::EqualSizePartitioning}}},
      {}};
  return t;
}
const MqsimChoices<Scheduling>& scheduling_policies() {
  static const MqsimChoices<Scheduling> t{
      {"Transaction_Scheduling_Policy",
       {{"OUT_OF_ORDER", "one priority class for every flow", Scheduling::OutOfOrder},
        {"PRIORITY_OUT_OF_ORDER", "queues by each flow's Priority_Class", Scheduling::PriorityOutOfOrder}}},
      {"FLIN"}};
  return t;
}
const MqsimChoices<GcPolicy>& gc_policies() {
  static const MqsimChoices<GcPolicy> t{{"GC_Block_Selection_Policy",
                                         {{"GREEDY", "the block with the fewest valid pages", GcPolicy::Greedy},
                                          {"RGA", "the best of log2(blocks) random candidates", GcPolicy::Rga},
                                          {"RANDOM", "a random full block", GcPolicy::Random},
                                          {"FIFO", "the oldest full block", GcPolicy::Fifo}}},
                                        {"RANDOM_P", "RANDOM_PP"}};
  return t;
}
const MqsimChoices<CommProtocol>& comm_protocols() {
  static const MqsimChoices<CommProtocol> t{{"Flash_Comm_Protocol", {{"NVDDR2", "NV-DDR2 channel", CommProtocol::Nvddr2}}}, {}};
  return t;
}
const MqsimChoices<FlashTechnology>& flash_technologies() {
  static const MqsimChoices<FlashTechnology> t{{"Flash_Technology",
                                                {{"SLC", "1 bit per cell", FlashTechnology::Slc},
                                                 {"MLC", "2 bits per cell", FlashTechnology::Mlc},
                                                 {"TLC", "3 bits per cell", FlashTechnology::Tlc}}},
                                               {}};
  return t;
}
const MqsimChoices<Suspension>& suspension_supports() {
  static const MqsimChoices<Suspension> t{{"CMD_Suspension_Support",
                                           {{"NONE", "no suspension", Suspension::None},
                                            {"PROGRAM", "programs suspend (not modelled)", Suspension::Program},
                                            {"PROGRAM_ERASE", "programs and erases suspend (not modelled)", Suspension::ProgramErase},
                                            {"ERASE", "erases suspend (not modelled)", Suspension::Erase}}},
                                          {}};
  return t;
}
const MqsimChoices<PlaneDim>& plane_dims() {
  static const MqsimChoices<PlaneDim> t{{"Plane_Allocation_Scheme letter",
                                         {{"C", "channel", PlaneDim::Channel},
                                          {"W", "way (chip on its channel)", PlaneDim::Way},
                                          {"D", "die", PlaneDim::Die},
                                          {"P", "plane", PlaneDim::Plane}}},
                                        {}};
  return t;
}
const MqsimChoices<Priority>& priority_classes() {
  static const MqsimChoices<Priority> t{{"Priority_Class",
                                         {{"URGENT", "served first", Priority::Urgent},
                                          {"HIGH", "second", Priority::High},
                                          {"MEDIUM", "third", Priority::Medium},
                                          {"LOW", "last", Priority::Low}}},
                                        {}};
  return t;
}
const MqsimChoices<CachingMode>& caching_modes() {
  static const MqsimChoices<CachingMode> t{{"Device_Level_Data_Caching_Mode",
                                            {{"TURNED_OFF", "no data cache", CachingMode::TurnedOff},
                                             {"WRITE_CACHE", "writes go to the cache, reads look in it", CachingMode::WriteCache},
                                             {"READ_CACHE", "reads look in the cache, writes bypass it", CachingMode::ReadCache},
                                             {"WRITE_READ_CACHE", "as WRITE_CACHE", CachingMode::WriteReadCache}}},
                                           {}};
  return t;
}
const MqsimChoices<Generator>& generators() {
  static const MqsimChoices<Generator> t{
      {"Synthetic_Generator_Type",
       {{"QUEUE_DEPTH", "closed loop: each completion generates the next request", Generator::QueueDepth},
        {"BANDWIDTH", "Poisson arrivals at Bandwidth / request size", Generator::Bandwidth}}},
      {}};
  return t;
}
const MqsimChoices<AddressDistribution>& address_distributions() {
  static const MqsimChoices<AddressDistribution> t{
      {"Address_Distribution",
       {{"RANDOM_UNIFORM", "uniform over the working set", AddressDistribution::RandomUniform},
        {"RANDOM_HOTCOLD", "a hot region takes most requests", AddressDistribution::RandomHotCold},
        {"STREAMING", "consecutive addresses", AddressDistribution::Streaming}}},
      {}};
  return t;
}
const MqsimChoices<SizeDistribution>& size_distributions() {
  static const MqsimChoices<SizeDistribution> t{{"Request_Size_Distribution",
                                                 {{"FIXED", "every request Average_Request_Size", SizeDistribution::Fixed},
                                                  {"NORMAL", "normal around it with Variance_Request_Size", SizeDistribution::Normal}}},
                                                {}};
  return t;
}
const MqsimChoices<Time>& time_units() {
  static const MqsimChoices<Time> t{
      {"Time_Unit", {{"PICOSECOND", "1 ps", ps(1)}, {"NANOSECOND", "1 ns", ns(1)}, {"MICROSECOND", "1 us", us(1)}}}, {}};
  return t;
}

std::string plane_allocation_name(const PlaneAllocation& a) {
  std::string s;
  for (PlaneDim d : a) s += plane_dims().name(d);
  return s;
}

}  // namespace bitline::ssd
