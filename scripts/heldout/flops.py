#!/usr/bin/env python3
"""Publisher FLOP-count formulas for the held-out rows (scripts/heldout/TRANSCRIBE.md schema).

flops_per_step(row) -> FLOPs of one optimizer step (global batch) by the formula the
publisher of that row used to print its "TFLOP/s/GPU", or None where no formula is sourced
(or the row lacks global_batch / seq_len / model dimensions).

Then  step_time_s = flops_per_step(row) / (tflops_per_gpu * 1e12 * gpus).

Sources (stored public copies read with the read_file tool; see flops.md):
  [NEMO]  NVIDIA/NeMo nemo/utils/flops_formulas.py @034b17b3620b11a0f958989ebe52cd6791e4aa89
          (file id 34659774454): gpt3(), llama2(), llama3(), nemotron(), mixtral(), deepseekv3()
          + nemo/collections/common/parts/perf_metrics_utils.py LLM_VOCAB_SIZE_MAP
          (find_string ids 495433173 / 19158153372): gpt3 51200, llama2 32000, llama3 128256,
          nemotron 256000, mixtral 32000 (vocab is per FAMILY, not per model).
  [MLM]   NVIDIA/Megatron-LM megatron/training/training.py @001b00c2734d8f0fad096fe48a382fedf755d321
          (file id 52379458502) num_floating_point_operations() -> transformer_flops()
          (causal core attention: seq/2; MLA branch; MoE routed/shared; MTP; logits on padded vocab).
  [MB]    NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/utils/flop_utils.py
          @0494433be0f526f59f7ad56bec005279af32c375 (file id 56229297763) num_floating_point_operations()
          -> transformer_flops(): same as [MLM] plus sliding-window attention (window_size /
          window_attn_skip_freq; used by GPT-OSS) and LoRA/packed-SFT special cases.
  [MLM-legacy] 2024 Megatron-LM formula (non-causal), stored copy read_file id 40696091186.
  [S7]    NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-reproduce-guide.md
          @32ea0afd (file id 51807891436): no --mtp-num-layers, --make-vocab-size-divisible-by 3232.
  Empirical check (python3 flops.py --check): every NeMo pre-training row 24.03.01..25.07 and every
  Megatron-Bridge pre-training row 25.09..26.06 with both tokens/s/GPU and TFLOP/s/GPU printed.
"""
import math
import sys

