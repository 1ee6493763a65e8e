// Weight layout policies: in which order a weight object's tensors are cut
// into megapages and dealt round-robin over all megaplanes of all stacks.
//
//   execution    tensors in the order the step's operator graph reads them
//                (FlashAccel): consecutive reads form full hyperpages;
//   declaration  tensors in the order the checkpoint declares them (naive):
//                reading them in execution order leaves stragglers.
//
// Both continue dealing from the megaplane after the last one used. Chosen by
// name with `hbf.runtime.weight_layout`. To add a policy, implement
// WeightLayout in layout.cpp and add a line to its table, weight_layouts().
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "hbf/params.hpp"

namespace bitline::hbf {

struct TensorSpec {
  std::string name;
  Bytes bytes{};
};

/// A weight object: its tensors in declaration order (which is also the order
/// of the object's virtual layout) and the order the operator graph reads them.
struct WeightSpec {
  std::string name;
  std::vector<TensorSpec> tensors;
  /// Indices into `tensors`; empty means execution order = declaration order.
  std::vector<uint32_t> execution_order;
  /// The execution order, filled in when empty; throws ModelError if it is not a permutation.
  std::vector<uint32_t> resolved_execution_order() const;
};

class WeightLayout {
 public:
  virtual ~WeightLayout() = default;
  virtual std::string_view name() const = 0;
  /// The order in which the tensors are dealt over the megaplanes (a permutation of tensor indices).
  virtual std::vector<uint32_t> placement_order(const WeightSpec& w) const = 0;
};

/// The layout registered as `name` in weight_layouts(); ConfigError naming
/// hbf.runtime.weight_layout and the choices for anything else.
std::unique_ptr<WeightLayout> make_weight_layout(std::string_view name);

}  // namespace bitline::hbf
