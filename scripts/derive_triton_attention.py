#!/usr/bin/env python3
"""Derive llm-foundry's Triton FlashAttention speed relative to FlashAttention-2 (model/triton_attention.h).

The points are the FlashAttention-2 paper's own statements (Dao 2023, arXiv:2307.08691, Sec. 4.1,
A100), as tests/fixtures/reference/triton_attention.yaml holds them: FlashAttention-2 is "around
1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in the
backward pass". The forward ratio is the range's geometric middle (equal log distance to both ends),
the backward the stated 2x. The paper's bars themselves were not available as numbers, so there is
nothing to fit: this script only turns the stated ranges into the constants and prints the
cross-checks the fidelity test asserts (the FlashAttention-1 comparison of the kernel's own header).

Usage: scripts/derive_triton_attention.py   (from the repository root)
"""

import math

import yaml

# model/cost_parameters.h: FlashAttention-2's A100 etas (forward, backward), d=128, causal, 2-4K.
FLASH2_ETA_AMPERE = (0.62, 0.50)


def fwd_bwd_eta(fwd, bwd):
    # FLOPs forward 1, backward 2.5 (the paper's count): forward + backward speed over peak.
    return 3.5 / (1.0 / fwd + 2.5 / bwd)


def main():
    paper = yaml.safe_load(open("tests/fixtures/reference/triton_attention.yaml"))["fa2_paper"]
    stated = paper["triton_vs_flash2"]
    low = stated["flash2_over_triton_forward"]["low"]
    high = stated["flash2_over_triton_forward"]["high"]
    forward = 1.0 / math.sqrt(low * high)
    backward = 1.0 / stated["flash2_over_triton_backward"]["around"]
    print(f"forward  triton / flash2 = {forward:.3f}  (stated range {1 / high:.3f}-{1 / low:.3f})")
    print(f"backward triton / flash2 = {backward:.3f}")

    fwd_eta = FLASH2_ETA_AMPERE[0] * forward
    bwd_eta = FLASH2_ETA_AMPERE[1] * backward
    fa1 = paper["flash1_fraction_of_peak"]
    print(f"A100 triton forward eta {fwd_eta:.3f} (FlashAttention-1: {fa1['forward']['low']}-{fa1['forward']['high']})")
    print(f"A100 triton backward eta {bwd_eta:.3f} (FlashAttention-1: {fa1['backward']['low']}-{fa1['backward']['high']})")
    flash2 = fwd_bwd_eta(*FLASH2_ETA_AMPERE)
    flash1 = flash2 / paper["flash1_vs_flash2"]["flash2_over_flash1"]["around"]
    triton = fwd_bwd_eta(fwd_eta, bwd_eta)
    print(f"A100 forward + backward: flash2 {flash2:.3f}, flash1 (flash2 / 2) {flash1:.3f}, "
          f"triton {triton:.3f} ({triton / flash1 - 1:+.1%} against flash1)")


if __name__ == "__main__":
    main()
