#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"

using namespace stepcast;

namespace {

// The training example of DESIGN.md, "Scenario file", verbatim (its comments included).
const char* const kDesignExample = R"(schema_version: 1
name: gpt3-175b-selene            # optional
model: gpt3-175b                  # a catalog name, or a mapping:
system:
  gpu: a100-sxm-80gb              # a catalog name or a mapping with the same fields
  gpus: 64
  gpus_per_node: 8
  # network: optional overrides or a named topology (see catalog)
training:                         # a training scenario has `training`, a serving one `inference`
  seq_len: 2048
  global_batch: 64                # sequences per optimizer step
  micro_batch: 1
parallel:
  tp: 8
  pp: 8
  dp: 1                           # default gpus/(tp*pp*cp); must multiply out to gpus
  cp: 1
  ep: 1
  vpp: 3                          # model chunks per pipeline rank (interleaving); 1 = none
  sequence_parallel: true
  schedule: 1f1b                  # gpipe | 1f1b | zb-h1 | zb-h2 | dualpipe (vpp>1 makes 1f1b interleaved)
  zero: 1                         # 0 none | 1 optimizer states (distributed optimizer) | 2 +grads | 3 +params (FSDP)
  recompute: selective            # none | selective | full
  offload: none                   # none | optimizer | optimizer+params
precision: bf16                   # fp32 | tf32 | fp16 | bf16 | fp8; or a mapping
)";

