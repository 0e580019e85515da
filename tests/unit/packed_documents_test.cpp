// training.document_tokens: sequences packing several documents, attention masked per document
// (model/workload.h TrainingWorkload::document_tokens). Reading and checking the key, the FLOP count
// (model/flops.h), the fused kernel's work and shape per document (model/layer_ops.cpp flash_shape),
// the unfused path's unchanged masked work, and what a prediction does with it.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/op_time.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_layouts.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_gpu.h"
#include "tests/support/catalog_model.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {

// Llama 3 8B at 8192 tokens on 8 H100s; `extra` goes into the training mapping, `parallel` replaces
// the layout.
std::string scenario_yaml(const std::string& extra, const std::string& parallel = "{tp: 1, pp: 1, dp: 8}") {
  return "schema_version: 1\nmodel: llama3-8b\nsystem: {preset: dgx-h100, gpus: 8}\nparallel: " + parallel +
         "\ntraining: {seq_len: 8192, global_batch: 32, micro_batch: 1" + (extra.empty() ? "" : ", " + extra) +
         "}\nprecision: bf16\n";
}

// The one op of `kind` in `ops`, by value (the lists are temporaries).
Op only(const OpList& ops, OpKind kind) {
  const Op* found = nullptr;
  for (const Op& op : ops) {
    if (op.kind == kind) {
      REQUIRE(found == nullptr);
      found = &op;
    }
  }
  REQUIRE(found != nullptr);
  return *found;
}

LayerShape shape_with(int seq_len, int document_tokens, int cp = 1, ContextParallelKind kind = ContextParallelKind::ring) {
  TrainingWorkload w;
  w.seq_len = seq_len;
  w.document_tokens = document_tokens;
  ParallelConfig p;
  p.cp = cp;
  p.cp_kind = kind;
  return make_layer_shape(test::catalog_model("llama3-8b"), w, p, PrecisionConfig{});
}

}  // namespace

TEST_CASE("training.document_tokens loads, writes back, and is absent (0) by default") {
  const Scenario s = parse_scenario(scenario_yaml("document_tokens: 1024"), "t.yaml");
  CHECK(s.training().document_tokens == 1024);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  CHECK(parse_scenario(scenario_yaml(""), "t.yaml").training().document_tokens == 0);
  CHECK(write_scenario_yaml(parse_scenario(scenario_yaml(""), "t.yaml")).find("document_tokens") == std::string::npos);
}

TEST_CASE("a document_tokens that is not a positive integer, longer than seq_len, or not split by 2*cp is rejected") {
  CHECK(test::scenario_errors(scenario_yaml("document_tokens: 0")).find("training.document_tokens: expected a positive integer") !=
        std::string::npos);
  CHECK(test::scenario_errors(scenario_yaml("document_tokens: 512.5")).find("training.document_tokens") != std::string::npos);
  const std::string longer = test::scenario_errors(scenario_yaml("document_tokens: 8193"));
  CAPTURE(longer);
  CHECK(longer.find("document_tokens (8193) exceeds seq_len (8192)") != std::string::npos);
  const std::string cp = test::scenario_errors(scenario_yaml("document_tokens: 1004", "{tp: 1, pp: 1, dp: 2, cp: 4}"));
  CAPTURE(cp);
  CHECK(cp.find("must be divisible by 2*cp = 8") != std::string::npos);
  CHECK(test::scenario_errors(scenario_yaml("document_tokens: 1024", "{tp: 1, pp: 1, dp: 2, cp: 4}")).empty());
  CHECK(test::scenario_errors(scenario_yaml("document_tokens: 8192")).empty());
}

