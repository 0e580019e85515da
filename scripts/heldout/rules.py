"""Rules that map a held-out row (TRANSCRIBE.md schema) to a stepcast scenario. One rule per field,
the same for every row of a source family; never a per-row tweak. scenario(row) -> (text, None) or
(None, the reason it is not mapped). Source families (family()): nemo (NeMo performance summaries
and NeMo-Framework-Launcher tables), mbridge (Megatron-Bridge performance summaries), dgxc (DGX Cloud
benchmarking recipes), megatron (Megatron-LM docs, Megatron-MoE-ModelZoo, MLPerf logs of
NeMo/Megatron submissions), other.

Rules (sources as in scripts/dev_scenarios.py, which maps the development set the same way;
differences stated):
  model      catalog key; printed names normalised (Llama 3.1 405B -> llama3-405b, ...). A run that
             trained fewer layers (DGX Cloud's proxy configurations print layers_in_run) overrides
             the preset's layers. Models not in the catalog are mapped inline from model_dims only
             for dense Llama-style (preset llama2-7b) and GPT-3-style (preset gpt3-175b) models.
  system     H100 -> dgx-h100, H200 -> hgx-h200, B200 -> dgx-b200, GB200 -> gb200-nvl72,
             B300 -> dgx-b300, GB300 -> gb300-nvl72, A100 -> dgx-a100.
  parallel   tp, pp, cp, ep, vpp as printed, null -> 1; dp = gpus / (tp pp cp). Megatron-family
             rows: sequence parallelism when tp > 1, the distributed optimizer (zero 1), cp_kind
             ring (Transformer Engine's p2p), expert_tp 1 unless printed (DGX Cloud's NeMo-1 Grok-1
             proxy: TP, expert_tp below); dev_scenarios' uneven
             layer split, except Megatron-Bridge's DeepSeek-V3, whose recipe sets the pipeline
             layout itself (DSV3_RECIPE_EDGE_LAYERS; a matched config's pp_layout first). tp_comm_overlap when tp > 1 for Llama-family rows (the recipes'
             CommOverlapConfig(tp_comm_overlap=True)) unless the recipe says otherwise. DGX Cloud's
             NeMo-1 H100 recipes: FlashAttention-2 where configure.sh exports NVTE_FUSED_ATTN=0
             (Grok-1, Nemotron-4 340B, GPT-3 175B of GSW 25.01) and TP comm overlap where it
             passes ub_tp_comm_overlap (DGXC_NEMO1 below).
  recipe     only a recipe whose layout equals the row's in every field (layout_match true):
             recompute (full with num_layers, or selective modules), full-iteration CUDA graphs,
             MoE dispatcher (flex deepep / hybridep), a2a overlap, activation offload layers,
             Megatron-FSDP (zero 3, fsdp megatron), gradient reduce dtype, fp8 recipe, loss impl,
             Megatron-Bridge's CuTeDSL fused grouped MLP (moe_grouped_gemm grouped).
             Megatron-Bridge 26.06 and later, GB200/GB300 MXFP8 Qwen3 MoE and DeepSeek-V3: fused
             grouped MLP under full-iteration graphs with HybridEP and the EP overlap (PRs #4249,
             #4606, #5356, #4666; the repo README's MoE section), with FP8 attention for Qwen3 (PR
             #4606) and for DeepSeek-V3 on GB300 (PR #3983); the same for Qwen3 MXFP8 on B200/B300
             (PR #4606, the r0.5.0 port). Megatron-MoE-ModelZoo tables print
             dispatcher, recompute ('norm, act' -> layernorm, moe_act), FSDP and '1f1b overlap'
             per row: read from the row.
  precision  BF16 -> bf16; FP8-CS (and 'FP8 (current scaling)', Megatron-Bridge 'FP8' on H100, and
             'FP8' whose recipe is current scaling or blockwise) -> fp8 current scaling with FP8
             params, every layer in FP8 for Megatron-Bridge and NeMo 25.04+ rows (bf16_edge_layers
             0: their performance scripts turn first_last_layers_bf16 off); FP8-DS / FP8 -> fp8
             (delayed), with FP8 params where a layout-matched recipe records fp8_param_gather /
             fp8_params true; FP8-MX / MXFP8 -> mxfp8, in Megatron-Bridge rows with MXFP8 weights
             (params: mxfp8; dev_scenarios' precision rule gives the sources); NVFP4 -> nvfp4.
             Gradients bf16 for every
             Megatron-Bridge row, for NeMo FP8 rows of 25.04 and later (NeMo
             scripts/performance/helpers.py sets grad_reduce_in_fp32 False for FP8 recipes) and
             where a recipe says so; fp32 otherwise. Megatron-Bridge DeepSeek-V3: moments bf16,
             master remainders with BF16 weights only; Megatron-Bridge and NeMo 25.04+ BF16 rows
             without FSDP: master remainders (the performance scripts' precision-aware optimizer). DGX Cloud Llama 3.1 of GSW 25.01/25.02 (NeMo 1
             hydra configs): FP8 runs keep FP8 weights (configure.sh @143b90d passes
             +model.fp8_params=$FP8_ENABLED); so do DGX Cloud's NeMo-1 Grok-1 and Nemotron-4 FP8
             runs (DGXC_NEMO1_FP8_PARAMS). Delayed-scaling FP8 rows run by NeMo 2's performance
             scripts (NeMo tables from 25.02, DGX Cloud GSW 25.04/25.05: NEMO2_PERF_SCRIPT_DGXC):
             FP8 weights and BF16 gradients (bf16_with_fp8_mixed, grad_reduce_in_fp32 False).
             NeMo-1 launcher pre-training rows (24.0x tables) of the models whose example script
             passes grad_sync_dtype=bf16: BF16 gradients (NEMO1_BF16_GRAD_SYNC).
  loss       Megatron-Bridge rows: dev_scenarios' MBRIDGE_CROSS_ENTROPY; NeMo / DGX Cloud Llama 3 rows
             and every NeMo row of 25.04 and later: te; DGX Cloud Llama 3.1 of GSW 25.01/25.02: fused
             (cross_entropy_loss_fusion: true in the launcher's llama3_1_8b.yaml @2ac7cee8); a
             recipe's value where recorded; native otherwise.
  routing    dropless, load_imbalance 1 (the tables force-balance routing).
  skipped    example output lines; LoRA/PEFT; printed layouts no run can have (the global batch
             not a multiple of micro-batch x dp, EP x expert TP not dividing a stage's ranks); non-Megatron frameworks (MaxText, PaxML, llm-foundry,
             InternLM, torchtitan, fms-fsdp, torchao); a layout field the source leaves
             unconfirmed (a helper's "not confirmed", DGX Cloud's VP printed NA); a precision the source does not state; intermediate steps of an
             optimization history; GPT-OSS MXFP8 in Megatron-Bridge 26.06.01 (a filed regression:
             the 0.5.1 release notes, cudnn-frontend #256); Qwen3-30B-A3B on H100 and B200 in
             Megatron-Bridge 25.11 and 26.02 (a filed regression, #1998: dev_scenarios.py states it);
             Qwen3-235B-A22B MXFP8 on B200 in 25.11 (#1705): one table for both sets,
             dev_scenarios.py FILED_REGRESSIONS.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import dev_scenarios as dev  # noqa: E402  (scripts/dev_scenarios.py: the development set's rules)

CATALOG = {"llama3-8b", "llama3-70b", "llama3-405b", "llama2-7b", "llama2-70b", "mixtral-8x7b",
           "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "gpt3-175b",
           "nemotron4-15b", "nemotron4-340b", "grok-1"}
LAYERS = {"llama3-8b": 32, "llama3-70b": 80, "llama3-405b": 126, "llama2-7b": 32, "llama2-70b": 80,
          "mixtral-8x7b": 32, "mixtral-8x22b": 56, "deepseek-v3": 61, "qwen3-30b-a3b": 48,
          "qwen3-235b-a22b": 94, "gpt-oss-120b": 36, "gpt3-175b": 96, "nemotron4-15b": 32,
          "nemotron4-340b": 96, "grok-1": 64}
SYSTEMS = {"H100": "dgx-h100", "H200": "hgx-h200", "B200": "dgx-b200", "GB200": "gb200-nvl72", "GB300": "gb300-nvl72", "B300": "dgx-b300",
           "A100": "dgx-a100"}
MEGATRON_FAMILIES = ("nemo", "mbridge", "dgxc", "megatron")


def norm_model(name):
    if not name:
        return None
    s = str(name).lower().replace("_", "-").replace(" ", "-")
    if s in CATALOG:
        return s
    s2 = re.sub(r"-+", "-", s)
    table = [
        (r"llama-?3(\.1)?-?405b", "llama3-405b"), (r"llama-?3(\.1)?-?70b", "llama3-70b"),
        (r"llama-?3(\.1)?-?8b", "llama3-8b"), (r"llama-?2-?70b", "llama2-70b"), (r"llama-?2-?7b", "llama2-7b"),
        (r"mixtral-?8x7b", "mixtral-8x7b"), (r"mixtral-?8x22b", "mixtral-8x22b"),
        (r"deepseek-?v3", "deepseek-v3"), (r"qwen3-?30b", "qwen3-30b-a3b"), (r"qwen3-?235b", "qwen3-235b-a22b"),
        (r"gpt-?oss-?120b", "gpt-oss-120b"), (r"gpt-?3-?175b", "gpt3-175b"),
        (r"^nemotron-?4?-?15b", "nemotron4-15b"), (r"^nemotron-?4?-?340b", "nemotron4-340b"), (r"^grok-?1", "grok-1"),
    ]
    for pat, key in table:
        if re.search(pat, s2):
            return key
    return None


def family(row):
    """nemo | mbridge | dgxc | megatron (other Megatron-LM sources) | other."""
    f = str(row.get("_family", "")).lower()
    repo = str((row.get("source") or {}).get("repo") or "").lower()
    if f.startswith("dgxc"):
        return "dgxc"
    if "megatron-bridge" in f or f.startswith("mbridge"):
        return "mbridge"
    if f.startswith("nemo"):
        return "nemo"
    if "megatron-bridge" in repo:
        return "mbridge"
    if repo.endswith("/nemo"):
        return "nemo"
    if "megatron" in repo or "training_results" in repo:
        return "megatron"
    return "other"


def release(row):
    return str((row.get("source") or {}).get("release") or "")


def release_at_least(row, ver):
    m = re.search(r"(\d\d)\.(\d\d)", release(row))
    if not m:
        return False
    return (int(m.group(1)), int(m.group(2))) >= ver


def gpu_key(row):
    g = str(row.get("gpu") or row.get("system") or "").upper()
    if " OR " in g:
        return None
    for k in ("GB200", "GB300", "B200", "B300", "H200", "H100", "A100"):
        if k in g:
            return k
    return None


def recipe(row):
    return row.get("recipe") or {}


def truthy(v):
    if isinstance(v, bool):
        return v
    if v is None:
        return False
    return str(v).strip().lower() in ("true", "yes", "1", "on")


def precision_text(row, model, rec):
    p = str(row.get("precision") or "").upper().replace("_", "-")
    fam = family(row)
    g = gpu_key(row)
    keys = []
    if p.startswith("BF16"):
        keys.append("compute: bf16")
    elif "NVFP4" in p or p == "FP4":
        keys.append("compute: nvfp4")
    elif "MX" in p or (p.startswith("FP8") and rec.get("fp8") == "mxfp8"):
        # Megatron-Bridge 25.09's Blackwell rows print FP8 (a parenthesised value, "32x32 for both
        # weights and activations") and run the FP8_MX config: MXFP8
        keys.append("compute: mxfp8")
        if fam == "mbridge":
            keys.append("params: mxfp8")
    elif p.startswith("FP8"):
        current = ("CS" in p or "CURRENT" in p or rec.get("fp8") == "current"
                   or (fam == "mbridge" and g == "H100"))
        if "DS" in p or rec.get("fp8") == "delayed":
            current = False
        keys.append("compute: fp8")
        if current:
            keys += ["fp8_scaling: current", "params: fp8"]
            # The performance scripts turn the recipe's BF16 edge layers off: Megatron-Bridge's
            # get_precision_config("fp8_cs") ("Disable BF16 Transformer layers in the performance
            # config", scripts/performance/utils/helpers.py, code index id 37584630520) and NeMo 2's
            # set_precision_configs ("disable first/last layer bf16 for benchmarking",
            # scripts/performance/helpers.py, code index id 15243474233).
            if fam == "mbridge" or (fam == "nemo" and release_at_least(row, (25, 4))):
                keys.append("bf16_edge_layers: 0")
        elif rec.get("fp8_params"):
            keys.append("params: fp8")
    elif p.startswith("FP16"):
        keys.append("compute: fp16")
    else:
        return None
    if "grads_bf16" in rec:
        grads_bf16 = rec["grads_bf16"]
    elif nemo1_launcher_bf16_grad_sync(row) or (p.startswith("FP8") and nemo2_perf_script_row(row)):
        grads_bf16 = True
    elif fam == "mbridge":
        grads_bf16 = True
    elif fam == "nemo" and p.startswith("FP8") and release_at_least(row, (25, 4)):
        grads_bf16 = True
    else:
        grads_bf16 = False
    # DGX Cloud Llama 3.1 of GSW 25.01 / 25.02 (NeMo 1 hydra configs): configure.sh @143b90d passes
    # +model.fp8_params=$FP8_ENABLED, so FP8 runs keep FP8 primary weights (with model.fp8_hybrid:
    # delayed scaling, amax history 1024 in launcher conf llama3_1_8b.yaml).
    if (fam == "dgxc" and p.startswith("FP8") and model.startswith("llama3") and not release_at_least(row, (25, 4))
            and "params: fp8" not in keys):
        keys.append("params: fp8")
    # DGX Cloud's NeMo-1 Grok-1 and Nemotron-4 recipes pass fp8_params with fp8 (DGXC_NEMO1_FP8_PARAMS);
    # NeMo 2's performance scripts run delayed-scaling FP8 with FP8 weights (nemo2_perf_script_row).
    delayed_fp8 = keys == ["compute: fp8"]
    if delayed_fp8 and (dgxc_nemo1_fp8_params(row) or nemo2_perf_script_row(row)):
        keys.append("params: fp8")
    if grads_bf16:
        keys.append("grads: bf16")
    if fam == "mbridge" and model == "deepseek-v3":
        keys.append("moments: bf16")
    # BF16 runs of the performance scripts use the precision-aware optimizer, the FP32 master as
    # remainders (Megatron-Bridge set_user_overrides, NeMo 2 set_precision_configs: compute_dtype
    # bf16 -> use_precision_aware_optimizer = True), except under Megatron-FSDP, which turns it off.
    fsdp = bool(rec.get("fsdp") or row.get("fsdp") is True)
    perf_bf16 = p.startswith("BF16") and not fsdp and (
        fam == "mbridge" or (fam == "nemo" and release_at_least(row, (25, 4))))
    if (fam == "mbridge" and model == "deepseek-v3") or perf_bf16:
        if not any(k.startswith("params:") for k in keys):
            keys.append("master_remainders: true")
    if rec.get("fp8_attention") and not p.startswith("BF16"):
        keys.append("fp8_attention: true")
    return "{" + ", ".join(keys) + "}"


def loss(row, model, rec):
    if "loss" in rec:
        return rec["loss"]
    fam = family(row)
    if fam == "mbridge" and dev is not None:
        return dev.MBRIDGE_CROSS_ENTROPY.get(model)
    if fam in ("nemo", "dgxc") and release_at_least(row, (25, 4)) and model in ("llama3-8b", "llama3-70b", "llama3-405b"):
        return "te"
    # NeMo 2's performance scripts set cross_entropy_fusion_impl "te" for every model
    # (scripts/performance/helpers.py set_perf_optimization_configs, code index id 15243474233), and
    # NeMo 2's GPTConfig, which its GPT-3, Nemotron and Mixtral configs inherit, defaults
    # cross_entropy_loss_fusion to True (the NeMo 2.0 recipe reference, code index id 22392028375).
    if fam == "nemo" and release_at_least(row, (25, 4)):
        return "te"
    # NeMo 1 launcher Llama configs (DGX Cloud GSW 25.01/25.02, NeMo 24.0x tables): cross_entropy_loss_fusion: true
    # with Megatron-Core's native impl (launcher_scripts/conf/training/llama/llama3_1_8b.yaml @2ac7cee8).
    if fam == "dgxc" and model.startswith("llama3") and not release_at_least(row, (25, 4)):
        return "fused"
    return None


MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")


def _s(v):
    return "" if v is None else str(v).strip().lower()


def _int(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    m = re.match(r"\s*(\d+)\s*$", str(v or ""))
    return int(m.group(1)) if m else None


def layout_edge_layers(layout):
    """Decoder layers in the first and last model chunk of a Megatron-Core pipeline layout string
    (pipeline_model_parallel_layout: '|' ends a chunk, 't' a decoder layer, 'E' the embedding, 'm'
    a multi-token-prediction module, 'L' the loss, 'X*n' and '(...)*n' repeat), with the chunk
    count: "Et*4|(t*4|)*14tmL" -> (4, 1, 16). None when it cannot be read or its middle chunks
    differ (stepcast's first/last split keeps the middle even)."""
    text = layout.replace(" ", "")
    group = re.compile(r"\(([^()]*)\)\*(\d+)")
    while group.search(text):
        text = group.sub(lambda m: m.group(1) * int(m.group(2)), text)
    text = re.sub(r"([A-Za-z])\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    if re.search(r"[^EtmL|]", text):
        return None
    chunks = text.split("|")
    counts = [c.count("t") for c in chunks]
    if len(counts) < 3 or len(set(counts[1:-1])) != 1:
        return None
    return counts[0], counts[-1], len(counts)


# Megatron-Bridge's DeepSeek-V3 recipe lays out the pipeline itself
# (set_deepseek_v3_pipeline_model_parallel_layout, src/megatron/bridge/recipes/deepseek/deepseek_v3.py;
# stored copies: public code index ids 16077667814, 19324893737, 57867761633) unless a performance
# config passes pp_layout: its layout_map gives, per (pp, vpp), [embedding + decoder x a] + [decoder x b]
# x (chunks - 2) + [decoder x c + mtp + loss]. The entries depend on the chunk count pp x vpp alone:
# 4 chunks (4, 1): 16 / 16 / 13; 8 chunks (8, 1), (4, 2): 8 / 8 / 5; 16 chunks (16, 1), (8, 2),
# (4, 4): 4 / 4 / 1. A (pp, vpp) outside the map raises ValueError there, so such a run passed a
# layout; the performance configs read for one (GB300 pp 2 vpp 8, DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_*
# "Et*4|(t*4|)*14tmL") give the same 16-chunk split, and it is taken for every run of that chunk
# count. 32 chunks: the H100 config's "Et|(tt|)*30mL" (1 / 2 / 0), which the generic split gives too.
DSV3_RECIPE_EDGE_LAYERS = {4: (16, 13), 8: (8, 5), 16: (4, 1), 32: (1, 0)}


def dsv3_edge_layers(row, rec, model, pp, vpp):
    """(first, last) decoder layers of a Megatron-Bridge DeepSeek-V3 row's pipeline, or None."""
    if family(row) != "mbridge" or model != "deepseek-v3" or pp * vpp < 3:
        return None
    if rec.get("pp_layout"):
        read = layout_edge_layers(rec["pp_layout"])
        if read and read[2] == pp * vpp:
            return read[0], read[1]
    return DSV3_RECIPE_EDGE_LAYERS.get(pp * vpp)


def clean_recipe(row):
    """The row's recipe fields (BRIEF.md), read only when the helper found the layout equal to the
    row's in every field (layout_match true), as a dict of stepcast-facing values."""
    rec = row.get("recipe") or {}
    if not (rec.get("layout_match") is True or _s(rec.get("layout_match")) == "true"):
        return {}
    out = {}
    mods = rec.get("recompute_modules")
    if isinstance(mods, str) and mods.startswith("["):
        mods = re.findall(r"[a-z_]+", mods)
    rc = _s(rec.get("recompute"))
    nl = _int(rec.get("recompute_num_layers"))
    if isinstance(mods, list) and mods:
        out["recompute"] = ("selective", [m for m in mods if m in MODULES])
    elif re.search(r"\bfull\b", rc) and "null" not in rc.split("full")[0][-12:]:
        m = re.search(r"num_layers\D{0,4}(\d+)", rc)
        out["recompute"] = ("full", nl or (int(m.group(1)) if m else None))
    elif "selective" in rc:
        found = [m for m in MODULES if re.search(r"\b" + m + r"\b", rc)]
        out["recompute"] = ("selective", found)
    fs = _s(rec.get("fsdp"))
    if _s(rec.get("use_megatron_fsdp")) == "true" or fs.startswith(("true", "yes", "fsdp2", "megatron-fsdp", "megatron fsdp")):
        out["fsdp"] = True
    cg = _s(rec.get("cuda_graph_scope")) + " " + _s(rec.get("cuda_graphs")) + " " + _s(rec.get("cuda_graph_impl"))
    # cuda_graph_impl "none" captures nothing whatever the scope says: Megatron-Bridge's
    # scripts/performance/utils/overrides.py _set_cuda_graph_overrides returns before reading the
    # scope when impl is "none" (public code index id 57650989731; the older version, id 33152635004,
    # stores the scope but leaves impl "none"), and Megatron-Core builds the full-iteration graph
    # only with impl "local" (its test "deprecated cuda_graph_scope full_iteration ... noops without
    # local impl", id 59727293008). The Llama 3 70B NVFP4 V2 recipes set impl "none" with scope
    # "full_iteration" (llama3_workload_base_configs.py @00919dcf).
    graphs_off = _s(rec.get("cuda_graph_impl")) == "none"
    if not graphs_off and ("full_iteration" in cg or "one outer graph for the complete training step" in cg):
        out["cuda_graphs"] = "full_iteration"
    gr = _s(rec.get("grad_reduce_in_fp32"))
    fp8_row = str(row.get("precision") or "").upper().startswith(("FP8", "MX"))
    if gr.startswith(("false", "no")) or "grad_sync_dtype: bf16" in gr or "grad_sync_dtype=bf16" in gr:
        out["grads_bf16"] = True
    elif gr.startswith("fp8 runs") and "false" in gr:
        out["grads_bf16"] = fp8_row
    elif gr.startswith("true") or "main-grads-dtype fp32" in gr:
        out["grads_bf16"] = False
    to = _s(rec.get("tp_comm_overlap"))
    if to:
        if to.startswith(("n/a", "none")):
            pass
        elif re.search(r"\bfalse\b|disabled|\b0\b", to) and not re.search(r"\btrue\b", to):
            out["tp_comm_overlap"] = False
        elif re.search(r"\btrue\b|userbuffers|enabled", to):
            out["tp_comm_overlap"] = True
    # FP8 primary weights (Megatron's --fp8-param-gather, NeMo's fp8_params) as the recipe records
    # them: "true", "'fp8_params: true'", "FP8_PARAMS=True", "True in bf16_with_fp8_mixed (...)",
    # "fp8_params=$FP8_ENABLED" (true exactly for the FP8 runs); "'fp8_params: false'" says no.
    pg = _s(rec.get("fp8_param_gather"))
    if re.search(r"fp8_params: false|^false", pg):
        out["fp8_params"] = False
    elif re.search(r"^true|fp8_params: true|fp8_params=true|=\$fp8_enabled", pg):
        out["fp8_params"] = fp8_row
    f8 = _s(rec.get("fp8_recipe"))
    if f8.startswith("mxfp8"):
        out["fp8"] = "mxfp8"
    elif "current" in f8 or "tensorwise" in f8 or "fp8_cs" in f8:
        out["fp8"] = "current"
    elif "blockwise" in f8:
        out["fp8"] = "current"
    elif "delayed" in f8:
        out["fp8"] = "delayed"
    disp = _s(rec.get("moe_flex_dispatcher_backend")) + " " + _s(rec.get("moe_dispatcher"))
    if "hybridep" in disp:
        out["dispatcher"] = "hybridep"
    elif "deepep" in disp:
        out["dispatcher"] = "deepep"
    a2a = _s(rec.get("moe_a2a_overlap")) + " " + _s(rec.get("a2a_overlap")) + " " + _s(rec.get("overlap_moe_expert_parallel_comm"))
    if re.search(r"\btrue\b|a2a_overlap=1", a2a):
        out["a2a"] = True
    if _s(rec.get("cutedsl_fused_grouped_mlp")) == "true":
        out["grouped_gemm"] = True
    off = _int(rec.get("cpu_offloading_num_layers"))
    if off:
        out["offload_layers"] = off
    if _s(rec.get("pp_layout")) not in ("", "none", "null"):
        out["pp_layout"] = str(rec.get("pp_layout")).strip()
    ce = _s(rec.get("cross_entropy_fusion_impl")) + " " + _s(rec.get("cross_entropy_fusion"))
    if re.search(r"\bte\b", ce):
        out["loss"] = "te"
    elif "cross_entropy_loss_fusion: true" in ce:
        out["loss"] = "fused"
    return out


NON_MEGATRON = ("maxtext", "paxml", "jax", "llm-foundry", "internlm", "torchtitan", "fms-fsdp", "pytorch/ao",
                "trainy")


def framework_skip(row):
    text = " ".join(str(x) for x in [(row.get("source") or {}).get("repo"), (row.get("source") or {}).get("release"),
                                      row.get("notes"), (row.get("recipe") or {}).get("framework")]).lower()
    for w in NON_MEGATRON:
        if w in text:
            return w
    return None


# DGX Cloud's NeMo-1 recipes (GSW 24.11-25.04, H100): what each model's configure.sh exports
# (NVIDIA/dgxc-benchmarking @35a9aecc, 143b90dd, 8f5cbb37, 741c886). NVTE_FUSED_ATTN=0 turns off
# Transformer Engine's cuDNN attention, so TE runs the flash-attn package: FlashAttention-2 on H100
# (stepcast's attention_kernel flash2). Keyed by the row's source README.
#   grok1/configure.sh, every version: "export NVTE_FUSED_ATTN=0", "model.ub_tp_comm_overlap=true".
#   nemotron/configure.sh @35a9aecc, @8f5cbb37: 340b "export NVTE_FUSED_ATTN=0", 15b
#     "export NVTE_FUSED_ATTN=1"; both "model.ub_tp_comm_overlap=True".
#   nemo_megatron/configure.sh @143b90dd (GSW 25.01): "export NVTE_FUSED_ATTN=0"; @8f5cbb37 and
#     later "=1"; gpt3_175b_hydra.yaml "ub_tp_comm_overlap: true".
DGXC_NEMO1 = {
    # README path prefix (and commit where the setting changed) -> (flash-attn 2, TP comm overlap)
    ("grok1/README_314b.md", None): (True, True),
    ("grok1/README.md (older version; NeMo 24.12 container)", None): (True, True),
    ("nemotron/README_340b.md", None): (True, True),
    ("nemotron/README_15b.md", None): (False, True),
    ("nemo_megatron/README_175b.md", "143b90dd"): (True, True),
    ("nemo_megatron/README_175b.md", "0b71cfda"): (False, True),
}


# DGX Cloud NeMo-1 recipes whose configure.sh sets FP8 primary weights with FP8 compute:
#   grok1/configure.sh @143b90dd (code index id 36368923657): "model.fp8_params=${FP8_ENABLED^}".
#   nemotron/configure.sh @35a9aecc (id 36126688295) and @8f5cbb37 (id 36762593030), 15b and 340b:
#     "+model.fp8_params=${FP8_ENABLED^}".
#   nemo_megatron/configure.sh @143b90dd (id 36867012982) passes model.fp8 only: not listed.
DGXC_NEMO1_FP8_PARAMS = ("grok1/README_314b.md", "grok1/README.md (older version; NeMo 24.12 container)",
                         "nemotron/README_340b.md", "nemotron/README_15b.md")


def dgxc_nemo1_fp8_params(row):
    """Whether a DGX Cloud NeMo-1 row's configure.sh keeps FP8 primary weights under FP8."""
    return dgxc_nemo1(row) is not None and str((row.get("source") or {}).get("path") or "").startswith(
        DGXC_NEMO1_FP8_PARAMS)


# NeMo-1 launcher pre-training tables (NeMo 24.0x performance summaries, the launcher's
# examples/README.md): the H100 example scripts that reproduce them pass
# "+training.model.optim.grad_sync_dtype=bf16" (NVIDIA/NeMo-Framework-Launcher examples/training/...):
#   gpt/h100/20b_fp8_8node.sh (id 29871488028), gpt/h100/175b_fp8_16node.sh (id 29317235215),
#   llama/h100/llama2_13b_fp8.sh, llama/h100/llama2_70b_fp8.sh (id 29430981820),
#   llama/h100/llama3_8b_fp8.sh (ids 21892347474, 14857852882: both stored versions).
# The Apex distributed optimizer then keeps its contiguous gradient buffer, the weight gradients'
# accumulation and their reduce-scatter in BF16. Not listed: llama2_7b_fp8.sh (one stored version
# has it, id 21994513827, one not, id 33952846180), the Nemotron examples (nemotron_8b_fp8.sh id
# 33851031421, nemotron_22b_fp8.sh id 30054420086: not passed), Nemotron-340B (no example).
# A transcribed recipe's own grad_reduce_in_fp32 takes precedence.
NEMO1_BF16_GRAD_SYNC = (r"^gpt-?3-?(20b|175b)$", r"^llama-?2-?(13b|70b)$", r"^llama-?3-?(8b|70b)$")


def nemo1_launcher_bf16_grad_sync(row):
    """Whether a NeMo-1 launcher pre-training row's example script reduces gradients in BF16."""
    if family(row) != "nemo" or release_at_least(row, (24, 9)) or row.get("task"):
        return False
    name = re.sub(r"-+", "-", str(row.get("model") or "").lower().replace("_", "-").replace(" ", "-"))
    return any(re.search(p, name) for p in NEMO1_BF16_GRAD_SYNC)


# NeMo 2's performance scripts (scripts/performance/llm/pretrain_*.py) with --compute_dtype fp8 set
# trainer.plugins = bf16_with_fp8_mixed() and plugins.grad_reduce_in_fp32 = False: inline in the
# early scripts (pretrain_gpt3_175b.py, code index id 9297619184), in helpers.set_precision_configs
# later (id 15243474233, "ds" the default recipe). bf16_with_fp8_mixed keeps FP8 weights in every
# stored version of nemo/collections/llm/recipes/precision/mixed_precision.py (fp8_params = True,
# id 19328826476; fp8_param_gather = True, ids 3501017253, 2440947660). Rows run that way: NeMo's
# own tables from 25.02, and DGX Cloud's GSW 25.04 / 25.05 Nemotron-4, Grok-1 and Llama 3.1 READMEs
# (@741c8860: nemotron/launch.sh runs scripts.performance.llm.pretrain_nemotron4_<size> of NeMo
# 25.02.01, id 36107501480; llama3.1's pretrain_llama31.py sets the same plugin; @1f6d9f40: each
# launch.sh runs scripts.performance.llm.pretrain_<model> of NeMo 25.04, as the rows' recipes record).
NEMO2_PERF_SCRIPT_DGXC = (("nemotron/README.md", "741c8860"), ("llama3.1/README.md", "741c8860"),
                          ("nemotron/README.md", "1f6d9f40"), ("grok1/README.md", "1f6d9f40"),
                          ("llama3.1/README.md", "1f6d9f40"))


def nemo2_perf_script_row(row):
    """Whether a row ran NeMo 2's performance scripts (whose FP8 runs use bf16_with_fp8_mixed)."""
    fam = family(row)
    if fam == "nemo":
        return release_at_least(row, (25, 2)) and not row.get("task")
    src = row.get("source") or {}
    return fam == "dgxc" and (str(src.get("path") or ""), str(src.get("commit") or "")[:8]) in NEMO2_PERF_SCRIPT_DGXC


def filed_regression(row, model):
    """What dev_scenarios.py's FILED_REGRESSIONS names for a Megatron-Bridge row of `model`, or None."""
    return dev.filed_regression(model, gpu_key(row), release(row), "MX" in str(row.get("precision") or "").upper())


def dgxc_nemo1(row):
    """(flash2, tp_comm_overlap) of a DGX Cloud NeMo-1 configure.sh row, or None."""
    if family(row) != "dgxc" or gpu_key(row) != "H100":
        return None
    src = row.get("source") or {}
    path = str(src.get("path") or "")
    commit = str(src.get("commit") or "")[:8] or None
    for (prefix, at), settings in DGXC_NEMO1.items():
        if path.startswith(prefix) and (at is None or at == commit):
            return settings
    return None


def expert_tp(row, model, tp):
    """The expert-tensor-parallel size: as printed; else TP for DGX Cloud's NeMo-1 Grok-1 proxy, 1
    otherwise. The Grok-1 proxy's hydra config (grok1/grok1_314b.yaml @35a9aecc) sets no
    expert_tensor_parallel_size. NeMo 1 then shards the experts over the tensor-parallel group:
    nemo/collections/nlp/modules/common/megatron/megatron_init.py (fake_initialize_model_parallel)
    forms each expert group from TP x EP consecutive ranks. Megatron-Core's
    parallel_state.initialize_model_parallel does the same: expert_tensor_parallel_size None -> TP.
    The same README's later GB200 rows print ETP 4 at TP 4."""
    printed = _int(row.get("etp"))
    if printed:
        return printed
    if model == "grok-1" and family(row) == "dgxc":
        return tp
    return 1


def model_entry(row, model):
    """Catalog key, or a flow mapping over a preset when the run trained fewer layers (DGX Cloud's
    proxy configurations print layers_in_run) or the model is a dense Llama-style / GPT-3-style
    model given by its dimensions."""
    layers = None
    m = re.search(r"layers_in_run\s*=\s*(\d+)", str(row.get("notes") or ""))
    if m:
        layers = int(m.group(1))
    if model is not None:
        keys = []
        if layers and layers != LAYERS[model]:
            keys.append(f"layers: {layers}")
        if model == "grok-1" and family(row) == "dgxc":
            # DGX Cloud's grok-1-proxy (grok1/grok1_314b.yaml @35a9aecc): Llama 3's tokenizer, untied
            # embeddings, expert capacity factor 1.0 (the catalog entry's note).
            keys += ["vocab: 128256", "tied_embeddings: false", "capacity_factor: 1.0"]
        if keys:
            return "{" + ", ".join([f"preset: {model}"] + keys) + "}", layers or LAYERS[model]
        return model, LAYERS[model]
    d = row.get("model_dims") or {}
    name = str(row.get("model") or "").lower()
    need = ("layers", "hidden", "heads", "ffn_hidden")
    if not all(_int(d.get(k)) for k in need) or (d.get("experts") or 1) not in (1, None):
        return None, None
    if re.search(r"llama|mistral", name):
        preset = "llama2-7b"
    elif re.search(r"^nemotron-?4?-?\d", name):
        preset = "nemotron4-15b"   # Nemotron-4 family (squared-ReLU MLP, GQA); not Nemotron-H / Nemotron 3
    elif re.search(r"gpt-?3", name):
        preset = "gpt3-175b"
    else:
        return None, None
    keys = [f"preset: {preset}"] + [f"{k}: {_int(d[k])}" for k in need]
    if _int(d.get("kv_heads")):
        keys.append(f"kv_heads: {_int(d['kv_heads'])}")
    if _int(d.get("vocab")):
        keys.append(f"vocab: {_int(d['vocab'])}")
    n = layers or _int(d["layers"])
    if layers:
        keys[1] = f"layers: {layers}"
    return "{" + ", ".join(keys) + "}", n


def scenario(row):
    text = (str(row.get("notes") or "") + " " + str(row["id"])).lower()
    if "example output" in text:
        return None, "an example output line, not a results table"
    if re.search(r"lora|peft", text):
        return None, "parameter-efficient fine-tuning: no rule"
    fw = framework_skip(row)
    if fw:
        return None, f"framework {fw}: no mapping rule (Megatron-family rules only)"
    model = norm_model(row.get("model")) or norm_model(row.get("model_name"))
    entry, layers = model_entry(row, model)
    if entry is None:
        return None, f"model {row.get('model')!r} not in the catalog and no inline rule"
    g = gpu_key(row)
    if g not in SYSTEMS:
        return None, f"gpu {row.get('gpu')!r} has no system rule"
    fam = family(row)
    megatron = fam in MEGATRON_FAMILIES or "megatron" in str((row.get("source") or {}).get("repo") or "").lower()
    try:
        tp = int(row.get("tp") or 1); pp = int(row.get("pp") or 1); cp = int(row.get("cp") or 1)
        ep = int(row.get("ep") or 1); vpp = int(row.get("vpp") or 1); gpus = int(row["gpus"])
        seq = int(row["seq_len"]); gbs = int(row["global_batch"]); mbs = int(row.get("micro_batch") or 1)
    except (TypeError, ValueError) as e:
        return None, f"layout not numeric: {e}"
    if gpus % (tp * pp * cp):
        return None, f"gpus {gpus} not divisible by tp*pp*cp"
    dp = gpus // (tp * pp * cp)
    rec = clean_recipe(row)
    fam = family(row)
    key = model or "llama3-8b"
    notes = str(row.get("notes") or "")
    table_command = _s((row.get("recipe") or {}).get("layout_match")).startswith("command printed with the table")
    if str(row["id"]).startswith("mzoo_") and table_command:
        # Megatron-MoE-ModelZoo's long-context table (best_practice/qwen3/readme.md @020b8136) prints
        # one command for all its rows ("PP=8 VPP=4 EP=8 OPTIMIZER_OFFLOAD=0 A2A_OVERLAP=0
        # --recompute-granularity selective --recompute-modules layernorm moe") and the dispatcher in
        # its header (DeepEP): what the command sets holds for every row; the rows vary TP, CP, the
        # batch and the length only.
        rc = _s(row["recipe"].get("recompute"))
        if rc.startswith("selective"):
            rec = dict(rec, recompute=("selective", [m for m in MODULES if re.search(r"\b" + m + r"\b", rc)]))
        m = re.search(r"Dispatcher (\w+)", notes)
        if m and m.group(1).lower() in ("deepep", "hybridep"):
            rec = dict(rec, dispatcher=m.group(1).lower())
    if str(row["id"]).startswith("mzoo_") and notes.startswith("Printed:"):
        # Megatron-MoE-ModelZoo tables print the dispatcher, recompute, FSDP and overlap per row.
        m = re.search(r"Dispatcher (\w+)", notes)
        if m and m.group(1).lower() in ("deepep", "hybridep"):
            rec = dict(rec, dispatcher=m.group(1).lower())
        m = re.search(r"recompute '([^']*)'", notes)
        if m:
            words = m.group(1).lower()
            if "full" in words:
                rec = dict(rec, recompute=("full", None))
            elif words.strip():
                mods = [{"norm": "layernorm", "act": "moe_act"}.get(w.strip(), w.strip()) for w in words.split(",")]
                rec = dict(rec, recompute=("selective", mods))
        if "FSDP 'On'" in notes:
            rec = dict(rec, fsdp=True)
        if "1f1b overlap" in notes:
            rec = dict(rec, a2a=True)
    if fam == "mbridge":
        regression = filed_regression(row, key)
        if regression:
            return None, f"release with a filed regression for this run ({regression})"
    m = re.match(r"mlm_dsv3_.*_step(\d+)_", str(row["id"]))
    if m and _s((row.get("recipe") or {}).get("layout_match")) != "true":
        return None, "an intermediate step of an optimization history (the source states the final step's recipe only)"
    prec_text = str(row.get("precision") or "").lower()
    if any(w in prec_text for w in ("probably", "not visible", "unverified")):
        return None, "precision not stated by the source"
    lm = _s((row.get("recipe") or {}).get("layout_match"))
    if "not confirmed" in lm or re.search(r"\bVP(=| printed )NA\b", notes):
        return None, "a layout field the source leaves unconfirmed"
    # Megatron-Bridge 26.06 and later, MXFP8 Qwen3 MoE on GB200/GB300/B200/B300 and DeepSeek-V3 on
    # GB200/GB300: the CuTeDSL fused grouped MLP under full-iteration CUDA graphs with HybridEP and
    # the EP overlap (Megatron-Bridge PRs #4249, #4606, #5356 for Qwen3; #4666 for DeepSeek-V3; the
    # repo README's MoE section). On B200/B300 PR #4606 (merged into the r0.5.0 release branch,
    # 2026-06-30) makes the FP8-MX recipes "exercise the same optimization path already used by
    # GB200/GB300" (HybridEP: 235B B200 by that PR, 235B B300 by PR #3490; 30B's B200/B300 configs
    # already ran it, Megatron-Bridge issue #4439's log).
    gpu = gpu_key(row)
    qwen3 = key in ("qwen3-30b-a3b", "qwen3-235b-a22b")
    if (fam == "mbridge" and release_at_least(row, (26, 6)) and "MX" in str(row.get("precision") or "").upper()
            and ((gpu in ("GB200", "GB300") and (qwen3 or key == "deepseek-v3")) or (gpu in ("B200", "B300") and qwen3))):
        rec = dict(rec, grouped_gemm=True, dispatcher="hybridep", a2a=True, cuda_graphs="full_iteration")
        # FP8 dot-product attention: Qwen3's MXFP8 stack (PR #4606 lists "FP8 dot-product
        # attention" in the path it ports), and DeepSeek-V3 on GB300 only (PR #3983: "FP8
        # dot-product attention for dsv3 gb300 mxfp8 ... non-GB300 hardware ... intentionally
        # untouched").
        if qwen3 or gpu == "GB300":
            rec = dict(rec, fp8_attention=True)
    prec = precision_text(row, key, rec)
    if prec is None:
        return None, f"precision {row.get('precision')!r} has no rule"
    # A printed layout no run can have (a transcription or a table that disagrees with itself) is
    # left out with the disagreement, not written as a scenario stepcast would refuse.
    if gbs % (mbs * dp):
        return None, (f"printed layout inconsistent: global batch {gbs} does not split into micro-batches of "
                      f"{mbs} over dp {dp}")
    etp = expert_tp(row, key, tp)
    if ep > 1 and (tp * cp * dp) % (ep * etp):
        return None, (f"printed layout inconsistent: ep {ep} x expert_tp {etp} does not divide "
                      f"a pipeline stage's {tp * cp * dp} ranks")
    lines = [
        f"# held-out row {row['id']} ({row['_file']}), written by scripts/heldout/rules.py",
        "schema_version: 1",
        f"name: heldout-{row['id']}",
        f"model: {entry}",
        f"system: {{preset: {SYSTEMS[g]}, gpus: {gpus}}}",
        "training:",
        f"  seq_len: {seq}",
        f"  global_batch: {gbs}",
        f"  micro_batch: {mbs}",
    ]
    lo = loss(row, key, rec) if model else rec.get("loss")
    if lo:
        lines.append(f"  cross_entropy_fusion: {lo}")
    nemo1 = dgxc_nemo1(row)
    if nemo1 and nemo1[0]:
        lines.append("  attention_kernel: flash2")
    lines += ["parallel:", f"  tp: {tp}", f"  pp: {pp}", f"  dp: {dp}"]
    if cp > 1:
        lines += [f"  cp: {cp}", "  cp_kind: ring"]
    if ep > 1:
        lines += [f"  ep: {ep}", f"  expert_tp: {etp}"]
    if vpp > 1:
        lines.append(f"  vpp: {vpp}")
    chunks = pp * vpp
    recipe_split = dsv3_edge_layers(row, rec, model, pp, vpp)
    if recipe_split and (layers - sum(recipe_split)) % (chunks - 2) == 0:
        lines += [f"  first_stage_layers: {recipe_split[0]}", f"  last_stage_layers: {recipe_split[1]}"]
    elif layers % chunks != 0:
        split = dev.edge_chunk_layers(layers, chunks)
        if split is None:
            return None, f"{layers} layers do not split over {chunks} chunks"
        lines += [f"  first_stage_layers: {split[0]}", f"  last_stage_layers: {split[1]}"]
    if megatron:
        lines.append(f"  sequence_parallel: {'true' if tp > 1 else 'false'}")
    tpo = rec.get("tp_comm_overlap")
    if tpo is None and megatron and tp > 1 and (model or "").startswith("llama"):
        tpo = True
    if tpo is None and nemo1:
        tpo = nemo1[1]
    if tp > 1 and tpo is not None:
        lines.append(f"  tp_comm_overlap: {'true' if tpo else 'false'}")
    if rec.get("fsdp") or row.get("fsdp") is True:
        lines += ["  zero: 3", "  fsdp: megatron" if megatron else "  fsdp: fsdp2"]
    else:
        lines.append(f"  zero: {1 if megatron else 0}")
    rc = rec.get("recompute")
    if rc and rc[0] == "full":
        lines.append("  recompute: full")
        if rc[1]:
            lines.append(f"  recompute_layers: {rc[1]}")
    elif rc and rc[0] == "selective" and rc[1]:
        lines += ["  recompute: selective", f"  recompute_modules: [{', '.join(rc[1])}]"]
    elif rc and rc[0] == "selective":
        lines.append("  recompute: selective")
    else:
        lines.append("  recompute: none")
    if rec.get("offload_layers"):
        lines.append(f"  activation_offload_layers: {rec['offload_layers']}")
    if rec.get("cuda_graphs"):
        lines.append("  cuda_graphs: full_iteration")
    if ep > 1:
        if rec.get("dispatcher"):
            lines.append(f"  ep_dispatcher: {rec['dispatcher']}")
        if rec.get("grouped_gemm"):
            lines.append("  moe_grouped_gemm: grouped")
        if rec.get("a2a"):
            lines.append("  ep_comm_overlap: true")
    lines.append(f"precision: {prec}")
    return "\n".join(lines) + "\n", None
