// libFuzzer harness: the SSB query files of `cosmos ssb --query` (src/cosmos/ssb/query.hpp).
//
// Input: the bytes of a query file. It goes through load_query (the CLI's path: read, YAML, predicates, sums,
// group-bys, order), and a query that loads is compiled for each aggregation (auto, host, flash: the flash plan may
// refuse past its read cap) and answered by the reference engine over a small generated table (SF 0.0005, ~3,000
// rows). Properties: a flash plan has one group per combination of the group-by columns' candidate values, and no
// answer has more groups than that product or than the rows (the bound `cosmos ssb` refuses large answers by, before
// it runs), nor rows it did not aggregate.
#include <cstddef>
#include <cstdint>

#include "cosmos/ssb/answer.hpp"
#include "cosmos/ssb/compile.hpp"
#include "cosmos/ssb/data.hpp"
#include "cosmos/ssb/query.hpp"
#include "harness.hpp"

namespace {

using namespace bitline::cosmos::ssb;

const Data& table() {
  static const Data d = generate(cardinalities(0.0005), 1);
  return d;
}

double candidate_product(const QueryPlan& p) {
  double g = 1;
  for (const auto& c : p.candidates) g *= double(c.size());
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bitline::fuzz::ScratchFile scratch(".yaml");
  const auto& path = scratch.write(data, size);
  bitline::fuzz::expect_documented_errors([&] {
    const QuerySpec q = load_query(path);
    const CompileOptions co;
    const QueryPlan p = plan_query(q, Aggregation::Auto, co);
    (void)plan_query(q, Aggregation::Host, co);
    bitline::fuzz::expect_documented_errors([&] {
      const QueryPlan f = plan_query(q, Aggregation::Flash, co);
      if (!q.group_by.empty() && !f.filter.none && double(f.groups.size()) != candidate_product(f))
        bitline::fuzz::property_failed("a flash plan's groups are not every combination of the candidates");
    });
    const Answer a = reference_answer(table(), q);
    const double rows = double(table().lineorder.size());
    if (!q.group_by.empty() && (double(a.rows.size()) > candidate_product(p) || double(a.rows.size()) > rows))
      bitline::fuzz::property_failed("an answer has more groups than its bound");
    int64_t counted = 0;
    for (const auto& r : a.rows) counted += r.count;
    if (double(counted) > rows) bitline::fuzz::property_failed("an answer aggregated more rows than the table has");
  });
  scratch.remove();
  return 0;
}
