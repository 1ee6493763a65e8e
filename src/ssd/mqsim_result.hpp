// MQSim's result file (bitline ssd run --mqsim-xml): the <MQSim_Results> document MQSim writes after each
// scenario (WORKLOAD_scenario_N.xml), from bitline's results of that scenario, so that scripts written for
// MQSim's output read bitline's. Written: the <Host> section (per flow <Host.IO_Flow>, every element MQSim writes,
// in its order and formats: counts, rates with six decimals, times in whole microseconds) and the
// <SSDDevice.FTL> counts bitline keeps. Not written (bitline does not collect them): the host interface's
// per-stream transaction times, the TSU queue statistics and the flash chips' time fractions (docs/ssd.md).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {

/// The result document of one scenario: `result` is its entry of simulate_workload's "scenarios".
std::string mqsim_result_xml(const nlohmann::json& result, const ScenarioXml& scenario);

}  // namespace bitline::ssd