# ----------------------------------------------------------------------------------------------
# Model dimensions.  L layers, h hidden, f ffn_hidden (dense), a heads, g kv heads (query groups),
# V vocab, kv = head dim (kv_channels, default h/a).  MoE: E experts, k top-k, fm moe ffn,
# fs shared-expert ffn, moe_freq layer pattern.  MLA: q_lora, kv_lora, qk, qk_rope, v.
# ----------------------------------------------------------------------------------------------
MODELS = {
    # catalog values as given in the task brief (Meta / HF configs)
    "llama3-8b":   dict(L=32, h=4096, f=14336, a=32, g=8, V=128256, glu=True, src="brief; HF meta-llama/Meta-Llama-3-8B config"),
    "llama3-70b":  dict(L=80, h=8192, f=28672, a=64, g=8, V=128256, glu=True, src="brief; HF meta-llama/Meta-Llama-3-70B config"),
    "llama3-405b": dict(L=126, h=16384, f=53248, a=128, g=8, V=128256, glu=True, src="brief; HF meta-llama/Llama-3.1-405B config"),
    "llama2-7b":   dict(L=32, h=4096, f=11008, a=32, g=32, V=32000, glu=True, src="brief; HF meta-llama/Llama-2-7b config"),
    "llama2-70b":  dict(L=80, h=8192, f=28672, a=64, g=8, V=32000, glu=True, src="brief; HF meta-llama/Llama-2-70b config"),
    "gpt3-175b":   dict(L=96, h=12288, f=49152, a=96, g=96, V=51200, glu=False, src="brief; GPT-3 paper; NeMo LLM_VOCAB_SIZE_MAP gpt3=51200"),
    "mixtral-8x7b":  dict(L=32, h=4096, f=14336, a=32, g=8, V=32000, glu=True, E=8, k=2, fm=14336, src="brief; HF mistralai/Mixtral-8x7B-v0.1"),
    "mixtral-8x22b": dict(L=56, h=6144, f=16384, a=48, g=8, V=32768, glu=True, E=8, k=2, fm=16384, src="brief; HF mistralai/Mixtral-8x22B-v0.1"),
    # HF configs (values as published; recalled here, not re-read in this session -- see flops.md)
    "qwen3-235b-a22b": dict(L=94, h=4096, f=12288, a=64, g=4, kv=128, V=151936, glu=True, E=128, k=8, fm=1536,
                            src="HF Qwen/Qwen3-235B-A22B config.json (num_hidden_layers 94, hidden 4096, heads 64, kv 4, head_dim 128, moe_intermediate 1536, 128 experts top-8, vocab 151936)"),
    "qwen3-30b-a3b":   dict(L=48, h=2048, f=6144, a=32, g=4, kv=128, V=151936, glu=True, E=128, k=8, fm=768,
                            src="HF Qwen/Qwen3-30B-A3B config.json (48 layers, hidden 2048, heads 32, kv 4, head_dim 128, moe_intermediate 768, 128 experts top-8, vocab 151936)"),
    "deepseek-v3": dict(L=61, h=7168, f=18432, a=128, V=129280, glu=True, E=256, k=8, fm=2048, fs=2048,
                        moe_freq=[0] * 3 + [1] * 58, mtp=1,
                        mla=dict(q_lora=1536, kv_lora=512, qk=128, qk_rope=64, v=128),
                        src="HF deepseek-ai/DeepSeek-V3 config.json (61 layers, first_k_dense_replace 3, hidden 7168, "
                            "intermediate 18432, moe_intermediate 2048, 1 shared expert, 256 routed top-8, MLA q_lora 1536 "
                            "kv_lora 512 qk_nope 128 qk_rope 64 v 128, heads 128, vocab 129280, num_nextn_predict_layers 1)"),
    "gpt-oss-120b": dict(L=36, h=2880, f=2880, a=64, g=8, kv=64, V=201088, glu=True, E=128, k=4, fm=2880,
                         window=(128, 0), window_skip=2,
                         src="HF openai/gpt-oss-120b config.json (36 layers, hidden 2880, heads 64, kv 8, head_dim 64, "
                             "128 experts top-4, intermediate 2880, vocab 201088, sliding_window 128 on alternate layers); "
                             "Megatron-Bridge GPT-OSS provider window_size=(128,0), window_attn_skip_freq=2 (assumed)"),
    # non-catalog models: dims as transcribed in the rows' model_dims (sources there)
    "LLAMA2-13B":  dict(L=40, h=5120, f=13824, a=40, g=40, V=32000, glu=True, src="nemo.yaml model_dims (NeMo Llama2Config13B)"),
    "GPT3-5B":     dict(L=24, h=4096, f=16384, a=32, g=32, V=51200, glu=False, src="nemo.yaml model_dims (NeMo GPTConfig5B); V = NeMo gpt3 family vocab"),
    "GPT3-20B":    dict(L=44, h=6144, f=24576, a=48, g=48, V=51200, glu=False, src="nemo.yaml model_dims (NeMo GPTConfig20B); V = NeMo gpt3 family vocab"),
    "Nemotron-8B":   dict(L=32, h=4096, f=16384, a=32, g=32, V=256000, glu=False, src="nemo.yaml model_dims (Nemotron3Config8B); V = NeMo nemotron family vocab"),
    "Nemotron-15B":  dict(L=32, h=6144, f=24576, a=48, g=8, V=256000, glu=False, src="nemo.yaml model_dims (Nemotron4Config15B)"),
    "Nemotron-22B":  dict(L=40, h=6144, f=24576, a=48, g=48, V=256000, glu=False, src="nemo.yaml model_dims (Nemotron3Config22B)"),
    "Nemotron-340B": dict(L=96, h=18432, f=73728, a=96, g=8, V=256000, glu=False, src="nemo.yaml model_dims (Nemotron4Config340B)"),
    "LLAMA4-Scout-LLM": dict(L=48, h=5120, f=16384, a=40, g=8, V=202048, glu=True, E=16, k=1, fm=8192, fs=8192,
                             src="nemo.yaml model_dims (NeMo Llama4Config)"),
    "Kimi_K2": dict(L=61, h=7168, f=18432, a=64, V=163840, glu=True, E=384, k=8, fm=2048, fs=2048,
                    moe_freq=[0] + [1] * 60, mtp=None,
                    mla=dict(q_lora=1536, kv_lora=512, qk=128, qk_rope=64, v=128), src="mbridge.yaml model_dims"),
    # hybrid Mamba-2 / MoE / attention (Megatron-Bridge hybrid_flops); V=131072 is an ASSUMPTION (row says
    # vocab not stated) confirmed by 20 Megatron-Bridge rows within 0.3-1.3% (V=256000 would give 0.91)
    "Nemotron_3_Nano": dict(hybrid=True, L=52, n_attn=6, n_mamba=23, n_moe=23, n_mlp=0, h=2688, a=32, g=2, kv=128,
                            mamba_heads=64, mamba_head_dim=64, mamba_state=128, mamba_groups=8,
                            E=128, k=6, fm=1856, fs=3712, f=1856, glu=False, V=131072, mtp=0,
                            src="mbridge.yaml model_dims (Megatron-Bridge nemotron_h_provider.py Nemotron3NanoProvider, file id 52341585700)"),
    "nemotron4-15b":  dict(L=32, h=6144, f=24576, a=48, g=8, V=256000, glu=False, src="dgxc README notes + NeMo Nemotron4Config15B"),
    "nemotron4-340b": dict(L=96, h=18432, f=73728, a=96, g=8, V=256000, glu=False, src="dgxc README notes + NeMo Nemotron4Config340B"),
    "grok-1-314b": dict(L=64, h=6144, f=32768, a=48, g=8, V=128256, glu=True, E=8, k=2, fm=32768, src="dgxc grok1 README notes"),
}


