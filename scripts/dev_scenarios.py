#!/usr/bin/env python3
"""Writes a stepcast scenario for each row of the development set
(tests/fixtures/reference/dev_training_runs.yaml) that the rules below map, to
tests/fixtures/dev_scenarios/: the mixture-of-experts rows, the context-parallel rows and the dense
rows (Llama 3 8B / 70B / 405B, Llama 3.1 405B) alike.

    python3 scripts/dev_scenarios.py            # rewrite the files
    python3 scripts/dev_scenarios.py --check    # exit 1 when a committed file differs

One rule per field, the same for every row (never tuned per row):
  model        the catalog model of the row's model name (dimensions checked against the row).
  mtp          DeepSeek-V3 rows run the catalog's one multi-token-prediction module (mtp_depth 1: the
               Megatron-Bridge recipe sets model_cfg.mtp_num_layers = 1 and ends its pipeline layouts
               with ["mtp", "loss"], src/megatron/bridge/recipes/deepseek/deepseek_v3.py
               @05d003fb8985; the H100 performance config's layout "Et|(tt|)*30mL" holds the "m",
               deepseek/deepseek_llm_pretrain.py @69655bff2dfb; no performance config read sets
               mtp_num_layers), unless the row's notes say the archive labels it "w/o MTP" (the two
               GB200 25.11 rows): then model: {preset: deepseek-v3, mtp_depth: 0}. The B200 row is
               labelled "w/ MTP".
  system       DGX-H100 and Meta's Grand Teton servers (8 H100s and 8x400 Gb/s NICs per node, the
               row's `system`) -> dgx-h100; DGX-B200 -> dgx-b200; GB200 -> gb200-nvl72; GB300 ->
               gb300-nvl72; B300 -> dgx-b300. The GPU count is the row's.
  parallel     tp, pp, cp, ep, dp, micro_batch, global_batch as stated; vpp null -> 1 and
               micro_batch null -> 1 (Megatron's defaults, as simulator/published_runs.h maps
               unstated fields). Megatron-Bridge rows: sequence parallelism when tp > 1, the
               distributed optimizer (ZeRO-1) with --overlap-grad-reduce and --overlap-param-gather,
               Megatron-Bridge Llama rows with tp > 1 overlap their TP communication
               (tp_comm_overlap: the Llama 3.1 recipes' CommOverlapConfig(tp_comm_overlap=True) with
               userbuffers, src/megatron/bridge/recipes/llama/llama3.py, kept by
               scripts/performance/configs/llama/llama31_llm_pretrain.py @0013c9a8ed4d except for
               NVFP4); other families only through a matching recipe (RECIPES below).
               expert_tp 1 (the MoE recipes' expert-tensor-parallel size; Megatron-MoE best
               practice), recomputation by the `recompute` rule below (the rows state none), the all-to-all dispatcher without
               --overlap-moe-expert-parallel-comm (not stated; the `dispatcher` rule below for rows
               with a matching recipe). Llama 3 rows: "Our use of FSDP for Llama 3 shards
               optimizer states and gradients, but for model shards we do not reshard after
               forward computation to avoid an extra all-gather communication during backward
               passes" (Llama 3 paper Sec. 3.3.2, p. 10): optimizer states and gradients sharded,
               parameters whole from the forward through the backward: ZeRO-2 (zero: 2; stepcast
               prices its traffic as the distributed optimizer's, gradients reduce-scattered and
               parameters gathered once per step); context parallelism by all-gathering K and V
               (Sec. 3.3.2): cp_kind all_gather. Llama 3 paper rows run the interleaved schedule (Sec. 3.3.2, p. 11: "To
               reduce pipeline bubbles, we use an interleaved schedule (Narayanan et al., 2021) with
               V pipeline stages on one pipeline rank. Overall pipeline bubble ratio is
               (PP-1)/(V*M)."), with V = 8 (vpp 8). The paper states no V; 8 is inferred, an
               assumption, from the same paragraph: "we reduce one Transformer layer each from the
               first and the last stages, respectively. This means that the first model chunk on
               the first stage has only the embedding, and the last model chunk on the last stage
               has only output projection and loss calculation." A first chunk that holds only the
               embedding after giving up one Transformer layer held one, so with equal chunks
               every chunk is one layer: 126 layers + the two edge chunks = 128 = PP 16 x V 8
               (V 2 or 4 would leave the first chunk 3 or 1 layers beside the embedding). The
               paper's tunable N (micro-batches run back to back per chunk) is Megatron's N = PP
               here (M = 16 = PP for the CP row), the bubble ratio it states.
  layers       when pp x vpp does not divide the layers, every model chunk but the first and the
               last holds ceil(layers / chunks) and those two share the rest, the first one more
               when it is odd: Llama 3 Sec. 3.3.2 ("one Transformer layer less on the first and
               the last stage"); Megatron-Bridge counts the embedding and the loss (and
               DeepSeek-V3's MTP module) as layers of the first and last chunks the same way.
               When the middle chunks hold every layer, the first and last hold none (the
               embedding-only and loss-only chunks of Sec. 3.3.2). Except where a row's matching
               recipe (RECIPES, the `recompute` rule's layout match) fixes the pipeline layout
               (RECIPE_LAYERS below): Megatron-Bridge's DeepSeek-V3 configs take the performance
               config's pp_layout, or without one the recipe's layout_map for (pp, vpp)
               (deepseek/deepseek_llm_pretrain.py @69655bff2dfb; set_deepseek_v3_pipeline_model_
               parallel_layout in src/megatron/bridge/recipes/deepseek/deepseek_v3.py): B200_V1
               (pp 16) and GB200_BF16_V2 (pp 4, vpp 4) set none and get (16, 1) / (4, 4):
               [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 + [["decoder"] + ["mtp",
               "loss"]], so 4 decoder layers in the first chunk and 1 in the last, where the MTP
               module and the loss sit; H100_V1's pp_layout "Et|(tt|)*30mL" gives 1 and 0, as the
               generic rule does.
  recompute    none, unless RECIPES below holds the row: then recompute: selective with the
               recipe's recompute_modules (Megatron-Core fine-grained recomputation). A recipe is a
               config of Megatron-Bridge's performance scripts
               (scripts/performance/configs/<model>/<model>_workload_base_configs.py) for the
               row's model, GPU and precision, and it holds the row only when its version matches
               the row: the stored version's layout (GPUs, tp, pp, cp, ep, vpp, micro_batch,
               global_batch; WorkloadBaseConfig's defaults 1 / None for unset fields) equals the
               row's in every field. The row's own commit (the performance-summary page's) is not
               stored in the public-code index, so the layout is how the version is told apart: a
               recipe whose layout differs is a different tuning of the workload, and its
               recompute is not applied. A matching recipe also gives the row its communication
               overlaps where the config sets them (overlap_moe_expert_parallel_comm ->
               ep_comm_overlap, tp_comm_overlap, overlap_grad_reduce), each with the line read. The script checks the equality for every entry. Checked
               against the row: the GPT-OSS rows of 25.11 (H100 micro_batch 4 against the recipe's
               1; B200 ep 8 against 64; GB200 micro_batch 1 against 4), DeepSeek-V3 GB200 FP8-MX
               25.11 (pp 8, ep 32 against pp 4, ep 64) do not match and keep recompute: none; the
               Qwen3 recipes set no recompute_modules (qwen/qwen3_workload_base_configs.py
               @01b2977e518f). The recipes' versions read are newer than some rows (the DeepSeek-V3
               file names the hybridep dispatcher, after 25.09): the layout match is the evidence
               that the row ran that config, not proof.
  dispatcher   ep_dispatcher: deepep or hybridep where the row's matching recipe (RECIPES, the
               `recompute` rule's layout match) runs Megatron-Core's flex token dispatcher with that
               backend (moe_token_dispatcher_type flex, moe_flex_dispatcher_backend deepep |
               hybridep; enable_deepep=True is DeepEP); alltoall otherwise (Megatron-Core's
               default). Read: DeepSeek-V3 H100
               25.09: deepseek/deepseek_llm_pretrain.py @013284246bc0
               deepseek_v3_h100_1024gpus_fp8_config calls the recipe with enable_deepep=True, which
               applies DeepEP's flex dispatcher (src/megatron/bridge/recipes/deepseek/deepseek_v3.py
               @05d003fb8985 apply_deepep); DeepSeek-V3 B200 and GB200 25.11: their
               WorkloadBaseConfigs set moe_flex_dispatcher_backend="hybridep"
               (deepseek_workload_base_configs.py @042641823051), copied onto the recipe's model
               (deepseek_llm_pretrain.py @69655bff2dfb), whose deepseek_v3_pretrain_config ends with
               apply_flex_dispatcher_backend (flex dispatcher; deepseek_v3.py @355cef457010);
               Qwen3-30B-A3B GB200 FP8-MX: QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 sets
               hybridep (qwen3_workload_base_configs.py @01b2977e518f) and
               qwen/qwen3_llm_pretrain.py qwen3_30b_a3b_pretrain_config_gb200 sets
               moe_token_dispatcher_type "flex" with that backend (code index id 19629787215). The
               Qwen3-235B H100 recipes set moe_token_dispatcher_type "alltoall"; the GPT-OSS
               configs (@1e7adfa90b18) name no backend: alltoall. HybridEP on GB200 spans the
               72-GPU NVLink domain (MNNVL), which is the system's NVLink domain
               (gb200-nvl72 nvlink_domain_gpus 72), so the deepep pricing's domains are racks there.
  precision    FP8-CS -> fp8 with current scaling; FP8-MX -> mxfp8; FP8 -> fp8 (on H100 in a
               Megatron-Bridge row: current scaling, the only FP8 recipe its performance scripts
               define for H100: the *_H100_FP8_CS_* configs of
               scripts/performance/configs/*/*_workload_base_configs.py; DeepSeek-V3's blockwise
               FP8 also scales each tile from the current tensor); BF16 -> bf16. Current scaling
               runs every Transformer layer in FP8 (bf16_edge_layers: 0: the performance scripts'
               get_precision_config("fp8_cs") sets first_last_layers_bf16 = False, "Disable BF16
               Transformer layers in the performance config", scripts/performance/utils/helpers.py,
               code index id 37584630520) and keeps FP8 primary weights (params: fp8):
               Megatron-Bridge's bf16_with_fp8_current_scaling_mixed sets fp8_param_gather = True
               (src/megatron/bridge/training/mixed_precision.py). MXFP8 keeps MXFP8 primary
               weights (params: mxfp8): bf16_with_mxfp8_mixed sets fp8_param_gather = True and
               reuse_grad_buf_for_mxfp8_param_ag = True in every stored version that spells the
               recipe fp8 = "e4m3" (NVIDIA-NeMo/Megatron-Bridge @05097809, basetenlabs @c3a49348);
               the versions with fp8_param_gather = False spell it "hybrid" and predate the
               feature, which CHANGELOG.md lists under 0.1.0rc3, the 25.09 release ("MXFP8:
               Parameter all-gather overlap with computation while the communication buffer
               sharing with reduce-scatter"), so every Megatron-Bridge table (25.09 on) ran it.
               Megatron-Bridge rows reduce gradients in BF16 (grads: bf16): the performance
               scripts' common configs of every family in the set set grad_reduce_in_fp32 = False
               (configs/qwen/qwen3_llm_pretrain.py set_qwen3_common_configs @05c0c90fbbf6,
               gpt_oss/gpt_oss_llm_pretrain.py set_gpt_oss_common_configs @0501207b95db,
               llama/llama31_llm_pretrain.py set_llama31_common_configs @0013c9a8ed4d,
               deepseek/deepseek_llm_pretrain.py set_deepseek_v3_common_configs). Llama 3 paper
               rows keep FP32 gradients. Megatron-Bridge DeepSeek-V3 rows use the precision-aware
               optimizer with BF16 moments and FP32 main params (moments: bf16): the model recipe
               every DeepSeek-V3 performance config starts from sets use_precision_aware_optimizer
               = True, main_params_dtype float32, exp_avg_dtype and exp_avg_sq_dtype bfloat16
               ("Match old recipe optimizer dtype behavior",
               src/megatron/bridge/recipes/deepseek/deepseek_v3.py _deepseek_v3_common
               @05d003fb8985; the same in the dry-run dump
               scripts/performance/dryrun_configs/deepseek/deepseek_v3_pretrain_gb200_nvfp4_v1.yaml
               @a9497c6b1cad, with store_param_remainders: true). With BF16 weights the FP32
               master is then kept as its 16-bit remainder (master_remainders: true;
               Megatron-Core OptimizerConfig.store_param_remainders, default True); FP8 and MXFP8
               weights keep the full FP32 master (Megatron-Core's OptimizerConfig takes the
               precision-aware path that holds remainders, use_precision_aware_optimizer_no_fp8_or_ds_fp8,
               only without FP8 or with delayed scaling, for FP32 main params). Every BF16 row runs
               the precision-aware optimizer too, with FP32 moments (Megatron-Core's default
               exp_avg_dtype) and the master as remainders: the performance scripts set
               use_precision_aware_optimizer = True for compute_dtype bf16 (Megatron-Bridge
               scripts/performance/utils/helpers.py set_user_overrides, code index id 37584630520;
               the same line in the earlier run_script, id 3327608473), which only Megatron-FSDP
               turns off (set_megatron_fsdp_overrides).
  routing      force-balanced (the MoE rows' notes): load_imbalance 1, dropless.
  loss         training.cross_entropy_fusion for Megatron-Bridge rows, from what the row's model
               provider and pretraining recipe set (Megatron-Core runs TE's cross-entropy for
               cross_entropy_loss_fusion True + cross_entropy_fusion_impl "te", its fused native
               path for True + "native", the unfused one for False: LanguageModule.
               compute_language_model_loss, Megatron-LM megatron/core/models/common/language_module/
               language_module.py, code index id 634896012). Every Megatron-Bridge provider derives
               from GPTModelProvider, which sets cross_entropy_loss_fusion = True
               (src/megatron/bridge/models/gpt_provider.py @0254ddd4418307d47f3d5fab32cdfdb29926b4d6;
               Megatron-Core's own default is False, impl "native", model_parallel_config.py
               @02aa3ee4); the impl is the family's:
                 Llama 3 8B / 70B, Llama 3.1 405B -> te: the recipes' _llama3_common sets
                 model_cfg.cross_entropy_fusion_impl = "te" (src/megatron/bridge/recipes/llama/
                 llama3.py, code index id 33552627942; the later flat recipes the same,
                 @0d5f5558c16f "Kernel selections"), as Llama3ModelProvider8B / 70B and
                 Llama31ModelProvider405B do (models/llama/llama_provider.py, id 20945838792).
                 Qwen3-30B-A3B, Qwen3-235B-A22B -> te: _qwen3_moe_common sets it (recipes/qwen/
                 qwen3_moe.py, id 33219856611, the version with moe_flex_dispatcher_backend; the flat
                 recipe id 19489500538 the same); the Qwen3 MoE providers set none.
                 DeepSeek-V3 -> te: DeepSeekModelProvider sets fusion True, impl "te"
                 (models/deepseek/deepseek_provider.py @066adea0f066), and DeepSeekV3Bridge's
                 provider_bridge the same (deepseek_v3_bridge.py @0fe9cb1dd9b1); the recipe
                 (recipes/deepseek/deepseek_v3.py @05d003fb8985) sets neither.
                 GPT-OSS 120B -> fused: neither GPTOSSBridge.provider_bridge (models/gpt_oss/
                 gpt_oss_bridge.py @0e4d6ed607e0) nor _gpt_oss_common (recipes/gpt_oss/gpt_oss.py,
                 id 33686924338) sets an impl, so GPTModelProvider's fusion with Megatron-Core's
                 "native" runs; the later flat recipe says so: cross_entropy_fusion_impl =
                 "native"  # GPT-OSS uses native (id 46104023892).
               No performance config read overrides either key (qwen/qwen3_llm_pretrain.py
               @05c0c90fbbf6, gpt_oss/gpt_oss_llm_pretrain.py @0501207b95db, llama/
               llama3_llm_pretrain.py @2a0d46e2c554). Llama 3 paper rows (Meta's own stack) keep
               native, stepcast's default. The recipe versions read are not pinned to each row's
               release (25.09 to 26.02); every version read of a family sets the same value, except
               the oldest Qwen3 MoE recipe (id 2599762895, before the flex dispatcher the rows use),
               which sets none (fused).
  reference    derived.iteration_time_s where the row derives it (Megatron-Bridge:
               global_batch x seq_len / (tokens/s/GPU x GPUs)); Llama 3 rows give TFLOP/s per
               GPU under the PaLM MFU convention (6N + 12 L H Q T per token, full attention), so
               the reference step is that FLOP count over GPUs x TFLOP/s — computed by the
               fidelity test, not here.
Rows left out (SKIP below, and the runs FILED_REGRESSIONS names, each with its reason; never a
per-row tweak of a rule):
  DeepSeek-V3 on H800: no H800 system in the catalog; DualPipe is issue 8 item 3.
  Qwen3-30B-A3B on H100 and B200 in 25.11 and 26.02: runs of a release with a filed regression,
               which measure the defect, not the hardware (as scripts/heldout/rules.py skips GPT-OSS
               MXFP8 in 26.06.01). NVIDIA-NeMo/Megatron-Bridge issue #1998 (open, labels performance
               and performance/release, 2026-01-20), "[Regression] Low QWEN3 30B B200 and H100
               performance with dropless": "2X slower performance in QWEN3 30B on H100 and B200 with
               the dropless schedule compared to the token-drop schedule ... the perf in 25.11 is 2X
               slower than 25.09. We need to fix this in 26.02." The 26.02 rows ran it too: the same
               layouts give the same throughput as 25.11 (H100 5113 against 5275 tokens/s/GPU, B200
               27.05 s against 28.19 s a step), while 26.02.01 runs the H100 row's scenario, unchanged,
               in 28.94 s against 26.02's 51.27 s (the 26.02.01 rows are held-out rows, not here).
  Qwen3-235B-A22B on B200, MXFP8, in 25.11: a run of a filed regression, NVIDIA-NeMo/Megatron-Bridge
               issue #1705 "Fix QWEN3 235B B200 MXFP8 performance regression" (labels bug, performance,
               performance/release; "Fixed by disabling EP A2A overlap in config (PR #1760)"); PR #1760:
               "MXFP8 step time improved from 20.1s to 16.9s ... Disable moe_a2a_overlap due to CPU
               overhead". The row's 20.05 s is the 20.1 s; 25.09's row of the same scenario measured
               15.33 s (a held-out row).
  Llama 3 70B GB200 FP8-CS 25.11 (64 GPUs, tp 1, pp 1, micro_batch 2, global_batch 256): its
               recipe, LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 (scripts/performance/configs/
               llama/llama3_workload_base_configs.py, code index id 52014364621; the layout is the
               row's), runs Megatron-FSDP (use_megatron_fsdp=True) with 40 layers' activations
               offloaded to the CPU (cpu_offloading_num_layers=40). The `parallel` rule maps every
               Megatron-Bridge row to the distributed optimizer (ZeRO-1) and no rule maps Megatron-
               FSDP or activation offloading, so the row as the rules write it holds the whole model
               and every activation on each GPU (580 GB of 199 predicted): not the run measured.
  cuda_graphs  full_iteration where the row's matching recipe (RECIPES, the `recompute` rule's
               layout match) captures the whole iteration (cuda_graph_impl "local" with
               cuda_graph_scope "full_iteration": Megatron-Core's FullCudaGraphWrapper); none
               otherwise, including recipes that graph only parts of a layer (cuda_graph_impl
               "transformer_engine" with a scope list), which stepcast does not price as a graph.
               Read: Llama 3 8B B200 FP8-CS 25.11: LLAMA3_8B_B200_FP8_CS_BASE_CONFIG (micro-batch 2,
               local, full_iteration; llama/llama3_workload_base_configs.py, code index id
               45659887570), the row's layout; Llama 3 8B GB200 FP8-CS 25.11: the same file's
               LLAMA3_8B_GB200_FP8_CS_BASE_CONFIG sets no graph (its FP8-MX sibling does): none;
               Qwen3-30B-A3B GB200 FP8-MX: QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 sets
               cuda_graph_impl "transformer_engine", scope [moe_router, moe_preprocess]
               (qwen/qwen3_workload_base_configs.py @01b2977e518f): a partial graph, none; no other
               row's recipe read sets a full-iteration graph.
The Llama 3 8B H100 FP8-CS recipe of a later version sets recompute_num_layers=5; no rule maps it
(the `recompute` rule reads recompute_modules only), so that row keeps recompute: none.
"""
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "tests/fixtures/reference/dev_training_runs.yaml")
OUT = os.path.join(ROOT, "tests/fixtures/dev_scenarios")

