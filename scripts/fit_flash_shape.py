#!/usr/bin/env python3
"""Fit the flash-attention CTA overhead and tail (model/cost_parameters.h flash_shape_*).

The measured points are causal Llama-3.1-shaped cuDNN attention (head dim 128, BF16) whose only
change is the shape (batch x heads, sequence length, GPU):
  - tests/fixtures/reference/blackwell_compute.yaml: cudnn-frontend's H200 and GB200 rows at
    batch 1 (`attention`) and the GB200 rows at batch 2 (`attention_window128`, model llama3.1),
    seq 2048-32768, forward and backward;
  - tests/fixtures/measured/h200_torch_kernels_2026-11-29.json: the CUDNN_ATTENTION rows, torch SDPA on
    an H200 at (b, h, s) = (1, 16, 4096), (1, 32, 4096), (4, 16, 2048), forward and backward.
Each (source, GPU, batch, pass) group has its own free scale (its eta); the fit minimises the
squared log error of TFLOP/s against the schedule efficiency of model/op_time.cpp
(flash_schedule_efficiency, causal, no window) over a grid 0.25 apart, tile 128.

Usage: scripts/fit_flash_shape.py   (from the repository root; prints the best points)
"""

import json
import math

import yaml

TILE = 128.0
SMS = {"NVIDIA H200": 132, "NVIDIA GB200": 152}


def causal_efficiency(batch_heads, seq, sms, overhead, tail):
    """flash_schedule_efficiency for a square causal problem (model/op_time.cpp)."""
    tiles = math.ceil(seq / TILE)
    visits = tiles * (tiles + 1) / 2.0
    longest = tiles + overhead
    counted = batch_heads * seq * seq / 2.0 / (TILE * TILE)
    makespan = max(batch_heads * (visits + tiles * overhead) / sms + tail * longest, longest)
    return min(1.0, counted / (sms * makespan))


def groups():
    """Lists of (batch x heads, seq, SMs, TFLOP/s), one per group sharing a scale."""
    fixture = yaml.safe_load(open("tests/fixtures/reference/blackwell_compute.yaml"))
    out = []
    for gpu in SMS:
        rows = [r for r in fixture["attention"] if r["gpu"] == gpu]
        for key in ("fwd_tflops", "bwd_tflops"):
            out.append([(64.0, r["seqlen"], SMS[gpu], r[key]) for r in rows])
    rows = [r for r in fixture["attention_window128"] if r["model"] == "llama3.1"]
    for key in ("fwd_tflops", "bwd_tflops"):
        out.append([(r["batch"] * r["heads"], r["seqlen"], SMS[r["gpu"]], r[key]) for r in rows])
    torch = json.load(open("tests/fixtures/measured/h200_torch_kernels_2026-11-29.json"))
    for direction in ("fwd", "bwd"):
        points = []
        for r in torch["records"]:
            if r["kind"] != "attention" or not r["name"].startswith(f"CUDNN_ATTENTION {direction} "):
                continue
            fields = dict(f.split("=") for f in r["name"].split()[2:])
            points.append((float(fields["b"]) * float(fields["h"]), float(fields["s"]), 132, r["tflops"]))
        out.append(points)
    return out


def rms_log_error(data, overhead, tail):
    total, n = 0.0, 0
    for group in data:
        logs = [math.log(t) - math.log(causal_efficiency(bh, s, sms, overhead, tail)) for bh, s, sms, t in group]
        mean = sum(logs) / len(logs)
        total += sum((x - mean) ** 2 for x in logs)
        n += len(logs)
    return math.sqrt(total / n)


def main():
    data = groups()
    print(f"{sum(len(g) for g in data)} points in {len(data)} groups")
    grid = [(rms_log_error(data, o / 4.0, t / 4.0), o / 4.0, t / 4.0) for o in range(0, 33) for t in range(0, 5)]
    grid.sort()
    print(f"without the schedule (overhead 0, tail 0): rms log error {rms_log_error(data, 0.0, 0.0):.4f}")
    for error, overhead, tail in grid[:5]:
        print(f"overhead {overhead:4.2f} blocks  tail {tail:4.2f}  rms log error {error:.4f}")


if __name__ == "__main__":
    main()
