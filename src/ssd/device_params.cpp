#include "ssd/device_params.hpp"

namespace bitline::ssd {

const Registry<SlcCache>& slc_cache_modes() {
  static const Registry<SlcCache> r(
      "SLC cache", {{"off", "no SLC cache: every page is programmed at its page type's tPROG (MQSim)", SlcCache::Off},
                    {"static", "a fixed SLC region of slc_static_bytes", SlcCache::Static},
                    {"turbowrite",
                     "a static region plus a dynamic one of up to slc_dynamic_max_bytes, shrinking with free space (Samsung "
                     "Intelligent TurboWrite)",
                     SlcCache::TurboWrite}});
  return r;
}

const Registry<PlaneAllocation>& plane_allocations() {
  static const Registry<PlaneAllocation> r("Plane_Allocation_Scheme",
                                           {{"CWDP", "channel, then way, then die, then plane",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Way, PlaneDim::Die, PlaneDim::Plane}},
                                            {"CWPD", "channel, then way, then plane, then die",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Way, PlaneDim::Plane, PlaneDim::Die}},
                                            {"CDWP", "channel, then die, then way, then plane",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Die, PlaneDim::Way, PlaneDim::Plane}},
                                            {"CDPW", "channel, then die, then plane, then way",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Die, PlaneDim::Plane, PlaneDim::Way}},
                                            {"CPWD", "channel, then plane, then way, then die",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Plane, PlaneDim::Way, PlaneDim::Die}},
                                            {"CPDW", "channel, then plane, then die, then way",
                                             PlaneAllocation{PlaneDim::Channel, PlaneDim::Plane, PlaneDim::Die, PlaneDim::Way}},
                                            {"WCDP", "way, then channel, then die, then plane",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Channel, PlaneDim::Die, PlaneDim::Plane}},
                                            {"WCPD", "way, then channel, then plane, then die",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Channel, PlaneDim::Plane, PlaneDim::Die}},
                                            {"WDCP", "way, then die, then channel, then plane",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Die, PlaneDim::Channel, PlaneDim::Plane}},
                                            {"WDPC", "way, then die, then plane, then channel",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Die, PlaneDim::Plane, PlaneDim::Channel}},
                                            {"WPCD", "way, then plane, then channel, then die",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Plane, PlaneDim::Channel, PlaneDim::Die}},
                                            {"WPDC", "way, then plane, then die, then channel",
                                             PlaneAllocation{PlaneDim::Way, PlaneDim::Plane, PlaneDim::Die, PlaneDim::Channel}},
                                            {"DCWP", "die, then channel, then way, then plane",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Channel, PlaneDim::Way, PlaneDim::Plane}},
                                            {"DCPW", "die, then channel, then plane, then way",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Channel, PlaneDim::Plane, PlaneDim::Way}},
                                            {"DWCP", "die, then way, then channel, then plane",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Way, PlaneDim::Channel, PlaneDim::Plane}},
                                            {"DWPC", "die, then way, then plane, then channel",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Way, PlaneDim::Plane, PlaneDim::Channel}},
                                            {"DPCW", "die, then plane, then channel, then way",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Plane, PlaneDim::Channel, PlaneDim::Way}},
                                            {"DPWC", "die, then plane, then way, then channel",
                                             PlaneAllocation{PlaneDim::Die, PlaneDim::Plane, PlaneDim::Way, PlaneDim::Channel}},
                                            {"PCWD", "plane, then channel, then way, then die",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Channel, PlaneDim::Way, PlaneDim::Die}},
                                            {"PCDW", "plane, then channel, then die, then way",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Channel, PlaneDim::Die, PlaneDim::Way}},
                                            {"PWCD", "plane, then way, then channel, then die",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Way, PlaneDim::Channel, PlaneDim::Die}},
                                            {"PWDC", "plane, then way, then die, then channel",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Way, PlaneDim::Die, PlaneDim::Channel}},
                                            {"PDCW", "plane, then die, then channel, then way",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Die, PlaneDim::Channel, PlaneDim::Way}},
                                            {"PDWC", "plane, then die, then way, then channel",
                                             PlaneAllocation{PlaneDim::Plane, PlaneDim::Die, PlaneDim::Way, PlaneDim::Channel}}});
  return r;
}

}  // namespace bitline::ssd
