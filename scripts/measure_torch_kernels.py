#!/usr/bin/env python3
"""Measures, on one GPU through PyTorch eager, the kernels a Megatron-style training step spends its
time in, and writes their achieved rates next to the figures stepcast's cost model uses
(model/cost_parameters.h): GEMM efficiency at training shapes (burst and sustained), the bandwidth
efficiency of the memory-bound kernels (norm, dropout, GELU, residual add, softmax, cross-entropy),
and fused attention (flash and cuDNN backends of scaled_dot_product_attention), forward and backward.

Bytes are counted the way model/layer_ops.cpp counts them (inputs read once, outputs written once),
FLOPs as the kernel's real work (a causal attention kernel does half the s^2 term; its backward
2.5x its forward). Timing: CUDA events, warm-up, median of repeats; inputs are random (never zeros),
larger than L2.

Usage: python3 scripts/measure_torch_kernels.py --out FILE.json [--peak-tflops 989.4]
       [--hbm-gbps 4800] [--sustain-seconds 8] [--gemm-grid]
--gemm-grid measures only a grid of bf16 GEMM shapes (rows x columns x reduction depth) and a few
FP8 GEMMs (torch._scaled_mm), to fit the GEMM shape terms.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, repeats=20, warmup=5):
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


def rand(*shape, dtype=torch.bfloat16, requires_grad=False):
    return torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=requires_grad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--peak-tflops", type=float, default=989.4, help="datasheet dense bf16 peak")
    ap.add_argument("--hbm-gbps", type=float, default=4800.0, help="datasheet HBM bandwidth")
    ap.add_argument("--sustain-seconds", type=float, default=8.0)
    ap.add_argument("--gemm-grid", action="store_true")
    ap.add_argument("--fp8-peak-tflops", type=float, default=1978.9)
    args = ap.parse_args()
    peak = args.peak_tflops * 1e12
    hbm = args.hbm_gbps * 1e9
    records = []

    def record(kind, name, seconds, flops=0.0, bytes_=0.0, **extra):  # noqa: PLR0913
        r = dict(kind=kind, name=name, seconds=seconds, flops=flops, bytes=bytes_,
                 tflops=flops / seconds / 1e12 if flops else None,
                 gbps=bytes_ / seconds / 1e9 if bytes_ else None,
                 eta_compute=flops / seconds / peak if flops else None,
                 eta_hbm=bytes_ / seconds / hbm if bytes_ else None, **extra)
        records.append(r)
        tf = f"{r['tflops']:8.1f} TF/s ({100 * r['eta_compute']:5.1f}%)" if flops else " " * 24
        bw = f"{r['gbps']:8.1f} GB/s ({100 * r['eta_hbm']:5.1f}%)" if bytes_ else ""
        print(f"{kind:10s} {name:44s} {seconds * 1e3:9.3f} ms {tf} {bw}", flush=True)

    # Ceilings: a large device copy; a large bf16 GEMM.
    x = rand(1024 * 1024 * 1024)  # 2 GiB bf16
    y = torch.empty_like(x)
    record("ceiling", "copy 2 GiB (read + write)", timed(lambda: y.copy_(x), 10), bytes_=2 * x.numel() * 2)
    del x, y
    a = rand(8192, 8192)
    b = rand(8192, 8192)
    record("ceiling", "bf16 matmul 8192^3", timed(lambda: a @ b), flops=2 * 8192 ** 3)

    if args.gemm_grid:
        for m in (2048, 4096, 8192, 16384):
            for n in (2048, 4608, 8192, 12288):
                for k in (1024, 2048, 4096, 8192, 12288):
                    xa = rand(m, k)
                    w = rand(n, k)
                    record("gemm", f"grid m={m} n={n} k={k}", timed(lambda: F.linear(xa, w)), flops=2.0 * m * n * k,
                           bytes_=2.0 * (m * k + n * k + m * n), m=m, n=n, k=k)
        fp8 = torch.float8_e4m3fn
        for m, n, k in ((4096, 6144, 12288), (4096, 12288, 6144), (8192, 8192, 8192), (4096, 4608, 2048)):
            xa = rand(m, k).to(fp8)
            w = rand(n, k).to(fp8)
            one = torch.tensor(1.0, device="cuda")
            try:
                t = timed(lambda: torch._scaled_mm(xa, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                record("gemm_fp8", f"fp8 e4m3 m={m} n={n} k={k}", t, flops=2.0 * m * n * k, m=m, n=n, k=k,
                       eta_fp8=2.0 * m * n * k / t / (args.fp8_peak_tflops * 1e12))
            except Exception as ex:
                print(f"gemm_fp8 unavailable ({ex})", flush=True)
        finish(args, records)
        return

    # GEMMs at training shapes: y = x W^T (torch.nn.functional.linear), x: [T, k], W: [n, k].
    def gemm(name, m, n, k):
        xa = rand(m, k)
        w = rand(n, k)
        t = timed(lambda: F.linear(xa, w))
        record("gemm", f"{name} m={m} n={n} k={k}", t, flops=2.0 * m * n * k, bytes_=2.0 * (m * k + n * k + m * n))

    for name, m, n, k in [("1.7B qkv", 4096, 6144, 2048), ("1.7B out_proj", 4096, 2048, 2048),
                          ("1.7B fc1", 4096, 8192, 2048), ("1.7B fc2", 4096, 2048, 8192),
                          ("1.7B logits", 4096, 131072, 2048),
                          ("177B/tp8 qkv", 4096, 4608, 12288), ("177B/tp8 out_proj", 4096, 12288, 1536),
                          ("177B/tp8 fc1", 4096, 6144, 12288), ("177B/tp8 fc2", 4096, 12288, 6144),
                          ("GPT-3 A100-shape fc1 b=8", 16384, 3072, 6144)]:
        gemm(name, m, n, k)

    # Sustained: the same GEMM back to back for a few seconds, the last fifth's rate over the burst
    # rate: the clock a step-long load holds (model/cost_parameters.h sustained_derate). BF16, then
    # the same shape in FP8 (torch._scaled_mm, E4M3): FP8 tensor cores move twice the operations per
    # clock, so whether they hold the BF16 clock under the power limit is measured, not assumed.
    def sustained(kind, burst_name, sustained_name, fn, flops):
        burst = timed(fn)
        t0 = time.time()
        rates = []
        while time.time() - t0 < args.sustain_seconds:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                fn()
            end.record()
            end.synchronize()
            rates.append(20 * flops / (start.elapsed_time(end) / 1e3))
        tail = rates[-max(1, len(rates) // 5):]
        # eta_compute is against the BF16 peak; an FP8 record also carries its rate over the FP8 peak.
        fp8_eta = (lambda seconds: dict(eta_fp8=flops / seconds / (args.fp8_peak_tflops * 1e12))) if kind == "gemm_fp8" \
            else (lambda seconds: {})
        record(kind, burst_name, burst, flops=flops, **fp8_eta(burst))
        held = flops / statistics.median(tail)
        record(kind, sustained_name, held, flops=flops, sustained_over_burst=statistics.median(tail) / (flops / burst),
               **fp8_eta(held))

    xa = rand(4096, 12288)
    w = rand(24576, 12288)
    flops = 2.0 * 4096 * 24576 * 12288
    seconds = f"{args.sustain_seconds:.0f} s"
    sustained("gemm", "burst fc-shaped 4096x24576x12288", f"sustained {seconds} (last fifth)", lambda: F.linear(xa, w),
              flops)
    try:
        xf = xa.to(torch.float8_e4m3fn)
        wf = w.to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        sustained("gemm_fp8", "burst fp8 e4m3 4096x24576x12288", f"sustained {seconds} fp8 e4m3 (last fifth)",
                  lambda: torch._scaled_mm(xf, wf.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), flops)
        del xf, wf
    except Exception as ex:  # noqa: BLE001 (no FP8 GEMM on this GPU or build)
        print(f"sustained fp8 unavailable ({ex})", flush=True)
    del xa, w

    # Memory-bound kernels on [16384, 8192] bf16 (256 MiB, well past L2).
    T, H = 16384, 8192
    e = 2
    xin = rand(T, H, requires_grad=True)
    gamma = rand(H, requires_grad=True)
    beta = rand(H, requires_grad=True)
    dy = rand(T, H)
    out = F.layer_norm(xin, (H,), gamma, beta)
    record("memory", "layer_norm forward", timed(lambda: F.layer_norm(xin, (H,), gamma, beta)), bytes_=2 * T * H * e)
    record("memory", "layer_norm backward", timed(lambda: torch.autograd.grad(out, (xin, gamma, beta), dy, retain_graph=True)),
           bytes_=3 * T * H * e)
    xd = rand(T, H)
    record("memory", "dropout p=0.1 forward (out + mask)", timed(lambda: torch.nn.functional.dropout(xd, 0.1, True)),
           bytes_=T * H * (2 * e + 1))
    xg = rand(T, H, requires_grad=True)
    gout = F.gelu(xg, approximate="tanh")
    record("memory", "gelu(tanh) forward", timed(lambda: F.gelu(xg, approximate="tanh")), bytes_=2 * T * H * e)
    record("memory", "gelu(tanh) backward", timed(lambda: torch.autograd.grad(gout, xg, dy, retain_graph=True)),
           bytes_=3 * T * H * e)
    r1 = rand(T, H)
    r2 = rand(T, H)
    record("memory", "residual add", timed(lambda: r1 + r2), bytes_=3 * T * H * e)
    # Unfused attention scores: softmax over [b*a, s, s].
    sc = rand(24, 2048, 2048, requires_grad=True)
    sm = torch.softmax(sc, dim=-1)
    dsm = rand(24, 2048, 2048)
    n = sc.numel()
    record("memory", "softmax forward [24, 2048, 2048]", timed(lambda: torch.softmax(sc, dim=-1)), bytes_=2 * n * e)
    record("memory", "softmax backward", timed(lambda: torch.autograd.grad(sm, sc, dsm, retain_graph=True)), bytes_=3 * n * e)
    del xin, gamma, beta, dy, out, xd, xg, gout, r1, r2, sc, sm, dsm
    # Cross-entropy in FP32 over a 131072 vocabulary.
    logits = rand(4096, 131072, requires_grad=True)
    labels = torch.randint(0, 131072, (4096,), device="cuda")
    loss = F.cross_entropy(logits.float(), labels)
    record("memory", "cross_entropy fp32 forward (4096 x 131072)", timed(lambda: F.cross_entropy(logits.float(), labels), 10),
           bytes_=4096 * 131072 * (e + 4 + 4))
    record("memory", "cross_entropy fp32 backward", timed(lambda: torch.autograd.grad(loss, logits, retain_graph=True), 10),
           bytes_=4096 * 131072 * (4 + 4 + e))
    del logits, loss

    # Fused attention, causal, bf16, [b, heads, s, d].
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        for b_, h_, s_, d_ in [(1, 16, 4096, 128), (1, 32, 4096, 128), (4, 16, 2048, 128)]:
            q = rand(b_, h_, s_, d_, requires_grad=True)
            k = rand(b_, h_, s_, d_, requires_grad=True)
            v = rand(b_, h_, s_, d_, requires_grad=True)
            fwd_flops = 0.5 * 4.0 * b_ * h_ * s_ * s_ * d_
            try:
                with sdpa_kernel([backend]):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    do = rand(*o.shape)
                    tf = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                    tb = timed(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
                record("attention", f"{backend.name} fwd b={b_} h={h_} s={s_} d={d_}", tf, flops=fwd_flops)
                record("attention", f"{backend.name} bwd b={b_} h={h_} s={s_} d={d_}", tb, flops=2.5 * fwd_flops)
            except Exception as ex:  # a backend the build lacks
                print(f"attention  {backend.name}: unavailable ({ex})", flush=True)
            del q, k, v

    finish(args, records)


def finish(args, records):
    meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda,
                cudnn=torch.backends.cudnn.version(), sm_count=torch.cuda.get_device_properties(0).multi_processor_count,
                peak_tflops_datasheet=args.peak_tflops, hbm_gbps_datasheet=args.hbm_gbps,
                argv=sys.argv, timing="CUDA events, median of repeats after warm-up; random bf16 inputs")
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, records=records), f, indent=1)


if __name__ == "__main__":
    main()
