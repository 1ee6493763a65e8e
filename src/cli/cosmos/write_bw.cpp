// `bitline cosmos write-bw`: sequential write bandwidth per program mode.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cli/cosmos/common.hpp"
#include "core/error.hpp"
#include "nand/cost_model.hpp"
#include "ssd/sequential_write.hpp"

namespace bitline::cli::cosmos_cli {
namespace {

using namespace bitline::cosmos;

/// Most bytes of one `cosmos write-bw` run (docs/commands.md, "Hardened inputs").
constexpr int64_t kMaxWriteBwBytes = int64_t(256) << 30;
/// Most program operations per mode of one run: the work is one die job per operation, so small pages are budgeted by
/// their operations (256 GiB of the default 2 planes x 16 KiB).
constexpr int64_t kMaxWriteBwPrograms = kMaxWriteBwBytes / (2 * 16384);

struct WriteBwOpts {
  std::string json, size = "1GiB";
};

Bytes bytes_option(const std::string& size, const nand::NandParams& nand) {
  Bytes total;
  try {
    total = parse_bytes(size);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("--bytes: {}", e.what()));
  }
  if (total.raw() <= 0) throw ConfigError("--bytes: must be positive");
  // The work is one die job per program operation, for every mode and scheme: ~4 s per 64 GiB on this project's
  // machines (docs/development.md, "Speed"). Past 256 GiB (~15 s) the run is refused with its estimate rather than run for a minute.
  const int64_t limit = std::min<int64_t>(kMaxWriteBwBytes, ssd::kMaxSequentialWriteBytes);
  if (total.raw() > limit)
    throw ConfigError(
        fmt::format("--bytes {}: more than the {} one write-bw run may simulate (estimated {:.0f} s at ~2 s per "
                    "64 GiB, one job per program operation in every mode and scheme); the bandwidth does not "
                    "change past a few GiB",
                    size, format(Bytes(limit)), double(total.raw()) / double(int64_t(64) << 30) * 2.0));
  // A program operation writes a page on every plane of a die (the unit the bandwidth is made of).
  const double slice = double(nand.geometry.planes_per_die) * double(nand.geometry.page_size.raw());
  if (double(total.raw()) < slice)
    throw ConfigError(
        fmt::format("--bytes {}: less than one program operation ({} B: nand.geometry.planes_per_die {} x "
                    "page_size {} B); a bandwidth needs at least one",
                    size, slice, nand.geometry.planes_per_die, nand.geometry.page_size.raw()));
  const double programs = std::ceil(double(total.raw()) / slice);
  if (programs > double(kMaxWriteBwPrograms))
    throw ConfigError(
        fmt::format("--bytes {}: {:.0f} program operations of {} B per mode, more than the {} one write-bw run "
                    "may simulate (one job per operation); use fewer bytes or larger pages",
                    size, programs, slice, kMaxWriteBwPrograms));
  return total;
}

void run_write_bw(const ConfigOptions& cfg, const WriteBwOpts& o) {
  check_json_output(o.json);
  const ConfigTree tree = cfg.load();
  check_outputs({{"--json", o.json}}, tree);
  EvalConfig c = load_eval_config(tree);
  const Bytes total = bytes_option(o.size, c.nand);
  Json bw, detail;
  const auto t0 = std::chrono::steady_clock::now();
  // MLC/TLC are also run under the other programming scheme, so both readings of tPROG are side by side.
  const nand::MultiBitProgram scheme = *c.nand.timing.multi_bit_program;
  nand::NandParams other = c.nand;
  other.timing.multi_bit_program =
      scheme == nand::MultiBitProgram::PageByPage ? nand::MultiBitProgram::OneShot : nand::MultiBitProgram::PageByPage;
  const std::string this_name(c.nand.timing.multi_bit_program.name()), other_name(other.timing.multi_bit_program.name());
  // Every mode is run before anything is printed: a refused configuration prints only its error.
  std::vector<std::string> rows;
  for (auto m : {nand::ProgramMode::Slc, nand::ProgramMode::Esp, nand::ProgramMode::Mlc, nand::ProgramMode::Tlc}) {
    const ssd::WriteResult r = ssd::run_sequential_write(c.ssd, c.nand, m, total);
    // One bit per cell: both schemes are the same run.
    const double alt = nand::bits_per_cell(m) == 1 ? r.gb_per_s() : ssd::run_sequential_write(c.ssd, other, m, total).gb_per_s();
    const double t_prog = to_s(nand::CostModel(c.nand.timing, c.nand.energy, c.nand.geometry.page_size).t_prog(m)) * 1e6;
    const bool page_by_page = scheme == nand::MultiBitProgram::PageByPage;
    bw[nand::to_string(m)] = r.gb_per_s();
    detail[nand::to_string(m)] = {{"gb_per_s", r.gb_per_s()},
                                  {"bottleneck", ssd::to_string(r.bottleneck)},
                                  {"t_prog_us", t_prog},
                                  {"steady_state_gb_per_s", ssd::sequential_write_steady_state(c.ssd, c.nand, m) / 1e9},
                                  {"page_by_page_gb_per_s", page_by_page ? r.gb_per_s() : alt},
                                  {"one_shot_gb_per_s", page_by_page ? alt : r.gb_per_s()},
                                  {"events", r.events}};
    rows.push_back(fmt::format("{:<4} {:>9.3f} {:>9.0f}us  {:<9} {:>14.3f}\n", nand::to_string(m), r.gb_per_s(), t_prog,
                               ssd::to_string(r.bottleneck), alt));
  }
  fmt::print(
      "sequential write bandwidth per program mode; MLC/TLC pages programmed {} (nand.timing.multi_bit_program), the "
      "last column {}\n",
      this_name, other_name);
  fmt::print("{:<4} {:>9} {:>11}  {:<9} {:>14}\n", "mode", "GB/s", "tPROG", "bound", fmt::format("GB/s {}", other_name));
  for (const auto& row : rows) fmt::print("{}", row);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{} per mode and scheme, {:.2f} s wall\n", format(total), wall);
  if (!o.json.empty())
    write_json_file(o.json, Json{{"gb_per_s", bw}, {"multi_bit_program", this_name}, {"modes", detail}, {"config", config_json(c)}});
}

}  // namespace

void add_write_bw(CLI::App& cosmos) {
  auto* cmd = cosmos.add_subcommand("write-bw", "sequential write bandwidth of the SSD per program mode");
  auto cfg = std::make_shared<ConfigOptions>();
  auto o = std::make_shared<WriteBwOpts>();
  cfg->add_to(*cmd);
  cmd->add_option("--bytes", o->size, "data written per mode (default 1GiB)");
  cmd->add_option("--json", o->json, "write {\"gb_per_s\": {...}} to this file");
  cmd->callback([cfg, o] { run_write_bw(*cfg, *o); });
}

}  // namespace bitline::cli::cosmos_cli
