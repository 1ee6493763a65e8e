// Design-space runs over several machines: the points of `accel eval`, `accel sweep`
// and `cosmos eval` split over the processes of an MPI job, each running its share
// on its own WorkerPool. Started without mpirun (or built without MPI), it is one
// process and the same code path, so the results are byte-identical either way.
//
// MPI is an optional build dependency (CMake finds OpenMPI; BITLINE_HAVE_MPI). The
// job is joined only when the process was launched by mpirun (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK set), so the plain binary never needs an MPI runtime.
// Ranks other than 0 send their results to rank 0 and print nothing (their stdout
// and stderr go to /dev/null); only rank 0 prints and writes files.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/worker_pool.hpp"

namespace bitline {

class Distributed {
 public:
  /// This process's place in its job: rank 0 of 1 unless launched by mpirun in a build with MPI. The MPI job
  /// is joined on the first call (MPI_Init) and left at exit (MPI_Finalize); MPI allows one of each per process,
  /// so this is the one process-wide object (its rank and size never change).
  static const Distributed& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank 0: the process that prints and writes the results.
  bool root() const { return rank_ == 0; }

  /// Runs job(i) for every i in [0, n): this process runs the i with i % size == rank on `threads` workers
  /// (`on_done` sees its own jobs: done, its job count, i). Rank 0 returns every result in index order; the
  /// other ranks an empty vector. If a job throws on any rank, every rank throws the error of the lowest
  /// index, of the same class (ConfigError, CommandError, ModelError or std::runtime_error), so all exit alike.
  std::vector<std::string> map(size_t n, const std::function<std::string(size_t)>& job, int threads,
                               const WorkerPool::OnDone& on_done = {}) const;

  /// The setup of a distributed run (reading the experiment, checking the output paths), agreed by every rank:
  /// returns step()'s value when it succeeded on all ranks; otherwise every rank throws the error of the lowest
  /// rank that failed (its class and message), so that one rank's error (an output folder only it cannot write)
  /// ends the job instead of leaving the others waiting in map(). Every rank must call it at the same point.
  template <class F>
  auto agreed(F&& step) const -> decltype(step()) {
    std::exception_ptr error;
    if constexpr (std::is_void_v<decltype(step())>) {
      try {
        step();
      } catch (...) {
        error = std::current_exception();
      }
      settle(error);
    } else {
      std::optional<decltype(step())> value;
      try {
        value.emplace(step());
      } catch (...) {
        error = std::current_exception();
      }
      settle(error);
      return std::move(*value);
    }
  }

  /// Under mpirun: joins the job and checks that every rank was given the same inputs (the command line and the
  /// contents of the files it names, $BITLINE_CONFIG_DIR); ConfigError on every rank when they differ. Without
  /// mpirun (or MPI) it does nothing. Called by main before the command runs.
  static void check_same_inputs(int argc, const char* const* argv);

  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;
  ~Distributed();

 private:
  Distributed();
  /// Rethrows on every rank the error of the lowest rank whose `error` is set (a collective); nothing when none is.
  void settle(const std::exception_ptr& error) const;
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;
};

/// Whether this build can join an MPI job.
bool have_mpi();

}  // namespace bitline
