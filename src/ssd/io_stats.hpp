// Per-flow I/O statistics in the shape fio reports them (bitline ssd fio, ssd/fio.hpp): per direction the I/Os, the
// bytes, and the submission, completion and total latencies (moments, and histograms for percentiles). Collected by
// the host interface only when RunOptions::io_stats asks (MQSim's results do not need them).
//
// The histogram buckets latencies in nanoseconds as fio's own does (fio's stat.h, FIO_IO_U_PLAT_BITS 6): values
// below 128 ns exactly, above that 64 buckets per power of two, so a bucket spans 1/64 of its lower bound and its
// midpoint, which a percentile reports as fio does, is within 1/128 (0.8%) of every value in it. fio keeps 29 groups
// (exact up to 2^34 ns, 17 s; above, its last bucket); this one keeps 58, to 2^62 ns (a run simulates at most 1e15 ns), so
// nothing saturates. Memory:
// 58 x 64 counts of 8 B = 29 KiB per histogram, whatever the number of I/Os. A percentile p is the midpoint of the
// first bucket at which the running count reaches p/100 x N (fio's calc_clat_percentiles rule).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace bitline::ssd {

/// Latencies in ns in fio's log-linear buckets (see above).
class IoHist {
 public:
  static constexpr int kBits = 6;                   // 2^kBits buckets per power of two
  static constexpr int64_t kPerGroup = 1 << kBits;  // 64
  static constexpr int kGroups = 58;                // values below 2^62 ns
  static constexpr size_t kBuckets = size_t(kGroups) * kPerGroup;

  static size_t index(uint64_t ns) {
    if (ns < uint64_t(2 * kPerGroup)) return size_t(ns);
    const int msb = 63 - __builtin_clzll(ns);
    const int shift = msb - kBits;  // the low bits a bucket of this power of two does not resolve
    const size_t i = size_t(shift + 1) * kPerGroup + size_t((ns >> shift) & (kPerGroup - 1));
    return std::min(i, kBuckets - 1);
  }
  /// The value a bucket reports: its midpoint (exact below 128 ns).
  static uint64_t value(size_t i) {
    if (i < size_t(2 * kPerGroup)) return uint64_t(i);
    const int shift = int(i / kPerGroup) - 1;
    const uint64_t base = uint64_t(1) << (shift + kBits), k = uint64_t(i % kPerGroup);
    return base + uint64_t((double(k) + 0.5) * double(uint64_t(1) << shift));
  }

  void add(uint64_t ns) { ++counts_[index(ns)]; }
  void merge(const IoHist& o) {
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  }
  /// The values at percentiles `ps` (each in (0, 100], ascending), from `n` samples; empty when n is 0.
  std::vector<uint64_t> percentiles(const std::vector<double>& ps, int64_t n) const {
    std::vector<uint64_t> out;
    if (n <= 0 || ps.empty()) return out;
    int64_t seen = 0;
    size_t j = 0;
    for (size_t i = 0; i < kBuckets && j < ps.size(); ++i) {
      seen += counts_[i];
      while (j < ps.size() && double(seen) >= ps[j] / 100.0 * double(n)) {
        out.push_back(value(i));
        ++j;
      }
    }
    while (out.size() < ps.size()) out.push_back(value(kBuckets - 1));
    return out;
  }

 private:
  std::array<int64_t, kBuckets> counts_{};
};

/// Count, min, max, mean and variance of latencies in ns (Welford's running sums; merge by Chan's formula).
struct IoMoments {
  int64_t n = 0;
  uint64_t min = UINT64_MAX, max = 0;
  double mean = 0, m2 = 0;

  void add(uint64_t ns) {
    ++n;
    min = std::min(min, ns);
    max = std::max(max, ns);
    const double d = double(ns) - mean;
    mean += d / double(n);
    m2 += d * (double(ns) - mean);
  }
  void merge(const IoMoments& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const double nt = double(n + o.n), d = o.mean - mean;
    mean += d * double(o.n) / nt;
    m2 += o.m2 + d * d * double(n) * double(o.n) / nt;
    n += o.n;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
  /// Sample standard deviation (n - 1), as fio's calc_lat; 0 below two samples.
  double stddev() const { return n > 1 ? std::sqrt(m2 / double(n - 1)) : 0.0; }
};

/// One direction's I/O: completed I/Os and bytes, and their latencies (fio's slat, clat, lat).
struct DirStats {
  int64_t ios = 0, bytes = 0;
  IoMoments slat, clat, lat;
  IoHist clat_hist, lat_hist;

  void merge(const DirStats& o) {
    ios += o.ios;
    bytes += o.bytes;
    slat.merge(o.slat);
    clat.merge(o.clat);
    lat.merge(o.lat);
    clat_hist.merge(o.clat_hist);
    lat_hist.merge(o.lat_hist);
  }
};

/// At most this many records (one per I/O) or windows a flow's log keeps (bitline ssd fio refuses more before it
/// runs where it can tell; the host interface throws past it otherwise).
inline constexpr int64_t kMaxIoLogEntries = int64_t(1) << 22;

/// One logged I/O (fio's logs without log_avg_msec): its completion (ps), direction, bytes, byte offset and latencies.
struct IoLogRecord {
  int64_t t_ps = 0, bytes = 0, offset = 0;
  uint64_t slat = 0, clat = 0, lat = 0;  // ns
  int dir = 0;                           // 0 read, 1 write
};

/// One window's I/O of one direction (fio's logs with log_avg_msec): count, bytes, and the latencies' sums (ns).
struct IoLogWindow {
  int64_t ios = 0, bytes = 0;
  double slat = 0, clat = 0, lat = 0;
};

/// A flow's log (FlowXml::io_log): a record per I/O (window_ps 0) or per window of window_ps from time 0 (bounded
/// memory: per window, not per I/O).
struct IoLog {
  int64_t window_ps = 0;
  std::vector<IoLogRecord> records;
  std::vector<std::array<IoLogWindow, 2>> windows;

