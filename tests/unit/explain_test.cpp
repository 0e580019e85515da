// explain (simulator/explain.h) and diff (simulator/diff.h): the bottleneck they name, the
// changes they rank, and that their numbers come from predictions that add up.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "simulator/collective_models.h"
#include "simulator/diff.h"
#include "simulator/explain.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

// GPT-3 175B on 1024 A100s with 16 pipeline stages, no interleaving and micro-batches of 8: dp =
// 1024/(8*16) = 8, so 1536/(8*8) = 24 micro-batches per step; the 1F1B bubble is (p-1)/m = 15/24
// of the ideal step, larger than any other overhead.
const std::vector<Override> kBubbly = {{"parallel.pp", "16"}, {"parallel.vpp", "1"}, {"training.micro_batch", "8"},
                                       {"parallel.recompute", "full"}};

// The change titled `title` among those tried (faster or slower) and those that do not fit; null
// when explain did not try it.
const ExplainChange* find_change(const Explanation& e, const std::string& title) {
  for (const auto* list : {&e.changes, &e.no_fit}) {
    for (const ExplainChange& c : *list) {
      if (c.title == title) return &c;
    }
  }
  return nullptr;
}

// The scenario `name` with `overrides` and `change`'s one --set appended, as a user runs the printed
// command; `change` must be that single override of `key`.
Scenario as_run(const std::string& name, std::vector<Override> overrides, const ExplainChange& change,
                const std::string& key) {
  REQUIRE(change.overrides.size() == 1);
  CHECK(change.overrides[0].key_path == key);
  overrides.push_back(change.overrides[0]);
  return load_scenario(name, overrides);
}

}  // namespace

TEST_CASE("explain names the pipeline bubble first on a bubble-bound layout, and its first change really is faster") {
  const Scenario sc = load_scenario("gpt3-175b-selene", kBubbly);
  const Explanation e = explain_training(sc);
  REQUIRE(e.base.fits);
  CHECK(e.bottleneck == "pp_bubble");
  // Components are ranked by time: the bubble comes before every other overhead (here before
  // the compute itself: 15/24 of the ideal step is idle).
  REQUIRE(e.components.size() >= 2);
  CHECK(e.components[0].key == "pp_bubble");
  CHECK(e.components[1].key == "compute");
  CHECK(e.bottleneck_text.find("(p-1)/(v m) = 15/(1*24)") != std::string::npos);
  REQUIRE_FALSE(e.changes.empty());
  const ExplainChange& first = e.changes.front();
  CHECK(first.saved.value() > 0.0);
  CHECK(first.fits);
  // Re-evaluated independently: the scenario loaded again with the change's overrides on top.
  std::vector<Override> changed = kBubbly;
  changed.insert(changed.end(), first.overrides.begin(), first.overrides.end());
  const Scenario again = load_scenario("gpt3-175b-selene", changed);
  const TrainingPrediction p = predict_training(again);
  CHECK(p.step_time < e.base.step_time);
  CHECK(p.step_time == first.prediction.step_time);
  // The changes are ranked by the time they save.
  for (std::size_t i = 1; i < e.changes.size(); ++i) CHECK(e.changes[i - 1].saved >= e.changes[i].saved);
}

TEST_CASE("explain's sensitivity moves each figure by 10% both ways and sorts by swing") {
  const Scenario sc = load_scenario("gpt3-175b-selene");
  const Explanation e = explain_training(sc);
  REQUIRE(e.sensitivity.size() > 30);  // hardware figures and every cost constant
  for (std::size_t i = 1; i < e.sensitivity.size(); ++i) CHECK(e.sensitivity[i - 1].swing() >= e.sensitivity[i].swing());
  // A faster GPU (peak +10%) gives a shorter step, a slower one a longer step.
  bool found = false;
  for (const SensitivityRow& r : e.sensitivity) {
    if (r.name.rfind("gpu.dense_peak.", 0) == 0) {
      found = true;
      CHECK(r.step_plus < e.base.step_time);
      CHECK(r.step_minus > e.base.step_time);
    }
    if (r.name == "memory.cuda_context_bytes") {
      CHECK(r.peak_plus > e.base.memory.peak);  // a memory constant moves memory, not time
    }
  }
  CHECK(found);
  const std::string text = explanation_text(sc, e);
  CHECK(text.find("Bottleneck:") != std::string::npos);
  CHECK(text.find("Placement:") != std::string::npos);
  CHECK(text.find("Sensitivity:") != std::string::npos);
}

