#include "core/distributed.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"

#ifdef BITLINE_HAVE_MPI
// The C API only (the deprecated C++ bindings would need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace bitline {

namespace {

enum class ErrorKind : int { None = 0, Config, Command, Model, Other, Overflow, Output };

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
  } catch (const OverflowError& x) {
    r.kind = ErrorKind::Overflow, r.message = x.what();
  } catch (const ConfigError& x) {
    r.kind = ErrorKind::Config, r.message = x.what();
  } catch (const OutputError& x) {
    r.kind = ErrorKind::Output, r.message = x.what();
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
    case ErrorKind::Overflow:
      throw OverflowError(e.message);
    case ErrorKind::Config:
      throw ConfigError(e.message);
    case ErrorKind::Output:
      throw OutputError(e.message);
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

/// The error of the rank or job `first` (the lowest that failed, known to every rank), sent by `owner` to all and
/// rethrown on every rank.
[[noreturn]] void broadcast_error(const JobError& mine, uint64_t first, int owner, int rank) {
  int head[2] = {int(mine.kind), int(mine.message.size())};
  MPI_Bcast(head, 2, MPI_INT, owner, MPI_COMM_WORLD);
  std::string message(size_t(head[1]), '\0');
  if (rank == owner) message = mine.message;
  MPI_Bcast(message.data(), head[1], MPI_CHAR, owner, MPI_COMM_WORLD);
  rethrow(JobError{first, ErrorKind(head[0]), message});
}

/// FNV-1a, 64 bits: a fingerprint of a rank's inputs (not a cryptographic hash: it tells mistakes apart).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }
};

/// Adds a regular file's size and contents (its first 256 MiB) to `f`; nothing for a path that is not one.
void add_file(Fnv& f, const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return;
  f.add(&size, sizeof size);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 16);
  uint64_t left = std::min<uint64_t>(size, uint64_t(256) << 20);
  while (left > 0 && in.read(buf.data(), std::streamsize(std::min<uint64_t>(left, buf.size())))) {
    f.add(buf.data(), size_t(in.gcount()));
    left -= uint64_t(in.gcount());
  }
}

/// The inputs of this rank: its command line (all but the program's path), the contents of every file an argument
/// names (--config, --experiment, models, traces; not the outputs), $BITLINE_CONFIG_DIR.
uint64_t inputs_fingerprint(int argc, const char* const* argv) {
  Fnv f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string flag = a.substr(0, eq);
    if (flag == "--json" || flag == "--csv" || flag == "--mqsim-xml") {  // an output: only that there is one
      f.add(flag);
      if (eq == std::string::npos) ++i;
      continue;
    }
    f.add(a);
    add_file(f, eq != std::string::npos && a.rfind("--", 0) == 0 ? a.substr(eq + 1) : a);
  }
  const char* dir = std::getenv("BITLINE_CONFIG_DIR");
  f.add(std::string(dir ? dir : ""));
  return f.h;
}
#endif

}  // namespace

void Distributed::settle(const std::exception_ptr& error) const {
  if (!mpi_) {
    if (error) std::rethrow_exception(error);  // one process: the error as it was thrown
    return;
  }
#ifdef BITLINE_HAVE_MPI
  JobError err;
  if (error) err = capture(uint64_t(rank_), error);
  uint64_t first = err.index;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (first != std::numeric_limits<uint64_t>::max()) broadcast_error(err, first, int(first), rank_);
#endif
}

void Distributed::check_same_inputs(int argc, const char* const* argv) {
#ifdef BITLINE_HAVE_MPI
  if (!launched_by_mpirun()) return;
  const Distributed& d = world();
  if (!d.mpi_ || d.size_ < 2) return;
  uint64_t mine = inputs_fingerprint(argc, argv);
  std::vector<uint64_t> all(size_t(d.size_));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  std::string differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ += fmt::format("{}{} ({:016x})", differ.empty() ? "" : ", ", r, all[r]);
  if (!differ.empty())
    throw ConfigError(
        fmt::format("mpirun: the ranks were given different inputs: rank(s) {} differ from rank 0 ({:016x}) in "
                    "the command line, the files it names or BITLINE_CONFIG_DIR; every rank must run the same "
                    "command on the same files",
                    differ, all[0]));
#else
  (void)argc, (void)argv;
#endif
}

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
  if (first != std::numeric_limits<uint64_t>::max()) broadcast_error(err, first, int(first % size), rank_);
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
