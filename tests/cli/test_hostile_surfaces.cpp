// Hostile inputs of the newer surfaces (issue 27): experiment files, impossible physics, overflow attribution,
// silent acceptance, misleading messages, work budgets. Every case ends with exit 2 (1 where nothing is feasible)
// and a message naming the file or option, the key and the value, under 1 GB and 10 s, and leaves no result behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace fs = std::filesystem;

namespace {

using Result = ::bitline::test::CliRun;
std::string quote(const std::string& s) { return ::bitline::test::shell_quote(s); }
bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class HostileSurfaces : public ::bitline::test::TempDirTest {
 protected:
  HostileSurfaces() : TempDirTest("bitline-surfaces-") {}
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  std::string write(const std::string& f, const std::string& text) const {
    std::ofstream(dir_ / f, std::ios::binary) << text;
    return quote(path(f));
  }
  std::string out() const { return quote(path("out.json")); }
  // The outcome `rc`, every needle in the message, no internal error, and no result file.
  Result expect_refused(const std::string& args, std::initializer_list<std::string> needles, int rc = 2) {
    const Result r = ::bitline::test::run_bitline_bounded(args);
    EXPECT_EQ(r.rc, rc) << "bitline " << args.substr(0, 300) << "\n" << r.out.substr(0, 2000);
    for (const auto& n : needles)
      EXPECT_TRUE(has(r.out, n)) << "bitline " << args.substr(0, 300) << "\nexpected: " << n << "\ngot: " << r.out.substr(0, 2000);
    EXPECT_FALSE(has(r.out, "internal error")) << r.out;
    EXPECT_LT(r.out.size(), 4000u) << r.out.substr(0, 500);
    EXPECT_FALSE(fs::exists(dir_ / "out.json")) << "a result was written despite the error: bitline " << args;
    return r;
  }
};

constexpr const char* kTinyCosmosEval = "experiment: t\nsweep: {months: [1]}\nsystems: [fc]\n";
const std::string kAccelRun = "accel run --model tiny-test --system csix4 --context 512:128 --slo 20 ";

// A Mixtral-shaped config.json with `extra` fields (JSON text, each ending with a comma).
std::string mixtral(const std::string& extra) {
  return "{\"architectures\": [\"MixtralForCausalLM\"], \"model_type\": \"mixtral\", \"hidden_size\": 64, " + extra +
         " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"num_key_value_heads\": 2, "
         "\"vocab_size\": 256, \"torch_dtype\": \"bfloat16\"}";
}

}  // namespace

// ---- (3) and (11): the summary's pairs of a cosmos experiment ------------------------------------------------

TEST_F(HostileSurfaces, CosmosCompareNamesSystemsThatRun) {
  // A pair with a system the matrix does not run: refused at load (was an internal error after the run, a result left).
  const std::string absent = write("absent.yaml", std::string(kTinyCosmosEval) + "compare: [fc/osp]\n");
  expect_refused("cosmos eval --quiet --experiment " + absent + " --json " + out(),
                 {"absent.yaml:4", "compare[0]", "'osp'", "not in systems: [fc]"});
  // Three systems: a pair is exactly two (was "'osp/isp' is not one of ...").
  const std::string three = write("three.yaml", "experiment: t\nsweep: {months: [1]}\nsystems: [fc, osp, isp]\ncompare: [fc/osp/isp]\n");
  expect_refused("cosmos eval --quiet --experiment " + three + " --json " + out(),
                 {"compare[0]", "'fc/osp/isp'", "exactly two systems A/B"});
  const std::string self = write("self.yaml", std::string(kTinyCosmosEval) + "compare: [fc/fc]\n");
  expect_refused("cosmos eval --quiet --experiment " + self + " --json " + out(), {"compare[0]", "with itself"});
}

// ---- (5): impossible physics ------------------------------------------------------------------------------

TEST_F(HostileSurfaces, PhysicalParametersAreBounded) {
  expect_refused(kAccelRun + "--set llm.energy.gpu_tdp=0W --json " + out(), {"--set", "llm.energy.gpu_tdp", "at least 1 W", "got 0 W"});
  expect_refused(kAccelRun + "--set llm.energy.gpu_tdp=1e308W --json " + out(), {"llm.energy.gpu_tdp", "at most 10000 W"});
  // In range, but less than the parts it includes: the GPU die would draw a negative power.
  expect_refused(kAccelRun + "--set llm.energy.gpu_tdp=100W --json " + out(), {"llm.energy.gpu_tdp", "at most its parts", "HBM"});
  expect_refused(kAccelRun + "--set gpu.bf16_flops=0 --json " + out(), {"gpu.bf16_flops", "must be at least 1000000000", "got 0"});
  expect_refused(kAccelRun + "--set llm.network.nvlink=1B/s --json " + out(), {"llm.network.nvlink", "must be at least 1000000 B/s"});
  expect_refused(kAccelRun + "--set hbm.energy=1J/bit --json " + out(), {"hbm.energy", "J/bit"});
}

// ---- (7): times too long to simulate name their key --------------------------------------------------------