TEST_CASE("explain's sensitivity moves a measured NVFP4 GEMM speed, not the NVFP4 peak it replaces") {
  const Scenario sc = parse_scenario("schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: gb300, gpus: 8}\n"
                                     "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}\n"
                                     "precision: {compute: nvfp4, grads: bf16}\n",
                                     "s.yaml");
  const Explanation e = explain_training(sc);
  const SensitivityRow* ratio = nullptr;
  const SensitivityRow* peak = nullptr;
  for (const SensitivityRow& r : e.sensitivity) {
    if (r.name == "gpu.nvfp4_gemm_over_fp8") ratio = &r;
    if (r.name == "gpu.dense_peak.nvfp4") peak = &r;
  }
  REQUIRE(ratio != nullptr);
  CHECK(ratio->step_plus < e.base.step_time);   // faster NVFP4 GEMMs, shorter step
  CHECK(ratio->step_minus > e.base.step_time);
  REQUIRE(peak != nullptr);
  CHECK(peak->step_plus == e.base.step_time);    // the datasheet peak no longer prices them
}

TEST_CASE("diff attributes a step-time difference to steps that add up to it") {
  const Scenario a = load_scenario("gpt3-175b-selene");
  const Scenario b = load_scenario("gpt3-175b-selene", kBubbly);
  const ScenarioDiff d = diff_training(a, b);
  REQUIRE(d.path.size() >= 3);  // layout, micro-batch, recompute
  Seconds sum(0.0);
  Bytes memory(0.0);
  for (const DiffStep& s : d.path) {
    sum += s.step_delta;
    memory += s.peak_delta;
  }
  CHECK(sum.value() == doctest::Approx((d.b.step_time - d.a.step_time).value()).epsilon(1e-12));
  CHECK(memory.value() == doctest::Approx((d.b.memory.peak - d.a.memory.peak).value()).epsilon(1e-9));
  CHECK(d.path.back().step_after == d.b.step_time);
  CHECK(d.path[0].what.find("parallel layout: pp 8 -> 16, dp 16 -> 8, vpp 3 -> 1") != std::string::npos);
  // Identical scenarios differ in nothing.
  CHECK(diff_training(a, a).path.empty());
}

TEST_CASE("explain offers fused kernels for an eager PyTorch run, and its recompute edits stay valid with recompute_layers") {
  // Llama 3 8B on 8 H100s, PP 2 x DP 4, eager modules, full recomputation of 8 of each stage's 16 layers.
  const Scenario sc = parse_scenario(R"(schema_version: 1
model: llama3-8b
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1, kernels: eager}
parallel: {tp: 1, pp: 2, dp: 4, recompute: full, recompute_layers: 8}
)", "eager.yaml");
  const Explanation e = explain_training(sc);
  const auto find = [&](const std::string& title) {
    return std::find_if(e.changes.begin(), e.changes.end(), [&](const ExplainChange& c) { return c.title == title; });
  };
  const auto tried = [&](const std::string& title) { return find_change(e, title) != nullptr; };
  const auto fused = find("kernels: eager -> fused");
  REQUIRE(fused != e.changes.end());
  CHECK(fused->saved.value() > 0.0);
  // Every recompute edit clears recompute_layers, so none is refused as an invalid scenario.
  CHECK(tried("recompute: 8 layers per chunk -> all"));
  CHECK(tried("recompute: full -> none"));
  CHECK(tried("recompute: full -> selective"));
}