def _dims(row):
    m = MODELS.get(row.get("model"))
    return m


def _pad_vocab(V, tp, divisible_by=128):
    """Megatron vocab padding: multiple of make_vocab_size_divisible_by * tp (default 128)."""
    mult = divisible_by * max(1, int(tp or 1))
    return int(math.ceil(V / mult) * mult)


# ----------------------------------------------------------------------------------------------
# [NEMO] NVIDIA/NeMo nemo/utils/flops_formulas.py @034b17b3 (file id 34659774454)
#   used by the NeMo 2 FLOPsMeasurementCallback (performance summaries 24.12/25.02/25.04/25.07) and,
#   by the --check below, reproducing also the NeMo-1 / NeMo-Framework-Launcher tables 24.03.01..24.07.
#   Attention term 12*s/h per layer = NON-causal (full s^2); vocab fixed per family.
# ----------------------------------------------------------------------------------------------
NEMO_VOCAB = {"gpt3": 51200, "llama2": 32000, "llama3": 128256, "nemotron": 256000, "mixtral": 32000}


def nemo_gpt3(gbs, s, m):
    # def gpt3(config): (24*gbs*s*h*h + 4*gbs*s*s*h) * (3*L) + 6*gbs*s*h*vocab
    h, L = m["h"], m["L"]
    return (24 * gbs * s * h * h + 4 * gbs * s * s * h) * (3 * L) + 6 * gbs * s * h * NEMO_VOCAB["gpt3"]


def _nemo_llama_like(gbs, s, m, vocab, ffn_coef, topk=1):
    # def llama2/llama3/nemotron/mixtral(config):
    #   gbs*s*L*h*h*(12 + 12*g/a + ffn_coef*topk*f/h + 12*s/h + 6*V/(L*h))
    h, L = m["h"], m["L"]
    f = m.get("fm", m["f"]) if topk > 1 or m.get("E") else m["f"]
    return gbs * s * L * h * h * (12 + 12 * m["g"] / m["a"] + ffn_coef * topk * f / h + 12 * s / h + 6 * vocab / (L * h))


def nemo_llama2(gbs, s, m):
    return _nemo_llama_like(gbs, s, m, NEMO_VOCAB["llama2"], 18)


def nemo_llama3(gbs, s, m):
    return _nemo_llama_like(gbs, s, m, NEMO_VOCAB["llama3"], 18)