TEST_F(HostileSurfaces, HugeTimesNameTheirKey) {
  expect_refused(kAccelRun + "--set llm.network.nvlink_latency=100min --json " + out(),
                 {"--set", "llm.network.nvlink_latency", "at most 1 s", "got 6000 s"});
  expect_refused("cosmos run --preset flash-cosmos --set nand.timing.t_read_slc=100min --json " + out(),
                 {"--set", "nand.timing.t_read_slc", "at most 1 s", "got 6000 s"});
  // A prefill past the time limit because of a parameter, not the prompt: the inputs are listed (the --set among them)
  // and no half of a result is printed before the error.
  const Result slow = expect_refused(kAccelRun + "--set llm.compute.softmax_rate=1e-300 --json " + out(),
                                     {"a prefill of 512 tokens would take more than 46 days", "--set llm.compute.softmax_rate=1e-300"});
  EXPECT_FALSE(has(slow.out, "tokens/s per GPU")) << slow.out;
  // An overflow found deep in the run (here a 1e9-token context on HBM) lists the run's inputs.
  expect_refused("accel run --model llama3.1-405b --system h200x8 --context 1000000000:1000 --slo 100 --batch 1000000",
                 {"time overflow", "the run's inputs", "--context 1000000000:1000", "--batch 1000000"});
}

// ---- (9): silent acceptance -------------------------------------------------------------------------------

TEST_F(HostileSurfaces, MoeShapesThatCannotBe) {
  // 0 experts beside experts per token: a MoE without experts (1 expert is refused too), not a dense model.
  const std::string zero = write("zero.json", mixtral("\"num_local_experts\": 0, \"num_experts_per_tok\": 2,"));
  expect_refused("accel run --model " + zero + " --system csix4 --context 512:128 --slo 20 --json " + out(),
                 {"zero.json", "num_local_experts", "0 experts", "num_experts_per_tok is 2"});
  const std::string dense =
      write("dense.json", mixtral("\"num_local_experts\": 4, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 2,"));
  expect_refused("accel run --model " + dense + " --system csix4 --context 512:128 --slo 20 --json " + out(),
                 {"dense.json", "first_k_dense_replace", "2 leading dense layers of 2 layers"});
}

TEST_F(HostileSurfaces, DuplicateJsonKeysAreRefused) {
  const std::string twice = write("twice.json", mixtral("\"hidden_size\": 128,"));
  expect_refused("accel run --model " + twice + " --system csix4 --context 512:128 --slo 20 --json " + out(),
                 {"twice.json", "duplicate key \"hidden_size\""});
  const std::string trace = write("trace.jsonl",
                                  "{\"session\": 1, \"turn\": 1, \"input_tokens\": 10, \"input_tokens\": 20, \"output_tokens\": 5, "
                                  "\"timestamp\": 0}\n");
  expect_refused("accel sessions --trace " + trace + " --json " + out(), {"trace.jsonl:1", "duplicate key \"input_tokens\""});
}

TEST_F(HostileSurfaces, ConfigFilesAreOneNonEmptyDocument) {
  const std::string two = write("two.yaml", "nand:\n  timing:\n    t_read_slc: 30us\n---\nnand:\n  timing:\n    t_read_slc: 40us\n");
  expect_refused("nand demo --config " + two + " --json " + out(), {"two.yaml", "2 YAML documents"});
  const std::string empty = write("empty.yaml", "# nothing but a comment\n");
  expect_refused("nand demo --config " + empty + " --json " + out(), {"empty.yaml", "empty config file"});
  // A GPU kind given by path is a config file too.
  expect_refused("accel run --model tiny-test --system " + empty + " --gpus 1 --context 512:128 --slo 20",
                 {"empty.yaml", "empty config file"});
}

TEST_F(HostileSurfaces, NothingValidatedIsNoResult) {
  // Llama-3.1-405B does not fit one H200: nothing compared is exit 1 (no feasible result), not "0.00% error", exit 0.
  const Result r = expect_refused("accel validate --models llama3.1-405b --systems h200x1 --batch 1 --json " + out(),
                                  {"skipped", "none of the 1 model x system pairs could be compared"}, 1);
  EXPECT_FALSE(has(r.out, "0.00%")) << r.out;
}

TEST_F(HostileSurfaces, CosmosRunPointAboveTheSweepCap) {
  expect_refused("cosmos run --preset flash-cosmos --workload ims --param images=99999999999 --json " + out(),
                 {"--param images=99999999999", "above the maximum 16777216"});
}

// ---- (11): readable ranges --------------------------------------------------------------------------------

TEST_F(HostileSurfaces, OptionRangesAreReadable) {
  const Result r = expect_refused("hbf write-bw --preset csi --requests 0 --json " + out(), {"--requests"});
  EXPECT_FALSE(has(r.out, "179769")) << r.out;
  EXPECT_LT(r.out.size(), 400u) << r.out;
}

// ---- messages ---------------------------------------------------------------------------------------------

TEST_F(HostileSurfaces, MisspeltExperimentKeyIsNamed) {
  const std::string typo = write("typo.yaml",
                                 "experiment: t\nmodels: [tiny-test]\ncontexts: [{name: c, input: 512, output: 128}]\n"
                                 "slo_ms: [20]\nsystems: [csix4]\nbaseline: csix4\n");
  const Result r =
      expect_refused("accel eval --quiet --experiment " + typo + " --json " + out(), {"typo.yaml:4", "slo_ms", "did you mean 'slos_ms'"});
  EXPECT_FALSE(has(r.out, "missing key 'slos_ms'")) << r.out;
}

