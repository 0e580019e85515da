#pragma once
// The serving search behind `stepcast search` on a serving scenario: the best way to serve the
// scenario's request stream on (up to) its GPUs, over tensor parallelism, weight quantization,
// batch limits and replicas.
//
// A serving layout sets parallel.tp, precision (the one-word inference shorthand:
// bf16, fp8 = W8A8 FP8, int8 = W8A8, int4 = weight-only with BF16 compute; see
// simulator/scenario_loader.cpp), inference.max_batch, inference.max_batch_tokens and
// inference.replicas; system.gpus becomes replicas * tp * pp, so a layout may use fewer GPUs than
// the scenario offers (the whole request stream then goes to fewer model instances). pp, the
// request stream, the scheduler, the KV cache format and the SLOs stay as in the scenario.
// "Valid" is the scenario loader's rule (simulator/scenario_checks.h: tp divides the heads, the GPU
// has the compute format, ...); tp is limited to divisors of gpus_per_node (one node per tensor-
// parallel group, as in TensorRT-LLM and vLLM deployments).
//
// Every valid layout is predicted (simulator/inference/inference_predictor.h: the seeded request
// stream through the serving simulator), in parallel with oneTBB, one layout per task; layouts whose
// weights, activations and buffers do not fit are counted and never ranked. There is no bound: a
// serving prediction is a queueing simulation whose latencies have no cheap optimistic estimate,
// and the spaces are small (hundreds of layouts). Ranking uses the objectives and constraints of
// simulator/ranking.h over FieldTable::serving() (simulator/result_fields.h); the default objective
// is "max goodput_per_gpu" (requests per second meeting every SLO, per GPU: the cheapest way to
// serve the stream within its SLOs), then "min ttft_p99_s". Results do not depend on the thread
// count; shard I of N takes the layouts with index % N == I, and merged shard tables give the same
// top K as one run.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/datatype.h"
#include "model/inference_parameters.h"
#include "model/scenario.h"
#include "simulator/collective_factory.h"
#include "simulator/ranking.h"
#include "simulator/result_fields.h"
#include "simulator/result_table.h"
#include "simulator/run_control.h"

namespace stepcast {

struct ServingLayout {
  int tp = 1;
  DataType precision = DataType::bf16;  // one-word inference precision
  int max_batch = 256;
  int max_batch_tokens = 8192;
  int replicas = 1;
  bool operator==(const ServingLayout&) const = default;
};

// Writes the layout into a serving scenario (system.gpus = replicas * tp * pp); returns the
// loader's verdict: empty when consistent, else the first reason.
std::string apply_serving_layout(const ServingLayout& layout, Scenario& scenario);

struct ServingSpaceOptions {
  std::vector<DataType> precisions;   // empty: bf16, fp8, int8, int4 (those the GPU lacks are invalid)
  std::vector<int> max_batch;         // empty: powers of two from 8 to 2x the scenario's max_batch
  std::vector<int> max_batch_tokens;  // empty: the scenario's only
  bool fewer_replicas = true;         // replicas 1 .. gpus/(tp pp); false: exactly gpus/(tp pp)
};

// The layouts in index order: tp (ascending), replicas, precision, max_batch, max_batch_tokens
// (innermost last). An index is a layout's point number in outputs.
class ServingSpace {
 public:
  ServingSpace(const Scenario& base, const ServingSpaceOptions& options = {});
  [[nodiscard]] std::uint64_t size() const { return m_size; }
  [[nodiscard]] ServingLayout at(std::uint64_t index) const;

 private:
  std::vector<std::pair<int, int>> m_engines;  // (tp, replicas)
  std::vector<DataType> m_precisions;
  std::vector<int> m_max_batch;
  std::vector<int> m_max_batch_tokens;
  std::uint64_t m_size = 0;
};

struct ServingSearchOptions {
  ServingSpaceOptions space;
  std::vector<Objective> objectives;          // over FieldTable::serving(); empty: the default above
  std::vector<Expression> constraints;        // over FieldTable::serving()
  std::size_t top = 10;
  int threads = 0;                            // 0: every core
  int shard_index = 0;
  int shard_count = 1;
  CostParameters parameters;
  InferenceCostParameters inference;
  CollectiveFactory collectives;              // empty: default_collective_factory(parameters)
};

struct ServingSearchCounts {
  std::uint64_t space = 0;       // layouts in the whole space
  std::uint64_t enumerated = 0;  // in this shard
  std::uint64_t invalid = 0;     // rejected by the loader's checks (e.g. tp does not divide the heads)
  std::uint64_t infeasible = 0;  // weights, activations and buffers do not fit
  std::uint64_t pruned = 0;      // failed a constraint
  std::uint64_t predicted = 0;   // simulated
  double seconds = 0.0;
};

struct ServingSearchResult {
  std::vector<Candidate> best;   // ranked; rows hold every field of FieldTable::serving()
  ServingSearchCounts counts;
  std::vector<std::string> objective_texts;
  bool cancelled = false;
};

ServingSearchResult run_serving_search(const Scenario& base, const ServingSearchOptions& options,
                                       const RunControl& control = {});

// Fills a row of FieldTable::serving() from a scenario and its prediction.
void fill_serving_fields(const Scenario& scenario, const InferencePrediction& prediction, std::span<double> row);

// The result as a result table (simulator/result_table.h), like a training search's but of kind
// "serving-search" with every column of FieldTable::serving(); shards merge with `stepcast merge`.
// The fingerprint covers the scenario and every option that changes the space or the ranking.
TableHeader serving_search_table_header(const Scenario& base, const ServingSearchOptions& options);
void write_serving_search_table(std::ostream& out, TableFormat format, const TableHeader& header,
                                const ServingSearchResult& result);

// The best layouts as a text table (rank, the layout, latencies, throughput, goodput, memory) with
// the counts, for `stepcast search`.
std::string serving_search_report(const Scenario& base, const ServingSearchResult& result);

}  // namespace stepcast
