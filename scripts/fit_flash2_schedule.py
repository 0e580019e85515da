#!/usr/bin/env python3
"""Fit FlashAttention-2's CTA overhead and tail on Hopper (model/op_time.h kFlash2HopperSchedule).

The points are FlashAttention-3's FlashAttention-2 bars on an H100 SXM5 (Shah et al. 2024,
arXiv:2407.08608, Fig. 5(d) forward with causal mask and Fig. 6(b) backward without, head dim 128,
BF16), as tests/fixtures/reference/flash2_hopper.yaml holds them: seq 512-16K with batch x seq =
16K tokens and 16 heads, so (batch x heads) = 16 x 16384 / seq. Each pass has its own free scale;
the fit minimises the squared log error of TFLOP/s against model/op_time.cpp's
flash_schedule_efficiency (tile 128; causal forward, non-causal backward in whole waves) on the
H100's 132 SMs, over a grid 0.25 apart, with the tail at most 1 (the list-scheduling bound: the last
CTA starts no later than the average finish). Prints the best points and the efficiency at the H200
harness shapes the Hopper flash2 ratios were measured at.

Usage: scripts/fit_flash2_schedule.py   (from the repository root; imports scripts/fit_flash_shape.py)
"""

import math

import yaml

from fit_flash_shape import TILE, causal_efficiency

SMS = 132
TOKENS = 16384
HEADS = 16
REFERENCE = [(16.0, 4096.0), (32.0, 4096.0), (64.0, 2048.0)]  # model/op_time.cpp kFlashReferenceShapes


def causal(batch_heads, seq, overhead, tail):
    """flash_schedule_efficiency for a square causal problem on the H100 (fit_flash_shape.py's)."""
    return causal_efficiency(batch_heads, seq, SMS, overhead, tail)


def full(batch_heads, seq, overhead):
    tiles = math.ceil(seq / TILE)
    counted = batch_heads * tiles * tiles
    makespan = math.ceil(batch_heads * tiles / SMS) * (tiles + overhead)
    return min(1.0, counted / (SMS * makespan))


def residuals(rows, efficiency):
    logs = [math.log(tflops / efficiency(TOKENS * HEADS / seq, seq)) for seq, tflops in rows]
    mean = sum(logs) / len(logs)
    return [x - mean for x in logs]


def main():
    fixture = yaml.safe_load(open("tests/fixtures/reference/flash2_hopper.yaml"))["fa3_paper"]
    fwd = [(r["seqlen"], r["flash2_tflops"]) for r in fixture["forward_causal_d128"]["rows"]]
    bwd = [(r["seqlen"], r["flash2_tflops"]) for r in fixture["backward_d128"]["rows"]]
    fits = []
    for i in range(0, 41):
        overhead = 0.25 * i
        for j in range(0, 5):
            tail = 0.25 * j
            res = residuals(fwd, lambda bh, s: causal(bh, s, overhead, tail)) + \
                residuals(bwd, lambda bh, s: full(bh, s, overhead))
            fits.append((math.sqrt(sum(x * x for x in res) / len(res)), overhead, tail))
    fits.sort()
    for rms, overhead, tail in fits[:5]:
        print(f"overhead {overhead:.2f} tail {tail:.2f}: rms log error {rms:.4f}")
    none = residuals(fwd, lambda bh, s: 1.0) + residuals(bwd, lambda bh, s: 1.0)
    print(f"no schedule: rms log error {math.sqrt(sum(x * x for x in none) / len(none)):.4f}")
    _, overhead, tail = fits[0]
    ref = [causal(bh, s, overhead, tail) for bh, s in REFERENCE]
    mean = sum(ref) / len(ref)
    print("reference shapes, relative to their mean:", [round(x / mean, 3) for x in ref])
    print("Llama 3 8B, 32 heads at 32K, relative to the reference:", round(causal(32, 32768, overhead, tail) / mean, 3))


if __name__ == "__main__":
    main()