TEST_F(HostileSurfaces, ValidateExplainsItsColumns) {
  const Result r = ::bitline::test::run_bitline_bounded("accel validate --models tiny-test --systems csix4 --context 512:128 --batch 4");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "r = requests per attention rank")) << r.out;
  EXPECT_TRUE(has(r.out, "r=4")) << r.out;
}

TEST_F(HostileSurfaces, ReliabilityShowsProgress) {
  const std::string cmd = "cosmos reliability --preset flash-cosmos --set workload.users=80000 --months 1 --trials 2";
  const Result r = ::bitline::test::run_bitline_bounded(cmd);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "[  4/4] stress esp")) << r.out;
  const Result q = ::bitline::test::run_bitline_bounded(cmd + " --quiet");
  EXPECT_EQ(q.rc, 0) << q.out;
  EXPECT_FALSE(has(q.out, "/4]")) << q.out;
}

// ---- (6): work budgets ------------------------------------------------------------------------------------

TEST_F(HostileSurfaces, EvaluationMatricesAreBounded) {
  // 101 contexts x 100 SLOs: 10,100 batch searches.
  std::string contexts, slos;
  for (int i = 0; i < 101; ++i) contexts += (i ? ", " : "") + std::string("{name: c") + std::to_string(i) + ", input: 512, output: 128}";
  for (int i = 1; i <= 100; ++i) slos += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string big = write("big.yaml", "experiment: t\nmodels: [tiny-test]\ncontexts: [" + contexts + "]\nslos_ms: [" + slos +
                                                "]\nsystems: [csix4]\nbaseline: csix4\n");
  expect_refused("accel eval --quiet --experiment " + big + " --json " + out(),
                 {"big.yaml", "10100 points", "1 x 101 x 100 x 1", "more than the 10000"});
  std::string variants;
  for (int i = 0; i < 1001; ++i) variants += "  - {name: v" + std::to_string(i) + ", description: d, kind: csi}\n";
  const std::string abl = write("abl.yaml",
                                "experiment: t\nmodel: tiny-test\ngpus: 4\nbatch_per_rank: 4\ncontext: {name: c, input: 512, "
                                "output: 128}\nslo_ms: 20\nvariants:\n" +
                                    variants);
  expect_refused("accel ablation --experiment " + abl + " --json " + out(),
                 {"abl.yaml", "variants", "1001 variants", "more than the 1000"});
}

TEST_F(HostileSurfaces, LongRunsAreRefusedWithTheirEstimate) {
  // 300 turns of 4 M output tokens on the experiment's 4 systems: 4.8e9 output tokens to serve, over the 4e9 one run
  // may take (~50 ns a token: 240 s on one core).
  std::string turns;
  for (int s = 0; s < 300; ++s)
    turns += "{\"session\": " + std::to_string(s) +
             ", \"turn\": 1, \"input_tokens\": 1000, \"output_tokens\": 4000000, \"timestamp\": " + std::to_string(s) + "}\n";
  const std::string trace = write("long.jsonl", turns);
  expect_refused("accel sessions --trace " + trace + " --json " + out(), {"--trace", "long.jsonl", "4.8e+09 output tokens to simulate",
                                                                          "1 loads x 4 systems", "more than the 4e+09", "estimated 48 s"});
  // 1,100 turns of 4 M prompt tokens: 8.6 M prefix keys of 512 tokens, over the 2^23 a trace may make; refused before
  // any is made (they would take ~700 MB).
  std::string wide;
  for (int s = 0; s < 1100; ++s)
    wide += "{\"session\": " + std::to_string(s) +
            ", \"turn\": 1, \"input_tokens\": 4000000, \"output_tokens\": 1, \"timestamp\": " + std::to_string(s) + "}\n";
  expect_refused("accel sessions --trace " + write("wide.jsonl", wide) + " --json " + out(),
                 {"wide.jsonl", "8593200 prefix keys of 512 tokens", "more than the 8388608"});
  expect_refused("cosmos write-bw --bytes 1TiB --json " + out(), {"--bytes 1TiB", "more than the 256GiB", "estimated 32 s"});
  // 1,200 BMI and 1,301 IMS points on 4 systems: 10,004 runs.
  std::string months;
  for (int m = 1; m <= 1200; ++m) months += (m > 1 ? ", " : "") + std::to_string(m);
  std::string images;
  for (int i = 1; i <= 1301; ++i) images += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string big = write("cosmos-big.yaml", "experiment: t\nsystems: [osp, isp, parabit, fc]\nsweep:\n  months: [" + months +
                                                       "]\n  images: [" + images + "]\n");
  expect_refused("cosmos eval --quiet --experiment " + big + " --json " + out(),
                 {"cosmos-big.yaml", "sweep", "10004 runs (2501 points x 4 systems)", "more than the 10000"});
}

// ---- geometries in range that the SSD or a demo cannot hold (crashes before) ------------------------------

