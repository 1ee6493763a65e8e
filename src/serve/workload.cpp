#include "serve/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <sstream>
#include <unordered_map>

#include "core/error.hpp"
#include "core/flat_map.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"
#include "llm/sessions.hpp"

namespace bitline::serve {

namespace {

/// FNV-1a of a string (the same on every platform, unlike std::hash).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// SplitMix64's finaliser: a well-mixed 64-bit key of `x`.
uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool parse_int(const std::string& s, int64_t& v) { return parse_decimal_integer(s, v); }
bool parse_double(const std::string& s, double& v) { return parse_decimal_number(s, v); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' || s[a] == '"')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' || s[b - 1] == '"')) --b;
  return s.substr(a, b - a);
}

/// A UTF-8 byte-order mark: spreadsheet programs start a CSV with it; it is not part of the first column's name.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

/// A CSV text read row by row (a leading byte-order mark skipped): the header's names (its first non-blank line), then each non-blank row's
/// trimmed cells, with as many cells as the header has names (ConfigError "`where`FILE:LINE: N columns, the header has M" otherwise).
class CsvRows {
 public:
  CsvRows(const std::string& text, std::string file, std::string where)
      : in_(text.rfind(kUtf8Bom, 0) == 0 ? text.substr(kUtf8Bom.size()) : text), file_(std::move(file)), where_(std::move(where)) {
    std::vector<std::string> cells;
    if (read(cells)) names_ = std::move(cells);
    for (size_t i = 0; i < names_.size(); ++i)
      for (size_t k = 0; k < i; ++k)
        if (names_[k] == names_[i])
          throw ConfigError(fmt::format("{}{}:{}: the header names column '{}' twice (columns {} and {}): which one is meant?", where_,
                                        file_, line_, text_brief(names_[i]), k + 1, i + 1));
  }
  const std::vector<std::string>& names() const { return names_; }
  /// The index of the column `name`, -1 when the header has none.
  int column(const std::string& name) const {
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return int(i);
    return -1;
  }
  /// The next row's cells; false at the end.
  bool next(std::vector<std::string>& cells) {
    if (!read(cells)) return false;
    if (cells.size() != names_.size())
      throw ConfigError(fmt::format("{}{}:{}: {} columns, the header has {}", where_, file_, line_, cells.size(), names_.size()));
    return true;
  }
  int64_t line() const { return line_; }

