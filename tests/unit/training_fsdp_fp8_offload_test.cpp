// ZeRO-3/FSDP exposure, FP8 recipes (casts, weight copies, FP8 parameters) and offload, each
// against the formula its source gives (comments in simulator/layer_costs.cpp, model/layer_ops.h,
// model/model_states.h, simulator/training_predictor.cpp).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/activation_memory.h"
#include "model/cost_parameters.h"
#include "model/layer_ops.h"
#include "model/model_states.h"
#include "simulator/collective_models.h"
#include "simulator/layer_costs.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/fixed_collectives.h"
#include "tests/support/scenario_layer_inputs.h"

using namespace stepcast;

namespace {

using test::FixedCollectives;

Scenario zero3_8b(const std::vector<Override>& extra = {}) {
  std::vector<Override> o = {{"parallel.zero", "3"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_scenario("llama3-8b-fp8", o);
}

LayerCosts costs_with(const Scenario& sc, const FixedCollectives& net, const CostParameters& params) {
  static LayerShape shape;
  LayerCostInputs in = test::scenario_layer_inputs(sc, shape, net, params);
  in.dp_group.size = 8;
  in.zero = 3;
  in.layer_parameters_per_rank = 218.0e6;
  in.parameter_format = DataType::fp8;  // no per-pass weight casts: the arithmetic alone
  return layer_costs(in);
}

}  // namespace

TEST_CASE("ZeRO-3: a layer's gather hides behind the previous layer's compute, minus the SMs the collective takes") {
  const Scenario sc = zero3_8b();
  const CostParameters params;
  const double f = params.comm_sm_fraction;
  FixedCollectives net;
  // A small gather: fully hidden, but the overlapped compute runs (1 - f) as fast: f x gather lost.
  net.m_gather = 1e-4;
  net.m_scatter = 2e-4;
  LayerCosts c = costs_with(sc, net, params);
  const double fwd = c.layer_forward.compute.value();
  const double bwd = c.layer_backward.compute.value();
  REQUIRE(fwd > 1e-3);
  CHECK(c.layer_forward.dp_exposed.value() == doctest::Approx(f * 1e-4));
  // Backward: the next layer's gather and this layer's reduce-scatter share the link.
  CHECK(c.layer_backward.dp_exposed.value() == doctest::Approx(f * 3e-4));
  // The first gather and the last reduce-scatter of each pass have nothing to hide behind.
  CHECK(c.zero3_first_gather.value() == doctest::Approx(1e-4));
  CHECK(c.zero3_last_reduce.value() == doctest::Approx(2e-4));
  // A gather longer than the compute: exposed by the difference.
  net.m_gather = 10.0 * bwd;
  c = costs_with(sc, net, params);
  CHECK(c.layer_forward.dp_exposed.value() == doctest::Approx(10.0 * bwd - fwd));
  CHECK(c.layer_backward.dp_exposed.value() == doctest::Approx(10.0 * bwd + 2e-4 - bwd));
}

TEST_CASE("ZeRO-3's root unit (embedding, output layer) is gathered before each forward and reduce-scattered after each backward, exposed") {
  // FSDP2 (torch/distributed/_composable/fsdp/_fsdp_state.py _lazy_init) keeps the root unsharded
  // from the forward's start to the backward's end: one gather with nothing before it to hide
  // behind, one reduce-scatter after the embedding's backward, the last op. Llama 3 8B FP8 on 8
  // GPUs, 4 micro-batches, with every gather g and reduce-scatter r short of any layer's compute:
  // per micro-batch, 32 layers each expose f g (forward) and f (g + r) (backward), the first
  // layer's gather and the last's reduce-scatter g + r, and the root another g + r; nothing is
  // left for the step-level reduction.
  const Scenario sc = zero3_8b();
  const CostParameters params;
  const double f = params.comm_sm_fraction;
  FixedCollectives net;
  net.m_gather = 1e-4;
  net.m_scatter = 2e-4;
  TrainingPredictor predictor(params);
  const TrainingPrediction p = predictor.predict(sc, net);
  const double g = 1e-4, r = 2e-4;
  const double per_microbatch = 32.0 * (f * g + f * (g + r)) + (g + r) + (g + r);
  CHECK(p.time.dp_comm_exposed.value() == doctest::Approx(4.0 * per_microbatch));
}

TEST_CASE("ZeRO-3 gathers weights in the format the forward reads: FP32-stored weights in the 16-bit compute format") {
  // torchtitan's FSDP2 mixed precision (MixedPrecisionPolicy param_dtype bf16: "the dtype for the
  // unsharded parameter and hence the dtype for forward/backward computation and the parameter
  // all-gather"): FP32 stored, BF16 gathered; under FP8 compute (torchao Float8Linear, FP8
  // all-gather off by default) BF16 too.
  PrecisionConfig titan;
  titan.compute = DataType::bf16;
  titan.params = DataType::fp32;
  titan.grads = DataType::fp32;
  CHECK(titan.gathered_weights() == DataType::bf16);
  titan.compute = DataType::fp8;
  CHECK(titan.gathered_weights() == DataType::bf16);
  titan.compute = DataType::fp16;
  CHECK(titan.gathered_weights() == DataType::fp16);
  // Megatron's BF16 weights, FP8 weights (--fp8-param-gather) and FP32 training gather as stored.
  CHECK(precision_shorthand(DataType::bf16).gathered_weights() == DataType::bf16);
  PrecisionConfig fp8_params = precision_shorthand(DataType::fp8);
  fp8_params.params = DataType::fp8;
  CHECK(fp8_params.gathered_weights() == DataType::fp8);
  CHECK(precision_shorthand(DataType::fp32).gathered_weights() == DataType::fp32);
  CHECK(precision_shorthand(DataType::tf32).gathered_weights() == DataType::fp32);
}

TEST_CASE("ZeRO-3 reduce-scatters gradients every micro-batch: more micro-batches, more exposed traffic") {
  // 16 ranks on two nodes: llama2-7b-zero3 example, 256 sequences as 8 micro-batches of 2 per rank,
  // against the same step with 4 sequences per micro-batch (4 micro-batches).
  const TrainingPrediction eight = predict_training(load_scenario("llama2-7b-zero3"));
  const TrainingPrediction four = predict_training(load_scenario("llama2-7b-zero3", std::vector<Override>{{"training.micro_batch", "4"}}));
  const TrainingPrediction zero1 = predict_training(load_scenario("llama2-7b-zero3", std::vector<Override>{{"parallel.zero", "1"}}));
  MESSAGE("llama2-7b 16 H100: ZeRO-3 step " << eight.step_time.value() << " s (dp exposed " << eight.time.dp_comm_exposed.value()
                                             << " s), ZeRO-1 " << zero1.step_time.value() << " s");
  CHECK(eight.time.dp_comm_exposed > four.time.dp_comm_exposed);
  CHECK(eight.step_time > zero1.step_time);
  CHECK(eight.time.dp_comm_exposed > zero1.time.dp_comm_exposed);
}

TEST_CASE("FP8 casts by recipe: delayed 3 bytes, current scaling adds an amax pass, block formats write two copies") {
  CHECK(quantize_bytes_per_element(DataType::fp8, Fp8Scaling::delayed, false) == 3.0);
  CHECK(quantize_bytes_per_element(DataType::fp8, Fp8Scaling::delayed, true) == 4.0);
  CHECK(quantize_bytes_per_element(DataType::fp8, Fp8Scaling::current, false) == 5.0);
  CHECK(quantize_bytes_per_element(DataType::fp8, Fp8Scaling::current, true) == 6.0);
  // MXFP8: read 2, write row- and column-wise 1 + 1/32 each.
  CHECK(quantize_bytes_per_element(DataType::mxfp8, Fp8Scaling::delayed, true) == doctest::Approx(2.0 + 2.0 * 1.03125));
  // NVFP4: amax pass 2 + read 2 + two copies of 0.5 + 1/16.
  CHECK(quantize_bytes_per_element(DataType::nvfp4, Fp8Scaling::delayed, true) == doctest::Approx(4.0 + 2.0 * 0.5625));
  // Current scaling costs time: the same Llama 3 8B step is slower than with delayed scaling.
  const TrainingPrediction delayed = predict_training(load_scenario("llama3-8b-fp8"));
  const TrainingPrediction current = predict_training(
      load_scenario("llama3-8b-fp8", std::vector<Override>{{"precision", "{compute: fp8, fp8_scaling: current}"}}));
  CHECK(current.step_time > delayed.step_time);
  CHECK(current.step_time < delayed.step_time * 1.1);
}

TEST_CASE("FP8 on Blackwell writes no transposed copies: its FP8 GEMMs take any layout (Transformer Engine's quantizers)") {
  CHECK(fp8_gemm_needs_transposes(GpuArchitecture::hopper));
  CHECK(fp8_gemm_needs_transposes(GpuArchitecture::ada));
  CHECK_FALSE(fp8_gemm_needs_transposes(GpuArchitecture::blackwell));
  const Scenario sc = load_scenario("llama3-8b-fp8", std::vector<Override>{{"precision", "{compute: fp8, fp8_scaling: current}"}});
  LayerShape hopper = make_layer_shape(sc.model, sc.training(), sc.parallel, sc.precision);
  LayerShape blackwell = hopper;
  blackwell.fp8_transposes = false;
  const auto cast_bytes = [](const OpList& ops, std::string_view name) {
    for (const Op& op : ops) {
      if (op.name == name) return op.bytes.value();
    }
    return -1.0;
  };
  // Forward: each GEMM input cast row-wise only on either GPU (amax pass 2 + read 2 + write 1).
  CHECK(cast_bytes(layer_forward_ops(blackwell), "fp8_casts") == cast_bytes(layer_forward_ops(hopper), "fp8_casts"));
  // Backward, per token: output gradients (QKV 6144, projection 4096, FC2 4096, FC1 2 x 14336 =
  // 43008 elements) at 5 bytes, where Hopper adds their transposes (1) and the saved inputs'
  // transposes (QKV, projection and FC1 inputs 4096 each, FC2's 14336: 26624 elements, 1 byte).
  const double T = hopper.tokens();
  CHECK(cast_bytes(layer_backward_ops(hopper), "fp8_casts.backward") == doctest::Approx(T * (43008.0 * 6.0 + 26624.0)));
  CHECK(cast_bytes(layer_backward_ops(blackwell), "fp8_casts.backward") == doctest::Approx(T * 43008.0 * 5.0));
  // MXFP8 writes its column-wise copy on every GPU (block scales cannot be transposed).
  LayerShape mx = hopper;
  mx.compute = DataType::mxfp8;
  LayerShape mx_blackwell = mx;
  mx_blackwell.fp8_transposes = false;
  CHECK(cast_bytes(layer_backward_ops(mx_blackwell), "fp8_casts.backward") ==
        cast_bytes(layer_backward_ops(mx), "fp8_casts.backward"));
  // The predictor sets it from the scenario's GPU.
  const auto dense_shape = [](const std::string& gpu) {
    const Scenario s = load_scenario("llama3-8b-fp8", std::vector<Override>{{"system.gpu", gpu}});
    TrainingPredictor predictor;
    const auto net = make_collective_model(default_collective_model(), s.system, predictor.parameters());
    return predictor.step_kernels(s, *net).layers.front().shape;
  };
  CHECK(dense_shape("h100-sxm-80gb").fp8_transposes);
  CHECK_FALSE(dense_shape("b200").fp8_transposes);
}

TEST_CASE("FP8 weight copies in memory: BF16 weights + FP8 copy + transpose; FP8 parameters keep the transpose only") {
  PrecisionConfig fp8 = precision_shorthand(DataType::fp8);
  CHECK(bytes_per_parameter(fp8, true).weights == 4.0);  // 2 + 1 + 1
  PrecisionConfig fp8_params = fp8;
  fp8_params.params = DataType::fp8;
  CHECK(bytes_per_parameter(fp8_params, true).weights == 2.0);  // 1 + its transpose
  PrecisionConfig mx = fp8;
  mx.compute = DataType::mxfp8;
  CHECK(bytes_per_parameter(mx, true).weights == doctest::Approx(2.0 + 2.0 * 1.03125));
  // ZeRO-3 over 8 ranks: 16-bit weights sharded, FP8 copies made per gathered layer (not kept);
  // FP8 parameters sharded with their transposes.
  CHECK(model_state_bytes(1e9, fp8, 3, 8, true).weights.value() == doctest::Approx(1e9 * 2.0 / 8.0));
  CHECK(model_state_bytes(1e9, fp8_params, 3, 8, true).weights.value() == doctest::Approx(1e9 * 2.0 / 8.0));
  CHECK(model_state_bytes(1e9, fp8, 1, 8, true).weights.value() == doctest::Approx(1e9 * 4.0));
  // BF16 is unchanged: 2 bytes.
  CHECK(bytes_per_parameter(precision_shorthand(DataType::bf16), true).weights == 2.0);
}

TEST_CASE("FP8 weights on Blackwell keep no transpose: Transformer Engine's quantizers write the row-wise data only") {
  // Float8Quantizer / Float8CurrentScalingQuantizer create_tensor with rowwise and columnwise
  // usage: data when rowwise_usage || non-TN FP8 GEMMs supported, transpose when columnwise_usage &&
  // not supported. Hopper: data + transpose, 1 + 1 bytes; Blackwell: data, 1 byte.
  PrecisionConfig fp8 = precision_shorthand(DataType::fp8);
  CHECK(fp8_weight_copy_bytes(fp8, true) == 2.0);
  CHECK(fp8_weight_copy_bytes(fp8, false) == 1.0);
  CHECK(bytes_per_parameter(fp8, false).weights == 3.0);  // BF16 2 + FP8 1
  fp8.fp8_scaling = Fp8Scaling::current;                  // the same rule for current scaling
  CHECK(bytes_per_parameter(fp8, false).weights == 3.0);
  // FP8 parameters: the weights are the FP8 row-wise data; Blackwell adds nothing, sharded or not.
  PrecisionConfig fp8_params = fp8;
  fp8_params.params = DataType::fp8;
  CHECK(bytes_per_parameter(fp8_params, false).weights == 1.0);
  CHECK(model_state_bytes(1e9, fp8_params, 3, 8, false).weights.value() == doctest::Approx(1e9 * 1.0 / 8.0));
  CHECK(model_state_bytes(1e9, fp8, 1, 8, false).weights.value() == doctest::Approx(1e9 * 3.0));
  // MXFP8 and NVFP4 keep a row-wise and a column-wise copy on every GPU (MXFP8Quantizer allocates
  // each usage's data with no GPU condition).
  PrecisionConfig mx = precision_shorthand(DataType::fp8);
  mx.compute = DataType::mxfp8;
  CHECK(bytes_per_parameter(mx, false).weights == bytes_per_parameter(mx, true).weights);
  mx.compute = DataType::nvfp4;
  CHECK(bytes_per_parameter(mx, false).weights == bytes_per_parameter(mx, true).weights);
  // Optimizer states and gradients do not depend on it.
  CHECK(bytes_per_parameter(fp8, false).optimizer_states == bytes_per_parameter(fp8, true).optimizer_states);
  CHECK(bytes_per_parameter(fp8, false).gradients == bytes_per_parameter(fp8, true).gradients);

  // A saved GEMM input (column-wise usage only) is 1 byte on either GPU: the transpose on Hopper,
  // the row-wise data on Blackwell; so the saved activations do not change.
  const Scenario sc = load_scenario("llama3-8b-fp8");
  LayerShape hopper = make_layer_shape(sc.model, sc.training(), sc.parallel, sc.precision);
  LayerShape blackwell = hopper;
  blackwell.fp8_transposes = false;
  CHECK(saved_gemm_input_bytes(blackwell) == 1.0);
  CHECK(saved_gemm_input_bytes(hopper) == 1.0);
  CHECK(layer_activation_bytes(blackwell, Recompute::none).stored == layer_activation_bytes(hopper, Recompute::none).stored);

  // The predictor applies the GPU's rule (fp8_gemm_needs_transposes, as for the casts' time): Llama
  // 3 8B FP8 with BF16 weights and no ZeRO keeps 4 bytes per parameter on an H100, 3 on a B200.
  const auto weights = [](const std::string& gpu) {
    return predict_training(load_scenario("llama3-8b-fp8", std::vector<Override>{{"system.gpu", gpu}})).memory.weights.value();
  };
  CHECK(weights("b200") == doctest::Approx(weights("h100-sxm-80gb") * 3.0 / 4.0));
}

TEST_CASE("FP8 parameters halve the ZeRO-3 all-gathers; 16-bit ones are cast in every pass") {
  const TrainingPrediction bf16_params =
      predict_training(zero3_8b({{"system.gpus", "64"}, {"training.global_batch", "256"}}));
  const TrainingPrediction fp8_params = predict_training(
      zero3_8b({{"system.gpus", "64"}, {"training.global_batch", "256"}, {"precision", "{compute: fp8, params: fp8}"}}));
  MESSAGE("llama3-8b FP8 ZeRO-3 on 64 H100s: 16-bit params " << bf16_params.step_time.value() << " s, FP8 params "
                                                              << fp8_params.step_time.value() << " s");
  CHECK(fp8_params.step_time < bf16_params.step_time);
  CHECK(fp8_params.time.dp_comm_exposed <= bf16_params.time.dp_comm_exposed);
}

TEST_CASE("optimizer offload: states leave the GPU for host memory, Adam runs at host DRAM bandwidth") {
  // Llama 3 8B on 8 H100s (pure DP, ZeRO-1): each rank's optimizer shard is 1/8 of the model.
  const std::vector<Override> base = {{"parallel.zero", "1"}};
  std::vector<Override> off = base;
  off.push_back({"parallel.offload", "optimizer"});
  const Scenario sc = load_scenario("llama3-8b-fp8", off);
  const TrainingPrediction gpu = predict_training(load_scenario("llama3-8b-fp8", base));
  const TrainingPrediction host = predict_training(sc);
  CHECK(host.memory.optimizer_states.value() == 0.0);
  CHECK(gpu.memory.optimizer_states.value() > 0.0);
  // Host memory: the 12 bytes of master weights and moments per parameter of the shard.
  CHECK(host.host_memory.value() == doctest::Approx(gpu.memory.optimizer_states.value()));
  // CPU Adam over the shard: 34 bytes per parameter at 76.8 GB/s (DGX H100's DDR5 per GPU); the
  // PCIe transfers (4-byte gradients down, 2-byte weights up at 64 GB/s) are faster and pipelined.
  const CostParameters params;
  const double shard = gpu.memory.optimizer_states.value() / 12.0;
  CHECK(params.adam_grad_and_weight_bytes_per_param + adam_state_traffic_bytes(sc.precision) == 34.0);
  CHECK(host.time.optimizer.value() == doctest::Approx(shard * 34.0 / 76.8e9));
  CHECK(host.time.offload_exposed.value() == doctest::Approx(0.0));
  CHECK(host.step_time > gpu.step_time);
  // The precision-aware optimizer (BF16 moments, the master as remainders) moves 10 + 14 = 24
  // bytes per parameter instead of 34 (model/model_states.h adam_state_traffic_bytes).
  off.push_back({"precision", "{compute: fp8, moments: bf16, master_remainders: true}"});
  const TrainingPrediction aware = predict_training(load_scenario("llama3-8b-fp8", off));
  CHECK(aware.time.optimizer.value() == doctest::Approx(shard * 24.0 / 76.8e9));
}

TEST_CASE("parameter offload: weights leave the GPU too, fetched per layer over the host link") {
  const std::vector<Override> o = {{"parallel.offload", "optimizer+params"}};
  const TrainingPrediction p = predict_training(load_scenario("llama3-8b-fp8", o));
  const TrainingPrediction base = predict_training(load_scenario("llama3-8b-fp8"));
  CHECK(p.memory.weights.value() == 0.0);
  CHECK(p.host_memory > base.memory.optimizer_states);
  CHECK(p.step_time >= base.step_time);
  // GB200's NVLink-C2C host link (450 GB/s) hides at least as much as an H100's PCIe Gen5
  // (64 GB/s), and its Grace CPU runs Adam at 250 GB/s against 76.8.
  const std::vector<Override> c2c = {{"parallel.offload", "optimizer+params"}, {"system.gpu", "gb200"}};
  const TrainingPrediction grace = predict_training(load_scenario("llama3-8b-fp8", c2c));
  CHECK(grace.time.offload_exposed <= p.time.offload_exposed);
  CHECK(grace.time.optimizer < p.time.optimizer);
}
