#!/usr/bin/env python3
"""Fits stepcast's default GEMM efficiency curve to tests/fixtures/reference/gemm_measurements.yaml.

The curve (model/gemm_efficiency.h) is

    t = max(2*batch*m*n*k / (peak * eta_max * wave_tile(m, n)) + t_gap, t_host)

where wave_tile is the best tile-quantization x wave-quantization efficiency over the CTA tiles
128x256, 256x128 and 128x128 on the GPU's SMs (128x256x64 is CUTLASS' SM80 default
ThreadblockShape, include/cutlass/gemm/device/default_gemm_configuration.h; cuBLAS chooses among
several tiles, so the best of a few is closer to it than one fixed tile). t_gap (the per-kernel
start/tail cost on the GPU) and t_host (the host's per-op dispatch, which bounds back-to-back small
ops from below) are shared by every GPU; eta_max is fitted per GPU and input type. stepcast
takes t_gap and t_host from this fit (model/cost_parameters.h kernel_gap_s, host_dispatch_s); its
per-architecture eta is each GPU's best measured row over its peak (burst efficiency), with the
sustained-load derate taken separately from the largest rows. Rows used: every `kind: gemm` row with explicit
m, n, k whose GPU's dense tensor-core peak is in the table below (datasheet figures), tensor-core
types only (bf16, fp16, tf32). Prints the fitted constants and each row's error.

The reduction-depth term k / (k + k_half) (model/cost_parameters.h gemm_k_half) cannot be told
apart from the kernel gap on square shapes; --grid fits it on our H200 GEMM grid
(tests/fixtures/measured/h200_gemm_grid_2026-11-29.json), calls of >= 0.3 ms only (shorter ones
carry the host's launch latency, each having been timed alone), with one eta for the machine.

Usage: scripts/fit_gemm_defaults.py [path/to/gemm_measurements.yaml]
       scripts/fit_gemm_defaults.py --grid [path/to/h200_gemm_grid.json]
Pure Python + PyYAML (python3-yaml); a grid search, because the problem is three numbers.
"""
import math
import sys

import yaml

# Dense tensor-core peaks (TFLOP/s) and SM counts. H100 SXM/PCIe and A100 from
# tests/fixtures/reference/published_runs.yaml `hardware`; H800 PCIe is the H100 PCIe die with
# reduced NVLink (same SMs and clocks).
GPUS = {
    "NVIDIA H100 80GB HBM3": dict(sms=132, bf16=989.4, fp16=989.4, tf32=494.7),
    "NVIDIA H100 PCIe": dict(sms=114, bf16=756.0, fp16=756.0, tf32=378.0),
    "NVIDIA H800 PCIe": dict(sms=114, bf16=756.0, fp16=756.0, tf32=378.0),
    "NVIDIA A100-PCIE-40GB": dict(sms=108, bf16=312.0, fp16=312.0, tf32=156.0),
    "NVIDIA H100 (variant not stated)": dict(sms=132, bf16=989.4, fp16=989.4, tf32=494.7),
}
TILES = ((128, 256), (256, 128), (128, 128))


def wave_tile(m, n, sms):
    best = 0.0
    for tm, tn in TILES:
        tiles_m = math.ceil(m / tm)
        tiles_n = math.ceil(n / tn)
        tile_eff = (m * n) / (tiles_m * tm * tiles_n * tn)
        tiles = tiles_m * tiles_n
        waves = math.ceil(tiles / sms)
        best = max(best, tile_eff * tiles / (waves * sms))
    return best


def rows(path):
    data = yaml.safe_load(open(path))
    for r in data["gemm"]:
        if r.get("kind") != "gemm" or not isinstance(r.get("m"), int):
            continue
        gpu = GPUS.get(r["gpu"])
        dtype = r["dtype_inputs"]
        if gpu is None or dtype not in ("bf16", "fp16", "tf32"):
            continue
        if r["id"] == "mleng_swiglu_h100_dff10922":
            continue  # k = 10922 is not a multiple of 8: misaligned loads, a different kernel
        yield dict(id=r["id"], gpu=r["gpu"], dtype=dtype, sms=gpu["sms"], peak=gpu[dtype] * 1e12,
                   batch=r.get("batch", 1), m=r["m"], n=r["n"], k=r["k"], tflops=r["tflops"])


def predict(r, eta, gap, host):
    flops = 2.0 * r["batch"] * r["m"] * r["n"] * r["k"]
    t = max(flops / (r["peak"] * eta * wave_tile(r["m"], r["n"], r["sms"])) + gap, host)
    return flops / t / 1e12


def fit(data):
    groups = sorted({(r["gpu"], r["dtype"]) for r in data})
    best = None
    for gap_us in [x * 0.5 for x in range(0, 13)]:
        for host_us in range(0, 21):
            total = 0.0
            etas = {}
            for g in groups:
                members = [r for r in data if (r["gpu"], r["dtype"]) == g]
                best_g = None
                for eta_i in range(40, 101):
                    eta = eta_i / 100
                    err = sum(math.log(predict(r, eta, gap_us * 1e-6, host_us * 1e-6) / r["tflops"]) ** 2 for r in members)
                    if best_g is None or err < best_g[0]:
                        best_g = (err, eta)
                total += best_g[0]
                etas[g] = best_g[1]
            if best is None or total < best[0]:
                best = (total, gap_us, host_us, etas)
    return best


def fit_grid(path):
    import json
    import re
    rows = []
    for r in json.load(open(path))["records"]:
        m = re.search(r"grid m=(\d+) n=(\d+) k=(\d+)", r["name"])
        if r["kind"] != "gemm" or not m or r["seconds"] < 3e-4:
            continue
        mm, n, k = map(int, m.groups())
        rows.append(dict(m=mm, n=n, k=k, tflops=r["tflops"], sms=132, peak=989.4e12))
    best = None
    for k_half in range(0, 801, 32):
        for eta_i in range(100, 201):
            eta = eta_i / 200
            err = 0.0
            for r in rows:
                flops = 2.0 * r["m"] * r["n"] * r["k"]
                t = flops / (r["peak"] * eta * wave_tile(r["m"], r["n"], r["sms"]) * r["k"] / (r["k"] + k_half))
                err += math.log(flops / t / 1e12 / r["tflops"]) ** 2
            if best is None or err < best[0]:
                best = (err, k_half, eta)
    err, k_half, eta = best
    print(f"grid rows: {len(rows)}  k_half: {k_half}  eta: {eta:.3f}  rms log error: {math.sqrt(err / len(rows)):.3f}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--grid":
        fit_grid(sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/measured/h200_gemm_grid_2026-11-29.json")
        return
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/reference/gemm_measurements.yaml"
    data = list(rows(path))
    total, gap_us, host_us, etas = fit(data)
    print(f"rows: {len(data)}  gap_us: {gap_us}  host_us: {host_us}  rms log error: {math.sqrt(total / len(data)):.3f}")
    for g, eta in etas.items():
        print(f"  eta_max {g[0]} {g[1]}: {eta:.2f}")
    for r in data:
        p = predict(r, etas[(r['gpu'], r['dtype'])], gap_us * 1e-6, host_us * 1e-6)
        print(f"  {r['id']:40s} measured {r['tflops']:8.1f}  predicted {p:8.1f}  error {100 * (p / r['tflops'] - 1):+6.1f}%")


if __name__ == "__main__":
    main()