MODELS = [
    ("qwen3-30b-a3b", "Qwen3-30B-A3B"),
    ("qwen3-235b-a22b", "Qwen3-235B-A22B"),
    ("gpt-oss-120b", "GPT-OSS 120B"),
    ("deepseek-v3", "DeepSeek-V3"),
    ("llama3-8b", "Llama 3 8B"),
    ("llama3-70b", "Llama 3 70B"),
    ("llama3-405b", "Llama 3 405B"),
    ("llama3-405b", "Llama 3.1 405B"),
]
# Rows no rule maps, with the reason (the docstring's "Rows left out").
# Megatron-Bridge runs of a release with a filed regression measure the defect, not the hardware
# (the docstring's "Rows left out"; the repo README's MoE section), in both sets (the held-out
# rules, scripts/heldout/rules.py, read this table too): (catalog model, GPUs or None for any,
# release pattern matched whole, MXFP8 runs only, what the skip names).
#   GPT-OSS GB200/GB300 MXFP8 in 26.06.01: Megatron-Bridge 0.5.1 release notes, regressed CuTeDSL
#     kernels, cudnn-frontend #256.
#   Qwen3-30B-A3B on H100 and B200 in 25.11 and 26.02: #1998 (the docstring states the evidence).
#   Qwen3-235B-A22B MXFP8 on B200 in 25.11: #1705, fixed by PR #1760 (the docstring).
FILED_REGRESSIONS = (
    ("gpt-oss-120b", None, r".*26\.06\.01.*", True, "26.06.01 GPT-OSS MXFP8"),
    ("qwen3-30b-a3b", ("H100", "B200"), r"25\.11|26\.02", False, "Megatron-Bridge #1998, Qwen3-30B-A3B dropless"),
    ("qwen3-235b-a22b", ("B200",), r"25\.11", True, "Megatron-Bridge #1705, Qwen3-235B B200 MXFP8"),
)