def nemo_nemotron(gbs, s, m):
    # non-gated (squared-ReLU) MLP: 12*f/h
    return _nemo_llama_like(gbs, s, m, NEMO_VOCAB["nemotron"], 12)


def nemo_mixtral(gbs, s, m):
    # 18 * moe_router_topk * ffn_hs / hs ; vocab fixed 32000 even for 8x22B (vocab 32768)
    return _nemo_llama_like(gbs, s, m, NEMO_VOCAB["mixtral"], 18, topk=m["k"])


def nemo_family(model):
    ml = model.lower()
    if ml.startswith("grok"):
        # dgxc 25.05 Grok-1 example (NeMo 25.04.01) is reproduced (ratio 0.99996) only by the mixtral
        # family function (V=32000 fixed, 18*topk*f/h) -- EMPIRICAL mapping.
        return "mixtral"
    if ml.startswith("gpt3"):
        return "gpt3"
    if ml.startswith("llama2"):
        return "llama2"
    if ml.startswith("llama3"):
        return "llama3"
    if ml.startswith("nemotron"):
        return "nemotron"
    if ml.startswith("mixtral"):
        return "mixtral"
    return None


NEMO_FUNCS = {"gpt3": nemo_gpt3, "llama2": nemo_llama2, "llama3": nemo_llama3,
              "nemotron": nemo_nemotron, "mixtral": nemo_mixtral}