std::string errors_of(const std::string& yaml, std::vector<Override> overrides = {}) {
  try {
    parse_scenario(yaml, "t.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* const kSmallTraining = R"(schema_version: 1
model: llama3-8b
system: {gpu: h100-sxm-80gb, gpus: 8}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
)";

}  // namespace

TEST_CASE("the DESIGN.md example scenario loads with every field it states") {
  const Scenario s = parse_scenario(kDesignExample, "design.yaml");
  CHECK(s.name == "gpt3-175b-selene");
  CHECK(s.source == "design.yaml");
  CHECK(s.model.name == "gpt3-175b");
  CHECK(s.model.layers == 96);
  CHECK(s.system.gpu.name == "a100-sxm-80gb");
  CHECK(s.system.gpus == 64);
  CHECK(s.system.gpus_per_node == 8);
  CHECK(s.system.name == "dgx-a100");  // the GPU's default system supplies the network
  REQUIRE(s.is_training());
  CHECK(s.training().seq_len == 2048);
  CHECK(s.training().global_batch == 64);
  CHECK(s.parallel.tp == 8);
  CHECK(s.parallel.pp == 8);
  CHECK(s.parallel.dp == 1);
  CHECK(s.parallel.vpp == 3);
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.parallel.schedule == PipelineSchedule::one_f_one_b);
  CHECK(s.parallel.zero == 1);
  CHECK(s.parallel.recompute == Recompute::selective);
  CHECK(s.precision == precision_shorthand(DataType::bf16));
}

TEST_CASE("the default job expands the catalog model and the DGX A100 system") {
  const Scenario s = load_scenario("gpt3-175b-selene");
  CHECK(s.source == "<builtin>/examples/gpt3-175b-selene.yaml");
  CHECK(s.model.hidden == 12288);
  CHECK(s.model.heads == 96);
  CHECK(s.model.head_dim == 128);       // derived: hidden / heads
  CHECK(s.model.ffn_hidden == 4 * 12288);  // derived: 4 * hidden
  CHECK(s.system.name == "dgx-a100");
  CHECK(s.system.gpus == 1024);
  CHECK(s.system.nodes() == 128);
  CHECK(s.system.network.nics_per_node == 8);
  CHECK(s.system.network.nic_bandwidth.value() == 25e9);  // 200 Gb/s HDR = 25 GB/s per direction
  // dp = gpus / (tp*pp*cp) = 1024 / 64.
  CHECK(s.parallel.dp == 16);
  CHECK(s.parallel.vpp == 3);
  CHECK(s.training().global_batch == 1536);
  CHECK(s.precision.compute == DataType::fp16);
  CHECK(s.precision.loss_scaling);
}

TEST_CASE("every built-in example loads, and writes back to an equal scenario") {
  const Catalog& catalog = Catalog::builtin();
  REQUIRE(catalog.scenario_names().size() >= 8);
  for (const auto& name : catalog.scenario_names()) {
    INFO(name);
    const Scenario s = load_scenario(name);
    const std::string written = write_scenario_yaml(s);
    const Scenario back = parse_scenario(written, s.source);
    CHECK(back == s);
    // Writing is deterministic: the written document writes itself again unchanged.
    CHECK(write_scenario_yaml(back) == written);
  }
}

TEST_CASE("a written scenario is explicit: it names no catalog entry as a preset") {
  const std::string written = write_scenario_yaml(load_scenario("llama3-70b-h100"));
  CHECK(written.find("preset:") == std::string::npos);
  CHECK(written.find("ffn_hidden: 28672") != std::string::npos);
  CHECK(written.find("nic_bandwidth: \"50 GB/s\"") != std::string::npos);
}

TEST_CASE("a preset model with overrides re-derives the fields that followed the overridden ones") {
  const Scenario s = parse_scenario(R"(schema_version: 1
model: {preset: gpt3-175b, hidden: 8192, heads: 64, layers: 48}
system: {gpu: a100-sxm-80gb, gpus: 8}
training: {seq_len: 2048, global_batch: 8}
)", "t.yaml");
  CHECK(s.model.name == "gpt3-175b");
  CHECK(s.model.layers == 48);
  CHECK(s.model.kv_heads == 64);     // was equal to heads (MHA), so follows heads
  CHECK(s.model.head_dim == 128);    // 8192 / 64
  CHECK(s.model.ffn_hidden == 32768);  // was 4*hidden, so follows hidden
  CHECK(s.model.vocab == 51200);     // kept from the preset
}

TEST_CASE("a GQA preset keeps its kv_heads and explicit ffn_hidden when heads or hidden change") {
  const Scenario s = parse_scenario(R"(schema_version: 1
model: {preset: llama3-8b, layers: 16}
system: {gpu: h100-sxm-80gb, gpus: 8}
training: {seq_len: 2048, global_batch: 8}
)", "t.yaml");
  CHECK(s.model.kv_heads == 8);
  CHECK(s.model.ffn_hidden == 14336);
  CHECK(s.model.mlp == MlpKind::swiglu);
}

TEST_CASE("a custom model needs layers, hidden, heads and vocab and derives the rest") {
  const Scenario s = parse_scenario(R"(schema_version: 1
model: {layers: 4, hidden: 256, heads: 4, vocab: 1000}
system: {gpu: h100-sxm-80gb, gpus: 1}
training: {seq_len: 128, global_batch: 2}
)", "t.yaml");
  CHECK(s.model.name == "custom");
  CHECK(s.model.kv_heads == 4);
  CHECK(s.model.head_dim == 64);
  CHECK(s.model.ffn_hidden == 1024);
  CHECK(errors_of(R"(schema_version: 1
model: {layers: 4, hidden: 256}
system: {gpu: h100-sxm-80gb, gpus: 1}
training: {seq_len: 128, global_batch: 2}
)") == "t.yaml:2:8: error: model.heads: missing required key 'heads' (attention heads)\n"
       "t.yaml:2:8: error: model.vocab: missing required key 'vocab' (vocabulary size)");
}

TEST_CASE("a bare GPU gets its default system, a preset system keeps its own network") {
  const Scenario a = parse_scenario(kSmallTraining, "t.yaml");
  CHECK(a.system.name == "dgx-h100");
  CHECK(a.system.nvlink_sharp);
  const Scenario b = parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {preset: aws-p5, gpus: 16}
training: {seq_len: 4096, global_batch: 64}
)", "t.yaml");
  CHECK(b.system.name == "aws-p5");
  CHECK(b.system.network.transport == Transport::efa);
  CHECK(b.system.network.nics_per_node == 32);
  CHECK(b.parallel.dp == 16);
}