TEST_F(HostileSurfaces, GeometriesTheSsdCannotAddressAreRefused) {
  // A page under the 512-byte sector (a division by zero in the SSD's host interface before).
  const std::string q11 = quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb/q1.1.yaml");
  for (const std::string& cmd : {std::string("cosmos write-bw --bytes 1MiB"), "cosmos ssb --sf 0.001 --query " + q11})
    expect_refused(cmd + " --set nand.geometry.page_size=256B --set nand.ecc.codeword=256B --json " + out(),
                   {"nand.geometry.page_size = 256 B", "512-byte sectors"});
  // More pages than 32-bit page numbers hold: every factor named.
  expect_refused("cosmos write-bw --bytes 1MiB --set ssd.channels=1024 --json " + out(),
                 {"ssd.channels 1024", "nand.geometry.planes_per_die", "32-bit page numbers"});
  // write-bw's work is its program operations: small pages are budgeted by them, and less than one is no bandwidth.
  const Result r =
      expect_refused("cosmos write-bw --bytes 256GiB --set nand.geometry.page_size=512B --set nand.ecc.codeword=8B --json " + out(),
                     {"--bytes 256GiB", "program operations", "8388608"});
  EXPECT_FALSE(has(r.out, "GB/s")) << "the table's header was printed before the error: " << r.out;
  expect_refused("cosmos write-bw --bytes 1B --json " + out(), {"--bytes 1B", "less than one program operation"});
  // The demo's XOR senses two wordlines of a string (a segmentation fault with one before).
  expect_refused("nand demo --set nand.geometry.wordlines_per_string=1 --json " + out(),
                 {"nand.geometry.wordlines_per_string = 1", "at least 2"});
}

// ---- outputs that would overwrite each other or an input, empty values ---------------------------------------

