#pragma once
// What the scenario loader says about a document, for tests of its checks.

#include <string>

#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"

namespace stepcast::test {

// The loader's error text for `yaml` (every diagnostic, as InputError::what() joins them); empty
// when the document loads.
inline std::string scenario_errors(const std::string& yaml) {
  try {
    parse_scenario(yaml, "t.yaml");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string();
}

// A small training document: Llama 3 8B on 8 H100s, sequences of 4096, 64 per step, micro-batch 1,
// with `parallel` (a YAML flow mapping) as its parallel block.
inline std::string llama3_8b_training_document(const std::string& parallel) {
  return "schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: h100-sxm-80gb, gpus: 8}\n"
         "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}\nparallel: " +
         parallel + "\n";
}

}  // namespace stepcast::test