TEST_CASE("network overrides apply on top of the system's network, with units and ratios") {
  const Scenario s = parse_scenario(R"(schema_version: 1
model: llama3-8b
system:
  preset: dgx-h100
  gpus: 64
  network: {nic_bandwidth: 200 Gb/s, oversubscription: "4:1", transport: roce, tiers: 3}
training: {seq_len: 4096, global_batch: 64}
)", "t.yaml");
  CHECK(s.system.network.nic_bandwidth.value() == 25e9);
  CHECK(s.system.network.oversubscription == 4.0);
  CHECK(s.system.network.transport == Transport::roce);
  CHECK(s.system.network.tiers == 3);
  CHECK(s.system.network.nics_per_node == 8);  // kept
  const Scenario named = parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {gpu: h100-sxm-80gb, gpus: 16, network: gcp-a3-mega}
training: {seq_len: 4096, global_batch: 64}
)", "t.yaml");
  CHECK(named.system.network.transport == Transport::tcpxo);
}

TEST_CASE("changing gpus_per_node moves an NVLink domain that was one node") {
  const Scenario s = parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {preset: dgx-h100, gpus: 8, gpus_per_node: 4}
training: {seq_len: 4096, global_batch: 64}
)", "t.yaml");
  CHECK(s.system.nvlink_domain_gpus == 4);
  CHECK(s.system.nodes() == 2);
}

TEST_CASE("a power mode scales the GPU's peaks and keeps only that mode") {
  const Scenario maxn = load_scenario("llama2-7b-jetson-int4", {});
  const GpuSpec catalog_gpu = *Catalog::builtin().find_gpu("jetson-agx-orin-64gb");
  // 30W mode: GPU INT8 peak 41 of MAXN's 171 TOPs (NVIDIA DLA-SW README), so bf16 42.5 * 41/171.
  CHECK(maxn.system.gpu.peak(DataType::bf16).value() ==
        doctest::Approx(catalog_gpu.peak(DataType::bf16).value() * 41.0 / 171.0));
  REQUIRE(maxn.system.gpu.power_modes.size() == 1);
  CHECK(maxn.system.gpu.power_modes[0].name == "30W");
  CHECK(maxn.system.gpu.tdp_watts == 30.0);
  CHECK(maxn.precision.params == DataType::int4);
  CHECK(maxn.precision.compute == DataType::bf16);
}

TEST_CASE("serving fields parse with their units and distributions") {
  const Scenario s = load_scenario("llama3-70b-serving");
  REQUIRE_FALSE(s.is_training());
  const InferenceWorkload& w = s.inference();
  CHECK(w.mode == InferenceMode::serving);
  CHECK(w.serving.arrival_rate_per_s == 8.0);
  CHECK(w.serving.requests == 2000);
  CHECK(w.serving.input_len.dist == LengthDistribution::lognormal);
  CHECK(w.serving.input_len.mean == 1024.0);
  CHECK(w.serving.input_len.p99 == 4096.0);
  CHECK(w.input_len == 1024);
  CHECK(w.serving.slo.ttft.value() == doctest::Approx(0.5));
  CHECK(w.serving.slo.tpot.value() == doctest::Approx(0.05));
  CHECK(w.serving.kv_block_tokens == 16);
  CHECK(s.parallel.tp == 8);
  CHECK(s.parallel.dp == 1);
}

TEST_CASE("a serving trace file is read relative to the scenario") {
  const auto dir = std::filesystem::temp_directory_path() / "stepcast_trace_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.csv") << "arrival_s,input_len,output_len\n0.0,100,20\n0.5,300,40\n";
  std::ofstream(dir / "s.yaml") << R"(schema_version: 1
model: llama3-8b
system: {gpu: h100-sxm-80gb, gpus: 1}
inference: {mode: serving, trace: trace.csv}
)";
  const Scenario s = load_scenario((dir / "s.yaml").string());
  const ServingWorkload& w = s.inference().serving;
  CHECK(w.arrivals == ArrivalProcess::trace);
  REQUIRE(w.trace.size() == 2);
  CHECK(w.trace[1].arrival.value() == 0.5);
  CHECK(w.trace[1].input_len == 300);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  std::filesystem::remove_all(dir);
}