TEST_F(HostileSurfaces, OutputsMustBeDistinctFilesAndNoInput) {
  const std::string src = std::string(BITLINE_SOURCE_DIR) + "/configs/";
  // The device file given as --json: it used to be overwritten with the result (exit 0).
  write("dev.xml", "placeholder");
  fs::copy_file(src + "ssd/device.xml", dir_ / "dev.xml", fs::copy_options::overwrite_existing);
  const std::string before = [&] {
    std::ifstream f(dir_ / "dev.xml");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  expect_refused(
      "ssd run --device " + quote(path("dev.xml")) + " --workload " + quote(src + "ssd/read.xml") + " --json " + quote(path("dev.xml")),
      {"--json", "this command reads that file (--device"});
  std::ifstream f(dir_ / "dev.xml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), {}), before);
  // Two outputs of one command on the same file, however spelt.
  expect_refused("ssd run --device " + quote(src + "ssd/device.xml") + " --workload " + quote(src + "ssd/read.xml") + " --json " + out() +
                     " --mqsim-xml " + quote((dir_ / "." / "out.json").string()),
                 {"--json and --mqsim-xml name the same file"});
  const std::string exp = write("e.yaml", kTinyCosmosEval);
  expect_refused("cosmos eval --experiment " + exp + " --json " + out() + " --csv " + out(), {"--json and --csv name the same file"});
  expect_refused("cosmos eval --experiment " + exp + " --json " + exp, {"this command reads that file (--experiment"});
  const std::string lines = quote(path("r.jsonl"));
  expect_refused("serve run --model tiny-test --system h100x1 --rate 2 --requests 5 --input 10 --output 5 --json " + lines +
                     " --requests-out " + lines,
                 {"--json and --requests-out name the same file"});
  // An empty value is refused, not taken as "not given" (the result went nowhere without a word).
  expect_refused("cosmos eval --experiment " + exp + " --json ''", {"--json: an empty value"});
  expect_refused("cosmos ssb --sf 0.001 --systems=", {"--systems: an empty value"});
}

// ---- cosmos ssb: work and memory bounded before anything runs -----------------------------------------------

TEST_F(HostileSurfaces, SsbRunsAreBoundedUpFront) {
  const std::string q43 = quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb/q4.3.yaml");
  // An SF past 32-bit row numbers: refused at once (it counted the rows for up to 27 s first).
  expect_refused("cosmos ssb --sf 716 --timing-only --json " + out(), {"--sf 716", "[1e-05, 700]"});
  // Flash aggregation's reads cost more than the host's: SF 30 of Q4.3 (about 200 s) is refused with its estimate.
  expect_refused("cosmos ssb --sf 30 --timing-only --aggregation flash --query " + q43 + " --json " + out(),
                 {"--sf 30", "die jobs", "a flash-aggregated query's read counted 6 times", "--aggregation host"});
  // A functional flash-aggregated query holds its reads' result bitmaps together: SF 1 (28 GB, killed) is refused.
  expect_refused("cosmos ssb --sf 1 --aggregation flash --json " + out(), {"--sf 1: query", "functional reads", "512 MiB"});
}

TEST_F(HostileSurfaces, ReliabilityWorkIsBoundedUpFront) {
  // 10,000 trials of 30 operands of 8 M users ran for ~14 minutes; refused with its cells and the budget.
  expect_refused("cosmos reliability --quiet --trials 10000 --months 1 --set workload.users=8000000 --json " + out(),
                 {"10000 trials x 30 operands x 8000000 users", "4.8e+12 cells", "3e+11"});
}

TEST_F(HostileSurfaces, HbfWriteBwNamesItsBytes) {
  // More KV than HBM stages, and less than one hyperpage, were exit 1 in the runtime's words.
  expect_refused("hbf write-bw --preset csi --bytes 34GiB --json " + out(), {"--bytes 34GiB", "staged in HBM", "give fewer bytes"});
  expect_refused("hbf write-bw --preset csi --bytes 1B --json " + out(), {"--bytes 1B", "less than one hyperpage"});
}

TEST_F(HostileSurfaces, SsbOptionsThatWouldBeDroppedAreRefused) {
  const std::string q11 = quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb/q1.1.yaml");
  const std::string dir = quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb");
  expect_refused("cosmos ssb --sf 0x10 --json " + out(), {"--sf", "'0x10'"});
  expect_refused("cosmos ssb --sf 0.001 --systems fc,roaring --timing-only --json " + out(),
                 {"measured engines (roaring)", "--timing-only"});
  expect_refused("cosmos ssb --sf 0.001 --systems fc --functional-systems parabit --json " + out(),
                 {"--functional-systems parabit: not one of the systems run"});
  expect_refused("cosmos ssb --sf 0.001 --query " + q11 + " --queries " + dir + " --json " + out(), {"--query and --queries"});
}

TEST_F(HostileSurfaces, SsbIndexAndFilterLimitsNameTheirCause) {
  // An in-range --equality-max-values whose bitmaps outgrow a string, and a filter that expands past the products a
  // system may sense, were exit 1 naming neither the option nor the query; a huge predicate was echoed twice whole.
  expect_refused("cosmos ssb --sf 0.001 --equality-max-values 30 --json " + out(),
                 {"--equality-max-values (30 now)", "wordlines_per_string"});
  std::string where;
  for (int i = 1; i < 50; ++i) where += "  - lo_quantity <> " + std::to_string(i) + "\n";
  const std::string ne = write("ne.yaml", "query: NE\nwhere:\n" + where + "sum: lo_revenue\nas: r\n");
  expect_refused("cosmos ssb --sf 0.001 --query " + ne + " --json " + out(), {"ne.yaml: query NE:", "products"});
  const std::string big =
      write("big.yaml", "query: BIG\nwhere:\n  - lo_quantity = " + std::string(900000, 'x') + "\nsum: lo_revenue\nas: r\n");
  expect_refused("cosmos ssb --sf 0.001 --query " + big + " --json " + out(), {"big.yaml:3: where[0]", "(900000 characters)"});
}

TEST_F(HostileSurfaces, AccelOutputsAreNoInputAndValuesMeanWhatTheySay) {
  const std::string src = std::string(BITLINE_SOURCE_DIR) + "/configs/";
  fs::copy_file(src + "models/llama2-7b.json", dir_ / "l7.json");
  fs::copy_file(src + "gpus/h100.yaml", dir_ / "k.yaml");
  // A model or kind file given as the result's path was overwritten (exit 0).
  expect_refused(
      "accel run --model " + quote(path("l7.json")) + " --system h100x1 --context 1024:256 --slo 50 --json " + quote(path("l7.json")),
      {"this command reads that file (--model"});
  expect_refused("accel gemm --gemm 1x1x1 --system " + quote(path("k.yaml")) + " --json " + quote(path("k.yaml")),
                 {"this command reads that file (config file"});
  EXPECT_EQ(fs::file_size(dir_ / "l7.json"), fs::file_size(src + "models/llama2-7b.json"));
  // No tile within gemm_tile_max: the GEMM had no kernel and took no time (3,842 TFLOP/s on an H100, exit 0).
  expect_refused("accel gemm --gemm 4096x4096x4096 --set llm.compute.gemm_tile_max=64 --json " + out(),
                 {"llm.compute.gemm_tile_max = 64", "smallest is 64 x 64"});
  // Integers are decimal everywhere (--gpus 010 was 8 GPUs; --system h100x010 is 10).
  expect_refused("accel run --model llama2-7b --system h100 --gpus 010 --context 1024:256 --slo 50 --json " + out(),
                 {"--gpus: '010'", "decimal"});
  expect_refused("accel run --model llama2-7b --system h100x1 --context 1024:256 --slo 0x10 --json " + out(), {"--slo: '0x10'"});
  // A kind file of only a description ran every default under its name.
  const std::string d = write("d.yaml", "description: \"only\"\n");
  expect_refused("accel run --model llama2-7b --system " + quote(path("d.yaml") + "x1") + " --context 1024:256 --slo 50 --json " + out(),
                 {"d.yaml: only a description"});
}

TEST_F(HostileSurfaces, ExperimentContextsAndLinkRatesAreBounded) {
  // An experiment's context of 0 input tokens was accepted where --context 0:1 is refused.
  const std::string e = write("e.yaml",
                              "experiment: t\nmodels: [tiny-test]\ncontexts:\n  - {name: z, input: 0, output: 8}\nslos_ms: [50]\n"
                              "systems: [h100x1]\nbaseline: h100x1\n");
  expect_refused("accel eval --experiment " + e + " --quiet --json " + out(), {"e.yaml", "input"});
  // A die link of 1e300 B/s was accepted (no upper bound, unlike every other bandwidth).
  expect_refused(kAccelRun + "--set hbf.timing.die_link_bandwidth=1e300B/s --json " + out(), {"hbf.timing.die_link_bandwidth", "at most"});
}

TEST_F(HostileSurfaces, KernelTimeLimitsListTheRunsInputs) {
  // The GEMM's and the attention kernel's 1e6 s limits did not name the --set that made them long ("would take inf s").
  expect_refused("accel gemm --gemm 4096x4096x4096 --precision fp8 --set llm.compute.fp8_util_max=1e-12 --json " + out(),
                 {"the limit is 1e6 s", "the run's inputs", "--set llm.compute.fp8_util_max=1e-12"});
  const Result r = expect_refused("accel attention --prefill 1x32x4096x128 --set llm.compute.softmax_rate=1e-300 --json " + out(),
                                  {"more than 1e6 s", "--set llm.compute.softmax_rate=1e-300"});
  EXPECT_FALSE(has(r.out, "inf s")) << r.out;
}

TEST_F(HostileSurfaces, HbfStreamRefusesATensorLargerThanItsObjectAndAnIgnoredDistance) {
  // A tensor larger than the object printed "1 tensors of 1TiB" for a 1 GiB object (exit 0).
  expect_refused("hbf stream --preset csi --bytes 1GiB --tensor 1TiB --json " + out(), {"--tensor 1TiB", "--bytes 1GiB"});
  // --distance with prefetch off was ignored in silence, whether --no-prefetch or a --set turned it off.
  expect_refused("hbf stream --preset csi --no-prefetch --distance 4 --json " + out(), {"--distance 4", "prefetch is off"});
  expect_refused("hbf stream --preset csi --set hbf.runtime.prefetch=false --distance 4 --json " + out(),
                 {"--distance 4", "prefetch is off"});
}

TEST_F(HostileSurfaces, OptionalModelFieldsAreCheckedWhereGiven) {
  // sliding_window and max_position_embeddings of 0, -5 or a string were ignored (a broken file ran as a good one).
  expect_refused("accel run --model " + write("sw.json", mixtral("\"sliding_window\": -5,")) +
                     " --system h100x1 --context 128:8 --batch 1 --static-batch --json " + out(),
                 {"sw.json", "sliding_window", "-5"});
  expect_refused("accel run --model " + write("mp.json", mixtral("\"max_position_embeddings\": \"4k\",")) +
                     " --system h100x1 --context 128:8 --batch 1 --static-batch --json " + out(),
                 {"mp.json", "max_position_embeddings", "4k"});
  // DeepSeek's FP8 element format and its routing groups: an int4 "fmt" and 0 or uneven groups were accepted.
  const std::string src = std::string(BITLINE_SOURCE_DIR) + "/configs/models/deepseek-v3.json";
  std::ifstream in(src);
  const std::string ds((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto variant = [&](const std::string& from, const std::string& to) {
    std::string t = ds;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  const std::string run = " --system h200x8 --context 128:8 --batch 1 --static-batch --json " + out();
  expect_refused("accel run --model " + write("f.json", variant("\"fmt\": \"e4m3\"", "\"fmt\": \"int4\"")) + run,
                 {"f.json", "quantization_config", "int4"});
  expect_refused("accel run --model " + write("g0.json", variant("\"n_group\": 8", "\"n_group\": 0")) + run, {"g0.json", "n_group", "0"});
  expect_refused("accel run --model " + write("g7.json", variant("\"n_group\": 8", "\"n_group\": 7")) + run,
                 {"g7.json", "n_group", "256 experts"});
  expect_refused("accel run --model " + write("t9.json", variant("\"topk_group\": 4", "\"topk_group\": 9")) + run,
                 {"t9.json", "topk_group", "9"});
}

TEST_F(HostileSurfaces, MeasuredBusBandwidthCurvesAreBounded) {
  // A bus bandwidth of 1e300 B/s or a message size of 1e300 B made every collective free (exit 0).
  expect_refused(
      "accel run --model llama2-7b --system h100x2 --context 128:8 --batch 1 --static-batch --set "
      "'llm.network.busbw=[[1,1e300],[2,1e300]]' --json " +
          out(),
      {"llm.network.busbw", "1e+300", "at most 1 PB/s"});
  expect_refused(
      "accel run --model llama2-7b --system h100x2 --context 128:8 --batch 1 --static-batch --set "
      "'llm.network.busbw=[[1,1e9],[1e300,2e9]]' --json " +
          out(),
      {"llm.network.busbw", "1e+300", "at most 1 PiB"});
}

// ---- Round three (issue 51): outputs over inputs, work estimated up front, one parser of numbers and lists --------

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

TEST_F(HostileSurfaces, NoOutputOverwritesAFileTheCommandReads) {
  const std::string src = std::string(BITLINE_SOURCE_DIR) + "/configs/";
  fs::copy_file(src + "models/llama2-7b.json", dir_ / "m.json");
  fs::copy_file(src + "gpus/h100.yaml", dir_ / "k.yaml");
  fs::copy_file(src + "ssb/q1.1.yaml", dir_ / "q.yaml");
  fs::create_symlink(dir_ / "m.json", dir_ / "link.json");
  fs::create_hard_link(dir_ / "k.yaml", dir_ / "hard.yaml");
  write("c.yaml", "nand: {}\n");
  write("l.csv", "a\n5\n6\n");
  std::map<std::string, std::string> before;
  for (const char* f : {"m.json", "k.yaml", "q.yaml", "c.yaml", "l.csv"}) before[f] = slurp(dir_ / f);
  const std::string serve = "serve run --model " + quote(path("m.json")) + " --system h100x1 --rate 2 --requests 5 --input 10 --output 5 ";
  // The model by another spelling (./), through a symbolic link, the kind file through a hard link, a csv:FILE:COLUMN
  // length file, a config, a query file: each exit 2 naming the output and the input, before any work.
  expect_refused(serve + "--json " + quote((dir_ / "." / "m.json").string()), {"--json", "this command reads that file (--model"});
  expect_refused("serve sweep --model " + quote(path("m.json")) + " --system h100x1 --rates 1,2 --requests 5 --input 10 --output 5 --csv " +
                     quote(path("link.json")),
                 {"--csv", "this command reads that file (--model"});
  expect_refused("serve run --model llama2-7b --system " + quote(path("k.yaml") + "x1") +
                     " --rate 2 --requests 5 --input 10 --output 5 --json " + quote(path("hard.yaml")),
                 {"--json", "this command reads that file (config file"});
  expect_refused("serve capacity --model llama2-7b --system h100x1 --requests 5 --input " + quote("csv:" + path("l.csv") + ":a") +
                     " --output 5 --json " + quote(path("l.csv")),
                 {"--json", "this command reads that file (--input"});
  expect_refused("hbf info --config " + quote(path("c.yaml")) + " --json " + quote(path("c.yaml")), {"config file"});
  expect_refused("hbf area --config " + quote(path("c.yaml")) + " --json " + quote(path("c.yaml")), {"config file"});
  expect_refused("cosmos ssb --sf 0.001 --query " + quote(path("q.yaml")) + " --json " + quote(path("q.yaml")), {"(--query"});
  expect_refused("cosmos run --config " + quote(path("c.yaml")) + " --json " + quote(path("c.yaml")), {"config file"});
  for (const auto& [f, text] : before) EXPECT_EQ(slurp(dir_ / f), text) << f << " was changed";
  // A result in the preset folder would be read as a preset: configs/csi.yaml shadowed the kind configs/gpus/csi.yaml.
  const fs::path shadow = fs::path(BITLINE_SOURCE_DIR) / "configs" / "csi.yaml";
  expect_refused("hbf stream --preset csi --bytes 1GiB --json " + quote(shadow.string()), {"--json", "the folder of presets"});
  EXPECT_FALSE(fs::exists(shadow));
}

TEST_F(HostileSurfaces, NoResultAndNoFolderForNoFeasibleBatch) {
  // An infeasible point wrote its JSON (and the folders to it) with exit 1.
  expect_refused("accel run --model llama2-7b --system h100x1 --context 10:10 --slo 0.001 --json " + quote(path("NEW/x/y.json")),
                 {"no feasible batch"}, 1);
  EXPECT_FALSE(fs::exists(dir_ / "NEW"));
}

TEST_F(HostileSurfaces, SsbAnswersAreBoundedBeforeTheRun) {
  // Four group-by columns at SF 1: ~6 M groups grew to 5.5 GB and died of std::bad_alloc.
  const std::string g4 = write("g4.yaml",
                               "query: G4\nwhere:\n  - lo_quantity < 50\ngroup_by: [c_city, s_city, p_brand1, d_yearmonth]\n"
                               "sum: lo_revenue\nas: r\n");
  expect_refused("cosmos ssb --sf 1 --quiet --query " + g4 + " --json " + out(),
                 {"g4.yaml: query G4", "250 c_city x 250 s_city x 1000 p_brand1 x 84 d_yearmonth", "524288 groups"});
  // Over the flash-aggregation read cap: exit 2 naming the query file (was exit 1).
  const std::string g3 = write("g3.yaml", "query: G3\ngroup_by: [c_city, s_city, d_year]\nsum: lo_revenue\nas: r\n");
  expect_refused("cosmos ssb --sf 0.001 --timing-only --aggregation flash --query " + g3 + " --json " + out(),
                 {"g3.yaml: query G3", "fc_reads", "--aggregation host"});
}

TEST_F(HostileSurfaces, ServeMemoryIsBoundedBeforeTheRun) {
  const std::string m = "serve run --model tiny-test --system h100x1 ";
  // 52 M requests (the option's old maximum) ran out of memory at 11 GB.
  expect_refused(m + "--concurrency 1000 --input 1 --output 1 --requests 52428800", {"--requests", "[0, 4194304]", "~330 B per request"});
  // 4 M requests of 4 M output tokens: refused from the lengths' mean, before they are drawn (~4 GB were).
  expect_refused(m + "--rate 1000 --input 1 --output 4194304 --requests 4194304", {"about 1.759e+13 output tokens", "budget"});
  // A Chrome trace of 5 M iterations (within the decoding budget) would have been ~1.2 GB of text held whole: refused
  // when it reaches 2^22 iterations, nothing written.
  expect_refused(m + "--concurrency 1 --input 1 --output 10000 --requests 500 --chrome-trace " + out(),
                 {"--chrome-trace", "more than 4194304 iterations"});
}

TEST_F(HostileSurfaces, ListsAndNumbersAreReadOneWayEverywhere) {
  const std::string ssb = "cosmos ssb --sf 0.001 --timing-only --json " + out();
  expect_refused(ssb + " --systems ,", {"--systems ','", "an empty item"});
  expect_refused(ssb + " --systems fc,,osp", {"--systems 'fc,,osp'", "an empty item (item 2"});
  const std::string sweep = "serve sweep --model tiny-test --system h100x1 --input 10 --output 5 --requests 5 --json " + out();
  expect_refused(sweep + " --rates 1,,2", {"--rates '1,,2'", "an empty item"});
  expect_refused(sweep + " --rates 1,2,", {"--rates '1,2,'", "an empty item (item 3"});
  expect_refused(sweep + " --rates ' 1,2'", {"blanks around an item"});
  expect_refused(sweep + " --rates 1,0x10", {"'0x10'", "in decimal"});
  // Leading zeros inside compound values (a whole --gpus 010 was already refused).
  expect_refused(
      "serve run --model tiny-test --system h100x1 --rate 1 --requests 5 --input 10 --output 5 --disaggregate 01:1 --json " + out(),
      {"--disaggregate '01:1'", "in decimal"});
  expect_refused("accel run --model tiny-test --system h100x1 --context 010:5 --slo 50 --json " + out(), {"context '010:5'", "in decimal"});
  expect_refused("accel gemm --gemm 010x1x1 --json " + out(), {"--gemm '010x1x1'", "in decimal"});
  expect_refused("accel run --model tiny-test --system h100x1 --context 10:5 --slo 50 --set llm.tp_size=064 --json " + out(),
                 {"llm.tp_size", "'064'", "octal"});
  // What the run would have dropped or misread without a word.
  expect_refused(
      "serve run --model tiny-test --system h100x1 --rate 1 --requests 5 --input 10 --output 5 --requests-out " + quote(path("r.txt")),
      {"--requests-out", "F.jsonl", "F.csv"});
  EXPECT_FALSE(fs::exists(dir_ / "r.txt"));
  expect_refused(
      "accel sweep --model tiny-test --system csix4 --context 512:128 --slo 20 --set nand.timing.t_read_slc=3us "
      "--vary nand.timing.t_read_slc=2us,4us --json " +
          out(),
      {"--vary nand.timing.t_read_slc and --set nand.timing.t_read_slc=3us", "dropped"});
  expect_refused("hbf area --set hbf.area.layers=96 --vary hbf.area.layers=96,232 --json " + out(), {"--vary hbf.area.layers", "--set"});
}

TEST_F(HostileSurfaces, TraceFilesAreReadExactly) {
  const std::string run = "serve run --model tiny-test --system h100x1 --json " + out() + " --trace ";
  // A column named twice, a hexadecimal time, a day that no month has: each was read as something else.
  expect_refused(run + write("dup.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n0,10,5,11\n"),
                 {"dup.csv:1", "'ContextTokens' twice"});
  expect_refused(run + write("hex.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0x1p3,10,5\n"), {"hex.csv:2", "'0x1p3' is not a time"});
  expect_refused(run + write("feb.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-31 00:00:00,10,5\n"),
                 {"feb.csv:2", "'2023-02-31 00:00:00' is not a time"});
  // Sessions 7 and "7" are two spellings: their turns were merged into one session.
  expect_refused(run + write("s.jsonl",
                             "{\"session\": 7, \"turn\": 1, \"input_tokens\": 10, \"output_tokens\": 5, \"timestamp\": 0}\n"
                             "{\"session\": \"7\", \"turn\": 2, \"input_tokens\": 20, \"output_tokens\": 5, \"timestamp\": 1}\n"),
                 {"s.jsonl:2", "field 'session'", "line 1 names 7"});
  // A length past what a request may have names its line.
  expect_refused(run + write("long.jsonl",
                             "{\"session\": \"a\", \"turn\": 1, \"input_tokens\": 10, \"output_tokens\": 5, \"timestamp\": 0}\n"
                             "{\"session\": \"b\", \"turn\": 1, \"input_tokens\": 0, \"output_tokens\": 5, \"timestamp\": 1}\n"),
                 {"long.jsonl:2", "0 prompt and 5 output tokens"});
  // A spreadsheet's byte-order mark is not part of the first column's name: read, exit 0.
  const Result bom = ::bitline::test::run_bitline_bounded(
      run + write("bom.csv", "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n0,10,5\n1.5,20,5\n"));
  EXPECT_EQ(bom.rc, 0) << bom.out;
  EXPECT_TRUE(has(bom.out, "2 requests")) << bom.out;
}

TEST_F(HostileSurfaces, MessagesNameWhatIsWrong) {
  // An SLO no rate can meet named --rate, which was never given, after probing down to 6e-6 requests/s.
  expect_refused(
      "serve capacity --model tiny-test --system h100x1 --requests 20 --input 100 --output 20 --slo-p90-ttft-ms 1e-6 "
      "--slo-p99-tpot-ms 1e-6 --json " +
          out(),
      {"no arrival rate meets the SLOs", "one request at a time", "--slo-p90-ttft-ms 1e-06"}, 1);
  // Range errors give their unit.
  expect_refused("accel run --model tiny-test --system h100x1 --context 10:5 --slo 5000000", {"--slo", "not a number of ms in"});
  expect_refused("cosmos ssb --sf 0.001 --threads 999", {"--threads", "whole number of threads in [1, 256]"});
  // Text after the root element of a device file was dropped.
  const std::string dev = slurp(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/device.xml");
  expect_refused("ssd run --device " + write("d.xml", dev + "trailing text\n") + " --workload " +
                     quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/read.xml") + " --json " + out(),
                 {"d.xml: text after the root element", "trailing text"});
  // --help to a standard output that cannot take it exited 0 (the message goes where the help went: not read here).
  EXPECT_EQ(::bitline::test::run_bitline("serve run --help >/dev/full").rc, 2);
}