TEST_CASE("explain's recompute edits reset recompute_modules to the default, so none is refused as invalid") {
  // GPT-OSS 120B on 64 H100s, PP 4, EP 8, recomputing the norms and the experts' activation: an edit
  // to recompute none or full keeping [layernorm, moe_act] would be an invalid scenario.
  const Scenario sc = parse_scenario(R"(schema_version: 1
model: gpt-oss-120b
system: {preset: dgx-h100, gpus: 64}
training: {seq_len: 4096, global_batch: 512, micro_batch: 1}
parallel: {tp: 1, pp: 4, dp: 16, ep: 8, recompute: selective, recompute_modules: [layernorm, moe_act]}
)", "modules.yaml");
  const Explanation e = explain_training(sc);
  const auto tried = [&](const std::string& title) { return find_change(e, title) != nullptr; };
  std::string titles;
  for (const ExplainChange& c : e.changes) titles += c.title + "; ";
  for (const ExplainChange& c : e.no_fit) titles += c.title + "; ";
  CAPTURE(titles);
  // Every recompute edit is tried (listed, fitting or not): none was refused as invalid.
  // The set is written in Megatron-Core's table order, whatever order the file gave.
  CHECK(tried("recompute: selective [moe_act, layernorm] -> none"));
  CHECK(tried("recompute: selective [moe_act, layernorm] -> full"));
  CHECK(tried("recompute: selective [moe_act, layernorm] -> selective [core_attn]"));
}

TEST_CASE("explain says when the compute is bounded by the host launching kernels, and by how much") {
  // Qwen3-30B-A3B on 8 B200s at micro-batch 1 (the layout of Megatron-Bridge 25.11's table row):
  // after each MoE forward's host synchronization the CPU launches the experts' per-expert kernels
  // at 12 us x 2.69 each (CostParameters::training_host_dispatch_s), longer than the GPU runs them.
  ExplainOptions options;
  options.sensitivity = false;
  const Scenario sc = load_scenario("tests/fixtures/scenarios/qwen3-30b-a3b-b200-mbs1.yaml");
  const Explanation e = explain_training(sc, options);
  REQUIRE(e.bottleneck == "compute");
  CHECK(e.bottleneck_text.find("bounded by the host") != std::string::npos);
  CHECK(e.bottleneck_text.find("synchronizes with the host") != std::string::npos);
  // The share it names is the compute the host's dispatch time adds: predicted again without it.
  CostParameters no_host;
  no_host.host_dispatch_s = 0.0;
  const double wait = e.base.time.compute.value() - TrainingPredictor(no_host).predict(sc).time.compute.value();
  CHECK(wait / e.base.step_time.value() >= 0.10);
  // A compute-bound dense layout, whose kernels outlast their launches, keeps the plain words.
  const Explanation dense = explain_training(load_scenario("llama2-7b-zero3"), options);
  REQUIRE(dense.bottleneck == "compute");
  CHECK(dense.bottleneck_text.find("bounded by the host") == std::string::npos);
  CHECK(dense.bottleneck_text.find("the model's own GEMMs and attention") != std::string::npos);
}

