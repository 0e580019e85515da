#include "inference_reference_runs.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include <fmt/format.h>

#include "simulator/scenario_loader.h"

namespace stepcast::test {
namespace {

std::string catalog_gpu(const std::string& gpu_type) {
  if (gpu_type.rfind("H100-SXM", 0) == 0) return "h100-sxm-80gb";
  if (gpu_type.rfind("H200", 0) == 0) return "h200-sxm-141gb";
  if (gpu_type.rfind("L40S", 0) == 0) return "l40s";
  if (gpu_type.rfind("A100", 0) == 0) return "a100-sxm-80gb";
  throw std::runtime_error("published_runs.yaml: no catalog GPU for '" + gpu_type + "'");
}

std::string precision_yaml(const std::string& precision) {
  if (precision.rfind("FP8", 0) == 0) return "{compute: fp8, params: fp8, kv_cache: fp8}";
  if (precision.rfind("FP16", 0) == 0) return "fp16";
  throw std::runtime_error("published_runs.yaml: unknown precision '" + precision + "'");
}

}  // namespace

std::vector<InferenceReferenceRun> load_inference_reference_runs(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  std::vector<InferenceReferenceRun> runs;
  for (const auto& row : root["inference_runs"]) {
    InferenceReferenceRun run;
    run.id = row["id"].as<std::string>();
    const auto& m = row["model"];
    const auto& w = row["workload"];
    const auto& measured = row["measured"];
    const int vocab = m["vocab"] && !m["vocab"].IsNull() ? m["vocab"].as<int>() : 32000;
    const std::string yaml = fmt::format(
        "schema_version: 1\n"
        "name: {}\n"
        "model: {{layers: {}, hidden: {}, heads: {}, kv_heads: {}, ffn_hidden: {}, vocab: {}, mlp: swiglu, "
        "norm: rmsnorm, linear_bias: false, tied_embeddings: false}}\n"
        "system: {{gpu: {}, gpus: {}}}\n"
        "parallel: {{tp: {}, pp: {}}}\n"
        "precision: {}\n"
        "inference: {{mode: static, batch: {}, input_len: {}, output_len: {}, cuda_graphs: true, "
        "decode_attention: per-query-head}}\n",
        run.id, m["layers"].as<int>(), m["hidden"].as<int>(), m["heads"].as<int>(), m["kv_heads"].as<int>(),
        m["ffn_hidden"].as<int>(), vocab, catalog_gpu(row["gpu_type"].as<std::string>()), row["gpus"].as<int>(),
        row["parallel"]["tp"].as<int>(), row["parallel"]["pp"].as<int>(),
        precision_yaml(row["precision"].as<std::string>()), w["batch_size"].as<int>(), w["input_len"].as<int>(),
        w["output_len"].as<int>());
    run.scenario = parse_scenario(yaml, "published_runs.yaml#" + run.id);
    if (measured["output_tokens_per_s_per_gpu"]) {
      run.measured_tokens_per_s_per_gpu = measured["output_tokens_per_s_per_gpu"].as<double>();
    }
    if (measured["ttft_ms"]) run.measured_ttft_s = measured["ttft_ms"].as<double>() * 1e-3;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace stepcast::test
