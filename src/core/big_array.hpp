// A fixed-size, zero-initialised array of a trivially copyable type for large
// randomly accessed tables (the general SSD's CMT and mapping table, the hash
// tables of core/flat_map.hpp).
// From 2 MiB up it is mapped from the OS (on Linux): its pages arrive zeroed,
// so nothing is written to clear it, and it is 2 MiB-aligned and advised to be
// backed by transparent huge pages, so a random access over tens of megabytes
// rarely misses the TLB. Smaller arrays come from calloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bitline {

/// Starts loading the cache line at p (a hint). GCC 12 deems a function whose only effects are
/// __builtin_prefetch calls free of side effects and deletes calls to it; the empty asm keeps them.
inline void prefetch(const void* p) {
  __builtin_prefetch(p);
  asm volatile("" : : "r"(p));
}

template <class T>
class BigArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  BigArray() = default;
  explicit BigArray(size_t n) : n_(n) {
    if (n == 0) return;
    if (n > SIZE_MAX / sizeof(T) - kHuge) throw std::bad_alloc();
    size_t bytes = n * sizeof(T);
#if defined(__linux__)
    if (bytes >= kHuge) {
      // over-map by one huge page, then keep the aligned part
      size_t len = (bytes + kHuge - 1) / kHuge * kHuge, span = len + kHuge;
      void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) throw std::bad_alloc();
      uintptr_t a = (reinterpret_cast<uintptr_t>(m) + kHuge - 1) / kHuge * kHuge;
      size_t head = a - reinterpret_cast<uintptr_t>(m);
      if (head) munmap(m, head);
      if (span - head - len) munmap(reinterpret_cast<void*>(a + len), span - head - len);
#if defined(MADV_HUGEPAGE)
      madvise(reinterpret_cast<void*>(a), len, MADV_HUGEPAGE);  // a hint: without huge pages it works the same
#endif
      p_ = reinterpret_cast<T*>(a);
      mapped_ = len;
      return;
    }
#endif
    p_ = static_cast<T*>(std::calloc(n, sizeof(T)));
    if (!p_) throw std::bad_alloc();
  }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), mapped_(std::exchange(o.mapped_, 0)) {}
  BigArray& operator=(BigArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(mapped_, o.mapped_);
    return *this;
  }
  ~BigArray() {
#if defined(__linux__)
    if (mapped_) {
      munmap(p_, mapped_);
      return;
    }
#endif
    std::free(p_);
  }

  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }

 private:
  static constexpr size_t kHuge = size_t(2) << 20;
  T* p_ = nullptr;
  size_t n_ = 0;
  size_t mapped_ = 0;  // bytes mapped from the OS (0: from calloc)
};

}  // namespace bitline