TEST_CASE("--set overrides change the document before it is checked") {
  const std::vector<Override> tp4 = {parse_override("parallel.tp=4")};
  const Scenario s = parse_scenario(kSmallTraining, "t.yaml", tp4);
  CHECK(s.parallel.tp == 4);
  CHECK(s.parallel.dp == 2);
  // A catalog name becomes {preset: name} so one field can change.
  const std::vector<Override> layers = {parse_override("model.layers=16")};
  CHECK(parse_scenario(kSmallTraining, "t.yaml", layers).model.layers == 16);
  // Quantities keep their units; missing sections are created.
  const std::vector<Override> nic = {parse_override("system.network.nic_bandwidth=100 Gb/s"),
                                     parse_override("parallel.zero=3")};
  const Scenario n = parse_scenario(kSmallTraining, "t.yaml", nic);
  CHECK(n.system.network.nic_bandwidth.value() == 12.5e9);
  CHECK(n.parallel.zero == 3);
}

TEST_CASE("--set precision.KEY refines a one-word precision as the mapping the word stands for") {
  const auto with_precision = [](const std::string& precision, const std::string& section) {
    return std::string("schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: h100-sxm-80gb, gpus: 8}\n") + section +
           "\nprecision: " + precision + "\n";
  };
  const std::string training = "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}";
  const std::string inference = "inference: {mode: static, batch: 1, input_len: 512, output_len: 64}";
  const auto has = [](const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; };
  // Each word with one key set reads as the word with that key changed, nothing else: training
  // words, and inference words, int4 among them (weight-only: BF16 compute, INT4 weights).
  const auto check_refines = [&](const char* word, const std::string& section, const std::string& set,
                                 DataType PrecisionConfig::*key, DataType value) {
    CAPTURE(word);
    CAPTURE(set);
    PrecisionConfig expected = parse_scenario(with_precision(word, section), "s.yaml").precision;
    expected.*key = value;
    CHECK(parse_scenario(with_precision(word, section), "s.yaml", std::vector<Override>{parse_override(set)}).precision ==
          expected);
  };
  for (const char* word : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    check_refines(word, training, "precision.optimizer=bf16", &PrecisionConfig::optimizer, DataType::bf16);
  }
  for (const char* word : {"bf16", "fp8", "int8", "int4"}) {
    check_refines(word, inference, "precision.kv_cache=fp8", &PrecisionConfig::kv_cache, DataType::fp8);
  }
  const Scenario fp8 = parse_scenario(with_precision("fp8", training), "t.yaml",
                                      std::vector<Override>{parse_override("precision.fp8_attention=true"),
                                                            parse_override("precision.fp8_scaling=current")});
  CHECK(fp8.precision.compute == DataType::fp8);
  CHECK(fp8.precision.fp8_attention);
  CHECK(fp8.precision.fp8_scaling == Fp8Scaling::current);
  // A word that is no format is still refused, now as the compute format it stands for.
  CHECK(has(errors_of(with_precision("fp9", training), {parse_override("precision.fp8_attention=true")}),
            "precision.compute"));
  // A key the mapping does not know is refused by name.
  CHECK(has(errors_of(with_precision("bf16", training), {parse_override("precision.format=fp8")}), "format"));
}

TEST_CASE("override errors name the override") {
  CHECK(errors_of(kSmallTraining, {parse_override("parallel.tp=5")}) ==
        "--set parallel.tp=5: error: parallel.tp: system.gpus (8) is not divisible by tp*pp*cp = 5*1*1 = 5, so dp = "
        "gpus/(tp*pp*cp) is not a whole number\n"
        "--set parallel.tp=5: error: parallel.tp: model heads (32) are not divisible by tp (5)");
  CHECK(errors_of(kSmallTraining, {parse_override("training.seq_len.x=1")}) ==
        "--set training.seq_len.x=1: error: training.seq_len.x: cannot set a key inside 'training.seq_len', which "
        "holds '4096', not a mapping");
}

TEST_CASE("parse_override needs key=value") {
  CHECK(parse_override("a.b=c d").value == "c d");
  CHECK(parse_override("a.b=x=y").value == "x=y");
  CHECK_THROWS_AS(parse_override("parallel.tp"), UsageError);
  CHECK_THROWS_AS(parse_override("=4"), UsageError);
}

TEST_CASE("an unknown scenario name suggests the closest catalog scenario") {
  try {
    load_scenario("gpt3-175b-selen");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "gpt3-175b-selen: error: neither a scenario file nor a catalog scenario (see `stepcast catalog "
          "scenarios`); did you mean 'gpt3-175b-selene'?");
  }
  CHECK_THROWS_AS(load_scenario("no/such/file.yaml"), InputError);
}

