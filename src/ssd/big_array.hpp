// A fixed-size array of a trivially copyable type for the general SSD's large
// randomly accessed tables (the CMT, the mapping table). From 2 MiB up it is
// 2 MiB-aligned and, on Linux, advised to be backed by transparent huge pages:
// a random access over tens of megabytes then rarely misses the TLB. The
// array starts zeroed.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bitline::ssd {

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
    size_t bytes = n * sizeof(T);
    if (bytes >= kHuge) {
      size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p_ = static_cast<T*>(std::aligned_alloc(kHuge, rounded));
      if (!p_) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      madvise(p_, rounded, MADV_HUGEPAGE);  // a hint: without huge pages the array works the same
#endif
      std::memset(static_cast<void*>(p_), 0, rounded);
    } else {
      p_ = static_cast<T*>(std::calloc(n, sizeof(T)));
      if (!p_) throw std::bad_alloc();
    }
  }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  BigArray& operator=(BigArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~BigArray() { std::free(p_); }

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
};

}  // namespace bitline::ssd