TEST_CASE("packed documents count 4 b s N a d of attention core instead of 4 b s^2 a d; a window shorter still counts w") {
  const TransformerSpec m = test::catalog_model("llama3-8b");
  const double q = m.heads * m.resolved_head_dim();
  const LayerFlops whole = layer_forward_flops(m, 2, 8192);
  CHECK(whole.attention.value() == doctest::Approx(4.0 * 2 * 8192.0 * 8192 * q));
  const LayerFlops packed = layer_forward_flops(m, 2, 8192, AttentionCount::full, false, 1024);
  CHECK(packed.attention.value() == doctest::Approx(4.0 * 2 * 8192.0 * 1024 * q));
  // Only the core changes.
  CHECK(packed.qkv.value() == doctest::Approx(whole.qkv.value()));
  CHECK(packed.mlp.value() == doctest::Approx(whole.mlp.value()));
  // Causal: each document's N^2 / 2 pairs.
  CHECK(layer_forward_flops(m, 2, 8192, AttentionCount::causal, false, 1024).attention.value() ==
        doctest::Approx(0.5 * 4.0 * 2 * 8192.0 * 1024 * q));
  // A document as long as the sequence (or longer) is the whole sequence.
  CHECK(layer_forward_flops(m, 2, 8192, AttentionCount::full, false, 8192).attention.value() ==
        doctest::Approx(whole.attention.value()));
  // Every layer windowed at 128 < N: the window's work, whatever the documents.
  TransformerSpec windowed = m;
  windowed.sliding_window = 128;
  CHECK(layer_forward_flops(windowed, 2, 8192, AttentionCount::full, false, 1024).attention.value() ==
        doctest::Approx(4.0 * 2 * 8192.0 * 128 * q));
  // The step's model FLOPs drop by exactly the layers' core difference, forward and backward.
  const double drop = training_step_flops(m, 16, 8192, Recompute::none).model.value() -
                      training_step_flops(m, 16, 8192, Recompute::none, AttentionCount::full, 1.0, {}, 1024).model.value();
  CHECK(drop == doctest::Approx(3.0 * m.layers * 4.0 * 16 * 8192.0 * (8192 - 1024) * q));
}

TEST_CASE("the fused kernel runs each document as its own causal problem: s/N of them per sequence, N/8 the work") {
  const LayerShape whole = shape_with(8192, 0);
  const LayerShape packed = shape_with(8192, 1024);
  CHECK(documents_per_sequence(whole) == doctest::Approx(1.0));
  CHECK(documents_per_sequence(packed) == doctest::Approx(8.0));
  CHECK(attention_keys(packed) == doctest::Approx(1024.0));
  const Op w = only(attention_core_forward_ops(whole), OpKind::flash_forward);
  const Op p = only(attention_core_forward_ops(packed), OpKind::flash_forward);
  CHECK(p.flops.value() == doctest::Approx(w.flops.value() / 8.0));
  CHECK(p.bytes.value() == doctest::Approx(w.bytes.value()));  // Q, K, V and O are read and written once either way
  CHECK(p.attention.batch_heads == doctest::Approx(8.0 * w.attention.batch_heads));
  CHECK(p.attention.seq_q == doctest::Approx(1024.0));
  CHECK(p.attention.seq_kv == doctest::Approx(1024.0));
  CHECK(p.attention.causal);
  // Shorter problems cost more per FLOP (each CTA's prologue and the causal tail weigh more), and
  // less in all.
  const CostParameters params;
  const GpuSpec& h100 = test::catalog_gpu("h100-sxm-80gb");
  const double t_whole = op_time(w, h100, params).value();
  const double t_packed = op_time(p, h100, params).value();
  CHECK(t_packed < t_whole);
  CHECK(t_packed / p.flops.value() > t_whole / w.flops.value());
}

TEST_CASE("under ring context parallelism each document's 2 cp chunks form the ring's problems") {
  const LayerShape packed = shape_with(8192, 1024, 4, ContextParallelKind::ring);
  const Op p = only(attention_core_forward_ops(packed), OpKind::flash_forward);
  // Each of the cp steps: every (document, head) of the micro-batch, the rank's N/cp queries against
  // one received half-chunk of N/(2cp) keys.
  CHECK(p.launches == doctest::Approx(4.0));
  CHECK(p.attention.batch_heads == doctest::Approx(8.0 * 32.0));
  CHECK(p.attention.seq_q == doctest::Approx(1024.0 / 4));
  CHECK(p.attention.seq_kv == doctest::Approx(1024.0 / 8));
  CHECK_FALSE(p.attention.causal);
  // The rank's share of every document's causal work.
  const Op whole_rank = only(attention_core_forward_ops(shape_with(8192, 0, 4, ContextParallelKind::ring)), OpKind::flash_forward);
  CHECK(p.flops.value() == doctest::Approx(whole_rank.flops.value() / 8.0));
}

