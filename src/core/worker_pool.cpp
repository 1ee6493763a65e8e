#include "core/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace bitline {

int WorkerPool::hardware_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }

void WorkerPool::run(size_t n, const std::function<void(size_t)>& job, const OnDone& on_done) const {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mu;
  const auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (!on_done) continue;
      try {
        on_done(done, n, i);
      } catch (...) {  // the caller stops the run (a progress callback that raised): no job starts after this one
        if (!errors[i]) errors[i] = std::current_exception();
        next = n;
      }
    }
  };
  const size_t extra = std::min(size_t(threads_), n) > 0 ? std::min(size_t(threads_), n) - 1 : 0;
  std::vector<std::thread> pool;
  pool.reserve(extra);
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace bitline
