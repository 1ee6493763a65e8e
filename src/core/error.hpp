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
