#include "ssd/sequential_write.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "nand/cost_model.hpp"
#include "ssd/compute_jobs.hpp"

namespace bitline::ssd {
namespace {

/// The shape of one program operation in `mode`.
struct ProgramShape {
  int64_t pages = 1;    // pages per plane programmed together (one wordline's bits in one-shot mode)
  int64_t overlap = 0;  // of those, how many the next operation may load while this one programs
  Time t_prog{};
};

ProgramShape shape_of(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode) {
  ProgramShape s;
  s.pages = *nand.timing.multi_bit_program == nand::MultiBitProgram::OneShot ? nand::bits_per_cell(mode) : 1;
  const int64_t latches = nand.command.data_latches + 1;  // data latches + the C-latch (the S-latch verifies)
  if (s.pages > latches)
    throw ModelError("nand.command.data_latches: a one-shot program of " + std::to_string(s.pages) +
                     " pages needs that many latches besides the S-latch");
  s.overlap = ssd.cache_program ? std::min(s.pages, latches - s.pages) : 0;
  s.t_prog = nand::CostModel(nand.timing, nand.energy, nand.geometry.page_size).t_prog(mode);
  return s;
}

}  // namespace

WriteResult run_sequential_write(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode, Bytes total) {
  if (total.raw() <= 0) throw ModelError("sequential write: the size must be positive");
  if (total.raw() > kMaxSequentialWriteBytes)
    throw ModelError(fmt::format("sequential write: {} is more than the {} one run may simulate", format(total),
                                 format(Bytes(kMaxSequentialWriteBytes))));
  // The same device, dies and channels as the Flash-Cosmos reads (ssd/compute_jobs.hpp): every program operation is
  // a job of its die whose one step takes `pages` slices of data in and programs them for tPROG(mode).
  const ProgramShape shape = shape_of(ssd, nand, mode);
  const int64_t slice = nand.geometry.planes_per_die * nand.geometry.page_size.raw(), op_bytes = shape.pages * slice;
  const int64_t ops = (total.raw() + op_bytes - 1) / op_bytes;
  JobSpec spec;
  Step program;
  program.die_time = shape.t_prog;
  program.sensing = false;
  program.data_in = uint16_t(shape.pages);
  program.overlap = uint16_t(shape.overlap);
  spec.templates.push_back({program});
  spec.die_jobs.resize(size_t(ssd.dies()));
  const Job job{uint16_t(nand.geometry.planes_per_die), 0};
  for (int64_t op = 0; op < ops; ++op) spec.die_jobs[program_die(op, ssd.channels, ssd.dies_per_channel)].push_back(job);
  spec.write_slices = ops * shape.pages;
  spec.slices_per_program = shape.pages;
  const ComputeResult p = run_jobs(spec, ssd, HostParams{}, nand);
  WriteResult r;
  r.total = p.total;
  r.bytes = ops * op_bytes;
  r.events = p.events;
  r.programs = p.programs;
  r.die_busy = p.die_busy;
  r.channel_busy = p.channel_busy;
  r.pcie_busy = p.pcie_busy;
  r.bottleneck = p.bottleneck;  // the most utilised of dies, channels and PCIe (the ISP and host do nothing here)
  return r;
}

double sequential_write_steady_state(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode) {
  const ProgramShape s = shape_of(ssd, nand, mode);
  const double slice = double(nand.geometry.planes_per_die * nand.geometry.page_size.raw());
  const double t_chan = slice / nand.timing.channel_rate.raw();
  const double cycle = to_s(s.t_prog) + double(s.pages - s.overlap) * t_chan;  // data-in that cannot overlap the program
  const double dies = double(ssd.dies()) * double(s.pages) * slice / cycle;
  const double channels = double(ssd.channels) * nand.timing.channel_rate.raw();
  return std::min({ssd.pcie_effective_rate().raw(), channels, dies});
}

}  // namespace bitline::ssd
