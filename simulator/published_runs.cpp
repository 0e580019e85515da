#include "simulator/published_runs.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include <fmt/format.h>

#include "model/flops.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"

namespace stepcast {
namespace {

// A number that may be written plain or as {value: x, derived: true, formula: ...}.
bool has_number(const YAML::Node& node) {
  if (!node || node.IsNull()) return false;
  if (node.IsMap()) return has_number(node["value"]);
  return node.IsScalar();
}
double number(const YAML::Node& node) {
  if (node.IsMap()) return node["value"].as<double>();
  return node.as<double>();
}
double number_or(const YAML::Node& node, double fallback) { return has_number(node) ? number(node) : fallback; }

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Datasheet figures of `hardware` row `id`.
GpuSpec gpu_from(const YAML::Node& hardware, const std::string& id, const std::string& catalog_key,
                 GpuArchitecture arch) {
  for (const auto& row : hardware) {
    if (row["id"].as<std::string>() != id) continue;
    GpuSpec g;
    g.name = catalog_key;
    g.display_name = row["name"].as<std::string>();
    g.architecture = arch;
    const auto& dense = row["dense"];
    g.dense_peak[index_of(DataType::fp32)] = units::teraflops(number(dense["fp32_tflops"]));
    g.dense_peak[index_of(DataType::tf32)] = units::teraflops(number(dense["tf32_tflops"]));
    g.dense_peak[index_of(DataType::fp16)] = units::teraflops(number(dense["fp16_tflops"]));
    g.dense_peak[index_of(DataType::bf16)] = units::teraflops(number(dense["bf16_tflops"]));
    if (has_number(dense["fp8_tflops"])) g.dense_peak[index_of(DataType::fp8)] = units::teraflops(number(dense["fp8_tflops"]));
    g.memory = units::gigabytes(number(row["memory_gb"]));
    g.memory_bandwidth = units::gigabytes_per_second(number(row["mem_bw_GBps"]));
    g.sm_count = static_cast<int>(number(row["sm_count"]));
    g.l2_cache = Bytes(number(row["l2_mb"]) * 1e6);
    g.nvlink_bandwidth = units::gigabytes_per_second(number(row["nvlink_GBps"]) / 2.0);  // per direction
    g.tdp_watts = number(row["tdp_w"]);
    return g;
  }
  throw std::runtime_error("no hardware row '" + id + "'");
}

// Small-message latencies matter little for these rows (multi-megabyte collectives); the values
// are typical NCCL figures (intra-node NVLink hop ~2 us, InfiniBand hop ~5 us).
SystemSpec system_of(const std::string& name, const GpuSpec& gpu, int gpus, double nic_gbit) {
  SystemSpec s;
  s.name = name;
  s.gpu = gpu;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  s.nvlink_domain_gpus = 8;
  s.intra_node_bandwidth = gpu.nvlink_bandwidth;
  s.intra_node_latency = units::microseconds(2.0);
  s.network.nics_per_node = 8;
  s.network.nic_bandwidth = units::gigabits_per_second(nic_gbit);
  s.network.nic_latency = units::microseconds(5.0);
  return s;
}

}  // namespace

namespace {

std::vector<PublishedTrainingRun> load_training_runs(const YAML::Node& root, std::vector<std::string>* skipped) {
  const GpuSpec a100 = gpu_from(root["hardware"], "a100_sxm4_80gb", "a100-sxm-80gb", GpuArchitecture::ampere);
  const GpuSpec h100 = gpu_from(root["hardware"], "h100_sxm5_80gb", "h100-sxm-80gb", GpuArchitecture::hopper);
  std::vector<PublishedTrainingRun> runs;
  for (const auto& row : root["training_runs"]) {
    const std::string id = row["id"].as<std::string>();
    const auto& m = row["model"];
    const auto& p = row["parallel"];
    if (!has_number(row["gpus"]) || !has_number(p["tp"])) {
      if (skipped) skipped->push_back(id);
      continue;
    }
    const bool narayanan = starts_with(id, "narayanan2021");
    Scenario sc;
    sc.name = id;
    TransformerSpec& model = sc.model;
    model.name = m["name"].as<std::string>();
    model.layers = static_cast<int>(number(m["layers"]));
    model.hidden = static_cast<int>(number(m["hidden"]));
    model.heads = static_cast<int>(number(m["heads"]));
    model.kv_heads = static_cast<int>(number_or(m["kv_heads"], model.heads));
    model.head_dim = model.hidden / model.heads;
    model.ffn_hidden = static_cast<int>(number_or(m["ffn_hidden"], 4.0 * model.hidden));
    model.vocab = static_cast<int>(number(m["vocab"]));
    model.mlp = MlpKind::gelu;
    model.norm = NormKind::layernorm;
    model.linear_bias = true;
    model.dropout = true;
    model.tied_embeddings = true;

    const int gpus = static_cast<int>(number(row["gpus"]));
    TrainingWorkload training;
    training.seq_len = static_cast<int>(number(m["seq_len"]));
    training.global_batch = static_cast<int>(number(p["global_batch"]));
    training.micro_batch = static_cast<int>(number_or(p["micro_batch"], 1.0));
    training.flash_attention = !narayanan;
    sc.workload = training;

    ParallelConfig& par = sc.parallel;
    par.tp = static_cast<int>(number(p["tp"]));
    par.pp = static_cast<int>(number(p["pp"]));
    par.dp = static_cast<int>(number_or(p["dp"], gpus / (par.tp * par.pp)));
    par.vpp = static_cast<int>(number_or(p["vpp"], 1.0));
    par.schedule = PipelineSchedule::one_f_one_b;
    const std::string recompute = row["recompute"].as<std::string>();
    // The column is free text ("full (--activations-checkpoint-method uniform)"), read by its first
    // word; torchtitan's per-op policy is named before Megatron's selective, which its name extends.
    par.recompute = starts_with(recompute, "full")           ? Recompute::full
                    : starts_with(recompute, "selective_op") ? Recompute::selective_op
                    : starts_with(recompute, "selective")    ? Recompute::selective
                                                             : Recompute::none;
    if (narayanan) {
      par.sequence_parallel = false;
      par.zero = 0;
      par.tp_comm_overlap = false;
      par.overlap_grad_reduce = number(m["params_b"]) <= 18.4;  // torch DDP <= 18B, local above
      par.overlap_param_gather = false;
    } else {
      par.sequence_parallel = par.tp > 1;
      par.zero = 1;
      par.tp_comm_overlap = true;
      par.overlap_grad_reduce = true;
      par.overlap_param_gather = true;
    }
    const std::string precision = row["precision"].as<std::string>();
    sc.precision = precision_shorthand(starts_with(precision, "fp16") ? DataType::fp16 : DataType::bf16);
    sc.system = narayanan ? system_of("dgx-a100", a100, gpus, 200.0) : system_of("dgx-h100", h100, gpus, 400.0);

    PublishedTrainingRun run;
    run.id = id;
    if (narayanan) {
      run.measured_step_s = number(row["derived"]["iteration_time_s"]);
      run.reference_note = "derived.iteration_time_s (paper eq. 3 over measured TFLOP/s)";
    } else {
      const StepFlops flops = training_step_flops(model, training.global_batch, training.seq_len, Recompute::none,
                                                  AttentionCount::full);
      run.measured_step_s = flops.model.value() / (gpus * number(row["measured"]["tflops_per_gpu"]) * 1e12);
      run.reference_note = "model FLOPs (Megatron mid-2024 convention) / (gpus * tflops_per_gpu)";
    }
    run.scenario = std::move(sc);
    runs.push_back(std::move(run));
  }
  return runs;
}

YAML::Node load_file(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(std::vector<Diagnostic>{{path, 0, 0, "", "cannot open the file", ""}});
  } catch (const YAML::Exception& e) {
    throw InputError(std::vector<Diagnostic>{{path, e.mark.line + 1, e.mark.column + 1, "", e.msg, ""}});
  }
}

}  // namespace

