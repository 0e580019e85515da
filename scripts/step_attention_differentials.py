#!/usr/bin/env python3
"""How fast attention runs inside whole training steps, read from cuDNN's Llama 3.2 1B benchmark.

Usage:
    python3 scripts/step_attention_differentials.py build/bin/stepcast [--constant NAME=VALUE ...]
    python3 scripts/step_attention_differentials.py build/bin/stepcast --steps FILE.json [--constant ...]

With --steps, the points are our own: a stepcast-torch-training-steps file written by
`scripts/measure_torch_training_step.py --set third` (equal-token groups per SDPA backend, head dim 128
and 64), mapped as tests/fidelity/h200_training_step_test.cpp maps that script's steps.

tests/fixtures/reference/cudnn_frontend_llama32_1b_training.yaml holds whole training iterations of
Hugging Face's Llama 3.2 1B on one B200 and one H200 (NGC PyTorch 25.04: cuDNN 9.9, PyTorch 2.7), at
batch x sequence 24 x 768 ... 1 x 16384, per SDPA backend. Within a group of equal token count
(12 x 1024, 6 x 2048, 3 x 4096: 12288 tokens; 2 x 8192, 1 x 16384: 16384 tokens) the GEMMs, norms,
loss and optimizer do the same work, so the difference between two points is the change in attention's
cost alone (causal attention work grows with tokens x sequence). The script predicts every point with
stepcast and prints, per GPU and backend, the error of each whole step and the ratio of the predicted
to the measured difference: above 1, stepcast prices attention inside these steps too slowly.

Mapping (one line per field): model llama3-8b's preset with Llama 3.2 1B's sizes (16 layers, hidden
2048, 32 heads, 8 KV heads, FFN 8192, tied embeddings); one GPU; every tensor BF16, no master copy
(the benchmark's SGD keeps no state; stepcast prices an Adam-style update, a few ms here, which
cancels in a difference); kernels eager, repeat_kv (Hugging Face repeats K/V before SDPA),
cross_entropy_fusion pytorch; attention_kernel best for CUDNN_ATTENTION, flash2 for FLASH_ATTENTION
(EFFICIENT_ATTENTION has no stepcast kernel). Clocks: the benchmark locked the SM clock (B200 1665 MHz,
H200 1500 MHz); the GPU's sustained_clock_fraction is set to that clock over the clock its datasheet
dense BF16 peak implies (H200: 989.5 TFLOP/s / (132 SMs x 4096 FLOP/clock) = 1830 MHz; B200:
2250 TFLOP/s / (148 SMs x 8192) = 1856 MHz), so compute-bound kernels run at the locked clock.

Caveat: Llama 3.2 1B's heads are 64 wide, so these differences test stepcast's head-dim-64 attention
(model/op_time.h flash_head_dim_efficiency; exponential-bound on Blackwell), not only the head-dim-128
etas; and they confound attention's absolute speed with its change along the sequence.
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests/fixtures/reference/cudnn_frontend_llama32_1b_training.yaml")

# system preset, GPU preset, datasheet-implied peak clock (MHz); see the docstring.
GPUS = {
    "h200": ("hgx-h200", "h200-sxm-141gb", 989.5e12 / (132 * 4096) / 1e6),
    "b200": ("dgx-b200", "b200", 2250e12 / (148 * 8192) / 1e6),
}
KERNELS = {"cudnn": "best", "flash": "flash2"}
# Pairs of equal token count: (shorter sequence, longer sequence).
PAIRS = [(1024, 4096), (1024, 2048), (2048, 4096), (8192, 16384)]
# Llama 3.2 1B's layer sizes over llama3-8b's preset (Hugging Face meta-llama/Llama-3.2-1B config).
LLAMA32_1B = "hidden: 2048, heads: 32, kv_heads: 8, ffn_hidden: 8192"


def scenario(gpu, locked_mhz, batch, seq, kernel):
    system, gpu_preset, peak_mhz = GPUS[gpu]
    return (
        "schema_version: 1\n"
        f"model: {{preset: llama3-8b, layers: 16, {LLAMA32_1B}, tied_embeddings: true}}\n"
        f"system: {{preset: {system}, gpus: 1, gpu: {{preset: {gpu_preset},"
        f" sustained_clock_fraction: {locked_mhz / peak_mhz:.4f}}}}}\n"
        f"training: {{seq_len: {seq}, global_batch: {batch}, micro_batch: {batch},"
        f" cross_entropy_fusion: pytorch, attention_kernel: {kernel}, repeat_kv: true, kernels: eager}}\n"
        "parallel: {dp: 1}\n"
        "precision: {compute: bf16, params: bf16, grads: bf16, optimizer: bf16, master_weights: false}\n")


def predict(cli, text, extra):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        out = subprocess.run([cli, "predict", path, "--format", "json", *extra],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)["step_time_s"]


def print_points(header, points, pairs):
    """points: {seq: (batch, measured_s, predicted_s)}; pairs: (shorter, longer) sequences of equal tokens."""
    print(header)
    for seq in sorted(points):
        batch, measured, predicted = points[seq]
        print(f"  {batch:2d} x {seq:5d}: measured {1e3 * measured:7.1f} ms  predicted"
              f" {1e3 * predicted:7.1f} ms  {100 * (predicted / measured - 1):+6.1f}%")
    for lo, hi in pairs:
        dm, dp = points[hi][1] - points[lo][1], points[hi][2] - points[lo][2]
        print(f"  attention difference {lo:5d} -> {hi:5d}: measured {1e3 * dm:6.1f} ms  predicted"
              f" {1e3 * dp:6.1f} ms  ratio {dp / dm:.2f}")


# Our own measured steps (scripts/measure_torch_training_step.py): the script's model per shape name,
# as the stepcast model preset and its overrides.
OWN_MODELS = {
    "llama3-8b": "{preset: llama3-8b, layers: %d}",
    "llama3.2-1b": "{preset: llama3-8b, layers: %d, " + LLAMA32_1B + "}",
}


def own_scenario(run):
    ac = run["ac"]
    return (
        "schema_version: 1\n"
        f"model: {OWN_MODELS[run.get('model', 'llama3-8b')] % run['layers']}\n"
        "system: {preset: hgx-h200, gpus: 1}\n"
        f"training: {{seq_len: {run['seq_len']}, global_batch: {run['micro_batch']}, micro_batch: {run['micro_batch']},"
        f" cross_entropy_fusion: pytorch, attention_kernel: {'flash2' if run['attention'] == 'flash' else 'best'},"
        " repeat_kv: true, kernels: eager}\n"
        f"parallel: {{dp: 1, zero: 3, fsdp: fsdp2, recompute: {ac}{', checkpoint: pytorch' if ac == 'full' else ''}}}\n"
        "precision: {compute: bf16, params: fp32, grads: fp32, optimizer: fp32, master_weights: false}\n")


def own_steps(cli, path, extra):
    doc = json.load(open(path))
    print(f"{path}: {doc['provenance']['gpu']}, cuDNN {doc['provenance']['cudnn']}, torch {doc['provenance']['torch']}")
    groups = {}
    for run in doc["runs"]:
        if run["ac"] != "none":
            continue
        key = (run.get("model", "llama3-8b"), run["layers"], run["attention"], run["micro_batch"] * run["seq_len"])
        groups.setdefault(key, {})[run["seq_len"]] = (run["micro_batch"], run["median_step_s"],
                                                       predict(cli, own_scenario(run), extra))
    for (model, layers, attention, tokens), points in sorted(groups.items()):
        seqs = sorted(points)
        print_points(f"{model} x{layers} blocks, {attention}, {tokens} tokens", points, list(zip(seqs, seqs[1:])))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cli, extra = sys.argv[1], sys.argv[2:]
    if "--steps" in extra:
        i = extra.index("--steps")
        if i + 1 >= len(extra):
            sys.exit("--steps needs a file")
        path = extra[i + 1]
        own_steps(cli, path, extra[:i] + extra[i + 2:])
        return
    data = yaml.safe_load(open(FIXTURE))
    clocks = {g: v["sm_clock_locked_mhz"] for g, v in data["meta"]["gpus"].items()}
    for gpu in ("h200", "b200"):
        rows = {r["seq"]: r for r in data["rows"] if r["gpu"] == gpu}
        for backend, kernel in KERNELS.items():
            if gpu == "b200" and kernel == "flash2":
                continue  # stepcast has no FlashAttention-2 figure for Blackwell (flash2_priced)
            points = {s: (r["batch"], r[backend], predict(cli, scenario(gpu, clocks[gpu], r["batch"], s, kernel), extra))
                      for s, r in rows.items()}
            print_points(f"{gpu} {backend} (attention_kernel {kernel}), SM clock {clocks[gpu]} MHz", points, PAIRS)


if __name__ == "__main__":
    main()
