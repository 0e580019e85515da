#!/usr/bin/env python3
"""Derive the 500W compute_scale of h100-sxm-96gb-hbm2e (scenarios/catalog/gpus.yaml).

A power cap lowers the SM clock (the GPU throttles its graphics clock to hold the cap); stepcast
models it as a scale on the dense peaks (simulator/spec_readers.cpp apply_power_mode). The scale is
the measured throughput of bf16 LLM training on an HBM2e H100 SXM at the cap over that at the 700 W
TDP (tests/fixtures/reference/h100_power_cap.yaml, Mayr et al. 2026, Table 4).

That ratio is of a whole training step, which also holds work a cap does not slow (memory-bound
kernels, whose HBM clock the cap leaves alone, and NVLink collectives), so the slowdown of compute
alone is somewhat larger than the step's: the scale is an upper bound on the compute scale, taken
as the compute scale. The same scale applies to every format: no FP8 measurement under a cap was
found.

Usage: scripts/derive_power_mode_scale.py   (from the repository root)
"""

import yaml


def main():
    row = yaml.safe_load(open("tests/fixtures/reference/h100_power_cap.yaml"))["llama3_8b_pretraining_h100_hbm2e"]
    tps = row["tokens_per_s_by_power_cap_w"]
    for cap in sorted(tps):
        print(f"{cap:4d} W  {tps[cap] / tps[700]:.5f}")
    print(f"500W compute_scale = {tps[500]} / {tps[700]} = {tps[500] / tps[700]:.6f}")


if __name__ == "__main__":
    main()