  /// Adds one I/O; false (nothing added) past kMaxIoLogEntries.
  bool add(int64_t t_ps, int dir, int64_t bytes, int64_t offset, uint64_t slat, uint64_t clat, uint64_t lat) {
    if (window_ps <= 0) {
      if (int64_t(records.size()) >= kMaxIoLogEntries) return false;
      records.push_back(IoLogRecord{t_ps, bytes, offset, slat, clat, lat, dir});
      return true;
    }
    const int64_t w = t_ps / window_ps;
    if (w >= kMaxIoLogEntries) return false;
    if (int64_t(windows.size()) <= w) windows.resize(size_t(w) + 1);
    IoLogWindow& x = windows[size_t(w)][size_t(dir)];
    ++x.ios;
    x.bytes += bytes;
    x.slat += double(slat);
    x.clat += double(clat);
    x.lat += double(lat);
    return true;
  }
};

/// fio's bandwidth or IOPS samples of one flow, per direction (the JSON's bw_min ... bw_samples, iops_min ...
/// iops_samples; fio's stat.c). Windowed (fio's __add_samples, every bwavgtime / iopsavgtime ms from the ramp's end):
/// a window with I/O of a direction gives that direction a sample, its bytes x 1000 / ms / 1024 (KiB/s) or its I/Os
/// x 1000 / ms, in integers as fio divides; a window without gives none. Per I/O (window_ps 0: fio's per-unit log,
/// write_bw_log or write_iops_log without log_avg_msec, feeds the samples instead): a bw sample of bytes x 10^6 /
/// clat ns per I/O (fio's add_bw_sample), an iops sample of 1. Memory: one pending window.
struct IoSampler {
  enum class Kind : uint8_t { Bw, Iops };
  explicit IoSampler(Kind k) : kind(k) {}
  Kind kind;
  int64_t window_ps = 0;             // 0: a sample per I/O; below 0: none (fio's disable_bw_measurement)
  int64_t start_ps = 0;              // the first window's start (the ramp's end)
  int64_t window = 0;                // the window the pending counts are in
  std::array<int64_t, 2> pending{};  // its bytes (bw) or I/Os (iops), per direction
  std::array<IoMoments, 2> samples;  // the windows closed so far (per I/O: every I/O)

  /// fio takes a window's sample up to this late (LOG_MSEC_SLACK, 1 ms): a window ending within it of the flow's end
  /// is sampled.
  static constexpr int64_t kSlackPs = 1000000000;

  uint64_t value(int64_t count) const {
    const int64_t ms = window_ps / 1000000000;  // whole ms: fio's option is an integer of ms
    if (ms <= 0) return 0;
    return kind == Kind::Bw ? uint64_t(count) * 1000 / uint64_t(ms) / 1024 : uint64_t(count) * 1000 / uint64_t(ms);
  }
  void add(int64_t t_ps, int dir, int64_t bytes, uint64_t clat_ns) {
    if (window_ps < 0) return;
    if (window_ps == 0) {
      samples[size_t(dir)].add(kind == Kind::Iops ? 1 : clat_ns > 0 ? uint64_t(bytes) * 1000000 / clat_ns : 0);
      return;
    }
    // window k holds (start + k T, start + (k + 1) T]: a completion on a boundary closes the window it ends
    const int64_t w = t_ps > start_ps ? (t_ps - start_ps - 1) / window_ps : 0;
    if (w != window) {
      close();
      window = w;
    }
    pending[size_t(dir)] += kind == Kind::Bw ? bytes : 1;
  }
  /// The samples with the pending window's, when that window ends by `end_ps` (the flow's last counted completion)
  /// plus fio's slack.
  std::array<IoMoments, 2> at_end(int64_t end_ps) const {
    IoSampler s = *this;
    if (window_ps > 0 && start_ps + (window + 1) * window_ps <= end_ps + kSlackPs) s.close();
    return s.samples;
  }

 private:
  void close() {
    for (size_t d = 0; d < 2; ++d)
      if (pending[d] > 0) samples[d].add(value(pending[d])), pending[d] = 0;
  }
};

/// One flow's I/O counted from its stats_from (a ramp's end): read and write, and its last completion (ps).
struct FlowIoStats {
  std::array<DirStats, 2> dir;                                                     // 0 read, 1 write
  IoSampler bw_samples{IoSampler::Kind::Bw}, iops_samples{IoSampler::Kind::Iops};  // fio's bw_* and iops_* figures
  IoLog log;                  // FlowXml::io_log: fio's bw, iops and lat logs are made from it
  int64_t stats_from_ps = 0;  // when counting began
  int64_t last_done_ps = 0;   // its last counted completion (stats_from_ps when none)

  /// The flow's counted runtime in ps: from stats_from to its last completion.
  int64_t runtime_ps() const { return std::max<int64_t>(0, last_done_ps - stats_from_ps); }
};

}  // namespace bitline::ssd