TEST_CASE("explain names stage imbalance when the last stage's output layer makes it the slowest, and offers an uneven split that is faster") {
  // Llama 3 8B (32 layers, 128256-token vocabulary) in 4 stages of 8 layers: the last stage also
  // runs the output layer, whose 2 x 4096 x 128256 FLOPs per token are ~2.3 layers' worth
  // (a layer is ~2 x 218M), so the other stages wait for it at every one of the 128
  // micro-batches. Filling and draining is only (p-1)/m = 3/128 of the ideal.
  const std::vector<Override> layout = {{"parallel.pp", "4"},          {"parallel.dp", "2"},
                                        {"training.global_batch", "256"}, {"training.micro_batch", "1"},
                                        {"training.seq_len", "4096"}};
  const Scenario sc = load_scenario("scenarios/examples/llama3-8b-fp8.yaml", layout);
  const Explanation e = explain_training(sc);
  REQUIRE(e.base.fits);
  REQUIRE(e.base.per_stage_busy.size() == 4);
  REQUIRE(e.base.per_stage_layers == std::vector<int>{8, 8, 8, 8});
  // The last stage carries the most work, by more than one layer's worth (1/8 of a middle stage).
  const auto busiest = std::max_element(e.base.per_stage_busy.begin(), e.base.per_stage_busy.end());
  CHECK(busiest - e.base.per_stage_busy.begin() == 3);
  CHECK(*busiest > e.base.per_stage_busy[1] * 1.125);
  CHECK(e.bottleneck == "pp_bubble");
  CHECK(e.bottleneck_text.find("mostly stage imbalance: stage 3 (8 layers and the output layer (128256-token logits)") !=
        std::string::npos);
  CHECK(e.bottleneck_text.find("(p-1)/(v m) = 3/(1*128)") != std::string::npos);
  // The fastest change moves layers off the last chunk; re-predicted independently it is faster.
  REQUIRE_FALSE(e.changes.empty());
  const ExplainChange& first = e.changes.front();
  CHECK(first.title.find("rebalance the pipeline") == 0);
  std::vector<Override> changed = layout;
  changed.insert(changed.end(), first.overrides.begin(), first.overrides.end());
  const TrainingPrediction again = predict_training(load_scenario("scenarios/examples/llama3-8b-fp8.yaml", changed));
  CHECK(again.step_time < e.base.step_time);
  CHECK(again.step_time == first.prediction.step_time);
  // Every offered split keeps the middle chunks even and no end chunk above them.
  for (const ExplainChange& c : e.changes) {
    if (c.title.find("rebalance") != 0) continue;
    std::vector<Override> o = layout;
    o.insert(o.end(), c.overrides.begin(), c.overrides.end());
    const Scenario s = load_scenario("scenarios/examples/llama3-8b-fp8.yaml", o);
    const int f = s.parallel.first_stage_layers;
    const int l = s.parallel.last_stage_layers;
    REQUIRE((f >= 0 || l >= 0));
    const int middle_chunks = 4 - (f >= 0 ? 1 : 0) - (l >= 0 ? 1 : 0);
    const int rest = 32 - std::max(f, 0) - std::max(l, 0);
    CHECK(rest % middle_chunks == 0);
    CHECK(std::max(f, l) <= rest / middle_chunks);
  }
}

TEST_CASE("explain keeps the plain fill-and-drain wording when the stages are balanced") {
  // GPT-3 175B with 16 stages and 24 micro-batches (the bubbly layout above): its 96 layers split
  // 6 per stage and the 51200-token output layer is well under one layer of 12288 hidden, so the
  // bubble is fill and drain.
  const Scenario sc = load_scenario("gpt3-175b-selene", kBubbly);
  const Explanation e = explain_training(sc);
  CHECK(e.bottleneck_text.find("stage imbalance") == std::string::npos);
  CHECK(e.bottleneck_text.find("stages idle while 16 stages fill and drain") != std::string::npos);
}

TEST_CASE("explain's FP8 alternative changes only the compute format and keeps a precision mapping's states") {
  // BF16 gradients and the precision-aware optimizer (BF16 moments, the master as remainders):
  // 2 + 2 + 2 = 6 bytes of optimizer state per parameter. FP8 compute changes the GEMM format
  // only; the states stay (replacing the mapping with the word `fp8` would bring back FP32
  // gradients and 12 bytes of states).
  const std::vector<Override> mapping = {
      {"precision", "{compute: bf16, grads: bf16, moments: bf16, master_remainders: true}"}};
  const Scenario sc = load_scenario("llama3-70b-h100", mapping);
  ExplainOptions quick;
  quick.sensitivity = false;
  const Explanation e = explain_training(sc, quick);
  const ExplainChange* fp8 = nullptr;
  for (const auto* list : {&e.changes, &e.no_fit}) {
    for (const ExplainChange& c : *list) {
      if (c.title.rfind("FP8 compute", 0) == 0) fp8 = &c;
    }
  }
  REQUIRE(fp8 != nullptr);
  REQUIRE(fp8->overrides.size() == 1);
  CHECK(fp8->overrides[0].key_path == "precision.compute");
  CHECK(fp8->overrides[0].value == "fp8");
  // The change as a user would run it: the same overrides through the loader.
  std::vector<Override> changed = mapping;
  changed.push_back(fp8->overrides[0]);
  const Scenario again = load_scenario("llama3-70b-h100", changed);
  CHECK(again.precision.compute == DataType::fp8);
  CHECK(again.precision.moments == DataType::bf16);
  CHECK(again.precision.master_remainders);
  CHECK(again.precision.grads == DataType::bf16);
  const TrainingPrediction p = predict_training(again);
  CHECK(p.step_time == fp8->prediction.step_time);
  CHECK(p.memory.peak == fp8->prediction.memory.peak);
  CHECK(fp8->prediction.memory.optimizer_states == e.base.memory.optimizer_states);
  CHECK(fp8->prediction.memory.gradients == e.base.memory.gradients);

  // A one-word precision keeps the one-word change (its expansion differs only in compute).
  const Explanation word = explain_training(load_scenario("llama3-70b-h100"), quick);
  bool found = false;
  for (const auto* list : {&word.changes, &word.no_fit}) {
    for (const ExplainChange& c : *list) {
      if (c.title.rfind("FP8 compute", 0) != 0) continue;
      found = true;
      REQUIRE(c.overrides.size() == 1);
      CHECK(c.overrides[0].key_path == "precision");
    }
  }
  CHECK(found);
}