# ----------------------------------------------------------------------------------------------
# [MLM] Megatron-LM training.py num_floating_point_operations -> transformer_flops()
#   @001b00c2 (file id 52379458502), and [MB] Megatron-Bridge flop_utils.py @0494433b (file id
#   56229297763) transformer_flops(), identical for dense/GQA/MoE/MLA; Bridge adds sliding window.
#   Causal core attention (seq/2), logits on padded vocab, MTP layers counted as extra layers.
# ----------------------------------------------------------------------------------------------
def megatron_flops(gbs, s, m, tp=1, swa=False, vocab_divisible_by=128):
    h = m["h"]
    glu = m.get("glu", True)
    ffn_exp = 3 if glu else 2
    L0 = m["L"]
    E = m.get("E")
    if E is None:
        n_dense, n_moe, k, last_moe = L0, 0, 0, 0
    else:
        pat = m.get("moe_freq") or [1] * L0
        n_moe = sum(pat)
        n_dense = L0 - n_moe
        k = m["k"]
        last_moe = pat[-1]
    mtp = m.get("mtp") or 0
    n_moe += last_moe * mtp
    n_dense += (1 - last_moe) * mtp
    L = L0 + mtp
    fm = m.get("fm", m["f"])
    fs = m.get("fs", 0) or 0
    a = m["a"]
    if "mla" in m:
        c = m["mla"]
        q_term = c["q_lora"] * (h + a * (c["qk"] + c["qk_rope"]) + 1)
        attn_per_layer = (q_term
                          + c["kv_lora"] * (h + a * (c["qk"] + c["v"]) + 1)
                          + h * c["qk_rope"]
                          + a * c["v"] * h
                          + s * (a * (c["qk"] + c["qk_rope"])) / 2
                          + s * a * c["v"] / 2)
        self_attn = 3 * 2 * L * attn_per_layer
    else:
        kvc = m.get("kv", h // a)
        q = kvc * a
        kk = kvc * m["g"]
        proj = h * (q + 2 * kk) + q * h
        full_core = q * s / 2 * 2
        if swa and m.get("window"):
            w = m["window"][0] + m["window"][1] + 1
            swa_ctx = (w - w * (w - 1) / (2 * s)) if w < s else s / 2
            freq = m.get("window_skip")
            pat = [0 if ((i + 1) % freq == 0) else 1 for i in range(L)] if freq else [1] * L
            n_swa = sum(pat)
            n_full = L - n_swa
            self_attn = 3 * 2 * (n_full * (proj + full_core) + n_swa * (proj + q * swa_ctx * 2))
        else:
            self_attn = 3 * 2 * L * (proj + full_core)
    Vp = _pad_vocab(m["V"], tp, vocab_divisible_by)
    per_token = (3 * 2 * h * (m["f"] * ffn_exp * n_dense + fm * k * ffn_exp * n_moe + fs * ffn_exp * n_moe)
                 + self_attn
                 + 3 * 2 * mtp * (3 * h + 2 * h * h)
                 + 3 * 2 * h * Vp * (mtp + 1))
    return gbs * s * per_token


def bridge_hybrid_flops(gbs, s, m, tp=1):
    """[MB] flop_utils.py @0494433b hybrid_flops(): attention (causal s/2, p = kv*a/h), Mamba
    (d_in = 2h: in_proj 2sh(2d_in + 2*groups*state + nheads), scan 7*s*d_in*state, out_proj 2*s*d_in*h),
    MoE (4sh*fm*topk*scale + 4sh*fs*scale; scale 3/2 only if GLU), logits 2shV(1+mtp); all x3."""
    h = m["h"]
    p = m["kv"] * m["a"] / h
    attn = 4 * s * h * p * (h + h * m["g"] / m["a"] + s / 2)
    d_in = 2 * h
    mamba = (2 * s * h * (2 * d_in + 2 * m["mamba_groups"] * m["mamba_state"] + m["mamba_heads"])
             + 7 * s * d_in * m["mamba_state"] + 2 * s * d_in * h)
    sc = 1.5 if m.get("glu") else 1.0
    moe = 4 * s * h * m["fm"] * m["k"] * sc + 4 * s * h * m.get("fs", 0) * sc
    mlp = 4 * (m["f"] / h) * sc * s * h * h
    Vp = _pad_vocab(m["V"], tp)
    fwd = (m["n_attn"] * attn + m["n_mamba"] * mamba + m["n_moe"] * moe + m.get("n_mlp", 0) * mlp
           + 2 * s * h * Vp * (1 + (m.get("mtp") or 0)))
    return gbs * 3 * fwd


# ----------------------------------------------------------------------------------------------
# [MLM-legacy] Megatron-LM num_floating_point_operations as of 2024 (core ~v0.7-v0.9), read in a stored
#   copy of megatron/training/training.py (find_string/read_file id 40696091186, offset ~37200; the
#   index does not name the repository of that copy):
#     12*B*s*L*h^2*(1 + f/h*topk*(3/2 if swiglu else 1) + g/a + s/h + Vpad/(2*L*h))
#   i.e. NON-causal attention (s/h), no MLA / shared experts / MTP.  Used for the Megatron-Core MoE
#   README Mixtral row (mcore_moe_readme_*; Megatron-Core v0.9 era) -- applicability by date, not verified.
# ----------------------------------------------------------------------------------------------
def megatron_flops_legacy(gbs, s, m, tp=1, vocab_divisible_by=128):
    h, L = m["h"], m["L"]
    k = m.get("k", 1) if m.get("E") else 1
    f = m.get("fm", m["f"]) if m.get("E") else m["f"]
    glu_mult = 1.5 if m.get("glu", True) else 1.0
    Vp = _pad_vocab(m["V"], tp, vocab_divisible_by)
    return 12 * gbs * s * L * h * h * (1 + f / h * k * glu_mult + m["g"] / m["a"] + s / h + Vp / (2 * L * h))


# ----------------------------------------------------------------------------------------------
# Row -> publisher / formula
# ----------------------------------------------------------------------------------------------
def publisher(row):
    rid = row.get("id", "")
    src = row.get("source") or {}
    repo = (src.get("repo") or "")
    if rid.startswith("mbridge") or "Megatron-Bridge" in repo:
        return "megatron-bridge"
    if rid.startswith("nemo") or repo in ("NVIDIA/NeMo", "NVIDIA/NeMo-Framework-Launcher"):
        return "nemo"
    if rid.startswith("mcore_"):
        return "megatron-lm-legacy"
    if rid.startswith(("mlm_", "mzoo_")):
        return "megatron-lm"
    if rid.startswith("dgxc2505"):
        return "nemo"             # NVIDIA dgxc GSW 25.05.04 = NeMo 25.04.01 container (NeMo-2 callback; checked)
    if rid.startswith(("dgxc25y", "dgxc26x")):
        return "megatron-bridge"  # NVIDIA dgxc Megatron-Bridge-era READMEs (checked on Qwen3 / GPT-OSS examples)
    if rid.startswith(("tg2507", "tg2509")):
        return "nemo?"            # Together fork, NeMo 25.07.01 / 25.09.00 containers: NeMo-2 callback (inferred)
    if rid.startswith(("tg2509", "tg2602", "tg26")):
        return "megatron-bridge?"  # Together fork, NeMo 25.09+/26.02 containers = Megatron-Bridge (inferred)
    return None


def is_finetune(row):
    txt = " ".join(str(x) for x in (row.get("id"), (row.get("source") or {}).get("table"), row.get("notes")))
    t = txt.lower()
    return any(w in t for w in ("lora", "sft", "fine-tun", "finetun", "peft"))


# Releases whose printed Megatron-Bridge GPT-OSS numbers are reproduced only by the "legacy" variant
# (MLP counted with 2 GEMMs instead of 3 = no gated-linear-unit factor, and full causal attention on every
# layer = no sliding-window correction).  EMPIRICAL (see --check / flops.md); current code @0494433b has
# both (ffn_expansion_factor = 3 if gated_linear_unit; window_size / window_attn_skip_freq), and 26.06+
# rows match the current code.
MB_GPTOSS_LEGACY_RELEASES = {"25.09", "25.11", "26.02", "26.02.01", "26.04", "26.04.01"}
# Megatron-Bridge 25.11 DeepSeek-V3 rows (published page, not the draft) match only with MTP not counted
# (mtp_num_layers None in that release's DSv3 performance config) -- EMPIRICAL.
MB_DSV3_NO_MTP_IDS = {"mbridge2511_gb300_deepseekv3_bf16_256gpu", "mbridge2511_gb300_deepseekv3_fp8_mx_256gpu"}


def formula_name(row):
    pub = publisher(row)
    if pub is None or is_finetune(row):
        return None
    m = _dims(row)
    if m is None:
        return None
    if pub.startswith("nemo"):
        fam = nemo_family(row["model"])
        if fam is None and row["model"] == "deepseek-v3":
            # dgxc 25.05 DeepSeek-V3 rows (NeMo 25.04.01): reproduced by the Megatron formula with MTP=1
            # (ratio 0.9998..0.9999, 6 rows); S1 deepseekv3() gives 1.77 -- EMPIRICAL.
            return "megatron_lm"
        if fam is None and row["model"].upper().startswith("LLAMA4"):
            # NeMo 25.07 Llama4 rows: reproduced by the Megatron-style (causal) formula, not by a
            # flops_formulas.py family function (none for llama4 in the version read) -- EMPIRICAL.
            return "megatron_lm"
        return ("nemo_" + fam) if fam else None
    if pub.startswith("megatron-bridge"):
        return "megatron_bridge"
    if pub == "megatron-lm":
        return "megatron_lm"
    if pub == "megatron-lm-legacy":
        return "megatron_lm_legacy"
    return None


def flops_per_token_seq(row):
    """FLOPs per sequence (gbs=1) by the publisher formula, or None."""
    name = formula_name(row)
    s = row.get("seq_len")
    if name is None or not s:
        return None
    m = _dims(row)
    if name.startswith("nemo_"):
        return NEMO_FUNCS[name[5:]](1, s, m)
    tp = row.get("tp") or 1
    if name == "megatron_bridge" and m.get("hybrid"):
        return bridge_hybrid_flops(1, s, m, tp=tp)
    if name == "megatron_bridge":
        rel = str((row.get("source") or {}).get("release"))
        if row.get("model") == "gpt-oss-120b" and (rel in MB_GPTOSS_LEGACY_RELEASES or rel.startswith("26.0x")):
            return megatron_flops(1, s, dict(m, glu=False), tp=tp, swa=False)
        if row.get("id") in MB_DSV3_NO_MTP_IDS:
            return megatron_flops(1, s, dict(m, mtp=0), tp=tp, swa=True)
        return megatron_flops(1, s, m, tp=tp, swa=True)
    if name == "megatron_lm_legacy":
        return megatron_flops_legacy(1, s, m, tp=tp)
    if str(row.get("id", "")).startswith("mlm_dsv3_"):
        # Megatron-LM DeepSeek-V3 GB200 guide: reproduce guide (NVIDIA/Megatron-LM
        # docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-reproduce-guide.md @32ea0afd,
        # file id 51807891436) launch script sets no --mtp-num-layers (MTP off) and
        # --make-vocab-size-divisible-by 3232 (129280 = 40*3232, no padding).
        return megatron_flops(1, s, dict(m, mtp=0), tp=tp, swa=False, vocab_divisible_by=3232)
    return megatron_flops(1, s, m, tp=tp, swa=False)


def flops_per_step(row):
    per_seq = flops_per_token_seq(row)
    gbs = row.get("global_batch")
    if per_seq is None or not gbs:
        return None
    return per_seq * gbs


def step_time_from_tflops(row, tflops_key=None):
    F = flops_per_step(row)
    meas = row.get("measured") or {}
    keys = [tflops_key] if tflops_key else ["model_tflops_per_gpu", "tflops_per_gpu"]
    for k in keys:
        t = meas.get(k)
        if isinstance(t, (int, float)) and t and F and row.get("gpus"):
            return F / (t * 1e12 * row["gpus"])
    return None


# ----------------------------------------------------------------------------------------------
# --check: printed TFLOP/s/GPU vs formula(FLOPs/token) * printed tokens/s/GPU
# ----------------------------------------------------------------------------------------------
def _check(paths):
    import yaml
    out = []
    for p in paths:
        for r in yaml.safe_load(open(p))["rows"]:
            meas = r.get("measured") or {}
            tok = meas.get("tokens_per_sec_per_gpu")
            tf = meas.get("model_tflops_per_gpu") or meas.get("tflops_per_gpu")
            if not isinstance(tf, (int, float)):
                continue
            per_seq = flops_per_token_seq(r)
            name = formula_name(r)
            if not isinstance(tok, (int, float)):
                st = meas.get("step_time_s")
                if not isinstance(st, (int, float)) and isinstance(meas.get("step_time_ms"), (int, float)):
                    st = meas["step_time_ms"] / 1000.0
                if isinstance(st, (int, float)) and isinstance(tf, (int, float)) and per_seq and r.get("global_batch"):
                    # rows printing step time + TFLOP/s/GPU (no tokens/s): compare via implied tokens/s
                    tok = r["global_batch"] * r["seq_len"] / st / r["gpus"]
                else:
                    continue
            if per_seq is None:
                out.append((r["id"], r["model"], r.get("seq_len"), name or "-", tok, tf, None, None))
                continue
            pred = per_seq / r["seq_len"] * tok / 1e12
            out.append((r["id"], r["model"], r["seq_len"], name, tok, tf, pred, tf / pred))
    return out


if __name__ == "__main__":
    import glob
    import os
    if "--check" in sys.argv:
        # python3 scripts/heldout/flops.py --check [ROWS_DIR]  (default $STEPCAST_HELDOUT_ROWS)
        rest = [a for a in sys.argv[1:] if a != "--check"]
        rows_dir = rest[0] if rest else os.environ.get("STEPCAST_HELDOUT_ROWS", "")
        if not os.path.isdir(rows_dir):
            sys.exit("name the held-out rows directory (argument or STEPCAST_HELDOUT_ROWS)")
        paths = sorted(glob.glob(os.path.join(rows_dir, "*.yaml")))
        res = _check(paths)
        n_ok = n_bad = n_none = 0
        print(f"{'id':62s} {'model':18s} {'seq':>7s} {'formula':16s} {'tok/s/gpu':>10s} {'TF printed':>10s} {'TF formula':>10s} {'ratio':>7s}")
        for rid, model, s, name, tok, tf, pred, ratio in res:
            if ratio is None:
                n_none += 1
                flag = "no formula"
                print(f"{rid:62s} {str(model)[:18]:18s} {str(s):>7s} {name:16s} {round(tok,1):>10} {tf:>10} {'-':>10s} {'-':>7s} {flag}")
                continue
            ok = abs(ratio - 1) <= 0.01
            n_ok += ok
            n_bad += (not ok)
            print(f"{rid:62s} {str(model)[:18]:18s} {s:>7d} {name:16s} {round(tok,1):>10} {tf:>10} {pred:>10.1f} {ratio:>7.4f} {'OK' if ok else 'OFF'}")
        print(f"\nwithin 1%: {n_ok}   outside 1%: {n_bad}   no formula (fine-tuning / unknown dims): {n_none}")
    else:
        print(__doc__)
