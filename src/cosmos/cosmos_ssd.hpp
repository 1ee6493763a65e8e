// The host library of a Flash-Cosmos SSD, in the spirit of the paper's
// fc_write / fc_read, and the four systems that can serve a read:
//   osp      the host reads every operand over PCIe and combines them;
//   isp      the controller's accelerator reads every operand over the channels;
//   parabit  the die senses one operand at a time (ParaBit, MICRO 2021);
//   fc       multi-wordline sensing (Flash-Cosmos).
// Functional mode stores data in the dies and returns results; timing-only
// mode stores nothing and scales to the paper's sizes. Both make every page's
// die commands the same way, encoded and checked (docs/cosmos.md, "One command
// stream"): functional mode executes them, and the step template of a query's
// jobs is those commands priced by the cost model. The time comes from those
// jobs run on the general SSD (ssd/compute_jobs.hpp).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/bitvector.hpp"
#include "core/registry.hpp"
#include "core/stats.hpp"
#include "cosmos/energy.hpp"
#include "cosmos/expr.hpp"
#include "cosmos/firmware.hpp"
#include "cosmos/planner.hpp"
#include "nand/die.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/device.hpp"

namespace bitline::cosmos {

enum class System { Osp, Isp, ParaBit, Fc };
/// The four systems by name, each with what it is (table in cosmos/cosmos_ssd.cpp).
const Registry<System>& systems();
const char* to_string(System s);
/// A name in systems(); throws ModelError naming the choices otherwise.
System system_from(const std::string& s);
inline constexpr System kAllSystems[] = {System::Osp, System::Isp, System::ParaBit, System::Fc};
/// How system s stores an operand: FC with ESP and no randomiser (sensed by MWS), ParaBit in SLC without the
/// randomiser (raw cells, sensed without ECC), OSP and ISP as ordinary data (SLC, randomiser and ECC).
WriteOptions write_options_for(System s, const std::string& group, uint32_t lane = 0);

/// The commands a read issued to each die, in issue order: a 64-bit FNV-1a
/// hash over their encoded bytes, and their number. Recorded when
/// CosmosSsd::trace_commands is on, in either mode.
struct CommandStream {
  std::vector<uint64_t> fnv1a;     // per die
  std::vector<uint64_t> commands;  // per die
  static constexpr uint64_t kFnvOffset = 14695981039346656037ull, kFnvPrime = 1099511628211ull;
  explicit CommandStream(size_t dies = 0) : fnv1a(dies, kFnvOffset), commands(dies, 0) {}
  void add(size_t die, std::span<const uint8_t> bytes);
  bool operator==(const CommandStream&) const = default;
};

struct ReadResult {
  System system = System::Fc;
  ssd::ComputeResult timing;
  EnergyBreakdown energy;          // the run's energy under the SSD's cosmos.energy_accounting
  std::string plan;                // the first query's plan (in-flash systems)
  uint64_t die_commands = 0;       // commands issued to dies (one per plane-level operation)
  std::vector<BitVector> results;  // functional mode: one per query
  std::vector<uint64_t> popcounts;
  uint64_t bit_errors = 0;  // functional mode: cells that sensed wrong
  CommandStream stream;     // with CosmosSsd::trace_commands on
  // With CosmosSsd::time_on_device: the same die jobs on the same device under another scheduler.
  std::optional<ssd::ComputeResult> device;
  Json to_json() const;
};

class CosmosSsd {
 public:
  CosmosSsd(const nand::NandParams& nand, const ssd::SsdParams& ssd, const ssd::HostParams& host, const CosmosParams& cosmos,
            bool functional, uint64_t seed);

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
  /// Records the command stream of every read (ReadResult::stream). In
  /// timing-only mode this makes, encodes, checks and prices the commands of
  /// every page (not only the template's), so it costs time at paper scale.
  void trace_commands(bool on) { trace_ = on; }
  /// Also times every read's die jobs under another scheduler of the same device (ReadResult::device; `model`: its
  /// scheduling options, e.g. ssd::model_options(DeviceScheduling::Mqsim); its cache_read is this SSD's).
  void time_on_device(bool on, const ssd::SsdModelOptions& model = {}) {
    on_device_ = on;
    device_model_ = model;
    device_model_.cache_read = ssd_.cache_read;
  }
  const Firmware& firmware() const { return fw_; }
  nand::Die& die(size_t i) { return *dies_.at(i); }
  size_t die_count() const { return dies_.size(); }
  const nand::NandParams& nand_params() const { return nand_; }
  const ssd::SsdParams& ssd_params() const { return ssd_; }
  /// The planner limits of an in-flash system.
  PlanLimits limits(System s) const;

 private:
  /// How a query is served: the in-flash plan, or the operand copies read through ECC (OSP, ISP).
  struct OperandRead {
    std::string name;
    CopyRef copy;
    bool inverted = false;  // only the inverted copy is stored: the controller inverts what it reads
    nand::ProgramMode mode = nand::ProgramMode::Slc;
  };
  struct QueryProgram {
    Expr query;
    int64_t bytes = 0;
    std::optional<Plan> plan;
    std::vector<OperandRead> reads;
  };
  /// The die commands of one page of a query, in issue order, on the page's die and plane; `sensed[k]`:
  /// the program mode of the data command k senses (the cost of a READ depends on it).
  struct PageCommands {
    uint32_t die = 0, plane = 0;
    std::vector<nand::Command> commands;
    std::vector<nand::ProgramMode> sensed;
  };
  QueryProgram program(const Expr& normalized, System s) const;
  PageCommands page_commands(const QueryProgram& qp, int64_t page) const;
  /// The controller's side of issuing a command: its bytes as they go to the die (encoded), recorded in `stream`.
  std::vector<uint8_t> issue(uint32_t die, const nand::Command& c, CommandStream* stream) const;
  /// A page's commands as job steps: each command encoded, decoded as the die decodes it, checked
  /// (nand::check) and priced by the cost model; a DATA-OUT sends the page the previous step left in the
  /// C-latch along `out`.
  std::vector<ssd::Step> steps_of(const PageCommands& pc, ssd::Route out, CommandStream* stream) const;
  /// Functional mode: executes every page's commands on the dies; checks that the dies charged what `tmpl` priced.
  BitVector run_functional(const QueryProgram& qp, const std::vector<ssd::Step>& tmpl, ssd::Route out, ReadResult& rr);

  nand::NandParams nand_;
  ssd::SsdParams ssd_;
  ssd::HostParams host_;
  CosmosParams cosmos_;
  bool functional_;
  bool trace_ = false;
  bool on_device_ = false;
  ssd::SsdModelOptions device_model_;
  Firmware fw_;
  nand::CostModel cost_;
  std::vector<std::unique_ptr<nand::Die>> dies_;
  std::vector<std::vector<uint32_t>> die_planes_;  // global plane indices of each die
};

}  // namespace bitline::cosmos
