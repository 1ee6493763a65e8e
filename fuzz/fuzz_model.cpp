// libFuzzer harness: the model description loader (Hugging Face config.json).
//
// Input: the bytes of a config.json. It goes through load_model_file (the
// CLI's path: read, JSON parse, field checks); a model that loads is then
// asked what the commands ask of it: its tensors (with their bytes), parameter
// counts and KV-cache bytes per token.
//
// The seed corpus holds the shipped models (configs/models/) and cut-down
// copies of them (fewer layers and experts, every other field kept): the full
// models have up to 47,000 tensors, which would make most executions slow.
#include <cstddef>
#include <cstdint>

#include "harness.hpp"
#include "llm/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bitline::fuzz::ScratchFile scratch(".json");
  const auto& path = scratch.write(data, size);
  bitline::fuzz::expect_documented_errors([&] {
    const bitline::llm::ModelConfig m = bitline::llm::load_model_file(path);
    bitline::Bytes total{};
    for (const bitline::llm::Tensor& t : m.tensors()) total += m.tensor_bytes(t);
    if (total.raw() <= 0) bitline::fuzz::property_failed("a model that loads has no weight bytes");
    const int64_t params = m.parameters();
    if (m.active_parameters() > params) bitline::fuzz::property_failed("active parameters exceed all parameters");
    if (m.kv_bytes_per_token() <= 0) bitline::fuzz::property_failed("no KV-cache bytes per token");
  });
  scratch.remove();
  return 0;
}
