// A seeded, portable random number generator (xoshiro256**, seeded through
// splitmix64). Same seed -> same sequence on every platform and compiler, which
// std::*_distribution does not guarantee; so the distributions are here too.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace bitline {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }
  /// An independent stream derived from this seed and a name (e.g. a component path).
  static Rng derive(uint64_t seed, std::string_view name) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    return Rng(seed ^ (h * 0x9E3779B97F4A7C15ull));
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64); }
  /// Bernoulli(p).
  bool chance(double p) { return uniform() < p; }
  /// Number of failures before the first success of Bernoulli(p) trials
  /// (geometric on {0, 1, ...}); used to skip directly to the next bit error.
  uint64_t geometric(double p) {
    if (p >= 1.0) return 0;
    if (p <= 0.0) return UINT64_MAX;
    double u = 1.0 - uniform();  // (0, 1]
    double g = std::floor(std::log(u) / std::log1p(-p));
    return g >= 1.8e19 ? UINT64_MAX : uint64_t(g);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace bitline