std::vector<PublishedTrainingRun> load_published_training_runs(const std::string& path,
                                                               std::vector<std::string>* skipped) {
  const YAML::Node root = load_file(path);
  if (!root.IsMap() || !root["training_runs"]) {
    throw InputError(std::vector<Diagnostic>{{path, 0, 0, "training_runs", "missing: not a published-runs file", ""}});
  }
  try {
    return load_training_runs(root, skipped);
  } catch (const YAML::Exception& e) {
    throw InputError(std::vector<Diagnostic>{{path, e.mark.line + 1, e.mark.column + 1, "training_runs", e.msg, ""}});
  } catch (const std::runtime_error& e) {
    throw InputError(std::vector<Diagnostic>{{path, 0, 0, "hardware", e.what(), ""}});
  }
}

namespace {

std::string catalog_gpu(const std::string& gpu_type) {
  if (gpu_type.rfind("H100-SXM", 0) == 0) return "h100-sxm-80gb";
  if (gpu_type.rfind("H200", 0) == 0) return "h200-sxm-141gb";
  if (gpu_type.rfind("L40S", 0) == 0) return "l40s";
  if (gpu_type.rfind("A100", 0) == 0) return "a100-sxm-80gb";
  throw std::runtime_error("no catalog GPU for '" + gpu_type + "'");
}

std::string precision_yaml(const std::string& precision) {
  if (precision.rfind("FP8", 0) == 0) return "{compute: fp8, params: fp8, kv_cache: fp8}";
  if (precision.rfind("FP16", 0) == 0) return "fp16";
  throw std::runtime_error("unknown precision '" + precision + "'");
}

}  // namespace

std::vector<PublishedInferenceRun> load_published_inference_runs(const std::string& path) {
  const YAML::Node root = load_file(path);
  std::vector<PublishedInferenceRun> runs;
  if (!root.IsMap() || !root["inference_runs"]) return runs;
  try {
    for (const auto& row : root["inference_runs"]) {
      PublishedInferenceRun run;
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
      run.scenario = parse_scenario(yaml, path + "#" + run.id);
      if (measured["output_tokens_per_s_per_gpu"]) {
        run.measured_tokens_per_s_per_gpu = measured["output_tokens_per_s_per_gpu"].as<double>();
      }
      if (measured["ttft_ms"]) run.measured_ttft_s = measured["ttft_ms"].as<double>() * 1e-3;
      runs.push_back(std::move(run));
    }
  } catch (const YAML::Exception& e) {
    throw InputError(std::vector<Diagnostic>{{path, e.mark.line + 1, e.mark.column + 1, "inference_runs", e.msg, ""}});
  } catch (const std::runtime_error& e) {
    throw InputError(std::vector<Diagnostic>{{path, 0, 0, "inference_runs", e.what(), ""}});
  }
  return runs;
}

}  // namespace stepcast
