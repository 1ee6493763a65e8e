#include "nand/error_model.hpp"

#include <algorithm>

namespace bitline::nand {

double RberTableModel::rber(const CellCondition& c) const {
  double r = p_.rber_slc;
  double norand = p_.no_randomization_slc;
  if (c.mode == ProgramMode::Mlc) r *= p_.mlc_factor, norand = p_.no_randomization_mlc;
  if (c.mode == ProgramMode::Tlc) r *= p_.tlc_factor, norand = p_.no_randomization_tlc;
  r *= p_.pe_factor.at_log(double(c.pe_cycles));
  r *= p_.retention_factor.at_log(c.retention_days);
  if (!c.randomized) r *= norand;
  if (c.mode == ProgramMode::Esp) r *= p_.esp_factor.at_log(c.esp_ratio);
  return std::clamp(r, 0.0, 0.5);
}

const Registry<ErrorModelFactory>& error_models() {
  static const Registry<ErrorModelFactory> r(
      "error model",
      {{"rber_table", "seeded bit errors in sensed cells at an RBER from the mode, P/E, retention, randomisation and ESP tables",
        [](const ReliabilityParams& p) { return std::unique_ptr<ErrorModel>(std::make_unique<RberTableModel>(p)); }},
       {"none", "error-free sensing",
        [](const ReliabilityParams&) { return std::unique_ptr<ErrorModel>(std::make_unique<NoErrorModel>()); }}});
  return r;
}

std::unique_ptr<ErrorModel> make_error_model(const ReliabilityParams& p) { return p.model.make(p); }

}  // namespace bitline::nand
