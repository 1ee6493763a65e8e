// The host library of a Flash-Cosmos SSD, in the spirit of the paper's
// fc_write / fc_read, and the four systems that can serve a read:
//   osp      the host reads every operand over PCIe and combines them;
//   isp      the controller's accelerator reads every operand over the channels;
//   parabit  the die senses one operand at a time (ParaBit, MICRO 2021);
//   fc       multi-wordline sensing (Flash-Cosmos).
// Functional mode stores data in the dies and returns results; timing-only
// mode stores nothing and scales to the paper's sizes. Both issue the same
// command stream, and the time comes from the event-driven pipeline.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bitvector.hpp"
#include "core/registry.hpp"
#include "core/stats.hpp"
#include "cosmos/expr.hpp"
#include "cosmos/firmware.hpp"
#include "cosmos/planner.hpp"
#include "nand/die.hpp"
#include "ssd/pipeline.hpp"

namespace bitline::cosmos {

enum class System { Osp, Isp, ParaBit, Fc };
/// The four systems by name, each with what it is (table in cosmos/cosmos_ssd.cpp).
const Registry<System>& systems();
const char* to_string(System s);
/// A name in systems(); throws ModelError naming the choices otherwise.
System system_from(const std::string& s);
inline constexpr System kAllSystems[] = {System::Osp, System::Isp, System::ParaBit, System::Fc};

struct ReadResult {
  System system = System::Fc;
  ssd::PipelineResult timing;
  std::string plan;            // the first query's plan (in-flash systems)
  uint64_t die_commands = 0;   // commands issued to dies (one per plane-level operation)
  std::vector<BitVector> results;  // functional mode: one per query
  std::vector<uint64_t> popcounts;
  uint64_t bit_errors = 0;     // functional mode: cells that sensed wrong
  Json to_json() const;
};

class CosmosSsd {
 public:
  CosmosSsd(const nand::NandParams& nand, const ssd::SsdParams& ssd, const ssd::HostParams& host, bool functional,
            uint64_t seed);

  void declare_group(const std::string& group, uint32_t operands_per_lane) { fw_.declare_group(group, operands_per_lane); }
  /// fc_write of data (functional mode): programs every page of every copy.
  const Operand& write(const std::string& name, const BitVector& data, const WriteOptions& opt);
  /// fc_write of a size only (timing-only mode).
  const Operand& write(const std::string& name, int64_t bytes, const WriteOptions& opt);
  /// fc_read: runs the queries (pipelined, in order) on one system. `popcount`:
  /// the host counts the bits of each result (BMI).
  ReadResult read(const std::vector<Expr>& queries, System system, bool popcount);
  ReadResult read(const std::string& expr, System system, bool popcount = false) {
    return read(std::vector<Expr>{parse_expr(expr)}, system, popcount);
  }

  bool functional() const { return functional_; }
  const Firmware& firmware() const { return fw_; }
  nand::Die& die(size_t i) { return *dies_.at(i); }
  size_t die_count() const { return dies_.size(); }
  const nand::NandParams& nand_params() const { return nand_; }
  const ssd::SsdParams& ssd_params() const { return ssd_; }
  /// The planner limits of an in-flash system.
  PlanLimits limits(System s) const;

 private:
  BitVector run_functional(const Expr& q, const Plan* plan, System s, uint64_t& commands, uint64_t& errors);

  nand::NandParams nand_;
  ssd::SsdParams ssd_;
  ssd::HostParams host_;
  bool functional_;
  Firmware fw_;
  nand::CostModel cost_;
  std::vector<std::unique_ptr<nand::Die>> dies_;
  std::vector<std::vector<uint32_t>> die_planes_;  // global plane indices of each die
};

}  // namespace bitline::cosmos
