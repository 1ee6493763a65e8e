#include "core/distributed.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"

#ifdef BITLINE_HAVE_MPI
// The C API only (the deprecated C++ bindings would need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace bitline {

namespace {

enum class ErrorKind : int { None = 0, Config, Command, Model, Other };

struct JobError {
  uint64_t index = std::numeric_limits<uint64_t>::max();
  ErrorKind kind = ErrorKind::None;
  std::string message;
};

JobError capture(uint64_t index, const std::exception_ptr& e) {
  JobError r;
  r.index = index;
  try {
    std::rethrow_exception(e);
  } catch (const ConfigError& x) {
    r.kind = ErrorKind::Config, r.message = x.what();
  } catch (const CommandError& x) {
    r.kind = ErrorKind::Command, r.message = x.what();
  } catch (const ModelError& x) {
    r.kind = ErrorKind::Model, r.message = x.what();
  } catch (const std::exception& x) {
    r.kind = ErrorKind::Other, r.message = x.what();
  } catch (...) {
    r.kind = ErrorKind::Other, r.message = "unknown error";
  }
  return r;
}

[[noreturn]] void rethrow(const JobError& e) {
  switch (e.kind) {
    case ErrorKind::Config:
      throw ConfigError(e.message);
    case ErrorKind::Command:
      throw CommandError(e.message);
    case ErrorKind::Model:
      throw ModelError(e.message);
    default:
      throw std::runtime_error(e.message);
  }
}

#ifdef BITLINE_HAVE_MPI
/// Launched by mpirun (Open MPI, or a PMI/PMIx launcher)?
bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* s = std::getenv(v); s && *s) return true;
  return false;
}
#endif

}  // namespace

bool have_mpi() {
#ifdef BITLINE_HAVE_MPI
  return true;
#else
  return false;
#endif
}

const Distributed& Distributed::world() {
  static const Distributed d;
  return d;
}

Distributed::Distributed() {
#ifdef BITLINE_HAVE_MPI
  if (!launched_by_mpirun()) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (rank_ != 0) {
    // Only rank 0 prints: the others' output would repeat its messages.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
  }
#endif
}

Distributed::~Distributed() {
#ifdef BITLINE_HAVE_MPI
  int finalised = 0;
  if (mpi_ && (MPI_Finalized(&finalised), !finalised)) MPI_Finalize();
#endif
}

std::vector<std::string> Distributed::map(size_t n, const std::function<std::string(size_t)>& job, int threads,
                                          const WorkerPool::OnDone& on_done) const {
  const size_t size = size_t(size_), rank = size_t(rank_);
  // This rank's jobs: rank, rank + size, ...
  const size_t mine = n > rank ? (n - rank + size - 1) / size : 0;
  std::vector<std::string> local(mine);
  std::vector<std::exception_ptr> errors(mine);
  WorkerPool(threads).run(
      mine,
      [&](size_t k) {
        try {
          local[k] = job(rank + k * size);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      },
      [&](size_t done, size_t total, size_t k) {
        if (on_done) on_done(done, total, rank + k * size);
      });
  JobError err;
  for (size_t k = 0; k < mine; ++k)
    if (errors[k]) {
      err = capture(uint64_t(rank + k * size), errors[k]);
      break;  // the lowest index of this rank
    }
  if (!mpi_) {
    if (err.kind != ErrorKind::None) rethrow(err);
    return local;
  }
#ifdef BITLINE_HAVE_MPI
  // Errors: every rank learns the lowest failing index; its rank sends the class and message to all.
  uint64_t first = err.index;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (first != std::numeric_limits<uint64_t>::max()) {
    const int owner = int(first % size);
    int head[2] = {int(err.kind), int(err.message.size())};
    MPI_Bcast(head, 2, MPI_INT, owner, MPI_COMM_WORLD);
    std::string message(size_t(head[1]), '\0');
    if (rank_ == owner) message = err.message;
    MPI_Bcast(message.data(), head[1], MPI_CHAR, owner, MPI_COMM_WORLD);
    JobError e{first, ErrorKind(head[0]), message};
    rethrow(e);
  }
  // Results: each rank's lengths and bytes gathered on rank 0, then put back in index order.
  std::vector<uint64_t> lengths(mine);
  std::string bytes;
  for (size_t k = 0; k < mine; ++k) lengths[k] = local[k].size(), bytes += local[k];
  uint64_t total = bytes.size();
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (total > uint64_t(std::numeric_limits<int>::max()))  // every rank sees the same total: all throw alike
    throw ModelError(fmt::format("distributed run: {} bytes of results, more than one gather takes (2 GiB)", total));
  const int count = int(mine), nbytes = int(bytes.size());
  std::vector<int> counts(size), byte_counts(size);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(&nbytes, 1, MPI_INT, byte_counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs(size, 0), byte_displs(size, 0);
  size_t all_count = 0, all_bytes = 0;
  if (root()) {
    for (size_t r = 0; r < size; ++r) {
      displs[r] = int(all_count), byte_displs[r] = int(all_bytes);
      all_count += size_t(counts[r]), all_bytes += size_t(byte_counts[r]);
    }
  }
  std::vector<uint64_t> all_lengths(root() ? all_count : 0);
  std::string all(root() ? all_bytes : 0, '\0');
  MPI_Gatherv(lengths.data(), count, MPI_UINT64_T, all_lengths.data(), counts.data(), displs.data(), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Gatherv(bytes.data(), nbytes, MPI_CHAR, all.data(), byte_counts.data(), byte_displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!root()) return {};
  std::vector<std::string> out(n);
  for (size_t r = 0; r < size; ++r) {
    size_t at = size_t(byte_displs[r]);
    for (int k = 0; k < counts[r]; ++k) {
      const size_t len = size_t(all_lengths[size_t(displs[r]) + size_t(k)]);
      out[r + size_t(k) * size] = all.substr(at, len);
      at += len;
    }
  }
  return out;
#else
  return local;
#endif
}

}  // namespace bitline
