#!/usr/bin/env python3
"""Times torch SDPA's FlashAttention-2 backend against its cuDNN backend at training shapes, on one GPU.

Causal, BF16, head dim 128, q/k/v of shape [b, h, s, d] with h query and key/value heads, for
(b, h, s) = (8, 32, 2048), (4, 32, 4096), (2, 32, 8192), (1, 32, 16384), (1, 32, 32768),
(1, 64, 8192) (the per-GPU calls of 8B-405B Llama training at 2K-32K tokens) and (1, 16, 4096)
(one of the small shapes of h200_torch_kernels_2026-11-29.json). Forward: one
F.scaled_dot_product_attention call; backward: torch.autograd.grad of its output. Timing: CUDA
events around one call, median of 15 after 3 warm-ups (every call here runs 0.17-70 ms).
FLOPs: causal 0.5 x 4 b h s^2 d forward, 2.5x that backward.

It is the check of model/cost_parameters.h flash2_fwd_ratio_hopper / flash2_bwd_ratio_hopper
(FlashAttention-2 over cuDNN) at training shapes, and of the cuDNN rates against the harness's own
cuDNN SDPA points (scripts/fit_flash_etas.py).

Usage: python3 scripts/measure_sdpa_backends.py OUT.json
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(8, 32, 2048), (4, 32, 4096), (2, 32, 8192), (1, 32, 16384), (1, 32, 32768), (1, 64, 8192),
          (1, 16, 4096)]


def timed(fn, repeats=15, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    records = []
    for b, h, s in SHAPES:
        q, k, v = [torch.randn(b, h, s, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3)]
        flops = 0.5 * 4 * b * h * s * s * 128
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            try:
                with sdpa_kernel([backend]):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    do = torch.randn_like(o)
                    tf = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                    tb = timed(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
                records.append(dict(backend=backend.name, b=b, h=h, s=s, d=128, causal=True, fwd_s=tf, bwd_s=tb,
                                    fwd_tflops=flops / tf / 1e12, bwd_tflops=2.5 * flops / tb / 1e12))
                print(records[-1])
            except Exception as ex:  # a backend the build lacks
                print(backend.name, b, h, s, "failed", ex)
        del q, k, v
    meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda,
                cudnn=torch.backends.cudnn.version(),
                timing="CUDA events around one call, median of 15 after 3 warm-ups; random bf16; "
                       "backward = torch.autograd.grad of the SDPA output",
                flops="causal: 0.5*4*b*h*s^2*d forward, 2.5x backward")
    with open(sys.argv[1], "w") as f:
        json.dump(dict(meta, records=records), f, indent=1)


if __name__ == "__main__":
    main()