def filed_regression(model, gpu, release, mxfp8):
    """What FILED_REGRESSIONS names for a Megatron-Bridge run of catalog `model` on `gpu` ("H100",
    "GB200", ...) in `release` ("25.11", "26.06.01", ...), or None."""
    for key, gpus, releases, mx_only, what in FILED_REGRESSIONS:
        if (model == key and (gpus is None or gpu in gpus) and re.fullmatch(releases, release)
                and (mxfp8 or not mx_only)):
            return what
    return None


def row_filed_regression(row):
    """filed_regression() for a development row: its release from the id (mbridge2511_... is 25.11,
    mbridge260201_... 26.02.01), its GPU from gpu_type."""
    m = re.match(r"mbridge(\d\d)(\d\d)(\d\d)?_", row["id"])
    if not m:
        return None
    release = f"{m.group(1)}.{m.group(2)}" + (f".{m.group(3)}" if m.group(3) else "")
    gpu = next((g for g in ("GB300", "GB200", "B300", "B200", "H100") if g in (row.get("gpu_type") or "")), None)
    what = filed_regression(model_key(row), gpu, release, row["precision"].startswith("FP8-MX"))
    return f"a release with a filed regression for this run ({what})" if what else None


SKIP = {
    "deepseek_v3_pretraining_h800": "no H800 system in the catalog; DualPipe is issue 8 item 3",
    "mbridge2511_gb200_llama3_70b_fp8-cs_64gpu":
        "its recipe runs Megatron-FSDP with 40 layers' activations offloaded; no rule maps either",
}
# Virtual pipeline stages of the Llama 3 paper rows (the docstring's `parallel` rule: inferred from
# Sec. 3.3.2's one-layer-less edge chunks holding only the embedding and only the loss; an assumption).
LLAMA3_PAPER_VPP = 8