TEST_CASE("explain offers FP8 attention under FP8 training, and the change as a user runs it is the prediction shown") {
  ExplainOptions quick;
  quick.sensitivity = false;
  // A one-word precision (fp8) and a mapping both get the one key: the loader reads the word as
  // {compute: fp8} when a key inside it is set.
  for (const auto& overrides :
       {std::vector<Override>{{"system", "{preset: dgx-b200, gpus: 64}"}, {"precision", "fp8"}},
        std::vector<Override>{{"system", "{preset: dgx-b200, gpus: 64}"}, {"precision", "{compute: fp8, grads: bf16}"}}}) {
    CAPTURE(overrides.back().value);
    const Explanation e = explain_training(load_scenario("llama3-70b-h100", overrides), quick);
    const ExplainChange* change = find_change(e, "FP8 attention (fp8_attention)");
    REQUIRE(change != nullptr);
    const Scenario again = as_run("llama3-70b-h100", overrides, *change, "precision.fp8_attention");
    CHECK(again.precision.fp8_attention);
    CHECK(again.precision.compute == DataType::fp8);
    CHECK(predict_training(again).step_time == change->prediction.step_time);
    CHECK(change->prediction.step_time < e.base.step_time);  // B200: FP8 attention 1.26x forward, 1.12x backward
  }
  // On an H100 it is tried and slower: cuDNN's FP8 causal backward runs at 0.81 of its BF16 speed
  // there (model/cost_parameters.h flash_fp8_bwd_speedup_hopper).
  const std::vector<Override> fp8_word = {{"precision", "fp8"}};
  const Explanation h100 = explain_training(load_scenario("llama3-70b-h100", fp8_word), quick);
  const ExplainChange* slower = find_change(h100, "FP8 attention (fp8_attention)");
  REQUIRE(slower != nullptr);
  CHECK(slower->prediction.step_time > h100.base.step_time);
  // Not offered under BF16 compute.
  const Explanation bf16 = explain_training(load_scenario("llama3-70b-h100"), quick);
  CHECK(find_change(bf16, "FP8 attention (fp8_attention)") == nullptr);
}

