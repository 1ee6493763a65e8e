// `bitline accel kinds`: the GPU kinds found in configs/gpus/, with their descriptions.
#include <fmt/format.h>

#include "cli/accel/common.hpp"

namespace bitline::cli::accel {

using namespace bitline::llm;

void add_kinds(CLI::App& accel) {
  auto* cmd = accel.add_subcommand("kinds", "the GPU kinds (the files of configs/gpus/) with their descriptions");
  cmd->callback([] {
    for (const auto& kind : available_kinds()) {
      ConfigTree t;
      t.load_preset(kind);
      const ConfigNode* d = t.root().find(kDescriptionKey);
      fmt::print("{:<10} {}\n", kind, d && d->kind == ConfigNode::Kind::Scalar ? d->scalar : "(no description: key)");
    }
    fmt::print("(a system is KIND x GPUS, e.g. b200x8; add a kind by writing {}/NAME.yaml)\n", kinds_dir().string());
  });
}

}  // namespace bitline::cli::accel