TEST_CASE("a first/last stage split must leave the other chunks an even share") {
  const std::string base = R"(schema_version: 1
model: gpt3-175b
system: {gpu: a100-sxm-80gb, gpus: 32}
training: {seq_len: 2048, global_batch: 32}
parallel: {tp: 8, pp: 4, first_stage_layers: 22, last_stage_layers: 26}
)";
  // 96 - 22 - 26 = 48 layers over the 2 middle stages.
  const Scenario s = parse_scenario(base, "t.yaml");
  CHECK(s.parallel.first_stage_layers == 22);
  CHECK(errors_of(base, {parse_override("parallel.last_stage_layers=25")}) ==
        "--set parallel.last_stage_layers=25: error: parallel.last_stage_layers: the remaining 49 layers do not "
        "split evenly over the other 2 of pp*vpp = 4 model chunks");
}

TEST_CASE("expert parallelism must divide the experts, and expert_tp*ep the ranks of a pipeline stage") {
  const Scenario s = load_scenario("mixtral-8x7b-ep");
  CHECK(s.parallel.ep == 8);
  CHECK(s.parallel.dp == 8);
  CHECK(errors_of(R"(schema_version: 1
model: mixtral-8x7b
system: {gpu: h100-sxm-80gb, gpus: 8}
training: {seq_len: 4096, global_batch: 64}
parallel: {tp: 2, ep: 3}
)") == "t.yaml:5:11: error: parallel.expert_tp: expert_tp*ep = 2*3 does not divide tp*cp*dp = 8\n"
       "t.yaml:5:23: error: parallel.ep: ep (3) does not divide model experts (8)");
}

TEST_CASE("the precision-aware optimizer's keys load, write back, and master_remainders needs BF16 weights") {
  const std::string base = R"(schema_version: 1
model: deepseek-v3
system: {preset: gb200-nvl72, gpus: 256}
training: {seq_len: 4096, global_batch: 4096}
parallel: {tp: 1, pp: 8, ep: 32, expert_tp: 1, vpp: 4, first_stage_layers: 1, last_stage_layers: 0, zero: 1}
precision: {compute: mxfp8, grads: bf16, moments: bf16, master_remainders: true}
)";
  const Scenario s = parse_scenario(base, "t.yaml");
  REQUIRE(s.precision.moments.has_value());
  CHECK(*s.precision.moments == DataType::bf16);
  CHECK(s.precision.master_remainders);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  CHECK(errors_of(base, {parse_override("precision.params=fp8")}) ==
        "t.yaml:6:76: error: precision.master_remainders: master_remainders needs BF16 weights and an FP32 master "
        "copy (params: bf16, optimizer: fp32, master_weights: true): it stores the 16 bits of the FP32 master the "
        "BF16 weight lacks");
}

TEST_CASE("training.cross_entropy_fusion loads native (the default), fused, te or pytorch, writes back, and rejects other words") {
  const std::string base = R"(schema_version: 1
model: llama3-8b
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 8192, global_batch: 8, cross_entropy_fusion: te}
parallel: {tp: 1, pp: 1}
precision: bf16
)";
  const Scenario s = parse_scenario(base, "t.yaml");
  CHECK(s.training().cross_entropy_fusion == CrossEntropyFusion::te);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  const Scenario plain = parse_scenario(base, "t.yaml", {{parse_override("training.cross_entropy_fusion=native")}});
  CHECK(plain.training().cross_entropy_fusion == CrossEntropyFusion::native);
  const Scenario torch_ce = parse_scenario(base, "t.yaml", {{parse_override("training.cross_entropy_fusion=pytorch")}});
  CHECK(torch_ce.training().cross_entropy_fusion == CrossEntropyFusion::pytorch);
  CHECK(parse_scenario(write_scenario_yaml(torch_ce), "w.yaml").training().cross_entropy_fusion ==
        CrossEntropyFusion::pytorch);
  const Scenario fused = parse_scenario(base, "t.yaml", {{parse_override("training.cross_entropy_fusion=fused")}});
  CHECK(fused.training().cross_entropy_fusion == CrossEntropyFusion::fused);
  CHECK(parse_scenario(write_scenario_yaml(fused), "w.yaml").training().cross_entropy_fusion ==
        CrossEntropyFusion::fused);
  CHECK(errors_of(base, {parse_override("training.cross_entropy_fusion=fuse")}) ==
        "--set training.cross_entropy_fusion=fuse: error: training.cross_entropy_fusion: expected one of native, fused, "
        "te, or pytorch, found "
        "'fuse'; did you mean 'fused'?");
  CHECK(errors_of(base, {parse_override("training.cross_entropy_fusion=liger")}) != "");
}

