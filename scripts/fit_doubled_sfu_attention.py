#!/usr/bin/env python3
"""Blackwell Ultra's attention speed-up over Blackwell
(model/cost_parameters.h flash_fwd_speedup_doubled_sfu, flash_bwd_speedup_doubled_sfu).

The measured points are cuDNN 9.19's training SDPA runner on a GB300 and a GB200, the Llama 3.1
shape (head dim 128, BF16, batch 1, seq 2048-32768, causal and unmasked), forward and backward
(tests/fixtures/reference/blackwell_compute.yaml: attention_blackwell_ultra, and the GB200 rows of
attention). The two GPUs have the same tensor-core rate and SM count and differ in the SFU: 32
exponentials per SM per clock on GB300, 16 on GB200 (scenarios/catalog/gpus.yaml).

Prints, per pass, the ten GB200-over-GB300 time ratios and their geometric mean (the constants).
Then the alternative the constants' comment rejects: the ratio of model/op_time.cpp's
flash_score_clocks at the two SFU rates is a function of the share h of the shorter term hidden;
least squares on the log ratios over h in [0, 1] (step 0.001), per pass and jointly.

Usage: scripts/fit_softmax_hidden.py   (from the repository root; prints the fits)
"""

import math

import yaml

DENSE_16BIT_PER_SM_CLOCK = 8192.0  # Blackwell (model/op_time.cpp dense_16bit_flops_per_sm_clock)
SHARED_BYTES_PER_SM_CLOCK = 128.0
TILE = 128.0
HEAD_DIM = 128.0


def score_clocks(backward, sfu, hidden):
    """model/op_time.cpp flash_score_clocks at head dim 128 on Blackwell."""
    d = HEAD_DIM
    tensor = (10.0 if backward else 4.0) * d / DENSE_16BIT_PER_SM_CLOCK
    shared = (22.0 * d / TILE + 4.0) if backward else 6.0 * d / TILE
    data = max(tensor, shared / SHARED_BYTES_PER_SM_CLOCK)
    exp = 1.0 / sfu
    return max(data, exp) + (1.0 - hidden) * min(data, exp)


def measured_ratios():
    """{pass: [GB200 time / GB300 time]} over the (mask, seq) pairs both GPUs have."""
    fixture = yaml.safe_load(open("tests/fixtures/reference/blackwell_compute.yaml"))
    times = {}
    for section in ("attention", "attention_blackwell_ultra"):
        for row in fixture[section]:
            key = (row["gpu"], row.get("mask", "top_left"), row["seqlen"])
            times[key] = (row["fwd_time_ms"], row["bwd_time_ms"])
    out = {"fwd": [], "bwd": []}
    for (gpu, mask, seq), (fwd, bwd) in sorted(times.items()):
        if gpu != "NVIDIA GB300":
            continue
        slow = times[("NVIDIA GB200", mask, seq)]
        out["fwd"].append(slow[0] / fwd)
        out["bwd"].append(slow[1] / bwd)
    return out


def sq_error(hidden, backward, ratios):
    model = score_clocks(backward, 16.0, hidden) / score_clocks(backward, 32.0, hidden)
    return sum((math.log(model) - math.log(r)) ** 2 for r in ratios)


def main():
    ratios = measured_ratios()
    for name, values in ratios.items():
        geo = math.exp(sum(map(math.log, values)) / len(values))
        print(f"{name}: {len(values)} ratios, {min(values):.3f}-{max(values):.3f}, geometric mean {geo:.3f}")
    grid = [i / 1000.0 for i in range(1001)]
    fwd = min(grid, key=lambda h: sq_error(h, False, ratios["fwd"]))
    bwd = min(grid, key=lambda h: sq_error(h, True, ratios["bwd"]))
    joint = min(grid, key=lambda h: sq_error(h, False, ratios["fwd"]) + sq_error(h, True, ratios["bwd"]))
    print(f"hidden share: forward alone {fwd:.3f}, backward alone {bwd:.3f}, both {joint:.3f}")
    for h in (joint, 1.0):  # 1.0: the forward share stepcast uses (model/cost_parameters.h)
        f = score_clocks(False, 16.0, h) / score_clocks(False, 32.0, h)
        b = score_clocks(True, 16.0, h) / score_clocks(True, 32.0, h)
        print(f"  h = {h:.3f}: model GB200/GB300 ratio forward {f:.3f}, backward {b:.3f}")


if __name__ == "__main__":
    main()