TEST_CASE("explain offers current scaling under FP8 delayed scaling, and the change as a user runs it is the prediction shown") {
  ExplainOptions quick;
  quick.sensitivity = false;
  // 64 H100s, DP 64: delayed scaling all-reduces each chunk's amaxes over 64 ranks on 8 nodes.
  // llama3-8b-fp8's one-word precision and a mapping both get the one key.
  for (const auto& overrides :
       {std::vector<Override>{{"system.gpus", "64"}, {"parallel.dp", "64"}, {"training.global_batch", "128"}},
        std::vector<Override>{{"system.gpus", "64"}, {"parallel.dp", "64"}, {"training.global_batch", "128"},
                              {"precision", "{compute: fp8, grads: bf16}"}}}) {
    CAPTURE(overrides.back().value);
    const Explanation e = explain_training(load_scenario("llama3-8b-fp8", overrides), quick);
    const ExplainChange* change = find_change(e, "FP8 scaling: delayed -> current");
    REQUIRE(change != nullptr);
    const Scenario again = as_run("llama3-8b-fp8", overrides, *change, "precision.fp8_scaling");
    CHECK(again.precision.fp8_scaling == Fp8Scaling::current);
    CHECK(again.precision.compute == DataType::fp8);
    CHECK(predict_training(again).step_time == change->prediction.step_time);
    // The base reports its amax reductions; the change has none.
    const auto amax_note = [](const TrainingPrediction& p) {
      return std::any_of(p.notes.begin(), p.notes.end(),
                         [](const std::string& n) { return n.rfind("FP8 delayed scaling:", 0) == 0; });
    };
    CHECK(amax_note(e.base));
    CHECK_FALSE(amax_note(change->prediction));
    // The TP-only amax group: with TP 1 and no CP the group is one rank, nothing to reduce.
    const ExplainChange* tp_only = find_change(e, "FP8 amax group: stage -> tp (tp_only_amax_red)");
    REQUIRE(tp_only != nullptr);
    const Scenario tp_again = as_run("llama3-8b-fp8", overrides, *tp_only, "precision.fp8_amax_group");
    CHECK(tp_again.precision.fp8_amax_group == Fp8AmaxGroup::tp);
    CHECK(predict_training(tp_again).step_time == tp_only->prediction.step_time);
    CHECK(tp_only->prediction.step_time < e.base.step_time);
    CHECK_FALSE(amax_note(tp_only->prediction));
  }
  // Not offered once the scaling is current.
  const std::vector<Override> current_scaling = {{"precision", "{compute: fp8, fp8_scaling: current}"}};
  const Explanation current = explain_training(load_scenario("llama3-8b-fp8", current_scaling), quick);
  CHECK(find_change(current, "FP8 scaling: delayed -> current") == nullptr);
}

TEST_CASE("explain offers FP8 weights under per-tensor FP8, and the change as a user runs it is the prediction shown") {
  // Llama 3 70B on 64 H100s (TP 8 PP 4 DP 2) in FP8: BF16 weights plus their FP8 copy and
  // transpose (4 bytes a parameter) become the FP8 copy and transpose (2).
  ExplainOptions quick;
  quick.sensitivity = false;
  const std::vector<Override> fp8 = {{"precision", "fp8"}};
  const Explanation e = explain_training(load_scenario("llama3-70b-h100", fp8), quick);
  const ExplainChange* change = find_change(e, "FP8 weights (params: fp8)");
  REQUIRE(change != nullptr);
  CHECK(change->prediction.memory.weights.value() == doctest::Approx(e.base.memory.weights.value() / 2.0));
  CHECK(change->prediction.memory.peak < e.base.memory.peak);
  const TrainingPrediction again = predict_training(as_run("llama3-70b-h100", fp8, *change, "precision.params"));
  CHECK(again.step_time == change->prediction.step_time);
  CHECK(again.memory.peak == change->prediction.memory.peak);
  // Not offered with FP8 weights already, nor under 16-bit compute.
  for (const std::vector<Override>& o : {std::vector<Override>{{"precision", "{compute: fp8, params: fp8}"}},
                                          std::vector<Override>{}}) {
    const Explanation other = explain_training(load_scenario("llama3-70b-h100", o), quick);
    CHECK(find_change(other, "FP8 weights (params: fp8)") == nullptr);
  }
}

