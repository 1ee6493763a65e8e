// `bitline serve run`, `serve capacity` and `serve sweep` through the binary: the JSON names the validation scripts read,
// the per-request output, byte-identical reruns, and bad input (exit 2 with a message naming the option or file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "../support/run_bitline.hpp"

using bitline::test::run_bitline;

namespace {

std::filesystem::path tmp(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("bitline-serve-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d / name;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const std::string kBase = "serve run --model llama2-7b --system h100x1 --input 300 --output 50 --requests 200 ";

}  // namespace

TEST(ServeCli, RunWritesTheSummaryNamesAndOneRecordPerRequest) {
  const auto json = tmp("run.json"), req = tmp("req.jsonl"), csv = tmp("req.csv");
  auto r = run_bitline(kBase + "--rate 4 --slo-ttft-ms 500 --slo-tpot-ms 50 --json " + json.string() + " --requests-out " + req.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
    for (const char* q : {"mean", "p50", "p90", "p95", "p99"}) EXPECT_TRUE(j["summary"][m][q].is_number()) << m << "." << q;
  for (const char* k : {"output_tokens_per_s", "requests_per_s", "goodput_requests_per_s", "slo_attainment"})
    EXPECT_TRUE(j["summary"][k].is_number()) << k;
  EXPECT_LE(j["summary"]["goodput_requests_per_s"].get<double>(), j["summary"]["requests_per_s"].get<double>());
  EXPECT_TRUE(j["slo_attainment"].is_number());
  std::ifstream f(req);
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    const auto l = nlohmann::json::parse(line);
    for (const char* k : {"arrival_s", "queueing_ms", "ttft_ms", "tpot_ms", "itl_mean_ms", "itl_max_ms", "e2e_ms", "preemptions"})
      EXPECT_TRUE(l.contains(k)) << k;
    ++n;
  }
  EXPECT_EQ(n, 200);
  r = run_bitline(kBase + "--concurrency 16 --requests-out " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string c = slurp(csv);
  EXPECT_EQ(c.rfind("id,arrival_s,queueing_ms,ttft_ms,tpot_ms,itl_mean_ms,itl_max_ms,e2e_ms,input_tokens,output_tokens,preemptions,energy_"
                    "j,cached_tokens,cached_host_tokens\n",
                    0),
            0u);
  EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 201);
  // Every row has the header's columns.
  std::istringstream lines(c);
  std::string header, row;
  std::getline(lines, header);
  while (std::getline(lines, row)) EXPECT_EQ(std::count(row.begin(), row.end(), ','), std::count(header.begin(), header.end(), ',')) << row;
}

TEST(ServeCli, AChromeTraceHasOnePassPerIteration) {
  const auto json = tmp("t.json"), trace = tmp("trace.json");
  const auto r = run_bitline(kBase + "--rate 4 --json " + json.string() + " --chrome-trace " + trace.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(json)), t = nlohmann::json::parse(slurp(trace));
  int64_t passes = 0;
  double last_end = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      ++passes;
      EXPECT_GE(e["ts"].get<double>() + 1e-6, last_end);  // one engine: passes do not overlap
      last_end = e["ts"].get<double>() + e["dur"].get<double>();
    }
  EXPECT_EQ(passes, j["summary"]["iterations"].get<int64_t>());
}

TEST(ServeCli, ASweepOfConcurrencyLevels) {
  // serve sweep --concurrency C1,C2: one closed loop per level, each exactly serve run --concurrency C's summary.
  const auto sweep = tmp("csweep.json"), csv = tmp("csweep.csv"), one = tmp("c8.json");
  const std::string lengths = "--model llama2-7b --system h100x1 --requests 60 --input 300 --output 50 ";
  const auto r = run_bitline("serve sweep " + lengths + "--concurrency 1,8 --quiet --json " + sweep.string() + " --csv " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(sweep));
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["concurrency"], 8);
  EXPECT_EQ(j["workload"]["kind"], "closed_loop");
  ASSERT_EQ(run_bitline("serve run " + lengths + "--concurrency 8 --json " + one.string()).rc, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(one))["summary"], j["points"][1]["summary"]);
  EXPECT_EQ(slurp(csv).rfind("concurrency,requests_per_s,", 0), 0u);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{{"--concurrency 8,1", "increasing order"},
                                                                                   {"--concurrency 1,61", "from 1 to --requests 60"},
                                                                                   {"--rates 1 --concurrency 1", "give one of --rates"},
                                                                                   {"", "give one of --rates"}}) {
    const auto e = run_bitline("serve sweep " + lengths + args);
    EXPECT_EQ(e.rc, 2) << args << "\n" << e.out;
    EXPECT_NE(e.out.find(says), std::string::npos) << args << "\n" << e.out;
  }
}

