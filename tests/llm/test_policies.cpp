// The policies of an LLM serving run (serving.*, llm.*, hbf.runtime.*): every
// registered name loads through the config and comes back in the resolved
// dump; a wrong one is an error naming the key, the value and the choices.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/params.hpp"
#include "llm/serving.hpp"

using namespace bitline;
using namespace bitline::llm;

namespace {

KindParams csi_with(const std::string& set) {
  ConfigTree t;
  t.set_preset_dir(std::filesystem::path(BITLINE_SOURCE_DIR) / "configs");
  t.load_preset("csi");
  t.apply_set(set);
  return load_kind_params(t, "csi");
}

struct Policy {
  std::string key;
  const ImplList* impls;
  std::function<std::string_view(const KindParams&)> chosen;
};

std::vector<Policy> policies() {
  return {
      {"serving.kv_layout", &kv_layouts(), [](const KindParams& k) { return k.serving.kv_layout.name(); }},
      {"serving.kv_offload", &kv_offloads(), [](const KindParams& k) { return k.serving.kv_offload.name(); }},
      {"serving.kv_arrange", &kv_arranges(), [](const KindParams& k) { return k.serving.kv_arrange.name(); }},
      {"serving.step_model", &step_models(), [](const KindParams& k) { return k.serving.step_model.name(); }},
      {"serving.capacity_context", &capacity_contexts(), [](const KindParams& k) { return k.serving.capacity_context.name(); }},
      {"llm.attention_parallel", &attention_parallels(), [](const KindParams& k) { return k.llm.attention_parallel.name(); }},
      {"llm.network.all_reduce", &all_reduce_algorithms(), [](const KindParams& k) { return k.llm.network.all_reduce.name(); }},
      {"llm.network.all_to_all", &all_to_all_algorithms(), [](const KindParams& k) { return k.llm.network.all_to_all.name(); }},
      {"llm.deployment_search", &deployment_policies(), [](const KindParams& k) { return k.llm.deployment_search.name(); }},
      {"hbf.runtime.weight_layout", &hbf::weight_layouts(), [](const KindParams& k) { return k.system.hbf.runtime.weight_layout.name(); }},
      {"hbf.runtime.granularity", &hbf::granularities(), [](const KindParams& k) { return k.system.hbf.runtime.granularity.name(); }},
      {"hbf.runtime.kv_span", &hbf::kv_spans(), [](const KindParams& k) { return k.system.hbf.runtime.kv_span.name(); }},
      {"hbf.area.periphery", &hbf::peripheries(), [](const KindParams& k) { return k.system.hbf.area.periphery.name(); }},
  };
}

}  // namespace

TEST(LlmPolicies, EveryRegisteredNameLoadsAndIsDumped) {
  for (const Policy& p : policies()) {
    ASSERT_GE(p.impls->size(), 2u) << p.key;
    for (std::string_view name : p.impls->names()) {
      const KindParams k = csi_with(p.key + "=" + std::string(name));
      EXPECT_EQ(p.chosen(k), name) << p.key;
    }
  }
  // The dump writes the name back.
  const KindParams k = csi_with("serving.kv_layout=scatter");
  EXPECT_EQ(dump_params(k.serving)["kv_layout"], "scatter");
  EXPECT_EQ(dump_params(k.system.hbf)["runtime"]["kv_span"], "fit");
}

TEST(LlmPolicies, AWrongNameNamesTheKeyAndTheChoices) {
  for (const Policy& p : policies()) {
    try {
      csi_with(p.key + "=nonsense");
      ADD_FAILURE() << p.key << ": no error";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--set: " + p.key + ": 'nonsense' is not one of " + p.impls->joined()), std::string::npos) << msg;
    }
  }
  try {
    csi_with("serving.kv_offload=fil");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'fill'?"), std::string::npos) << e.what();
  }
}

TEST(LlmPolicies, EnumPoliciesMapBackToTheirNames) {
  // Choice(value) finds the registered name of every value the code switches on.
  EXPECT_EQ((Choice<KvLayout, kv_layouts>(KvLayout::Scatter).name()), "scatter");
  EXPECT_EQ((Choice<KvOffload, kv_offloads>(KvOffload::Fill).name()), "fill");
  EXPECT_EQ((Choice<StepModel, step_models>(StepModel::Event).name()), "event");
  EXPECT_EQ((Choice<CapacityContext, capacity_contexts>(CapacityContext::Mean).name()), "mean");
  EXPECT_EQ((Choice<AttentionParallel, attention_parallels>(AttentionParallel::Dp).name()), "dp");
  EXPECT_EQ((Choice<hbf::KvSpan, hbf::kv_spans>(hbf::KvSpan::All).name()), "all");
  EXPECT_EQ((Choice<hbf::Granularity, hbf::granularities>(hbf::Granularity::Plane).name()), "plane");
  EXPECT_EQ(to_string(Exhausted::FlashBlocks), "flash_blocks");
}
