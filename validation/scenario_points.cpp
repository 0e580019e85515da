#include "validation/scenario_points.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "simulator/diagnostics.h"
#include "validation/harness_grids.h"

namespace stepcast {

namespace {

std::int64_t whole(double v) { return static_cast<std::int64_t>(std::llround(v)); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

GemmInputs gemm_for(const Op& op) {
  const std::string name(op.name);
  const bool dgrad = ends_with(name, ".dgrad") || name.find(".dgrad_") != std::string::npos;
  const bool wgrad = ends_with(name, ".wgrad");
  const auto m = whole(op.gemm.m);
  const auto n = whole(op.gemm.n);
  const auto k = whole(op.gemm.k);
  GemmInputs g;
  if (op.dtype == DataType::fp8) {
    g = gemm_point(DataType::fp8, "TN", wgrad ? m : n, wgrad ? n : m, k, name);
    if (dgrad || wgrad) g.b_type = "e5m2";
  } else if (wgrad) {
    g = gemm_point(op.dtype, "NT", m, n, k, name);
  } else {
    g = gemm_point(op.dtype, dgrad ? "NN" : "TN", n, m, k, name);
  }
  g.batch = std::max<std::int64_t>(1, whole(op.gemm.batch));
  return g;
}

AttentionInputs attention_for(const Op& op, const LayerShape& s) {
  AttentionInputs a;
  a.impl = "stepcast_flash";
  a.direction = op.kind == OpKind::flash_backward ? AttentionDirection::backward : AttentionDirection::forward;
  a.dtype = op.dtype;
  a.batch = whole(s.micro_batch);
  a.heads = whole(s.heads / s.t());
  a.kv_heads = std::max<std::int64_t>(1, whole(s.kv_heads / s.t()));
  a.seq_q = whole(s.seq);
  a.seq_kv = whole(s.context);
  a.head_dim = whole(s.head_dim);
  a.causal = s.causal;
  return a;
}

// The fused kernel that runs this memory-bound op, if stepcast has one.
std::optional<ElementwiseInputs> elementwise_for(const Op& op, const LayerShape& s) {
  const std::string_view name = op.name;
  const DataType dtype = s.activation_bytes >= 4.0 ? DataType::fp32 : DataType::bf16;
  const auto rows = whole(s.norm_tokens());
  const auto hidden = whole(s.hidden);
  if (name == "input_norm" || name == "post_attention_norm" || name == "final_norm") {
    return ElementwiseInputs{s.norm == NormKind::rmsnorm ? "rmsnorm" : "layernorm", dtype, rows, hidden};
  }
  if (name == "bias_dropout_add") return ElementwiseInputs{"bias_dropout_add", dtype, rows, hidden};
  if (name == "swiglu") return ElementwiseInputs{"swiglu", dtype, whole(s.tokens()), whole(s.ffn / s.t())};
  if (name == "bias_gelu") return ElementwiseInputs{"gelu", dtype, whole(s.tokens()), whole(s.ffn / s.t())};
  if (name == "scale_mask_softmax") {
    return ElementwiseInputs{"softmax", dtype, whole(s.micro_batch * s.heads / s.t() * s.seq), whole(s.context)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<ScenarioPoint> scenario_points(const Scenario& scenario) {
  if (!scenario.is_training()) {
    throw InputError(scenario.source + ": inference scenarios are not mapped to harness points yet; measure decode "
                     "with `stepcast-harness attention`");
  }
  const LayerShape shape = make_layer_shape(scenario.model, scenario.training(), scenario.parallel, scenario.precision,
                                            scenario.system.gpu.architecture);
  std::vector<ScenarioPoint> points;
  std::map<std::string, std::size_t> index;
  for (const OpList& list : {embedding_forward_ops(shape), layer_forward_ops(shape), output_forward_ops(shape),
                             output_backward_ops(shape), layer_backward_ops(shape), embedding_backward_ops(shape)}) {
    for (const Op& op : list) {
      MeasurementInputs point;
      if (op.kind == OpKind::gemm) {
        point = gemm_for(op);
      } else if (op.kind == OpKind::flash_forward || op.kind == OpKind::flash_backward) {
        point = attention_for(op, shape);
      } else if (auto e = elementwise_for(op, shape)) {
        point = *e;
      } else {
        // A copy moving the op's bytes: each fp32 element is read and written (8 bytes).
        point = MemoryInputs{"copy", DataType::fp32, std::max<std::int64_t>(1, whole(op.bytes.value() / 8.0))};
      }
      const std::string key = point_name(point);
      const auto found = index.find(key);
      if (found == index.end()) {
        index[key] = points.size();
        points.push_back({point, {std::string(op.name)}});
      } else {
        points[found->second].ops.emplace_back(op.name);
      }
    }
  }
  return points;
}

std::string describe_ops(const std::vector<std::string>& ops) {
  std::vector<std::pair<std::string, int>> counted;
  for (const std::string& op : ops) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == op; });
    if (it == counted.end()) {
      counted.emplace_back(op, 1);
    } else {
      ++it->second;
    }
  }
  std::string text;
  for (const auto& [op, count] : counted) {
    text += (text.empty() ? "" : ", ") + op + (count > 1 ? " x" + std::to_string(count) : "");
  }
  return text;
}

}  // namespace stepcast
