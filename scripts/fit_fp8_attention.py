#!/usr/bin/env python3
"""FP8 fused attention's speed over BF16 by GPU generation
(model/cost_parameters.h flash_fp8_{fwd,bwd}_speedup_{hopper,blackwell,blackwell_ultra}).

The measured points are cuDNN 9.19's training SDPA runner (NVIDIA/cudnn-frontend
benchmark/sdpa_benchmark_training), the Llama 3.1 shape (batch 1, 64/8 heads, head dim 128), causal,
seq 2048-32768, run in BF16 and in FP8 on the same GPU in one run: H200 (Hopper), GB200 (Blackwell),
GB300 (Blackwell Ultra) (tests/fixtures/reference/blackwell_compute.yaml: `attention_fp8` against the
BF16 causal rows of `attention` and `attention_blackwell_ultra`). The constant of a generation and
pass is the geometric mean over the five lengths of BF16 time / FP8 time.

Usage: scripts/fit_fp8_attention.py   (from the repository root; prints the ratios and the means)
"""

import math

import yaml

GENERATIONS = {"NVIDIA H200": "hopper", "NVIDIA GB200": "blackwell", "NVIDIA GB300": "blackwell_ultra"}


def main():
    fixture = yaml.safe_load(open("tests/fixtures/reference/blackwell_compute.yaml"))
    bf16 = {}
    for section in ("attention", "attention_blackwell_ultra"):
        for row in fixture[section]:
            if row.get("mask", "top_left") == "top_left":
                bf16[(row["gpu"], row["seqlen"])] = (row["fwd_time_ms"], row["bwd_time_ms"])
    for gpu, name in GENERATIONS.items():
        ratios = {"fwd": [], "bwd": []}
        for row in fixture["attention_fp8"]:
            if row["gpu"] != gpu:
                continue
            fwd, bwd = bf16[(gpu, row["seqlen"])]
            ratios["fwd"].append(fwd / row["fwd_time_ms"])
            ratios["bwd"].append(bwd / row["bwd_time_ms"])
        for p, values in ratios.items():
            geo = math.exp(sum(map(math.log, values)) / len(values))
            listed = ", ".join(f"{v:.3f}" for v in values)
            print(f"flash_fp8_{p}_speedup_{name} = {geo:.3f}   ({len(values)} lengths, seq 32K..2K: {listed})")


if __name__ == "__main__":
    main()
