// The one worker pool: runs many independent points (evaluation matrices,
// sweeps, ablations) on a few threads. Each job writes its own result slot, so
// the output never depends on the number of threads or on the order in which
// jobs finish; an exception is rethrown after all threads stop (the one of the
// lowest job index, so the error a user sees is deterministic too).
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace bitline {

class WorkerPool {
 public:
  /// Called once per finished job, serialised: (jobs finished so far, jobs in all, index of the job). One that throws
  /// stops the pool: no job starts after it, those running finish, and its exception is that job's error.
  using OnDone = std::function<void(size_t done, size_t total, size_t index)>;

  /// `threads` < 1 means one; the pool never starts more threads than jobs.
  explicit WorkerPool(int threads) : threads_(threads < 1 ? 1 : threads) {}

  int threads() const { return threads_; }

  /// The number of threads this machine runs at once (at least 1).
  static int hardware_threads();

  /// Runs job(i) for every i in [0, n); the calling thread is one of the workers.
  void run(size_t n, const std::function<void(size_t)>& job, const OnDone& on_done = {}) const;

  /// job(i) for every i, results in index order.
  template <class R, class F>
  std::vector<R> map(size_t n, F&& job, const OnDone& on_done = {}) const {
    std::vector<R> out(n);
    run(
        n, [&](size_t i) { out[i] = job(i); }, on_done);
    return out;
  }

 private:
  int threads_;
};

}  // namespace bitline