TEST_CASE("the unfused path masks the whole s x s scores, so documents leave its work unchanged") {
  TrainingWorkload w;
  w.seq_len = 4096;
  w.flash_attention = false;
  const LayerShape whole = make_layer_shape(test::catalog_model("llama3-8b"), w, ParallelConfig{}, PrecisionConfig{});
  w.document_tokens = 512;
  const LayerShape packed = make_layer_shape(test::catalog_model("llama3-8b"), w, ParallelConfig{}, PrecisionConfig{});
  const OpList a = attention_core_forward_ops(whole);
  const OpList b = attention_core_forward_ops(packed);
  REQUIRE(a.size() == b.size());
  for (int i = 0; i < a.size(); ++i) {
    CHECK(a[i].flops.value() == doctest::Approx(b[i].flops.value()));
    CHECK(a[i].bytes.value() == doctest::Approx(b[i].bytes.value()));
  }
}

TEST_CASE("a prediction with shorter documents is faster, only through attention, and counts fewer model FLOPs") {
  const TrainingPrediction whole = predict_training(parse_scenario(scenario_yaml(""), "t.yaml"));
  const TrainingPrediction half = predict_training(parse_scenario(scenario_yaml("document_tokens: 4096"), "t.yaml"));
  const TrainingPrediction short_docs = predict_training(parse_scenario(scenario_yaml("document_tokens: 512"), "t.yaml"));
  CHECK(half.step_time.value() < whole.step_time.value());
  CHECK(short_docs.step_time.value() < half.step_time.value());
  CHECK(short_docs.model_flops_per_step.value() < half.model_flops_per_step.value());
  // Memory does not depend on the mask: the fused kernel keeps per-token statistics only.
  CHECK(short_docs.memory.peak.value() == doctest::Approx(whole.memory.peak.value()));
  // Unfused attention: no change in time.
  const TrainingPrediction unfused = predict_training(parse_scenario(scenario_yaml("flash_attention: false"), "t.yaml"));
  const TrainingPrediction unfused_docs =
      predict_training(parse_scenario(scenario_yaml("flash_attention: false, document_tokens: 512"), "t.yaml"));
  CHECK(unfused_docs.step_time.value() == doctest::Approx(unfused.step_time.value()));
}

TEST_CASE("the layout search offers only the context-parallel degrees whose 2*cp chunks split a document") {
  // seq_len 8192 splits for cp 2, 4 and 8; a 1028-token document only for cp 2 (1028 / 8 is not
  // whole).
  LayoutSpaceOptions options;
  options.context_parallel = true;
  const LayoutSpace whole(parse_scenario(scenario_yaml(""), "t.yaml"), options);
  const LayoutSpace packed(parse_scenario(scenario_yaml("document_tokens: 1028"), "t.yaml"), options);
  std::set<int> whole_cps, packed_cps;
  for (std::uint64_t i = 0; i < whole.size(); ++i) whole_cps.insert(whole.at(i).cp);
  for (std::uint64_t i = 0; i < packed.size(); ++i) packed_cps.insert(packed.at(i).cp);
  CHECK(whole_cps == std::set<int>{1, 2, 4, 8});
  CHECK(packed_cps == std::set<int>{1, 2});
  // Every layout offered loads.
  for (std::uint64_t i = 0; i < packed.size(); ++i) {
    Scenario s = parse_scenario(scenario_yaml("document_tokens: 1028"), "t.yaml");
    apply_layout(packed.at(i), s);
    CHECK(test::scenario_errors(write_scenario_yaml(s)).empty());
  }
}