# Megatron-Bridge performance recipes whose version matches a row (the docstring's rule): the
# config, the file and the commit of the stored version read, its layout as
# (gpus, tp, pp, cp, ep, vpp, micro_batch, global_batch), its recompute_modules (None: none set),
# and the communication overlaps it sets, as stepcast parallel keys with the line that sets them.
MBRIDGE = "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/"
RECIPES = {
    "mbridge2602_h100_gpt_oss_120b_bf16_64gpu": (
        "GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V2",
        MBRIDGE + "gpt_oss/gpt_oss_workload_base_configs.py @1e7adfa90b18 (the same at @07eea52d4523)",
        (64, 1, 4, 1, 8, None, 1, 1280), ["layernorm", "moe_act"], {}),
    "mbridge2509_h100_deepseekv3_fp8_1024gpu": (
        "DEEPSEEK_V3_PRETRAIN_CONFIG_H100_FP8_CS_V1 (= H100_V1)",
        MBRIDGE + "deepseek/deepseek_workload_base_configs.py @042641823051",
        (1024, 2, 8, 1, 64, 4, 1, 8192), ["mla_up_proj", "mlp"],
        # The same layout in deepseek/parallelism_configs.py @013284246bc0
        # (DEEPSEEK_V3_H100_1024GPUS_FP8_CS_PARALLEL_CONFIG), whose deepseek_llm_pretrain.py
        # deepseek_v3_h100_1024gpus_fp8_config calls set_moe_a2a_overlap_overrides
        # (overlap_moe_expert_parallel_comm = True) and sets overlap_grad_reduce = False, and builds
        # the recipe with enable_deepep=True (H100_V1 above: moe_flex_dispatcher_backend="hybridep").
        {"ep_comm_overlap": True, "overlap_grad_reduce": False, "ep_dispatcher": "deepep"}),
    "mbridge2511_b200_deepseekv3_fp8-mx_256gpu": (
        "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V1 (= B200_V1)",
        MBRIDGE + "deepseek/deepseek_workload_base_configs.py @042641823051",
        (256, 1, 16, 1, 8, None, 1, 2048), ["mla_up_proj"],
        {"ep_dispatcher": "hybridep"}),  # B200_V1: moe_flex_dispatcher_backend="hybridep"
    "mbridge2511_gb200_deepseekv3_bf16_256gpu": (
        "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_BF16_V2",
        MBRIDGE + "deepseek/deepseek_workload_base_configs.py @042641823051",
        (256, 1, 4, 1, 64, 4, 1, 4096), ["mla_up_proj"],
        {"ep_dispatcher": "hybridep"}),  # GB200_V1: moe_flex_dispatcher_backend="hybridep"
    # Qwen3 configs set no recompute_modules (set_qwen3_common_configs: recompute_granularity None).
    "mbridge2511_gb200_qwen3_30b_a3b_fp8-mx_8gpu": (
        "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1",
        MBRIDGE + "qwen/qwen3_workload_base_configs.py @01b2977e518f",
        (8, 1, 1, 1, 8, None, 4, 512), None,
        # moe_flex_dispatcher_backend="hybridep"; qwen/qwen3_llm_pretrain.py
        # qwen3_30b_a3b_pretrain_config_gb200 sets moe_token_dispatcher_type = "flex".
        {"ep_dispatcher": "hybridep"}),
    # Llama 3 configs set no recompute_modules; B200 8B captures the full iteration.
    "mbridge2511_b200_llama3_8b_fp8-cs_8gpu": (
        "LLAMA3_8B_B200_FP8_CS_BASE_CONFIG",
        MBRIDGE + "llama/llama3_workload_base_configs.py (code index id 45659887570)",
        (8, 1, 1, 1, 1, None, 2, 128), None,
        # cuda_graph_impl="local", cuda_graph_scope="full_iteration".
        {"cuda_graphs": "full_iteration"}),
    "mbridge2511_h100_qwen3_235b_a22b_fp8-cs_256gpu": (
        "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1",
        MBRIDGE + "qwen/qwen3_workload_base_configs.py @01b2977e518f",
        (256, 2, 8, 1, 32, 4, 1, 2048), None,
        # moe_a2a_overlap=True in the config; qwen/qwen3_llm_pretrain.py @05c0c90fbbf6
        # qwen3_235b_a22b_pretrain_config_h100: CommOverlapConfig(tp_comm_overlap=False).
        {"ep_comm_overlap": True, "tp_comm_overlap": False}),
    "mbridge2602_h100_qwen3_235b_a22b_fp8_256gpu": (
        "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 (V1 with global_batch_size 8192)",
        MBRIDGE + "qwen/qwen3_workload_base_configs.py @01b2977e518f",
        (256, 2, 8, 1, 32, 4, 1, 8192), None,
        {"ep_comm_overlap": True, "tp_comm_overlap": False}),
}