 private:
  bool read(std::vector<std::string>& cells) {
    std::string text;
    while (std::getline(in_, text)) {
      ++line_;
      if (trim(text).empty()) continue;
      cells.clear();
      for (const auto& c : split(text, ',')) cells.push_back(trim(c));
      return true;
    }
    return false;
  }
  std::istringstream in_;
  std::string file_, where_;
  std::vector<std::string> names_;
  int64_t line_ = 0;
};

}  // namespace

namespace {

/// The values of `column` (named in the header) of a CSV file, each a whole number of tokens in [1, kMaxTokens].
std::vector<int64_t> read_length_column(const std::string& file, const std::string& column, const std::string& option) {
  CsvRows rows(read_input_file(file, kMaxTraceFileBytes, option + " lengths"), file, option + " ");
  if (rows.names().empty())
    throw ConfigError(fmt::format("{} {}: empty file (expected a header naming column '{}')", option, file, column));
  const int col = rows.column(column);
  if (col < 0) throw ConfigError(fmt::format("{} {}:{}: the header has no column '{}'", option, file, rows.line(), column));
  std::vector<int64_t> v;
  std::vector<std::string> cells;
  while (rows.next(cells)) {
    if (int64_t(v.size()) >= kMaxRequests)
      throw ConfigError(fmt::format("{} {}:{}: more than {} rows", option, file, rows.line(), kMaxRequests));
    int64_t x = 0;
    const std::string& cell = cells[size_t(col)];
    if (!parse_int(cell, x))
      throw ConfigError(fmt::format("{} {}:{}: column {} ({}): '{}' is not a whole number of tokens", option, file, rows.line(), col + 1,
                                    column, text_brief(cell)));
    if (x < 1 || x > kMaxTokens)
      throw ConfigError(fmt::format("{} {}:{}: column {} ({}): {} tokens: need 1 to {} (a request has at least one token)", option, file,
                                    rows.line(), col + 1, column, x, kMaxTokens));
    v.push_back(x);
  }
  if (v.empty()) throw ConfigError(fmt::format("{} {}: no rows after the header", option, file));
  return v;
}

}  // namespace

LengthSpec LengthSpec::parse(const std::string& text, const std::string& option) {
  LengthSpec l;
  const auto bad = [&](const std::string& why) {
    return ConfigError(fmt::format("{} '{}': {} (expected N, uniform:LO:HI, lognormal:MEAN:SIGMA or csv:FILE:COLUMN, tokens >= 1)", option,
                                   text_brief(text), why));
  };
  if (text.rfind("csv:", 0) == 0) {  // csv:FILE:COLUMN (FILE may hold ':'; the column is after the last one)
    const size_t last = text.rfind(':');
    if (last <= 4) throw bad("give the file and the column, csv:FILE:COLUMN");
    l.file = text.substr(4, last - 4);
    l.column = text.substr(last + 1);
    if (l.file.empty() || l.column.empty()) throw bad("give the file and the column, csv:FILE:COLUMN");
    l.values = std::make_shared<const std::vector<int64_t>>(read_length_column(l.file, l.column, option));
    l.kind = Kind::Sampled;
    return l;
  }
  const auto parts = split(text, ':');
  if (parts.size() == 1) {
    if (!parse_int(parts[0], l.fixed)) throw bad("not a whole number of tokens");
    if (l.fixed < 1) throw bad("a request needs at least one token");
    if (l.fixed > kMaxTokens) throw bad(fmt::format("more than {} tokens", kMaxTokens));
    l.kind = Kind::Fixed;
    return l;
  }
  if (parts[0] == "uniform" && parts.size() == 3) {
    if (!parse_int(parts[1], l.lo) || !parse_int(parts[2], l.hi)) throw bad("LO and HI must be whole numbers");
    if (l.lo < 1 || l.hi < l.lo) throw bad("need 1 <= LO <= HI");
    if (l.hi > kMaxTokens) throw bad(fmt::format("more than {} tokens", kMaxTokens));
    l.kind = Kind::Uniform;
    return l;
  }
  if (parts[0] == "lognormal" && parts.size() == 3) {
    if (!parse_double(parts[1], l.mean) || !parse_double(parts[2], l.sigma)) throw bad("MEAN and SIGMA must be numbers");
    if (!(l.mean >= 1) || l.mean > double(kMaxTokens)) throw bad(fmt::format("MEAN must be in [1, {}]", kMaxTokens));
    if (!(l.sigma >= 0) || l.sigma > 4) throw bad("SIGMA must be in [0, 4]");
    l.kind = Kind::Lognormal;
    return l;
  }
  throw bad("unknown form");
}

int64_t LengthSpec::draw(Rng& rng) const {
  switch (kind) {
    case Kind::Fixed:
      return fixed;
    case Kind::Uniform:
      return lo + int64_t(rng.below(uint64_t(hi - lo + 1)));
    case Kind::Lognormal: {
      // ln X ~ N(mu, sigma^2) with E[X] = mean: mu = ln(mean) - sigma^2 / 2.
      const double mu = std::log(mean) - sigma * sigma / 2;
      const double x = std::exp(mu + sigma * draw_normal(rng));
      return std::clamp<int64_t>(int64_t(std::llround(x)), 1, kMaxTokens);
    }
    case Kind::Sampled:
      return (*values)[size_t(rng.below(uint64_t(values->size())))];
  }
  return 1;
}

double LengthSpec::expected() const {
  switch (kind) {
    case Kind::Fixed:
      return double(fixed);
    case Kind::Uniform:
      return (double(lo) + double(hi)) / 2;
    case Kind::Lognormal:
      return mean;
    case Kind::Sampled: {
      double s = 0;
      for (int64_t x : *values) s += double(x);
      return s / double(values->size());
    }
  }
  return 0;
}

std::string LengthSpec::describe() const {
  switch (kind) {
    case Kind::Fixed:
      return fmt::format("{}", fixed);
    case Kind::Uniform:
      return fmt::format("uniform:{}:{}", lo, hi);
    case Kind::Lognormal:
      return fmt::format("lognormal:{:g}:{:g}", mean, sigma);
    case Kind::Sampled:
      return fmt::format("csv:{}:{}", file, column);
  }
  return "?";
}

ArrivalKind parse_arrival(const std::string& text) {
  if (text == "poisson") return ArrivalKind::Poisson;
  if (text == "gamma") return ArrivalKind::Gamma;
  if (text == "constant") return ArrivalKind::Constant;
  throw ConfigError(fmt::format("--arrival '{}': not one of poisson|gamma|constant", text_brief(text)));
}

const char* to_string(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::Poisson:
      return "poisson";
    case ArrivalKind::Gamma:
      return "gamma";
    case ArrivalKind::Constant:
      return "constant";
  }
  return "?";
}

