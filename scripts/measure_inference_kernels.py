#!/usr/bin/env python3
"""Measures the kernels an inference decode step is made of, on the local GPU, with PyTorch.

What it times (CUDA events, median of repeated runs after warm-up; operands far larger than L2,
so every run streams them from HBM):
  linear   F.linear(x, W) with W of n x k in BF16, x of m x k: the weight-streaming GEMMs of a
           decode step for batch m (Llama 70B's projection shapes at TP 1)
  decode   F.scaled_dot_product_attention with one query per sequence over a cached context
           (MHA and GQA): the paged-attention read of a decode step
  copy     y.copy_(x) of a 2 GiB tensor: the STREAM-copy bandwidth
Writes one JSON file (argv[1]) with provenance (torch/CUDA versions, device, clocks) and, for
each point, inputs, bytes, FLOPs and time statistics. Used for the inference streaming-bandwidth
constants (model/inference_parameters.h) and tests/fidelity/inference_kernels_test.cpp.
"""
import json
import platform
import statistics
import subprocess
import sys
import time


def main(path):
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    out = {
        "schema": "stepcast.torch_inference_kernels/1",
        "provenance": {
            "argv": sys.argv,
            "script": "scripts/measure_inference_kernels.py",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "device": props.name,
            "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "python": platform.python_version(),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
        "points": [],
    }
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        out["provenance"]["nvidia_smi"] = smi.stdout.strip()
    except Exception as e:  # noqa: BLE001 - provenance only
        out["provenance"]["nvidia_smi"] = f"unavailable: {e}"

    def save():
        with open(path, "w") as f:
            json.dump(out, f, indent=1)

    def timed(fn, repeats=25, warmup=5):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
        return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), "samples": len(times)}

    # Weight-streaming GEMMs: Llama 2/3 70B at TP 1 (QKV 8192 -> 10240, out 8192 -> 8192,
    # FC1 8192 -> 2 x 28672, FC2 28672 -> 8192), batch m.
    for (k, n, name) in [(8192, 10240, "qkv"), (8192, 57344, "fc1"), (28672, 8192, "fc2")]:
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        for m in [1, 8, 32, 64, 128, 256]:
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            stats = timed(lambda: F.linear(x, w))
            out["points"].append({"kind": "linear", "name": name, "dtype": "bf16", "m": m, "n": n, "k": k,
                                  "bytes": 2 * (n * k + m * k + m * n), "flops": 2 * m * n * k, **stats})
            save()
        del w
    torch.cuda.empty_cache()

    # Decode attention: one query per sequence over `context` cached tokens, head dim 128.
    for (batch, heads, kv_heads, context) in [(64, 32, 32, 4096), (64, 64, 8, 4096), (256, 64, 8, 1024), (16, 64, 8, 16384)]:
        q = torch.randn(batch, heads, 1, 128, device=dev, dtype=torch.bfloat16)
        kk = torch.randn(batch, kv_heads, context, 128, device=dev, dtype=torch.bfloat16)
        vv = torch.randn(batch, kv_heads, context, 128, device=dev, dtype=torch.bfloat16)
        gqa = heads != kv_heads
        fn = (lambda: F.scaled_dot_product_attention(q, kk, vv, enable_gqa=True)) if gqa else \
             (lambda: F.scaled_dot_product_attention(q, kk, vv))
        try:
            stats = timed(fn)
        except Exception as e:  # noqa: BLE001 - record and continue
            out["points"].append({"kind": "decode", "batch": batch, "heads": heads, "kv_heads": kv_heads,
                                  "context": context, "error": str(e)[:200]})
            save()
            continue
        kv_bytes = 2 * batch * kv_heads * context * 128 * 2
        out["points"].append({"kind": "decode", "batch": batch, "heads": heads, "kv_heads": kv_heads,
                              "head_dim": 128, "context": context, "dtype": "bf16", "kv_bytes": kv_bytes,
                              "bytes": kv_bytes + 2 * batch * heads * 128 * 2,
                              "flops": 4 * batch * heads * context * 128, **stats})
        save()
        del q, kk, vv
        torch.cuda.empty_cache()

    # STREAM copy: 2 GiB read + 2 GiB written.
    x = torch.empty(1 << 30, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    stats = timed(lambda: y.copy_(x), repeats=15)
    out["points"].append({"kind": "copy", "bytes": 2 * x.numel() * 2, **stats})
    save()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "inference_kernels.json")
