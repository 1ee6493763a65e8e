// Error types. Every error that reaches the user names where it came from
// (config file and key, or command and field) and why.
#pragma once

#include <stdexcept>
#include <string>

namespace bitline {

/// A configuration problem: malformed file, unknown key, bad value, impossible geometry.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value too large to compute with: a sum or product of times, sizes or counts past the range of
/// its type (integer picoseconds end at about 106 days). Bad input (exit 2): the message names what overflowed.
class OverflowError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

/// A result file that cannot be written (a directory, a missing or read-only folder). Bad input (exit 2).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A NAND command that the chip must reject (illegal address, empty bitmap, ...).
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A request that the model cannot satisfy (e.g. an operand that does not fit).
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bitline