double draw_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double draw_exponential(Rng& rng) { return -std::log(1.0 - rng.uniform()); }

double draw_gamma(Rng& rng, double shape) {
  if (shape < 1) {
    // Gamma(k) = Gamma(k + 1) U^(1/k).
    const double u = 1.0 - rng.uniform();
    return draw_gamma(rng, shape + 1) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x = 0, v = 0;
    do {
      x = draw_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

std::vector<Request> make_requests(int64_t count, const LengthSpec& in, const LengthSpec& out, uint64_t seed) {
  if (count < 1) throw ConfigError(fmt::format("--requests {}: need at least one request", count));
  if (count > kMaxRequests) throw ConfigError(fmt::format("--requests {}: at most {} requests per simulation", count, kMaxRequests));
  Rng ri = Rng::derive(seed, "serve.input"), ro = Rng::derive(seed, "serve.output");
  std::vector<Request> reqs(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    reqs[size_t(i)].id = i;
    reqs[size_t(i)].input = in.draw(ri);
    reqs[size_t(i)].output = out.draw(ro);
  }
  return reqs;
}

std::vector<Request> sample_lengths(int64_t count, const std::vector<Request>& pairs, uint64_t seed) {
  if (count < 1) throw ConfigError(fmt::format("--requests {}: need at least one request", count));
  if (count > kMaxRequests) throw ConfigError(fmt::format("--requests {}: at most {} requests per simulation", count, kMaxRequests));
  if (pairs.empty()) throw ConfigError("--lengths: the file has no requests");
  Rng rng = Rng::derive(seed, "serve.lengths");
  std::vector<Request> reqs(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const Request& p = pairs[size_t(rng.below(uint64_t(pairs.size())))];
    reqs[size_t(i)].id = i;
    reqs[size_t(i)].input = p.input;
    reqs[size_t(i)].output = p.output;
  }
  return reqs;
}

void scale_trace_speed(std::vector<Request>& reqs, double speed) {
  if (!std::isfinite(speed) || speed < 1e-3 || speed > 1e3)
    throw ConfigError(fmt::format("--trace-speed {}: replays a trace between 1e-3 and 1e3 times as fast", speed));
  for (Request& r : reqs) {
    const double t = double(r.arrival.raw()) / speed;
    if (!(t < 9e18))  // picoseconds: past int64 (~106 days)
      throw ConfigError(fmt::format("--trace-speed {}: request {} would arrive at {:.3g} s, past the {:.3g} s a run can simulate", speed,
                                    r.id, t * 1e-12, 9e6));
    r.arrival = Time(int64_t(std::llround(t)));
  }
}

void set_open_loop_arrivals(std::vector<Request>& reqs, double rate, ArrivalKind kind, double cv, uint64_t seed) {
  if (!std::isfinite(rate) || !(rate > 0)) throw ConfigError(fmt::format("--rate {}: need a finite rate above 0 requests/s", rate));
  if (!std::isfinite(cv) || !(cv > 0) || cv > 100) throw ConfigError(fmt::format("--cv {}: need a finite value in (0, 100]", cv));
  // Gaps in seconds; the arrival times are summed in double seconds and rounded to picoseconds once each.
  const double max_s = 4e6;  // ~46 days: far inside Time's ~106 days
  Rng rng = Rng::derive(seed, "serve.arrivals");
  const double shape = 1.0 / (cv * cv);
  double t = 0;
  for (auto& r : reqs) {
    double gap = 0;
    switch (kind) {
      case ArrivalKind::Poisson:
        gap = draw_exponential(rng) / rate;
        break;
      case ArrivalKind::Gamma:
        gap = draw_gamma(rng, shape) / (shape * rate);
        break;
      case ArrivalKind::Constant:
        gap = 1.0 / rate;
        break;
    }
    t += gap;
    if (!(t < max_s))
      throw ConfigError(fmt::format("--rate {:g}: {} requests arrive over more than {:g} s; use a higher rate or fewer requests", rate,
                                    reqs.size(), max_s));
    r.arrival = Time(int64_t(std::llround(t * 1e12)));
  }
}

namespace {

// Seconds since 1970 of a civil date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// The `n` digits of `s` at `pos` as a number (fixed-width date fields, "02"); false unless all are digits.
bool fixed_digits(const std::string& s, size_t pos, size_t n, int64_t& out) {
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// "YYYY-MM-DD HH:MM:SS[.f...][Z]" or a number of seconds.
bool parse_timestamp(const std::string& s, double& out) {
  if (parse_double(s, out)) return true;
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, whole = 0;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') return false;
  if (!fixed_digits(s, 0, 4, y) || !fixed_digits(s, 5, 2, mo) || !fixed_digits(s, 8, 2, d) || !fixed_digits(s, 11, 2, h) ||
      !fixed_digits(s, 14, 2, mi) || !fixed_digits(s, 17, 2, whole))
    return false;
  std::string frac = s.substr(19);
  if (!frac.empty() && frac.back() == 'Z') frac.pop_back();
  double f = 0;
  if (!frac.empty() && (frac[0] != '.' || !parse_double("0" + frac, f))) return false;
  const double sec = double(whole) + f;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec < 0 || sec >= 61) return false;
  // The days of that month (2023-02-31 is no date, not 2023-03-03).
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) return false;
  out = double(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60) + sec;
  return true;
}

}  // namespace

namespace {

/// The CSV traces read by name of their columns: Azure's LLM inference trace (Patel et al., Splitwise, ISCA 2024:
/// AzurePublicDataset, AzureLLMInferenceTrace_{code,conv}.csv) and BurstGPT (Wang et al., 2024: BurstGPT_*.csv,
/// whose failed requests have 0 response tokens).
struct CsvFormat {
  CsvTraceFormat kind;
  const char *time, *input, *output;
};
constexpr CsvFormat kCsvFormats[] = {
    {CsvTraceFormat::Azure, "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
    {CsvTraceFormat::BurstGpt, "Timestamp", "Request tokens", "Response tokens"},
};

}  // namespace

const char* to_string(CsvTraceFormat f) { return f == CsvTraceFormat::Azure ? "azure" : "burstgpt"; }

std::vector<Request> read_csv_trace(const std::filesystem::path& file, int64_t limit, CsvTraceInfo* info) {
  const std::string f = file.string();
  CsvRows rows(read_input_file(file, kMaxTraceFileBytes, "trace"), f, "");
  // Header: the first format whose three columns it names.
  const char* expected = "TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or Timestamp,Request tokens,Response tokens (BurstGPT)";
  if (rows.names().empty()) throw ConfigError(fmt::format("{}: empty trace (expected a header naming {})", f, expected));
  const CsvFormat* tf = nullptr;
  for (const auto& cf : kCsvFormats)
    if (rows.column(cf.time) >= 0 || rows.column(cf.input) >= 0 || rows.column(cf.output) >= 0) {
      tf = &cf;
      break;
    }
  if (!tf) throw ConfigError(fmt::format("{}:{}: the header names none of the columns of {}", f, rows.line(), expected));
  for (const char* name : {tf->time, tf->input, tf->output})
    if (rows.column(name) < 0)
      throw ConfigError(
          fmt::format("{}:{}: the header has no column {} (expected {},{},{})", f, rows.line(), name, tf->time, tf->input, tf->output));
  const int col_t = rows.column(tf->time), col_in = rows.column(tf->input), col_out = rows.column(tf->output);
  const bool burst = tf->kind == CsvTraceFormat::BurstGpt;
  int64_t skipped = 0;
  std::vector<Request> reqs;
  double first = 0, prev = 0;
  std::vector<std::string> cells;
  while (!(limit > 0 && int64_t(reqs.size()) >= limit) && rows.next(cells)) {
    if (int64_t(reqs.size()) >= kMaxRequests) throw ConfigError(fmt::format("{}:{}: more than {} requests", f, rows.line(), kMaxRequests));
    const auto where = [&](int c, const char* name) { return fmt::format("{}:{}: column {} ({})", f, rows.line(), c + 1, name); };
    double t = 0;
    int64_t ni = 0, no = 0;
    if (!parse_timestamp(cells[size_t(col_t)], t))
      throw ConfigError(fmt::format("{}: '{}' is not a time (seconds, or YYYY-MM-DD HH:MM:SS.f)", where(col_t, tf->time),
                                    text_brief(cells[size_t(col_t)])));
    if (!parse_int(cells[size_t(col_in)], ni))
      throw ConfigError(
          fmt::format("{}: '{}' is not a whole number of tokens", where(col_in, tf->input), text_brief(cells[size_t(col_in)])));
    if (!parse_int(cells[size_t(col_out)], no))
      throw ConfigError(
          fmt::format("{}: '{}' is not a whole number of tokens", where(col_out, tf->output), text_brief(cells[size_t(col_out)])));
    if (reqs.empty() && skipped == 0) first = prev = t;
    if (t < 0) throw ConfigError(fmt::format("{}: negative time {}", where(col_t, tf->time), t));
    if (t < prev)
      throw ConfigError(fmt::format("{}: time {} is before the previous row's {} (rows must be sorted)", where(col_t, tf->time), t, prev));
    if (t - first > 4e6) throw ConfigError(fmt::format("{}: the trace spans more than 4e6 s", where(col_t, tf->time)));
    prev = t;
    if (burst && no == 0) {  // BurstGPT's record of a failed request: it generated nothing, it is not served
      ++skipped;
      continue;
    }
    if (ni < 1 || ni > kMaxTokens)
      throw ConfigError(fmt::format("{}: {} tokens: need 1 to {} ({})", where(col_in, tf->input), ni, kMaxTokens,
                                    ni < 1 ? "a zero-length prompt cannot be served" : "longer than any model's context"));
    if (no < 1 || no > kMaxTokens)
      throw ConfigError(fmt::format("{}: {} tokens: need 1 to {} ({})", where(col_out, tf->output), no, kMaxTokens,
                                    no < 1 ? "a request generates at least one token" : "longer than any model's context"));
    Request r;
    r.id = int64_t(reqs.size());
    r.arrival = Time(int64_t(std::llround((t - first) * 1e12)));
    r.input = ni;
    r.output = no;
    reqs.push_back(r);
  }
  if (reqs.empty())
    throw ConfigError(skipped > 0 ? fmt::format("{}: no served requests ({} failed rows with 0 {})", f, skipped, tf->output)
                                  : fmt::format("{}: no requests after the header", f));
  if (info) *info = CsvTraceInfo{tf->kind, skipped};
  return reqs;
}

std::vector<int64_t> reusable_prefix_tokens(const std::vector<Request>& reqs) {
  std::vector<int64_t> out(reqs.size(), 0);
  FlatMap64 computed;  // the keys whose KV some earlier request computed (a set: the values are unused)
  for (size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    if (r.prefix.empty() || r.prefix_unit <= 0) continue;
    const int64_t max_units = std::min<int64_t>(int64_t(r.prefix.size()), (r.input - 1) / r.prefix_unit);
    int64_t k = 0;
    while (k < max_units && computed.contains(r.prefix[size_t(k)])) ++k;
    out[i] = k * r.prefix_unit;
    const int64_t units = std::min<int64_t>(int64_t(r.prefix.size()), (r.input + r.output - 1) / r.prefix_unit);
    for (int64_t u = k; u < units; ++u) computed.set(r.prefix[size_t(u)], 0);  // (the first k are in it)
  }
  return out;
}

std::vector<Request> read_trace(const std::filesystem::path& file, int64_t limit, CsvTraceInfo* info) {
  if (file.extension() == ".csv") return read_csv_trace(file, limit, info);
  return requests_from_trace(llm::read_any_trace(file, kTracePrefixUnit), limit, file.string());
}

std::vector<Request> requests_from_trace(const llm::Trace& tr, int64_t limit, const std::string& origin) {
  struct Row {
    double t = 0;
    int64_t input = 0, output = 0;
    std::vector<uint64_t> prefix;
    uint64_t session = 0;  // bitline's session traces: the session's number (0: none)
    int64_t turn = 0;
  };
  std::vector<Row> rows;
  int64_t unit = kTracePrefixUnit;
  const auto check_lengths = [&](int64_t input, int64_t output, int64_t line) {
    if (input < 1 || output < 1 || input > kMaxTokens || output > kMaxTokens)
      throw ConfigError(fmt::format("{}:{}: a request of {} prompt and {} output tokens: need 1 to {} each (tokens)", origin, line, input,
                                    output, kMaxTokens));
  };
  if (const auto* turns = std::get_if<std::vector<llm::Turn>>(&tr)) {
    // The prefix keys they need (8 B each, and a hash-set entry while reuse is measured), before any is made.
    int64_t keys = 0;
    for (const auto& t : *turns) {
      check_lengths(t.input, t.output, t.line);
      keys += (t.input + t.output) / unit;
    }
    if (keys > llm::kMaxTraceBlocks)
      throw ConfigError(
          fmt::format("{}: the turns' contexts make {} prefix keys of {} tokens, more than the {} a trace may have "
                      "(about 80 B each while served); give fewer or shorter turns",
                      origin, keys, unit, llm::kMaxTraceBlocks));
    // A session's turn k + 1 starts with turn k's prompt and output: the keys of its context's units are the
    // session's, numbered from its start, so a later turn's leading keys are an earlier turn's.
    std::unordered_map<std::string, uint64_t> ids;  // session name -> 1, 2, ...
    for (const auto& t : *turns) {
      const uint64_t base = fnv1a(t.session);
      Row r{t.timestamp, t.input, t.output, {}, ids.try_emplace(t.session, ids.size() + 1).first->second, t.turn};
      const int64_t units = (t.input + t.output) / unit;
      r.prefix.reserve(size_t(units));
      for (int64_t k = 0; k < units; ++k) r.prefix.push_back(mix64(base ^ mix64(uint64_t(k) + 0x9e3779b97f4a7c15ull)));
      rows.push_back(std::move(r));
    }
  } else {
    const auto& pt = std::get<llm::PrefixTrace>(tr);
    unit = pt.block_tokens;
    for (const auto& q : pt.requests) {
      check_lengths(q.input, q.output, q.line);
      rows.push_back({q.timestamp, q.input, q.output, q.prefix});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t < b.t; });
  if (limit > 0 && int64_t(rows.size()) > limit) rows.resize(size_t(limit));
  if (rows.empty()) throw ConfigError(fmt::format("{}: no requests in the trace", origin));
  if (rows.back().t - rows.front().t > 4e6) throw ConfigError(fmt::format("{}: the trace spans more than 4e6 s", origin));
  std::vector<Request> reqs;
  for (const Row& r : rows) {  // (lengths checked as the rows were made)
    Request q;
    q.id = int64_t(reqs.size());
    q.arrival = Time(int64_t(std::llround((r.t - rows.front().t) * 1e12)));
    q.input = r.input;
    q.output = r.output;
    q.prefix = r.prefix;
    q.prefix_unit = q.prefix.empty() ? 0 : unit;
    reqs.push_back(q);
  }
  // A session's turns in turn order (the trace's times order them; ties by turn number): each links to its next.
  std::unordered_map<uint64_t, std::vector<size_t>> sessions;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].session != 0) sessions[rows[i].session].push_back(i);
  for (auto& [key, turns] : sessions) {
    std::stable_sort(turns.begin(), turns.end(), [&](size_t a, size_t b) { return rows[a].turn < rows[b].turn; });
    for (size_t j = 0; j + 1 < turns.size(); ++j) reqs[turns[j]].next_turn = int64_t(turns[j + 1]), reqs[turns[j + 1]].follows = true;
  }
  return reqs;
}

void check_decode_work(double tokens, size_t requests, size_t runs, const std::string& what, bool estimated) {
  const std::string count = fmt::format("{} requests decode {}{:.4g} output tokens", requests, estimated ? "about " : "", tokens);
  if (tokens > kMaxOutputTokensPerRun)
    throw ConfigError(
        fmt::format("{}: {} in one simulation, more than the budget of {:.4g} (~0.25 us and ~30 B per token at batch 1); use fewer "
                    "--requests or shorter outputs",
                    what, count, kMaxOutputTokensPerRun));
  if (tokens * double(runs) > kMaxSweepOutputTokens)
    throw ConfigError(
        fmt::format("{}: {} simulations, in each of which {}: {:.4g} in all, more than the budget of {:.4g} per "
                    "command; use fewer rates or requests",
                    what, runs, count, tokens * double(runs), kMaxSweepOutputTokens));
}

void check_decode_work(const std::vector<Request>& reqs, size_t runs, const std::string& what) {
  double tokens = 0;
  for (const Request& r : reqs) tokens += double(r.output);
  check_decode_work(tokens, reqs.size(), runs, what);
}

}  // namespace bitline::serve