# Decoder layers of the first and last model chunk where the row's matching recipe fixes the layout
# (the docstring's `layers` rule): row id -> (first, last).
RECIPE_LAYERS = {
    "mbridge2511_b200_deepseekv3_fp8-mx_256gpu": (4, 1),   # layout_map[(16, 1)]
    "mbridge2511_gb200_deepseekv3_bf16_256gpu": (4, 1),    # layout_map[(4, 4)]
    "mbridge2509_h100_deepseekv3_fp8_1024gpu": (1, 0),     # pp_layout "Et|(tt|)*30mL"
}


def edge_chunk_layers(layers, chunks):
    """The docstring's `layers` rule for a split that is not even: every model chunk but the first
    and the last holds ceil(layers / chunks), those two share the rest, the first one more when it
    is odd. (first, last), or None when the middle chunks alone need more than the layers."""
    per = -(-layers // chunks)
    edge = layers - (chunks - 2) * per
    if edge < 0:
        return None
    return edge - edge // 2, edge // 2


def value(x):
    return x["value"] if isinstance(x, dict) else x


def model_key(row):
    name = row["model"]["name"]
    for key, prefix in MODELS:
        if name.startswith(prefix):
            return key
    return None


def model_entry(row):
    """The `model:` value of the docstring's `mtp` rule."""
    key = model_key(row)
    if key == "deepseek-v3" and "w/o MTP" in (row.get("notes") or ""):
        return "{preset: deepseek-v3, mtp_depth: 0}"
    return key


def system_key(row):
    text = (row.get("system") or "") + " " + (row.get("gpu_type") or "")
    if "GB300" in text:
        return "gb300-nvl72"
    if "B300" in text:
        return "dgx-b300"
    if "GB200" in text:
        return "gb200-nvl72"
    if "B200" in text:
        return "dgx-b200"
    if "H100" in text or "Grand Teton" in text:
        return "dgx-h100"
    raise SystemExit(f"{row['id']}: no system rule for {text!r}")


def precision(row):
    """The `precision:` value of the docstring's rule: a word for the Llama 3 paper rows, a flow
    mapping for Megatron-Bridge rows."""
    p = row["precision"]
    if not p.startswith(("FP8", "BF16")):
        raise SystemExit(f"{row['id']}: no precision rule for {p!r}")
    if not row["id"].startswith("mbridge"):
        return "fp8" if p.startswith("FP8") else "bf16"
    if p.startswith("FP8-MX"):
        keys = ["compute: mxfp8", "params: mxfp8"]
    elif p.startswith("FP8-CS") or (p.startswith("FP8") and "H100" in row["gpu_type"]):
        keys = ["compute: fp8", "fp8_scaling: current", "params: fp8", "bf16_edge_layers: 0"]
    elif p.startswith("FP8"):
        keys = ["compute: fp8"]
    else:
        keys = ["compute: bf16"]
    keys.append("grads: bf16")
    if model_key(row) == "deepseek-v3":
        keys.append("moments: bf16")
    # The precision-aware optimizer keeps the FP32 master as remainders over BF16 weights: the
    # DeepSeek-V3 recipes set it, and the performance scripts set it for every BF16 run.
    if model_key(row) == "deepseek-v3" or p.startswith("BF16"):
        if not any(k.startswith("params:") for k in keys):
            keys.append("master_remainders: true")
    return "{" + ", ".join(keys) + "}"


# The docstring's `loss` rule: Megatron-Bridge rows' cross-entropy kernels by model family.
MBRIDGE_CROSS_ENTROPY = {
    "llama3-8b": "te",
    "llama3-70b": "te",
    "llama3-405b": "te",
    "qwen3-30b-a3b": "te",
    "qwen3-235b-a22b": "te",
    "deepseek-v3": "te",
    "gpt-oss-120b": "fused",
}


def cross_entropy_fusion(row):
    """The docstring's `loss` rule; None keeps stepcast's default (native)."""
    if not row["id"].startswith("mbridge"):
        return None
    key = model_key(row)
    if key not in MBRIDGE_CROSS_ENTROPY:
        raise SystemExit(f"{row['id']}: no loss rule for {key!r}")
    return MBRIDGE_CROSS_ENTROPY[key]


def scenario(row):
    p = row["parallel"]
    tp, pp, cp, ep = p["tp"], p["pp"], p.get("cp") or 1, p.get("ep") or 1
    dp = value(p["dp"])
    llama_paper = row["id"].startswith("llama3_")
    lines = [
        f"# Development-set row {row['id']} (tests/fixtures/reference/dev_training_runs.yaml),",
        "# written by scripts/dev_scenarios.py; its docstring states the mapping rules.",
        "schema_version: 1",
        f"name: dev-{row['id']}",
        f"model: {model_entry(row)}",
        f"system: {{preset: {system_key(row)}, gpus: {row['gpus']}}}",
        "training:",
        f"  seq_len: {row['model']['seq_len']}",
        f"  global_batch: {value(p['global_batch'])}",
        f"  micro_batch: {p.get('micro_batch') or 1}",
    ]
    loss = cross_entropy_fusion(row)
    if loss:
        lines.append(f"  cross_entropy_fusion: {loss}")
    lines += [
        "parallel:",
        f"  tp: {tp}",
        f"  pp: {pp}",
        f"  dp: {dp}",
    ]
    if cp > 1:
        lines.append(f"  cp: {cp}")
        lines.append(f"  cp_kind: {'all_gather' if llama_paper else 'ring'}")
    if ep > 1:
        lines.append(f"  ep: {ep}")
        lines.append("  expert_tp: 1")
    vpp = p.get("vpp") or (LLAMA3_PAPER_VPP if llama_paper else 1)
    if vpp > 1:
        lines.append(f"  vpp: {vpp}")
    layers = row["model"]["layers"]
    chunks = pp * vpp
    if row["id"] in RECIPE_LAYERS:
        first, last = RECIPE_LAYERS[row["id"]]
        if (layers - first - last) % (chunks - 2) != 0:
            raise SystemExit(f"{row['id']}: recipe layout {first}/{last} leaves an uneven middle")
        lines.append(f"  first_stage_layers: {first}")
        lines.append(f"  last_stage_layers: {last}")
    elif layers % chunks != 0:
        split = edge_chunk_layers(layers, chunks)
        if split is None:
            raise SystemExit(f"{row['id']}: {layers} layers do not split over {chunks} chunks by the rule")
        lines.append(f"  first_stage_layers: {split[0]}")
        lines.append(f"  last_stage_layers: {split[1]}")
    lines.append(f"  sequence_parallel: {'true' if tp > 1 else 'false'}")
    if tp > 1 and row["id"].startswith("mbridge") and "Llama" in row["model"]["name"]:
        lines.append("  tp_comm_overlap: true")
    lines.append(f"  zero: {2 if llama_paper else 1}")
    recipe = RECIPES.get(row["id"])
    if recipe:
        name, source, layout, modules, settings = recipe
        vpp_stated = p.get("vpp")
        row_layout = (row["gpus"], tp, pp, cp, ep, vpp_stated if vpp_stated and vpp_stated > 1 else None,
                      p.get("micro_batch") or 1, value(p["global_batch"]))
        recipe_layout = layout[:5] + (layout[5] if layout[5] and layout[5] > 1 else None,) + layout[6:]
        if row_layout != recipe_layout:
            raise SystemExit(f"{row['id']}: recipe {name} layout {layout} is not the row's {row_layout}")
        lines.append(f"  # {name}, {source}")
        if modules:
            lines.append("  recompute: selective")
            lines.append(f"  recompute_modules: [{', '.join(modules)}]")
        else:
            lines.append("  recompute: none")
        for key, v in settings.items():
            lines.append(f"  {key}: {v if isinstance(v, str) else ('true' if v else 'false')}")
    else:
        lines.append("  recompute: none")
    lines.append(f"precision: {precision(row)}")
    return "\n".join(lines) + "\n"


def main():
    check = "--check" in sys.argv
    rows = yaml.safe_load(open(SOURCE))["training_runs"]
    os.makedirs(OUT, exist_ok=True)
    differ = []
    for row in rows:
        if row["id"] in SKIP or model_key(row) is None or row_filed_regression(row):
            continue
        path = os.path.join(OUT, row["id"] + ".yaml")
        text = scenario(row)
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                differ.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if differ:
        print("differ from scripts/dev_scenarios.py:", *differ, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
