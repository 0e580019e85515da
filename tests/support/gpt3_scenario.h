#pragma once
// GPT-3 175B on DGX A100 nodes, built by hand (no catalog), for unit tests and benchmarks.
// Datasheet figures: A100 SXM 80GB 312 TFLOP/s BF16/FP16 dense, 156 TF32, 19.5 FP32, 2039 GB/s,
// 108 SMs, NVLink 600 GB/s total (300 per direction); DGX A100: 8 GPUs and 8 HDR 200 Gb/s NICs
// per node (tests/fixtures/reference/published_runs.yaml, `hardware`).

#include "model/scenario.h"

namespace stepcast::test {

// GPT-3 175B (Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads of 128) with
// tied embeddings and Megatron's vocabulary of 51200 (GPT-2's 50257 padded to a multiple of
// 128 x TP 8).
inline TransformerSpec gpt3_175b_model() {
  TransformerSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.head_dim = 128;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.tied_embeddings = true;
  return m;
}

inline Scenario gpt3_175b(int gpus, int tp, int pp, int vpp, int global_batch, int micro_batch) {
  Scenario sc;
  sc.name = "gpt3-175b-test";
  sc.model = gpt3_175b_model();
  GpuSpec g;
  g.name = "a100-sxm-80gb";
  g.architecture = GpuArchitecture::ampere;
  g.dense_peak[index_of(DataType::bf16)] = units::teraflops(312);
  g.dense_peak[index_of(DataType::fp16)] = units::teraflops(312);
  g.dense_peak[index_of(DataType::tf32)] = units::teraflops(156);
  g.dense_peak[index_of(DataType::fp32)] = units::teraflops(19.5);
  g.memory = units::gigabytes(80);
  g.memory_bandwidth = units::gigabytes_per_second(2039);
  g.sm_count = 108;
  g.nvlink_bandwidth = units::gigabytes_per_second(300);
  sc.system.name = "dgx-a100";
  sc.system.gpu = g;
  sc.system.gpus = gpus;
  sc.system.gpus_per_node = 8;
  sc.system.intra_node_bandwidth = g.nvlink_bandwidth;
  sc.system.intra_node_latency = units::microseconds(2);
  sc.system.network.nics_per_node = 8;
  sc.system.network.nic_bandwidth = units::gigabits_per_second(200);
  sc.system.network.nic_latency = units::microseconds(5);
  sc.parallel.tp = tp;
  sc.parallel.pp = pp;
  sc.parallel.dp = gpus / (tp * pp);
  sc.parallel.vpp = vpp;
  sc.parallel.sequence_parallel = true;
  sc.parallel.recompute = Recompute::selective;
  sc.parallel.zero = 1;
  sc.precision = precision_shorthand(DataType::bf16);
  TrainingWorkload w;
  w.seq_len = 2048;
  w.global_batch = global_batch;
  w.micro_batch = micro_batch;
  sc.workload = w;
  return sc;
}

}  // namespace stepcast::test