TEST_CASE("explain offers the other MoE token dispatcher, and its prediction is the scenario's with that dispatcher") {
  // Mixtral 8x7B with expert parallelism (scenarios/examples/mixtral-8x7b-ep.yaml): all-to-all
  // dispatcher by default, so the change tried is alltoall -> deepep.
  ExplainOptions options;
  options.sensitivity = false;
  const Scenario sc = load_scenario("scenarios/examples/mixtral-8x7b-ep.yaml");
  REQUIRE(sc.parallel.ep > 1);
  REQUIRE(sc.parallel.ep_dispatcher == ExpertDispatcher::alltoall);
  const Explanation e = explain_training(sc, options);
  const auto is_dispatcher = [](const ExplainChange& c) { return c.title == "token dispatcher: alltoall -> deepep"; };
  const auto it = std::find_if(e.changes.begin(), e.changes.end(), is_dispatcher);
  REQUIRE(it != e.changes.end());
  REQUIRE(it->overrides.size() == 1);
  CHECK(it->overrides[0].key_path == "parallel.ep_dispatcher");
  CHECK(it->overrides[0].value == "deepep");
  // Its EP group of 8 spans 2 nodes (TP 2 first): a token's 2 experts sit on the other node with
  // probability 1/2 each, and DeepEP sends it across once per node, not once per expert (0.79
  // copies against 1), but each exchange also pays DeepEP's fixed 636 us over the network
  // (CostParameters::deepep_network_latency_s), more than the bytes it saves at this size, so the
  // change is offered as slower; re-predicted from the loader it gives the same step.
  CHECK(it->saved.value() < 0.0);
  const TrainingPrediction again = predict_training(load_scenario("scenarios/examples/mixtral-8x7b-ep.yaml", it->overrides));
  CHECK(again.step_time == it->prediction.step_time);
}

TEST_CASE("explain offers the MoE all-to-all overlap only where Megatron-Core runs it: no pipeline, or an interleaved one") {
  // docs/user-guide/features/moe_a2a_overlap.md (Megatron-LM), hard requirements: PP > 1 needs
  // VPP, and moe must not be a recompute module.
  ExplainOptions options;
  options.sensitivity = false;
  const auto offered = [&](const std::vector<Override>& overrides) {
    const Explanation e = explain_training(load_scenario("scenarios/examples/mixtral-8x7b-ep.yaml", overrides), options);
    const auto all = [&](const std::vector<ExplainChange>& list) {
      return std::any_of(list.begin(), list.end(), [](const ExplainChange& c) {
        return c.title == "overlap the MoE all-to-alls (ep_comm_overlap)";
      });
    };
    return all(e.changes) || all(e.no_fit);
  };
  CHECK(offered({}));  // pp 1
  // pp 2 leaves dp 4: expert_tp 1 keeps ep 8 within tp x dp.
  CHECK_FALSE(offered({{"parallel.pp", "2"}, {"parallel.vpp", "1"}, {"parallel.expert_tp", "1"}}));
  CHECK(offered({{"parallel.pp", "2"}, {"parallel.vpp", "2"}, {"parallel.expert_tp", "1"}}));
  CHECK_FALSE(offered({{"parallel.recompute", "selective"}, {"parallel.recompute_modules", "[moe]"}}));
}

TEST_CASE("explain offers activation offloading only where Megatron-Core runs it, and on a layout that does not fit lists what fits") {
  // scenarios/examples/llama3-70b-activation-offload.yaml: GB200, FSDP, recompute none, 40 of 80
  // layers offloaded, predicted over its memory. Megatron-Core allows cpu_offloading only with
  // pp 1 and no recompute (transformer_config.py; model/activation_offload.h), so the offered
  // counts are the quarters of the layers other than the current one, and 0 to turn it off.
  ExplainOptions options;
  options.sensitivity = false;
  const Scenario sc = load_scenario("scenarios/examples/llama3-70b-activation-offload.yaml");
  const Explanation e = explain_training(sc, options);
  REQUIRE_FALSE(e.base.fits);
  const ExplainChange* more = find_change(e, "activation offload: 40 -> 60 of 80 layers");
  REQUIRE(more != nullptr);
  CHECK(find_change(e, "activation offload: 40 -> 20 of 80 layers") != nullptr);
  CHECK(find_change(e, "activation offload: 40 -> 0 of 80 layers") != nullptr);
  CHECK(find_change(e, "activation offload: 40 -> 40 of 80 layers") == nullptr);
  // Offloading 20 more layers moves their activations off the GPU: it fits, and the peak drops.
  CHECK(more->fits);
  CHECK(more->prediction.memory.peak < e.base.memory.peak);
  // The text leads with what would let the layout run.
  const std::string text = explanation_text(sc, e);
  const auto section = text.find("Changes that make it fit in memory (least slowdown first):");
  REQUIRE(section != std::string::npos);
  CHECK(text.find("activation offload: 40 -> 60 of 80 layers", section) != std::string::npos);
  // With recomputation (or a pipeline) Megatron-Core refuses cpu_offloading: not offered.
  const std::vector<Override> recomputing = {{"parallel.activation_offload_layers", "0"}, {"parallel.recompute", "full"}};
  const Explanation full =
      explain_training(load_scenario("scenarios/examples/llama3-70b-activation-offload.yaml", recomputing), options);
  for (const auto* list : {&full.changes, &full.no_fit}) {
    for (const ExplainChange& c : *list) CHECK(c.title.find("activation offload") == std::string::npos);
  }
  // A layout that fits has no such section.
  const Scenario fitting = load_scenario("gpt3-175b-selene");
  const Explanation fe = explain_training(fitting, options);
  REQUIRE(fe.base.fits);
  CHECK(explanation_text(fitting, fe).find("Changes that make it fit") == std::string::npos);
}

