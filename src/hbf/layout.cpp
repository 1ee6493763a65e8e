#include "hbf/layout.hpp"

#include <fmt/format.h>

#include <numeric>

#include "core/error.hpp"

namespace bitline::hbf {

std::vector<uint32_t> WeightSpec::resolved_execution_order() const {
  std::vector<uint32_t> order = execution_order;
  if (order.empty()) {
    order.resize(tensors.size());
    std::iota(order.begin(), order.end(), 0u);
    return order;
  }
  std::vector<char> seen(tensors.size(), 0);
  if (order.size() != tensors.size())
    throw ModelError(
        fmt::format("weight object '{}': execution order lists {} tensors, the object has {}", name, order.size(), tensors.size()));
  for (uint32_t t : order) {
    if (t >= tensors.size() || seen[t])
      throw ModelError(fmt::format("weight object '{}': execution order is not a permutation (tensor {} {})", name, t,
                                   t >= tensors.size() ? "does not exist" : "appears twice"));
    seen[t] = 1;
  }
  return order;
}

namespace {

class ExecutionOrder final : public WeightLayout {
 public:
  std::string_view name() const override { return "execution"; }
  std::vector<uint32_t> placement_order(const WeightSpec& w) const override { return w.resolved_execution_order(); }
};

class DeclarationOrder final : public WeightLayout {
 public:
  std::string_view name() const override { return "declaration"; }
  std::vector<uint32_t> placement_order(const WeightSpec& w) const override {
    w.resolved_execution_order();  // validates it
    std::vector<uint32_t> order(w.tensors.size());
    std::iota(order.begin(), order.end(), 0u);
    return order;
  }
};

}  // namespace

const Registry<WeightLayoutFactory>& weight_layouts() {
  static const Registry<WeightLayoutFactory> r(
      "weight layout", {{"execution", "tensors dealt in the order the operator graph reads them (FlashAccel): reads form full hyperpages",
                         [] { return std::unique_ptr<WeightLayout>(std::make_unique<ExecutionOrder>()); }},
                        {"declaration",
                         "tensors dealt in the checkpoint's declaration order (naive): reading them in execution order "
                         "leaves stragglers",
                         [] { return std::unique_ptr<WeightLayout>(std::make_unique<DeclarationOrder>()); }}});
  return r;
}

std::unique_ptr<WeightLayout> make_weight_layout(std::string_view name) { return weight_layouts().at(name, "hbf.runtime.weight_layout")(); }

}  // namespace bitline::hbf