TEST(ServeCli, ARateWithAConcurrencyCap) {
  const auto a = tmp("cap.json");
  const std::string args = "serve run --model llama2-7b --system h100x1 --requests 100 --input 300 --output 50 --rate 20 ";
  const auto r = run_bitline(args + "--max-concurrency 2 --json " + a.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(a));
  EXPECT_EQ(j["workload"]["max_concurrency"], 2);
  EXPECT_EQ(j["workload"]["kind"], "open_loop");
  EXPECT_LE(j["summary"]["mean_requests_in_system"].get<double>(), 2.0);
  const auto closed = run_bitline(
      "serve run --model llama2-7b --system h100x1 --requests 100 --input 300 --output 50 --concurrency 4 "
      "--max-concurrency 2");
  EXPECT_EQ(closed.rc, 2) << closed.out;
  EXPECT_NE(closed.out.find("--max-concurrency"), std::string::npos) << closed.out;
}

TEST(ServeCli, TheSameSeedGivesTheSameBytes) {
  const auto a = tmp("a.json"), b = tmp("b.json"), c = tmp("c.json"), ra = tmp("a.csv"), rb = tmp("b.csv");
  const std::string args =
      "serve run --model llama2-7b --system h100x1 --requests 200 --input lognormal:300:0.5 --output uniform:10:80 --rate 6 "
      "--arrival gamma --cv 2 --engine ideal --scheduler chunked ";
  ASSERT_EQ(run_bitline(args + "--seed 5 --json " + a.string() + " --requests-out " + ra.string()).rc, 0);
  ASSERT_EQ(run_bitline(args + "--seed 5 --json " + b.string() + " --requests-out " + rb.string()).rc, 0);
  ASSERT_EQ(run_bitline(args + "--seed 6 --json " + c.string()).rc, 0);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_EQ(slurp(ra), slurp(rb));
  EXPECT_NE(slurp(a), slurp(c));
}