TEST_CASE("explain offers torchtitan's per-op checkpointing (selective_op) for a dense Llama, not for a MoE model") {
  // torchtitan's Table 1 layout (tests/fixtures/reference/published_memory.yaml, Llama 3.1 8B, FSDP 8,
  // local batch 2, eager) without recomputation: predicted over the 96 GB H100's memory. selective_op
  // keeps every other GEMM output and the attention output, so the layout fits again; it is listed
  // among the changes that make it fit, and its prediction is the loader's with that recompute.
  ExplainOptions options;
  options.sensitivity = false;
  const std::string dense = R"(schema_version: 1
model: llama3-8b
system: {preset: grand-teton-h100-96gb, gpus: 8, power_mode: 500W}
training: {seq_len: 8192, global_batch: 16, micro_batch: 2, cross_entropy_fusion: pytorch, kernels: eager}
parallel: {dp: 8, zero: 3, recompute: none}
precision: {compute: bf16, params: fp32, grads: fp32, optimizer: fp32, master_weights: false}
)";
  const Scenario sc = parse_scenario(dense, "dense.yaml");
  const Explanation e = explain_training(sc, options);
  REQUIRE_FALSE(e.base.fits);
  const ExplainChange* per_op = find_change(e, "recompute: none -> selective_op");
  REQUIRE(per_op != nullptr);
  CHECK(per_op->why ==
        "torchtitan's per-op selective checkpointing: keeps every other GEMM output and attention, replays the rest");
  CHECK(per_op->fits);
  CHECK(per_op->prediction.memory.peak < e.base.memory.peak);
  // More work than none (it replays wk, wo, w3 and the non-GEMM ops), less than full recomputation.
  const ExplainChange* full = find_change(e, "recompute: none -> full");
  REQUIRE(full != nullptr);
  CHECK(per_op->prediction.step_time > e.base.step_time);
  CHECK(per_op->prediction.step_time < full->prediction.step_time);
  const Scenario reloaded = parse_scenario(dense, "dense.yaml", per_op->overrides);
  CHECK(predict_training(reloaded).step_time == per_op->prediction.step_time);
  const std::string text = explanation_text(sc, e);
  const auto section = text.find("Changes that make it fit in memory (least slowdown first):");
  REQUIRE(section != std::string::npos);
  CHECK(text.find("recompute: none -> selective_op", section) != std::string::npos);

  // Mixtral 8x7B (MoE) and GPT-3 (biased linears): the loader refuses selective_op, so it is not offered.
  for (const char* refused : {"scenarios/examples/mixtral-8x7b-ep.yaml", "gpt3-175b-selene"}) {
    CAPTURE(refused);
    const Explanation x = explain_training(load_scenario(refused), options);
    REQUIRE_FALSE(x.changes.empty());
    for (const auto* list : {&x.changes, &x.no_fit}) {
      for (const ExplainChange& c : *list) CHECK(c.title.find("selective_op") == std::string::npos);
    }
    CHECK(explanation_text(load_scenario(refused), x, 100).find("selective_op") == std::string::npos);
  }
}
