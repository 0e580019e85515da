#include <doctest/doctest.h>

#include "model/activation_memory.h"
#include "model/cost_parameters.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/model_states.h"
#include "model/parameter_count.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

namespace {
// The configurations of Korthikanti et al. 2022, Table 3 (s = 2048, V = 51200).
struct PaperConfig {
  const char* name;
  int heads, hidden, layers, tp, pp, micro_batch;
};
constexpr PaperConfig kPaperConfigs[] = {
    {"22B", 64, 6144, 48, 8, 1, 4},
    {"175B", 96, 12288, 96, 8, 8, 1},
    {"530B", 128, 20480, 105, 8, 35, 1},
    {"1T", 160, 25600, 128, 8, 64, 1},
};

LayerShape shape_of(const PaperConfig& c, bool sequence_parallel, bool flash = false) {
  TransformerSpec m;
  m.layers = c.layers;
  m.hidden = c.hidden;
  m.heads = c.heads;
  m.kv_heads = c.heads;
  m.head_dim = c.hidden / c.heads;
  m.ffn_hidden = 4 * c.hidden;
  m.vocab = 51200;
  TrainingWorkload w;
  w.seq_len = 2048;
  w.micro_batch = c.micro_batch;
  w.flash_attention = flash;
  ParallelConfig p;
  p.tp = c.tp;
  p.pp = c.pp;
  p.sequence_parallel = sequence_parallel;
  return make_layer_shape(m, w, p, precision_shorthand(DataType::bf16));
}

// The model, workload and layout of a configuration's loss stage as make_layer_shape reads them:
// one sequence of 2048 with V = 51200, sequence-parallel over its TP group.
struct LossStageInputs {
  TransformerSpec model;
  TrainingWorkload workload;
  ParallelConfig parallel;
};
LossStageInputs loss_stage_inputs(const PaperConfig& c) {
  LossStageInputs in;
  in.model.layers = c.layers;
  in.model.hidden = c.hidden;
  in.model.heads = c.heads;
  in.model.vocab = 51200;
  in.workload.seq_len = 2048;
  in.workload.micro_batch = 1;
  in.parallel.tp = c.tp;
  in.parallel.sequence_parallel = true;
  return in;
}
}  // namespace