TEST(ServeCli, BadInputIsExit2WithAClearMessage) {
  struct Case {
    std::string args, says;
  };
  const std::string m = "serve run --model llama2-7b --system h100x1 --requests 10 ";
  for (const Case& c :
       {Case{m + "--input 10 --output 10 --rate 0", "--rate"}, Case{m + "--input 10 --output 10 --rate nan", "--rate"},
        Case{m + "--input 10 --output 10 --rate -2", "--rate"}, Case{m + "--input 10 --output 10 --concurrency 11", "more users than"},
        Case{m + "--input 0 --output 10 --rate 1", "--input '0'"}, Case{m + "--input 10 --output 0 --rate 1", "--output '0'"},
        Case{m + "--input 10 --output 10", "exactly one of"}, Case{m + "--input 10 --output 10 --rate 1 --concurrency 2", "exactly one of"},
        Case{m + "--input 10 --output 10 --rate 1 --scheduler fifo", "fifo"},
        Case{"serve run --model llama3.1-405b --system h100x1 --requests 10 --input 10 --output 10 --rate 1", "does not fit"},
        Case{m + "--input 10 --output 10 --rate 1 --cv 2", "--cv"},
        Case{m + "--input 10 --output 10 --rate 1 --json " + std::filesystem::temp_directory_path().string(), "is a directory"},
        Case{m + "--input 10 --output 10 --rate 1 --set serve.schedular=vllm", "did you mean 'scheduler'"}}) {
    const auto r = run_bitline(c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(ServeCli, TraceErrorsNameTheFileLineAndColumn) {
  struct Case {
    std::string text, says;
  };
  for (const Case& c : {Case{"TIMESTAMP,ContextTokens\n0,5\n", "no column GeneratedTokens"},
                        Case{"TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,3\n1,x,3\n", ":3: column 2 (ContextTokens)"},
                        Case{"TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,3\n1,5,0\n", ":3: column 3 (GeneratedTokens)"},
                        Case{"TIMESTAMP,ContextTokens,GeneratedTokens\n2,5,3\n1,5,3\n", "before the previous row"},
                        Case{"TIMESTAMP,ContextTokens,GeneratedTokens\n-1,5,3\n", "negative time"},
                        Case{"TIMESTAMP,ContextTokens,GeneratedTokens\n0,5\n", "2 columns"}}) {
    const auto f = tmp("trace.csv");
    std::ofstream(f) << c.text;
    const auto r = run_bitline("serve run --model llama2-7b --system h100x1 --trace " + f.string());
    EXPECT_EQ(r.rc, 2) << c.text << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.text << "\n" << r.out;
    EXPECT_NE(r.out.find(f.string()), std::string::npos) << r.out;
  }
  // A well-formed trace (the Azure 2023 code trace's time format) runs.
  const auto f = tmp("ok.csv");
  std::ofstream(f) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"
                      "2023-11-16 18:15:51.0,879,28\n";
  const auto r = run_bitline("serve run --model llama2-7b --system h100x1 --trace " + f.string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("3 requests"), std::string::npos) << r.out;
  // A Mooncake trace (JSON Lines, timestamps in ms) through the sessions' reader.
  const auto mc = tmp("mc.jsonl");
  std::ofstream(mc) << "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
                       "{\"timestamp\": 1500, \"input_length\": 700, \"output_length\": 9, \"hash_ids\": [0, 2]}\n";
  const auto rm = run_bitline("serve run --model llama2-7b --system h100x1 --trace " + mc.string());
  EXPECT_EQ(rm.rc, 0) << rm.out;
  EXPECT_NE(rm.out.find("2 requests"), std::string::npos) << rm.out;
}

TEST(ServeCli, CapacityFindsARateThatMeetsAndOneThatMisses) {
  const auto json = tmp("cap.json");
  const auto r = run_bitline(
      "serve capacity --model llama2-7b --system h100x1 --input 500 --output 100 --requests 300 --slo-p90-ttft-ms 300 --slo-p99-tpot-ms 40 "
      "--tolerance 0.05 --json " +
      json.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  const double cap = j["capacity_requests_per_s"].get<double>(), miss = j["first_miss_requests_per_s"].get<double>();
  EXPECT_GT(cap, 0.1);
  EXPECT_GT(miss, cap);
  EXPECT_LE((miss - cap) / miss, 0.05);
  bool met = false, missed = false;
  for (const auto& p : j["probes"]) {
    if (p["rate_per_s"].get<double>() == cap) met = p["meets"].get<bool>();
    if (p["rate_per_s"].get<double>() == miss) missed = !p["meets"].get<bool>();
  }
  EXPECT_TRUE(met);
  EXPECT_TRUE(missed);
}

TEST(ServeCli, ABurstGptTraceSkipsItsFailedRowsAndSaysSo) {
  // BurstGPT's columns (Timestamp in seconds, Model, Request tokens, Response tokens, Total tokens, Log Type); its
  // failed requests have 0 response tokens: skipped, counted on stdout and in the JSON.
  const auto f = tmp("burst.csv"), json = tmp("burst.json");
  std::ofstream(f) << "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                      "5,ChatGPT,472,18,490,Conversation log\n"
                      "45,ChatGPT,1087,0,1087,Conversation log\n"
                      "118,GPT-4,417,30,447,Conversation log\n";
  const auto r = run_bitline("serve run --model llama2-7b --system h100x1 --trace " + f.string() + " --json " + json.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("2 requests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 rows of failed requests"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["workload"]["format"], "burstgpt");
  EXPECT_EQ(j["workload"]["skipped_failed_rows"], 1);
  EXPECT_EQ(j["summary"]["tokens"]["input"], 472 + 417);
  // Its errors name its own columns; a prompt of 0 tokens is still an error.
  struct Case {
    std::string text, says;
  };
  for (const Case& c : {Case{"Timestamp,Request tokens\n0,5\n", "no column Response tokens"},
                        Case{"Timestamp,Request tokens,Response tokens\n0,0,3\n", ":2: column 2 (Request tokens)"},
                        Case{"Timestamp,Request tokens,Response tokens\n3,5,3\n1,5,3\n", "before the previous row"},
                        Case{"Timestamp,Request tokens,Response tokens\n1,5,0\n", "no served requests (1 failed rows"},
                        Case{"time,prompt,answer\n1,5,3\n", "names none of the columns"}}) {
    std::ofstream(f) << c.text;
    const auto e = run_bitline("serve run --model llama2-7b --system h100x1 --trace " + f.string());
    EXPECT_EQ(e.rc, 2) << c.text << "\n" << e.out;
    EXPECT_NE(e.out.find(c.says), std::string::npos) << c.text << "\n" << e.out;
  }
}

TEST(ServeCli, ASweepGivesOnePointPerRateWithItsCdfAndCsvRow) {
  const auto json = tmp("sweep.json"), csv = tmp("sweep.csv");
  const std::string base = "serve sweep --model llama2-7b --system h100x1 --input 300 --output 50 --requests 200 ";
  const auto r = run_bitline(base + "--rates 1,8,64 --slo-ttft-ms 500 --slo-tpot-ms 50 --json " + json.string() + " --csv " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["points"].size(), 3u);
  double last_tput = 0, last_ttft = 0;
  for (const auto& p : j["points"]) {
    const auto& s = p["summary"];
    // Far below capacity the engine serves what is offered: throughput rises with the rate, and so does the latency.
    EXPECT_GT(s["output_tokens_per_s"].get<double>(), last_tput);
    EXPECT_GT(s["ttft_ms"]["p50"].get<double>(), last_ttft);
    last_tput = s["output_tokens_per_s"].get<double>();
    last_ttft = s["ttft_ms"]["p50"].get<double>();
    // The CDF: 101 quantiles, non-decreasing, its 50% point the summary's p50 and its ends the extremes.
    const auto& q = p["cdf"]["ttft_ms"];
    ASSERT_EQ(q.size(), 101u);
    for (size_t k = 1; k < q.size(); ++k) EXPECT_LE(q[k - 1].get<double>(), q[k].get<double>());
    EXPECT_DOUBLE_EQ(q[50].get<double>(), s["ttft_ms"]["p50"].get<double>());
    EXPECT_DOUBLE_EQ(q[99].get<double>(), s["ttft_ms"]["p99"].get<double>());
  }
  // The same rate alone in `serve run` gives the same summary (same seed, same requests).
  const auto one = tmp("one.json");
  ASSERT_EQ(run_bitline("serve run --model llama2-7b --system h100x1 --input 300 --output 50 --requests 200 --rate 8 --slo-ttft-ms 500 "
                        "--slo-tpot-ms 50 --json " +
                        one.string())
                .rc,
            0);
  EXPECT_EQ(nlohmann::json::parse(slurp(one))["summary"], j["points"][1]["summary"]);
  // Rates in parallel give the same bytes.
  const auto two = tmp("sweep2.json");
  ASSERT_EQ(run_bitline(base + "--rates 1,8,64 --slo-ttft-ms 500 --slo-tpot-ms 50 --threads 2 --quiet --json " + two.string()).rc, 0);
  const auto one_t = tmp("sweep1.json");
  ASSERT_EQ(run_bitline(base + "--rates 1,8,64 --slo-ttft-ms 500 --slo-tpot-ms 50 --threads 1 --quiet --json " + one_t.string()).rc, 0);
  EXPECT_EQ(slurp(two), slurp(one_t));
  // The CSV: a header and one row per rate.
  const std::string c = slurp(csv);
  EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 4);
  // The columns in benchmark_serving's order: the rate first, the throughputs (total tokens too), then the latencies
  // with their std, min, max and p99.9.
  EXPECT_EQ(c.rfind("rate_per_s,requests_per_s,output_tokens_per_s,total_tokens_per_s,goodput_requests_per_s,slo_attainment,ttft_ms.", 0),
            0u)
      << c.substr(0, 300);
  for (const char* col : {"ttft_ms.p99,", "ttft_ms.p99_9,", "tpot_ms.std,", "e2e_ms.min,", "itl_ms.max,", "preemptions"})
    EXPECT_NE(c.find(col), std::string::npos) << col;
  // Bad rates: exit 2 naming them; a sweep above the request budget is refused before any work.
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{{"--rates 4,1", "increasing order"},
                                                                                   {"--rates 1,0", "need a finite rate above 0"},
                                                                                   {"--rates 1,nan", "need a finite rate above 0"}}) {
    const auto e = run_bitline(base + args);
    EXPECT_EQ(e.rc, 2) << args << "\n" << e.out;
    EXPECT_NE(e.out.find(says), std::string::npos) << args << "\n" << e.out;
  }
  // The simulations that run at once hold their requests together: two threads of 3 M requests are 6 M in memory.
  const auto big =
      run_bitline("serve sweep --model llama2-7b --system h100x1 --input 300 --output 1 --requests 3000000 --rates 1,2 --threads 2");
  EXPECT_EQ(big.rc, 2);
  EXPECT_NE(big.out.find("2 simulations at once (min of --threads 2 and 2 rates) x --requests 3000000"), std::string::npos) << big.out;
}

TEST(ServeCli, ADeploymentThatCannotHoldTheLongestRequestGivesWayToOneThatCan) {
  // Qwen3-Coder-480B on 8 x H200: with data-parallel attention (its preferred deployment) each GPU keeps every layer's
  // KV of its own requests, 2,080 blocks in all, fewer than a 41K-token request needs; the next candidate of the
  // batch search's order that holds it serves, and the result says why. With --tp (a fixed deployment) it is refused.
  const auto json = tmp("choice.json");
  const std::string base =
      "serve run --model qwen3-coder-480b --system h200x8 --rate 1 --input 40000 --output 1000 --requests 3 --engine ideal ";
  const auto r = run_bitline(base + "--json " + json.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("instead of the preferred"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_NE(j["deployment_choice"].get<std::string>().find("cannot hold the longest request (41000 tokens)"), std::string::npos);
  EXPECT_EQ(j["summary"]["requests"], 3);
  const auto fixed = run_bitline(base + "--tp 1");
  EXPECT_EQ(fixed.rc, 2) << fixed.out;
  EXPECT_NE(fixed.out.find("KV blocks"), std::string::npos) << fixed.out;
  // A deployment that holds it stays (the preferred one, said so).
  const auto ok = run_bitline(kBase + "--rate 4 --json " + json.string());
  ASSERT_EQ(ok.rc, 0) << ok.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["deployment_choice"], "preferred");
}

TEST(ServeCli, DisaggregationSaysItsSidesAndRefusesBadInstanceCounts) {
  const auto json = tmp("dis.json"), trace = tmp("dis-trace.json");
  const auto r = run_bitline(kBase + "--rate 4 --disaggregate 1:2 --json " + json.string() + " --chrome-trace " + trace.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("1 prefill instance(s) of h100x1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KV transfers: 200"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["disaggregation"]["prefill"]["instances"], 1);
  EXPECT_EQ(j["disaggregation"]["decode"]["instances"], 2);
  EXPECT_EQ(j["summary"]["instances"].size(), 3u);
  EXPECT_EQ(j["summary"]["kv_transfer"]["transfers"], 200);
  // The Chrome trace has a track per instance.
  const auto t = nlohmann::json::parse(slurp(trace));
  std::set<int> tids;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") tids.insert(e["tid"].get<int>());
  EXPECT_EQ(tids, (std::set<int>{1, 2, 3}));
  for (const auto& [args, says] :
       std::vector<std::pair<std::string, std::string>>{{"--disaggregate 0:1", "expected P:D"},
                                                        {"--disaggregate 1", "expected P:D"},
                                                        {"--disaggregate 1:x", "expected P:D"},
                                                        {"--disaggregate 1:65", "expected P:D"},
                                                        {"--prefill-system h100x2", "only with --disaggregate"}}) {
    const auto e = run_bitline(kBase + "--rate 4 " + args);
    EXPECT_EQ(e.rc, 2) << args << "\n" << e.out;
    EXPECT_NE(e.out.find(says), std::string::npos) << args << "\n" << e.out;
  }
}

TEST(ServeCli, LengthsFromATraceKeepTheirPairs) {
  // --lengths draws whole (prompt, output) pairs of a trace, so each request is one of the trace's pairs (columns drawn
  // apart by csv:FILE:COLUMN would mix them).
  const auto f = tmp("pairs.csv"), out = tmp("pairs-out.jsonl");
  std::ofstream(f) << "TIMESTAMP,ContextTokens,GeneratedTokens\n0,100,20\n1,300,40\n2,500,60\n";
  const auto r = run_bitline("serve run --model llama2-7b --system h100x1 --rate 2 --requests 300 --lengths " + f.string() +
                             " --requests-out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(out);
  std::string line;
  std::set<std::pair<int64_t, int64_t>> seen;
  while (std::getline(in, line)) {
    const auto l = nlohmann::json::parse(line);
    const std::pair<int64_t, int64_t> p{l["input_tokens"].get<int64_t>(), l["output_tokens"].get<int64_t>()};
    using P = std::pair<int64_t, int64_t>;
    const bool known = p == P{100, 20} || p == P{300, 40} || p == P{500, 60};
    EXPECT_TRUE(known) << line;
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 3u);  // 300 draws from 3 pairs reach all of them
  const auto both =
      run_bitline("serve run --model llama2-7b --system h100x1 --rate 2 --requests 3 --lengths " + f.string() + " --output 5");
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.out.find("leave out --input and --output"), std::string::npos) << both.out;
}

// A workload that meets the SLOs at every rate (it all arrives at once and is served within them) has no capacity:
// refused, where it used to report the last rate probed as the capacity and a never-run one as its first miss.
TEST(ServeCli, CapacityOfAWorkloadThatNeverMissesIsRefused) {
  const auto json = tmp("cap-never.json");
  std::filesystem::remove(json);
  const auto r =
      run_bitline("serve capacity --model llama2-7b --system h100x1 --input 100 --output 10 --requests 50 --json " + json.string());
  EXPECT_EQ(r.rc, 2) << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0);
  EXPECT_NE(r.out.find("every rate meets the SLOs: the --requests 50 arriving all at once"), std::string::npos)
      << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0);
  EXPECT_NE(r.out.find("--requests 50"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(json));
}

// The decoding work is budgeted before anything runs (a run of 4 G output tokens ran for minutes and grew without bound).
TEST(ServeCli, DecodingWorkPastTheBudgetIsRefusedUpFront) {
  const std::string m = "serve run --model tiny-test --system h100x1 --input 10 --output 4194304 ";
  for (const std::string& a : {m + "--rate 1000 --requests 1000", m + "--concurrency 1 --requests 1000"}) {
    const auto r = run_bitline(a);
    EXPECT_EQ(r.rc, 2) << a << "\n" << r.out;
    EXPECT_NE(r.out.find("output tokens in one simulation, more than the budget"), std::string::npos) << r.out;
  }
  const auto s = run_bitline("serve sweep --model tiny-test --system h100x1 --input 10 --output 100000 --requests 500 --rates 1,2,3,4,5,6");
  EXPECT_EQ(s.rc, 2) << s.out;
  EXPECT_NE(s.out.find("6 simulations, in each of which 500 requests decode 5e+07 output tokens"), std::string::npos) << s.out;
}

// A session trace is turns 1..n of each session, in time order, each prompt holding the previous turn's context: a turn
// sent before the previous one gave prefix-cache rates above 100% with exit 0.
TEST(ServeCli, SessionTracesThatContradictThemselvesAreRefused) {
  const auto turn = [](const char* s, int t, int in, int out, int ts) {
    return "{\"session\": \"" + std::string(s) + "\", \"turn\": " + std::to_string(t) + ", \"input_tokens\": " + std::to_string(in) +
           ", \"output_tokens\": " + std::to_string(out) + ", \"timestamp\": " + std::to_string(ts) + "}\n";
  };
  struct Case {
    std::string text, says;
  };
  for (const Case& c : {Case{turn("a", 1, 1000, 100, 5) + turn("a", 2, 2000, 100, 1), ":2: session 'a' turn 2: timestamp 1 s is before"},
                        Case{turn("a", 1, 1000, 100, 0) + turn("a", 1, 2000, 100, 1), "turn 1 appears twice"},
                        Case{turn("a", 1, 1000, 100, 0) + turn("a", 3, 2000, 100, 1), "turn 2 is missing"},
                        Case{turn("a", 2, 1000, 100, 0), "its first turn must be turn 1"},
                        Case{turn("a", 1, 1000, 100, 0) + turn("a", 2, 1050, 100, 1), "input_tokens 1050 is less than turn 1's"},
                        Case{turn("", 1, 1000, 100, 0), "field 'session': an empty name"}}) {
    const auto f = tmp("sessions.jsonl");
    std::ofstream(f) << c.text;
    const auto r = run_bitline("serve run --model tiny-test --system h100x1 --prefix-caching --trace " + f.string());
    EXPECT_EQ(r.rc, 2) << c.text << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.text << "\n" << r.out;
  }
}

// Options the mode does not read are refused (they were ignored while the JSON recorded them); --seed past 64 bits is
// refused (it was clamped to 2^64 - 1); a long cell is cut in the message (a 10 MB cell was echoed whole).
TEST(ServeCli, WhatARunDoesNotReadIsRefusedAndValuesAreShownBriefly) {
  const auto trace = tmp("ok2.csv");
  std::ofstream(trace) << "TIMESTAMP,ContextTokens,GeneratedTokens\n0,100,3\n1,200,3\n";
  const std::string m = "serve run --model tiny-test --system h100x1 ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c :
       {Case{m + "--trace " + trace.string() + " --input 5 --output 5", "--trace: the trace gives each request's lengths"},
        Case{m + "--trace " + trace.string() + " --seed 3", "--seed: a --trace run draws nothing"},
        Case{m + "--concurrency 2 --requests 4 --input 5 --output 5 --arrival gamma", "--arrival gamma: only for an open loop"},
        Case{m + "--rate 2 --requests 4 --input 5 --output 5 --seed 18446744073709551616", "not a whole number in [0, 2^64 - 1]"},
        Case{m + "--rate 2 --requests 4 --input 5 --output 5 --seed -1", "not a whole number in [0, 2^64 - 1]"}}) {
    const auto r = run_bitline(c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  const auto longf = tmp("long.csv");
  std::ofstream(longf) << "TIMESTAMP,ContextTokens,GeneratedTokens\n0,5," << std::string(100000, '9') << "\n";
  const auto r = run_bitline(m + "--trace " + longf.string());
  EXPECT_EQ(r.rc, 2) << r.out.substr(0, 300);
  EXPECT_LT(r.out.size(), 1000u);
  EXPECT_NE(r.out.find("(100000 characters)"), std::string::npos) << r.out.substr(0, 300);
}

TEST(ServeCli, PercentilesChosenAsBenchmarkServingsAreInTheSummary) {
  // --percentiles 25,99.9: p25 and p99_9 beside the fixed ones, from the same interpolation (p50 between p25 and p90).
  const auto json = tmp("pct.json");
  const auto r = run_bitline(kBase + "--rate 4 --percentiles 25,99.9 --json " + json.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(json));
  for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}) {
    const auto& d = j["summary"][m];
    ASSERT_TRUE(d.contains("p25") && d.contains("p99_9")) << m;
    EXPECT_LE(d["p25"].get<double>(), d["p50"].get<double>()) << m;
    EXPECT_GE(d["p99_9"].get<double>(), d["p99"].get<double>()) << m;
  }
  for (const char* bad : {"0", "100", "abc", "50,"}) {
    const auto b = run_bitline(kBase + "--rate 4 --percentiles " + std::string(bad));
    EXPECT_EQ(b.rc, 2) << bad << ": " << b.out;
    EXPECT_NE(b.out.find("--percentiles"), std::string::npos) << b.out;
  }
}
