#!/usr/bin/env python3
"""Measures whole training steps of a Llama-3-8B-shaped model (fewer layers) on one GPU, written
the way torchtitan wrote its Llama in late 2024 (plain PyTorch modules, run eagerly), so that
stepcast's prediction of the same scenario can be checked against a real step: every GEMM,
attention kernel, eager norm/RoPE/SwiGLU kernel, the loss, gradient clipping and the optimizer.

What it runs (torchtitan torchtitan/models/llama/model.py and train.py of that period, as
tests/fixtures/reference/published_memory.yaml maps torchtitan's published runs):
  RMSNorm   `(x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * weight`
  RoPE      through complex64 views of Q and K (precompute_freqs_cis / apply_rotary_emb)
  attention wq/wk/wv/wo without bias, K and V repeated to every query head (repeat_kv), then
            F.scaled_dot_product_attention(is_causal=True) on the backend named by --attention
  FFN       w2(silu(w1 x) * w3 x)
  loss      F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
  FSDP2     fully_shard per block and at the root on one rank, MixedPrecisionPolicy(param_dtype
            bf16, reduce_dtype fp32): FP32 parameters, gradients and AdamW moments, BF16 compute
  step      clip_grad_norm_(max_norm 1.0, foreach), AdamW(lr 8e-4, foreach), zero_grad
  AC        none; full: every block wrapped in non-reentrant checkpointing; selective_op:
            torchtitan's per-op policy (every matmul output but every second one, SDPA and max kept)
  compile   (runs that say so) torch.compile(fullgraph=True) on each block, as torchtitan does
Timing: torch.cuda.synchronize() around each step, warm-up steps, then the median of the timed
steps; peak memory is torch.cuda.max_memory_reserved / allocated over the timed steps.

Usage: python3 scripts/measure_torch_training_step.py --out FILE.json [--git-sha SHA] [--quick]
Each configuration runs in its own try block: one failure is recorded and the rest still run.
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

# Llama 3 8B and 70B (Llama 3 paper Table 3; scenarios/catalog/models.yaml llama3-8b, llama3-70b).
SHAPES = {
    "llama3-8b": {"dim": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336},
    "llama3-70b": {"dim": 8192, "heads": 64, "kv_heads": 8, "ffn": 28672},
    # Llama 3.2 1B's layer (Hugging Face meta-llama/Llama-3.2-1B config: hidden 2048, 32/8 heads, so
    # head dim 64, intermediate 8192): the shape of cuDNN's own training benchmark
    # (tests/fixtures/reference/cudnn_frontend_llama32_1b_training.yaml), here with untied embeddings.
    "llama3.2-1b": {"dim": 2048, "heads": 32, "kv_heads": 8, "ffn": 8192},
}
VOCAB, ROPE_THETA, NORM_EPS = 128256, 500000.0, 1e-5
DIM, HEADS, KV_HEADS, FFN = 4096, 32, 8, 14336  # set per run by use_shapes()


def use_shapes(model):
    global DIM, HEADS, KV_HEADS, FFN
    d = SHAPES[model]
    DIM, HEADS, KV_HEADS, FFN = d["dim"], d["heads"], d["kv_heads"], d["ffn"]



class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(dim, end, theta):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(bs, slen, n_kv_heads * n_rep, head_dim)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = DIM // HEADS
        self.wq = nn.Linear(DIM, HEADS * self.head_dim, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wo = nn.Linear(HEADS * self.head_dim, DIM, bias=False)

    def forward(self, x, freqs_cis):
        bs, seqlen, _ = x.shape
        xq = self.wq(x).view(bs, seqlen, HEADS, self.head_dim)
        xk = self.wk(x).view(bs, seqlen, KV_HEADS, self.head_dim)
        xv = self.wv(x).view(bs, seqlen, KV_HEADS, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        keys = repeat_kv(xk, HEADS // KV_HEADS)
        values = repeat_kv(xv, HEADS // KV_HEADS)
        xq, xk, xv = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        out = F.scaled_dot_product_attention(xq, xk, xv, is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bs, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, FFN, bias=False)
        self.w2 = nn.Linear(FFN, DIM, bias=False)
        self.w3 = nn.Linear(DIM, FFN, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(DIM)
        self.ffn_norm = RMSNorm(DIM)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


# torchtitan's per-op selective checkpointing (activation_checkpoint.mode selective, option op;
# torchtitan/models/llama/parallelize_llama.py of late 2024): keep the outputs of every matmul
# but every second one, of flash/efficient SDPA and of max; recompute everything else.
def op_sac_context():
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    save = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_efficient_attention.default,
            torch.ops.aten._scaled_dot_product_flash_attention.default, torch.ops.aten.max.default}
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = f"{'recompute' if ctx.is_recompute else 'forward'}_mm_count"
        if func == torch.ops.aten.mm.default:
            meta[key] += 1
        keep = func in save and not (func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class Checkpointed(nn.Module):
    def __init__(self, block, selective_op=False):
        super().__init__()
        self.block = block
        self.selective_op = selective_op

    def forward(self, x, freqs_cis):
        if self.selective_op:
            return torch.utils.checkpoint.checkpoint(self.block, x, freqs_cis, use_reentrant=False,
                                                     preserve_rng_state=False, context_fn=op_sac_context)
        return torch.utils.checkpoint.checkpoint(self.block, x, freqs_cis, use_reentrant=False, preserve_rng_state=False)


class Transformer(nn.Module):
    def __init__(self, layers, seq_len, ac):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.register_buffer("freqs_cis", precompute_freqs_cis(DIM // HEADS, seq_len, ROPE_THETA), persistent=False)
        wrap = {"none": lambda b: b, "full": Checkpointed, "selective_op": lambda b: Checkpointed(b, selective_op=True)}[ac]
        self.layers = nn.ModuleList([wrap(Block()) for _ in range(layers)])
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.freqs_cis)
        return self.output(self.norm(h))


def init_weights(model):
    # Random normal weights (torchtitan's init_weights uses truncated normals; the values do not
    # change the kernels' time).
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)


def ensure_process_group():
    import torch.distributed as dist
    if dist.is_initialized():
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1)


def backend_context(name):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[name])


def run_config(cfg, warmup, steps):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    torch.manual_seed(0)
    use_shapes(cfg.get("model", "llama3-8b"))
    ensure_process_group()
    with torch.device("cuda"):
        model = Transformer(cfg["layers"], cfg["seq_len"], cfg["ac"])
    init_weights(model)
    if cfg.get("compile"):
        # torchtitan compiles each TransformerBlock (after AC wrapping), fullgraph.
        for i, block in enumerate(model.layers):
            model.layers[i] = torch.compile(block, fullgraph=True)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.layers:
        fully_shard(layer, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model, mp_policy=mp)
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=8e-4, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
    tokens = torch.randint(0, VOCAB, (cfg["micro_batch"], cfg["seq_len"]), device="cuda")
    labels = torch.randint(0, VOCAB, (cfg["micro_batch"], cfg["seq_len"]), device="cuda")

    def step():
        with backend_context(cfg["attention"]):
            logits = model(tokens)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
            del logits
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    out = dict(cfg)
    out.update({
        "parameters": params,
        "step_times_s": times,
        "median_step_s": statistics.median(times),
        "min_step_s": min(times),
        "tokens_per_s": cfg["micro_batch"] * cfg["seq_len"] / statistics.median(times),
        "max_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
        "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
        "final_loss": float(loss.item()),
    })
    del model, optimizer, step, tokens, labels, loss
    gc.collect()  # FSDP2's hooks hold reference cycles: free the model before the next run's peaks
    torch.cuda.empty_cache()
    return out


def nvidia_smi(query):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - provenance only
        return f"unavailable: {e}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--git-sha", default=os.environ.get("STEPCAST_GIT_SHA", "unknown"))
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="one small configuration, 2 timed steps")
    ap.add_argument("--set", default="first", choices=["first", "second", "third"],
                    help="first: the 2026-12-01 set; second: 70B shapes, per-op SAC, torch.compile, long sequences; "
                         "third: attention inside steps, equal-token pairs per SDPA backend")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device visible: nothing measured", file=sys.stderr)
        return 77

    configs = [
        {"id": "l8-s8192-b1-noac-flash", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "none", "attention": "flash"},
        {"id": "l8-s8192-b1-fullac-flash", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "full", "attention": "flash"},
        {"id": "l8-s8192-b1-noac-cudnn", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "none", "attention": "cudnn"},
        {"id": "l8-s4096-b2-noac-flash", "layers": 8, "seq_len": 4096, "micro_batch": 2, "ac": "none", "attention": "flash"},
        {"id": "l16-s8192-b1-fullac-flash", "layers": 16, "seq_len": 8192, "micro_batch": 1, "ac": "full", "attention": "flash"},
        {"id": "l4-s16384-b1-fullac-flash", "layers": 4, "seq_len": 16384, "micro_batch": 1, "ac": "full", "attention": "flash"},
    ]
    if args.set == "second":
        configs = [
            # the first set's first run again: run-to-run reproducibility
            {"id": "l8-s8192-b1-noac-flash", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "none", "attention": "flash"},
            {"id": "l8-s8192-b1-sacop-flash", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "selective_op", "attention": "flash"},
            {"id": "70b-l2-s8192-b1-noac-flash", "model": "llama3-70b", "layers": 2, "seq_len": 8192, "micro_batch": 1, "ac": "none", "attention": "flash"},
            {"id": "70b-l2-s4096-b2-fullac-cudnn", "model": "llama3-70b", "layers": 2, "seq_len": 4096, "micro_batch": 2, "ac": "full", "attention": "cudnn"},
            {"id": "l4-s32768-b1-fullac-flash", "layers": 4, "seq_len": 32768, "micro_batch": 1, "ac": "full", "attention": "flash"},
            {"id": "l8-s2048-b4-noac-cudnn", "layers": 8, "seq_len": 2048, "micro_batch": 4, "ac": "none", "attention": "cudnn"},
            {"id": "l8-s8192-b1-noac-flash-compiled", "layers": 8, "seq_len": 8192, "micro_batch": 1, "ac": "none", "attention": "flash", "compile": True},
        ]
    if args.set == "third":
        # How attention's cost inside a whole step grows with the sequence (scripts/heldout/README.md,
        # stop 33): within each group the token count is fixed, so the GEMMs, norms, loss and optimizer
        # do the same work and the step-time differences are attention's alone. Head dim 128 (Llama 3 8B
        # shape, 4 blocks: 16384 and 32768 tokens) and head dim 64 (Llama 3.2 1B shape, 16 blocks, as
        # cuDNN's benchmark ran it), each on SDPA's cuDNN and flash backends.
        configs = []
        for model, layers, groups in (("llama3-8b", 4, ((16384, (4096, 8192, 16384)), (32768, (16384, 32768)))),
                                      ("llama3.2-1b", 16, ((16384, (8192, 16384)), (12288, (1024, 4096))))):
            for tokens, seqs in groups:
                for seq in seqs:
                    for attention in ("cudnn", "flash"):
                        configs.append({"id": f"{model}-l{layers}-s{seq}-b{tokens // seq}-noac-{attention}",
                                        "model": model, "layers": layers, "seq_len": seq,
                                        "micro_batch": tokens // seq, "ac": "none", "attention": attention})
    warmup, steps = args.warmup, args.steps
    if args.quick:
        configs = [{"id": "l2-s2048-b1-noac-flash", "layers": 2, "seq_len": 2048, "micro_batch": 1, "ac": "none", "attention": "flash"}]
        warmup, steps = 1, 2

    props = torch.cuda.get_device_properties(0)
    doc = {
        "schema": "stepcast-torch-training-steps",
        "provenance": {
            "script": "scripts/measure_torch_training_step.py",
            "git_sha": args.git_sha,
            "measured_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": platform.node(),
            "gpu": props.name,
            "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "nvidia_smi": nvidia_smi("name,driver_version,power.limit,clocks.max.sm,clocks.max.mem"),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
            "warmup_steps": warmup,
            "timed_steps": steps,
            "model": "Llama 3 8B shapes (dim 4096, 32/8 heads, ffn 14336, vocab 128256), or 70B's where a run names "
                     "model llama3-70b (dim 8192, 64/8 heads, ffn 28672), with `layers` blocks",
            "set": args.set,
        },
        "runs": [],
        "failed": [],
    }
    for cfg in configs:
        t0 = time.time()
        try:
            r = run_config(cfg, warmup, steps)
            r["wall_s"] = time.time() - t0
            doc["runs"].append(r)
            print(f"{cfg['id']:32s} median {r['median_step_s'] * 1e3:9.1f} ms  {r['tokens_per_s']:9.0f} tok/s  "
                  f"reserved {r['max_memory_reserved_bytes'] / 2**30:6.1f} GiB  ({r['wall_s']:.0f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 - recorded, the next configuration still runs
            doc["failed"].append({"id": cfg["id"], "error": repr(e), "traceback": traceback.format_exc()[-2000:]})
            print(f"{cfg['id']}: FAILED {e!r}", flush=True)
            torch.cuda.empty_cache()
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    try:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass
    return 0 if not doc["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
