#!/usr/bin/env python3
"""Writes configs/lengths/sharegpt-shaped.csv: (prompt, output) token pairs shaped like the ShareGPT conversations
vLLM's benchmark_serving draws, for `bitline serve ... --lengths` (ShareGPT itself is not fetched here).

What is published and used:
  - benchmark_serving's filters (vllm/benchmarks/benchmark_serving.py, sample_sharegpt_requests): pairs with a
    prompt or an output under 4 tokens dropped, a prompt over 1,024 or a pair over 2,048 tokens dropped;
  - the mean prompt after those filters, 202 tokens (vLLM v0.6.0 performance post, 2024-09-05, "Dataset": 500
    prompts sampled with a fixed seed, Llama-3 tokenizer; it gives 179 output tokens for the same 500);
  - the mean output, 194 tokens: the larger sample of SGLang's comparison of SGLang v0.3.0 with vLLM v0.6.0
    (sgl-project/sglang benchmark/benchmark_vllm_060/README.md, "Offline benchmark results": 5,000 ShareGPT prompts
    drawn by sglang.bench_serving with the same filters, each request generating its dataset output length, EOS
    ignored). Its tables give requests/s beside output tokens/s, whose ratio is the tokens per request: 4,281.51 /
    22.03 = 194.3 (SGLang, 8B), 4,132.37 / 21.27 = 194.3 (vLLM), 3,856.01 / 19.84 = 194.4 and 3,700.64 / 19.04 =
    194.4 (70B): the same prompts in all four runs. This is the workload those runs served (docs/serving.md checks
    bitline against them), read off as a count, not fitted to a time.
What is assumed (no published distribution was found): prompt and output lengths independent, each log-normal with
sigma = 1.0 of the log (ShareGPT's lengths are right-skewed over two decades); each mu is solved so that the mean
after the filters is the published one.

Deterministic: the same file every run (seeded). Usage: python3 scripts/make_sharegpt_lengths.py [OUT]
"""
import math
import random
import sys

PAIRS = 10000
SIGMA = 1.0
MEAN_IN, MEAN_OUT = 202.0, 194.0


def kept(p, o):
    return p >= 4 and o >= 4 and p <= 1024 and p + o <= 2048


def draw(rng, mu_in, mu_out, n):
    out = []
    while len(out) < n:
        p = max(1, round(rng.lognormvariate(mu_in, SIGMA)))
        o = max(1, round(rng.lognormvariate(mu_out, SIGMA)))
        if kept(p, o):
            out.append((p, o))
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "configs/lengths/sharegpt-shaped.csv"
    mu_in, mu_out = math.log(MEAN_IN) - SIGMA**2 / 2, math.log(MEAN_OUT) - SIGMA**2 / 2
    for _ in range(30):  # fixed-point on the filtered means (the filters cut the tails)
        pairs = draw(random.Random(1), mu_in, mu_out, PAIRS)
        m_in = sum(p for p, _ in pairs) / len(pairs)
        m_out = sum(o for _, o in pairs) / len(pairs)
        mu_in += math.log(MEAN_IN / m_in)
        mu_out += math.log(MEAN_OUT / m_out)
    pairs = draw(random.Random(1), mu_in, mu_out, PAIRS)
    with open(path, "w") as f:
        f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        for p, o in pairs:
            f.write(f"0,{p},{o}\n")
    m_in = sum(p for p, _ in pairs) / len(pairs)
    m_out = sum(o for _, o in pairs) / len(pairs)
    print(f"{path}: {len(pairs)} pairs, mean prompt {m_in:.1f}, mean output {m_out:.1f} tokens")


if __name__ == "__main__":
    main()