TEST_CASE("training.repeat_kv loads a boolean, writes back, and stays unset (the kernels' default) when absent") {
  const std::string base = R"(schema_version: 1
model: llama3-8b
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 8192, global_batch: 8, repeat_kv: true}
parallel: {tp: 1, pp: 1}
precision: bf16
)";
  const Scenario s = parse_scenario(base, "t.yaml");
  REQUIRE(s.training().repeat_kv.has_value());
  CHECK(*s.training().repeat_kv);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  const Scenario off = parse_scenario(base, "t.yaml", {{parse_override("training.repeat_kv=false")}});
  CHECK_FALSE(*off.training().repeat_kv);
  CHECK(parse_scenario(write_scenario_yaml(off), off.source) == off);
  CHECK_FALSE(parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 8192, global_batch: 8}
precision: bf16
)", "u.yaml").training().repeat_kv.has_value());
  CHECK(errors_of(base, {parse_override("training.repeat_kv=sometimes")}) != "");
}

TEST_CASE("a scenario using every optional field writes back to an equal scenario") {
  const Scenario training = parse_scenario(R"(schema_version: 1
name: everything
model:
  name: mla-moe
  layers: 8
  hidden: 1024
  heads: 16
  kv_heads: 16
  head_dim: 64
  ffn_hidden: 3000
  vocab: 32000
  mlp: swiglu
  norm: rmsnorm
  tied_embeddings: true
  linear_bias: false
  qk_norm: true
  experts: 16
  top_k: 4
  moe_ffn_hidden: 512
  shared_experts: 1
  capacity_factor: 1.25
  load_imbalance: 1.1
  first_dense_layers: 2
  activation_clamp: 7.5
  mla: {q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}
system:
  gpu:
    name: my-gpu
    architecture: hopper
    dense_peak: {bf16: 500 TFLOP/s, fp8: 1 PFLOP/s, nvfp4: 2 PFLOP/s}
    memory: 96 GiB
    memory_bandwidth: 4 TB/s
    power_modes: [{name: low, power: 300 W, compute_scale: 0.5, memory_bandwidth_scale: 0.75}]
    sfu_exp_per_sm_clock: 32
    sustained_clock_fraction: 0.9
    nvfp4_gemm_over_fp8: 1.5
  gpus: 32
  gpus_per_node: 4
  nvlink_domain_gpus: 16
  nvlink_sharp: true
  intra_node_bandwidth: 400 GB/s
  intra_node_latency: 1.5 us
  host_memory_per_node: 512 GiB
  network: {nics_per_node: 4, nic_bandwidth: 800 Gb/s, nic_latency: 3 us, transport: roce,
            fabric: fat-tree, tiers: 3, oversubscription: "2:1", nodes_per_leaf: 16, in_network_reduction: true}
training:
  seq_len: 4096
  global_batch: 64
  micro_batch: 2
  document_tokens: 1024
  goodput: {dataloader_rate: 500/s, straggler_cv: 0.05, checkpoint_interval: 30 min, checkpoint_size: 1 TB,
            checkpoint_write_bandwidth: 10 GB/s, gpu_mtbf: 50000 h, restart_time: 10 min}
parallel:
  tp: 2
  pp: 2
  cp: 2
  ep: 4
  expert_tp: 1
  vpp: 2
  first_stage_layers: 1
  last_stage_layers: 1
  sequence_parallel: true
  schedule: 1f1b
  zero: 2
  recompute: full
  offload: optimizer
  cp_kind: ulysses
  overlap_grad_reduce: false
  overlap_param_gather: false
  tp_comm_overlap: true
  order: tp-cp-ep-dp-pp
precision: {compute: fp8, params: bf16, grads: bf16, optimizer: fp32, kv_cache: fp8, fp8_scaling: current,
            master_weights: true, loss_scaling: false, fp8_attention: true}
)", "everything.yaml");
  CHECK(training.parallel.dp == 4);  // 32 / (2*2*2)
  CHECK(training.model.mla.has_value());
  CHECK(training.model.qk_norm);
  CHECK(training.model.activation_clamp == 7.5);
  CHECK(training.system.network.oversubscription == 2.0);
  CHECK(training.training().goodput.gpu_mtbf_hours == 50000.0);
  CHECK(training.training().document_tokens == 1024);
  CHECK(training.system.gpu.sfu_exp_per_sm_clock == 32.0);
  CHECK(training.system.gpu.sustained_clock_fraction == 0.9);
  CHECK(training.system.gpu.nvfp4_gemm_over_fp8 == 1.5);
  CHECK(training.precision.fp8_attention);
  CHECK(parse_scenario(write_scenario_yaml(training), training.source) == training);

  const Scenario serving = parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {gpu: h100-sxm-80gb, gpus: 8}
inference:
  mode: serving
  cuda_graphs: false
  decode_attention: per-query-head
  arrivals: gamma
  arrival_rate: 120/min
  gamma_cv: 2
  requests: 500
  input_len: {dist: uniform, min: 100, max: 300}
  output_len: {dist: exponential, mean: 200, max: 2000}
  seed: 7
  scheduler: dynamic
  max_batch: 64
  max_batch_tokens: 4096
  chunked_prefill: false
  batch_timeout: 20 ms
  kv_block: 32
  kv_memory_fraction: 0.8
  preemption: swap
  prefix_cache_hit_rate: 0.3
  replicas: 2
  disaggregation: {prefill_gpus: 4, decode_gpus: 4}
  slo: {ttft: 1 s}
parallel: {tp: 4}
precision: int8
)", "serving.yaml");
  CHECK(serving.inference().serving.arrival_rate_per_s == doctest::Approx(2.0));
  CHECK(serving.inference().serving.input_len.mean == 200.0);
  CHECK(serving.precision.params == DataType::int8);
  CHECK(parse_scenario(write_scenario_yaml(serving), serving.source) == serving);
}