TEST_CASE("activation memory per layer matches Korthikanti et al. 2022 Table 2 for the paper's models") {
  for (const auto& c : kPaperConfigs) {
    CAPTURE(c.name);
    const double s = 2048, b = c.micro_batch, h = c.hidden, a = c.heads, t = c.tp;
    const double sbh = s * b * h;
    const LayerShape tp_only = shape_of(c, false);
    const LayerShape tp_sp = shape_of(c, true);
    // Tensor parallel: sbh(10 + 24/t + 5as/(ht))
    CHECK(layer_activation_bytes(tp_only, Recompute::none).stored.value() ==
          doctest::Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
    // Tensor + sequence parallel: sbh(34/t + 5as/(ht))
    CHECK(layer_activation_bytes(tp_sp, Recompute::none).stored.value() ==
          doctest::Approx(sbh * (34 / t + 5 * a * s / (h * t))));
    // Selective recomputation: sbh(10 + 24/t), and sbh 34/t with sequence parallelism
    CHECK(layer_activation_bytes(tp_only, Recompute::selective).stored.value() == doctest::Approx(sbh * (10 + 24 / t)));
    CHECK(layer_activation_bytes(tp_sp, Recompute::selective).stored.value() == doctest::Approx(sbh * 34 / t));
    // Full recomputation keeps the layer input: 2sbh (its 1/t shard with sequence parallelism)
    CHECK(layer_activation_bytes(tp_only, Recompute::full).stored.value() == doctest::Approx(2 * sbh));
    CHECK(layer_activation_bytes(tp_sp, Recompute::full).stored.value() == doctest::Approx(2 * sbh / t));
    // A flash-attention kernel removes the 5as/h term just as selective recomputation does.
    CHECK(layer_activation_bytes(shape_of(c, true, true), Recompute::none).stored.value() ==
          doctest::Approx(sbh * 34 / t));
  }
}

TEST_CASE("without any parallelism a layer keeps sbh(34 + 5as/h) bytes") {
  PaperConfig c = kPaperConfigs[0];
  c.tp = 1;
  const double s = 2048, b = c.micro_batch, h = c.hidden, a = c.heads;
  CHECK(layer_activation_bytes(shape_of(c, false), Recompute::none).stored.value() ==
        doctest::Approx(s * b * h * (34 + 5 * a * s / h)));
}

TEST_CASE("the last stage keeps 4sbh/t plus FP32 logits 4sbV/t, the first the embedding dropout mask sbh/t") {
  const PaperConfig c = kPaperConfigs[1];
  const LayerShape shape = shape_of(c, true);
  const double s = 2048, b = 1, h = c.hidden, t = c.tp, V = 51200;
  CHECK(output_activation_bytes(shape).value() == doctest::Approx(4 * s * b * h / t + 4 * s * b * V / t));
  CHECK(embedding_activation_bytes(shape).value() == doctest::Approx(s * b * h / t));
}

TEST_CASE("Transformer Engine's fused cross-entropy keeps the 16-bit logits, 2sbV/t, instead of FP32 4sbV/t") {
  // TE CrossEntropyFunction saves its BF16 input and overwrites it in place with the gradient
  // (Megatron-Core cross_entropy_fusion_impl 'te'): the output stage keeps 4sbh/t + 2sbV/t.
  const PaperConfig c = kPaperConfigs[1];
  const double s = 2048, b = 1, h = c.hidden, t = c.tp, V = 51200;
  auto [m, w, par] = loss_stage_inputs(c);
  const PrecisionConfig bf16 = precision_shorthand(DataType::bf16);
  // The default, Megatron's native cross-entropy: FP32 logits.
  CHECK(make_layer_shape(m, w, par, bf16).saved_logit_bytes() == 4.0);
  w.cross_entropy_fusion = CrossEntropyFusion::te;
  const LayerShape te = make_layer_shape(m, w, par, bf16);
  CHECK(te.saved_logit_bytes() == 2.0);
  CHECK(output_activation_bytes(te).value() == doctest::Approx(4 * s * b * h / t + 2 * s * b * V / t));
  // FP32 compute: TE's logits are FP32 themselves, 4 bytes either way.
  CHECK(make_layer_shape(m, w, par, precision_shorthand(DataType::fp32)).saved_logit_bytes() == 4.0);
}

TEST_CASE("PyTorch's cross-entropy keeps FP32 logits and holds two more FP32 copies, 8sbV/t, while the loss's backward runs") {
  // F.cross_entropy(logits.float()) on whole logits (tp 1): log_softmax saves its FP32 output
  // (4sbV/t, as Megatron's native path); its backward allocates nll_loss's gradient and
  // log_softmax's input gradient beside it, FP32 each: 8sbV/t more, for one micro-batch on the
  // last stage. The other two kernels overwrite the saved logits in place: no such working set.
  const PaperConfig c = kPaperConfigs[1];
  const double s = 2048, b = 1, h = c.hidden, V = 51200;
  auto [m, w, par] = loss_stage_inputs(c);
  par.tp = 1;
  par.sequence_parallel = false;
  const PrecisionConfig bf16 = precision_shorthand(DataType::bf16);
  CHECK(loss_backward_working_set_bytes(make_layer_shape(m, w, par, bf16)).value() == 0.0);
  w.cross_entropy_fusion = CrossEntropyFusion::te;
  CHECK(loss_backward_working_set_bytes(make_layer_shape(m, w, par, bf16)).value() == 0.0);
  w.cross_entropy_fusion = CrossEntropyFusion::pytorch;
  const LayerShape torch_ce = make_layer_shape(m, w, par, bf16);
  CHECK(output_activation_bytes(torch_ce).value() == doctest::Approx(4 * s * b * h + 4 * s * b * V));
  CHECK(loss_backward_working_set_bytes(torch_ce).value() == doctest::Approx(8 * s * b * V));
}

TEST_CASE("Megatron's fused native cross-entropy keeps FP32 logits and one more FP32 copy, 4sbV/t, while its backward runs") {
  // megatron/core/fusions/fused_cross_entropy.py under torch.compile saves the FP32 softmax as the
  // unfused path does (4sbV/t); its compiled backward scatters into it, so Inductor first copies it
  // into a fresh logits-sized FP32 buffer (model/cross_entropy_kernels.cpp): 4sbV/t more for one
  // micro-batch on the last stage, whatever tp.
  const PaperConfig c = kPaperConfigs[1];
  const double s = 2048, b = 1, h = c.hidden, t = c.tp, V = 51200;
  auto [m, w, par] = loss_stage_inputs(c);
  const PrecisionConfig bf16 = precision_shorthand(DataType::bf16);
  w.cross_entropy_fusion = CrossEntropyFusion::fused;
  const LayerShape fused = make_layer_shape(m, w, par, bf16);
  CHECK(fused.saved_logit_bytes() == 4.0);
  CHECK(output_activation_bytes(fused).value() == doctest::Approx(4 * s * b * h / t + 4 * s * b * V / t));
  CHECK(loss_backward_working_set_bytes(fused).value() == doctest::Approx(4 * s * b * V / t));
}

TEST_CASE("PyTorch's cross-entropy on vocab-sharded logits (loss parallelism) holds three FP32 copies, 12sbV/t, in its backward") {
  // With tp > 1 the logits are DTensors sharded over the vocabulary and nll_loss's backward is
  // DTensor's decomposition (pytorch/pytorch torch/distributed/tensor/parallel/loss.py @02eef6b8,
  // _nll_loss_and_log_softmax_backward): grad_input = zeros_like(x), then
  // (grad_input + torch.exp(x)) * grad_output. Beside the saved FP32 log-probabilities x: grad_input,
  // exp(x) and their sum at once (then grad_input, the sum and the product): 3 x 4 bytes per logit.
  const PaperConfig c = kPaperConfigs[1];
  const double s = 2048, b = 1, h = c.hidden, t = c.tp, V = 51200;
  REQUIRE(t > 1);
  auto [m, w, par] = loss_stage_inputs(c);
  const PrecisionConfig bf16 = precision_shorthand(DataType::bf16);
  w.cross_entropy_fusion = CrossEntropyFusion::pytorch;
  const LayerShape torch_ce = make_layer_shape(m, w, par, bf16);
  CHECK(torch_ce.loss_backward_logit_bytes() == 12.0);
  CHECK(output_activation_bytes(torch_ce).value() == doctest::Approx(4 * s * b * h / t + 4 * s * b * V / t));
  CHECK(loss_backward_working_set_bytes(torch_ce).value() == doctest::Approx(12 * s * b * V / t));
  // Megatron's kernels are unchanged by tp: none.
  w.cross_entropy_fusion = CrossEntropyFusion::native;
  CHECK(loss_backward_working_set_bytes(make_layer_shape(m, w, par, bf16)).value() == 0.0);
}

TEST_CASE("mixed precision keeps 18 bytes per parameter and ZeRO divides states by dp stage by stage") {
  const PrecisionConfig bf16 = precision_shorthand(DataType::bf16);
  const BytesPerParameter per = bytes_per_parameter(bf16, true);
  CHECK(per.weights == 2.0);
  CHECK(per.gradients == 4.0);
  CHECK(per.optimizer_states == 12.0);
  CHECK(per.total() == 18.0);
  CHECK(bytes_per_parameter(precision_shorthand(DataType::fp32), true).total() == 16.0);  // 4 + 4 + 8, no master copy

  const double params = 1e9;
  const int dp = 8;
  const ModelStateBytes zero0 = model_state_bytes(params, bf16, 0, dp, true);
  CHECK(zero0.total().value() == doctest::Approx(18e9));
  const ModelStateBytes zero1 = model_state_bytes(params, bf16, 1, dp, true);
  CHECK(zero1.optimizer_states.value() == doctest::Approx(12e9 / dp));
  CHECK(zero1.gradients.value() == doctest::Approx(4e9));
  const ModelStateBytes zero2 = model_state_bytes(params, bf16, 2, dp, true);
  CHECK(zero2.gradients.value() == doctest::Approx(4e9 / dp));
  CHECK(zero2.weights.value() == doctest::Approx(2e9));
  const ModelStateBytes zero3 = model_state_bytes(params, bf16, 3, dp, true);
  CHECK(zero3.total().value() == doctest::Approx(18e9 / dp));
}

TEST_CASE("under FP8 compute a layer keeps each GEMM input as its quantized copy: sbh 29/t instead of 34/t") {
  // Transformer Engine saves the quantized input of every GEMM for the weight gradient (linear.py:
  // the row-wise data is discarded, the column-wise copy saved). Of Korthikanti's 34 bytes per
  // sbh/t (175B, tp 8 + SP, flash, dropout), the QKV input (2), FC1's input (2) and FC2's input
  // (the 4h GELU output, 8) become 1, 1 and 4 bytes; the projection's input, the attention output
  // the flash kernel keeps in 16 bits (2), gains the linear's FP8 copy (1). 34 - 1 - 1 - 4 + 1 = 29.
  const PaperConfig c = kPaperConfigs[1];
  LayerShape shape = shape_of(c, true, true);
  const double sbh = 2048.0 * 1 * c.hidden;
  const double t = c.tp;
  REQUIRE(layer_activation_bytes(shape, Recompute::none).stored.value() == doctest::Approx(sbh * 34 / t));
  shape.compute = DataType::fp8;
  CHECK(saved_gemm_input_bytes(shape) == 1.0);
  CHECK(layer_activation_bytes(shape, Recompute::none).stored.value() == doctest::Approx(sbh * 29 / t));
  // MXFP8 adds one E8M0 scale per 32 elements to each quantized copy: 22 + 7 (1 + 1/32).
  shape.compute = DataType::mxfp8;
  CHECK(layer_activation_bytes(shape, Recompute::none).stored.value() ==
        doctest::Approx(sbh * (22 + 7 * (1 + 1.0 / 32)) / t));
  // Without the flash kernel the attention output is only the projection's input, kept as its
  // FP8 copy alone: 34 - 1 - 1 - 4 - 1 = 27 (the s x s scores aside).
  LayerShape unfused = shape_of(c, true, false);
  unfused.compute = DataType::fp8;
  const LayerActivations a = layer_activation_bytes(unfused, Recompute::none);
  CHECK(a.stored.value() - a.attention_core.value() == doctest::Approx(sbh * 27 / t));
  // PyTorch eager FP8 is not modelled as quantizing what it saves.
  LayerShape eager = shape_of(c, true, true);
  eager.kernels = KernelFusion::eager;
  const double eager_bf16 = layer_activation_bytes(eager, Recompute::none).stored.value();
  eager.compute = DataType::fp8;
  CHECK(saved_gemm_input_bytes(eager) == 2.0);
  CHECK(layer_activation_bytes(eager, Recompute::none).stored.value() == doctest::Approx(eager_bf16));
}

TEST_CASE("the precision-aware optimizer keeps BF16 moments and the FP32 master as a 16-bit remainder: 6 bytes") {
  // Megatron-Core OptimizerConfig: exp_avg_dtype = exp_avg_sq_dtype = bf16 (2 + 2 bytes) and
  // store_param_remainders (the FP32 master's 2 bytes the BF16 weight lacks): 2 + 2 + 2 = 6
  // instead of 4 + 4 + 4 = 12; weights and gradients unchanged.
  PrecisionConfig p = precision_shorthand(DataType::bf16);
  p.grads = DataType::bf16;
  p.moments = DataType::bf16;
  BytesPerParameter per = bytes_per_parameter(p, true);
  CHECK(per.optimizer_states == 8.0);  // FP32 master 4 + BF16 moments 2 + 2
  p.master_remainders = true;
  per = bytes_per_parameter(p, true);
  CHECK(per.optimizer_states == 6.0);
  CHECK(per.weights == 2.0);
  CHECK(per.gradients == 2.0);
  // ZeRO-1 (the distributed optimizer) shards the 6 bytes over dp.
  CHECK(model_state_bytes(1e9, p, 1, 8, true).optimizer_states.value() == doctest::Approx(6e9 / 8));
  // Unset moments follow `optimizer`: the 12 bytes of Megatron's default mixed precision.
  CHECK(bytes_per_parameter(precision_shorthand(DataType::bf16), true).optimizer_states == 12.0);
}

TEST_CASE("the Adam step reads and writes each optimizer state in the format it is stored in") {
  // Megatron's mixed precision: FP32 master, exp_avg, exp_avg_sq, each read and written:
  // 2 x (4 + 4 + 4) = 24; with the grad read (4), the clipping read (4) and the BF16 weight write
  // (2) the 34 bytes per parameter the optimizer step has always priced.
  PrecisionConfig p = precision_shorthand(DataType::bf16);
  CHECK(adam_state_traffic_bytes(p) == 24.0);
  CHECK(CostParameters{}.adam_grad_and_weight_bytes_per_param + adam_state_traffic_bytes(p) == 34.0);
  // FP16 and FP8 compute keep the same FP32 states: unchanged.
  CHECK(adam_state_traffic_bytes(precision_shorthand(DataType::fp16)) == 24.0);
  CHECK(adam_state_traffic_bytes(precision_shorthand(DataType::fp8)) == 24.0);
  // Pure FP32 has no master: Adam updates the FP32 weights in place (4 + 4) and the moments: 24.
  CHECK(adam_state_traffic_bytes(precision_shorthand(DataType::fp32)) == 24.0);
  // BF16 moments (exp_avg_dtype = exp_avg_sq_dtype = bf16): master 4 + 4, moments 2 x (2 + 2) = 16.
  p.moments = DataType::bf16;
  CHECK(adam_state_traffic_bytes(p) == 16.0);
  // The master as remainders: read as FP32 (BF16 weight 2 + remainder 2), written as the remainder
  // (2; the BF16 half is the weight write already counted): 4 + 2 + 8 = 14, 24 bytes in all.
  p.master_remainders = true;
  CHECK(adam_state_traffic_bytes(p) == 14.0);
  // The read-and-write traffic is never less than the stored states once each (6 bytes).
  CHECK(adam_state_traffic_bytes(p) >= 2.0 * bytes_per_parameter(p, true).optimizer_states);
}

TEST_CASE("GPT-3 175B has 175 billion parameters") {
  TransformerSpec m = test::gpt3_175b_model();
  m.vocab = 50257;  // GPT-2's vocabulary, unpadded
  // 12 l h^2 (1 + 13/(12h)) + V h (Narayanan et al. 2021 eq. 2 without position embeddings).
  const double expected = 12.0 * 96 * 12288.0 * 12288 * (1 + 13.0 / (12 * 12288)) + 50257.0 * 12288 + 2 * 12288;
  CHECK(total_parameters(m) == doctest::Approx(expected));
  CHECK(total_parameters(m) == doctest::Approx(174.6e9).epsilon(0.005));
}