TEST_CASE("model.activation_clamp: the catalog's GPT-OSS clamp, overridable, 0 for none, never negative") {
  // GPT-OSS clamps its gated activation at 7 (Hugging Face swiglu_limit; Megatron-Bridge's
  // activation_func_clamp_value); models without a clamp read 0.
  const Scenario oss = parse_scenario(R"(schema_version: 1
model: gpt-oss-120b
system: {gpu: h100-sxm-80gb, gpus: 64}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
parallel: {ep: 8}
)", "oss.yaml");
  CHECK(oss.model.activation_clamp == 7.0);
  const Scenario plain = parse_scenario(kSmallTraining, "small.yaml");
  CHECK(plain.model.activation_clamp == 0.0);
  const Scenario off = parse_scenario(R"(schema_version: 1
model: {preset: gpt-oss-120b, activation_clamp: 0}
system: {gpu: h100-sxm-80gb, gpus: 64}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
parallel: {ep: 8}
)", "off.yaml");
  CHECK(off.model.activation_clamp == 0.0);
  CHECK(parse_scenario(write_scenario_yaml(oss), oss.source) == oss);
  CHECK(errors_of(R"(schema_version: 1
model: {preset: gpt-oss-120b, activation_clamp: -1}
system: {gpu: h100-sxm-80gb, gpus: 64}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
parallel: {ep: 8}
)").find("activation_clamp") != std::string::npos);
}

TEST_CASE("a GPU's SFU rate must be a positive number of exponentials per SM per clock") {
  const auto with_rate = [](const std::string& rate) {
    return "schema_version: 1\nmodel: llama3-8b\nsystem:\n  gpu: {preset: b200, sfu_exp_per_sm_clock: " + rate +
           "}\n  gpus: 8\ntraining: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  };
  CHECK(errors_of(with_rate("32")) == "");
  for (const char* bad : {"0", "-16", "fast", "[16]"}) {
    CAPTURE(bad);
    const std::string e = errors_of(with_rate(bad));
    CHECK(e.find("sfu_exp_per_sm_clock") != std::string::npos);
  }
  // Absent, the GPU keeps its catalog entry's (b200: none, so the architecture's 16).
  const Scenario s = parse_scenario(kSmallTraining, "s.yaml");
  CHECK(s.system.gpu.sfu_exp_per_sm_clock == 0.0);
}

TEST_CASE("a GPU's sustained clock fraction is a share of its burst speed: above 0, at most 1") {
  const auto with_fraction = [](const std::string& f) {
    return "schema_version: 1\nmodel: llama3-8b\nsystem:\n  gpu: {preset: b200, sustained_clock_fraction: " + f +
           "}\n  gpus: 8\ntraining: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  };
  CHECK(errors_of(with_fraction("1")) == "");
  CHECK(errors_of(with_fraction("0.8")) == "");
  for (const char* bad : {"0", "-0.5", "1.2", "full", "[1]"}) {
    CAPTURE(bad);
    CHECK(errors_of(with_fraction(bad)).find("sustained_clock_fraction") != std::string::npos);
  }
  // Absent, the part takes its architecture's derate (b200's catalog entry gives none).
  CHECK(parse_scenario(kSmallTraining, "s.yaml").system.gpu.sustained_clock_fraction == 0.0);
}

TEST_CASE("a GPU's NVFP4-over-FP8 GEMM speed is a positive ratio; absent, the datasheet peaks set it") {
  const auto with_ratio = [](const std::string& r) {
    return "schema_version: 1\nmodel: llama3-8b\nsystem:\n  gpu: {preset: b200, nvfp4_gemm_over_fp8: " + r +
           "}\n  gpus: 8\ntraining: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  };
  CHECK(errors_of(with_ratio("1.81")) == "");
  CHECK(errors_of(with_ratio("0.5")) == "");
  for (const char* bad : {"0", "-1", "17", "fast", "[2]"}) {
    CAPTURE(bad);
    CHECK(errors_of(with_ratio(bad)).find("nvfp4_gemm_over_fp8") != std::string::npos);
  }
  CHECK(parse_scenario(kSmallTraining, "s.yaml").system.gpu.nvfp4_gemm_over_fp8 == 0.0);
  // A ratio to the FP8 GEMM: meaningless on a part without FP8 and NVFP4 peaks (the H100 has no NVFP4).
  const std::string on_h100 =
      "schema_version: 1\nmodel: llama3-8b\nsystem:\n  gpu: {preset: h100-sxm-80gb, nvfp4_gemm_over_fp8: 1.5}\n"
      "  gpus: 8\ntraining: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  CHECK(errors_of(on_h100).find("needs both an fp8 and an nvfp4 dense peak") != std::string::npos);
}

TEST_CASE("FP8 attention needs FP8 training, the fused cuDNN kernel and a Hopper or Blackwell GPU") {
  const auto scenario = [](const std::string& gpu, const std::string& precision, const std::string& training_extra) {
    return "schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: " + gpu + ", gpus: 8}\n" +
           "training: {seq_len: 4096, global_batch: 8, micro_batch: 1" + training_extra + "}\nprecision: " + precision + "\n";
  };
  CHECK(errors_of(scenario("b200", "{compute: fp8, fp8_attention: true}", "")) == "");
  CHECK(errors_of(scenario("h100-sxm-80gb", "{compute: fp8, fp8_attention: true}", "")) == "");
  CHECK(errors_of(scenario("b200", "{compute: mxfp8, fp8_attention: true}", "")) == "");
  const auto has = [](const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; };
  CHECK(has(errors_of(scenario("b200", "{compute: bf16, fp8_attention: true}", "")), "needs a quantized compute format"));
  CHECK(has(errors_of(scenario("h100-sxm-80gb", "{compute: fp8, fp8_attention: true}", ", attention_kernel: flash2")),
            "attention_kernel must be best"));
  CHECK(has(errors_of(scenario("h100-sxm-80gb", "{compute: fp8, fp8_attention: true}", ", flash_attention: false")),
            "needs the fused attention kernel"));
  CHECK(has(errors_of(scenario("l40s", "{compute: fp8, fp8_attention: true}", "")), "Hopper and Blackwell only"));
  CHECK(has(errors_of(scenario("b200", "{compute: fp8, fp8_attention: maybe}", "")), "fp8_attention"));
}
