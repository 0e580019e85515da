#pragma once
// One serving engine: a model instance (or one pipeline micro-batch slot of it) with its own
// waiting queue, running batch, paged KV pool and batching policy. The serving simulator
// (serving_simulator.h) owns the clock and many engines; an engine only plans and applies
// iterations.
//
// Request life (token counts per request):
//   prompt     tokens to prefill: the input, or input + generated after a recompute preemption
//   cached     prompt tokens found in the prefix cache (block-aligned; never prefilled, and held
//              in the shared prefix store rather than the request's own blocks)
//   prefilled  prompt tokens in the KV cache; a request whose prefill completes emits a token
//   kv         tokens in its KV cache; each decode step appends the last emitted token and
//              emits the next, attending over kv + 1 tokens
//   blocks     paged KV blocks it holds: ceil((kv - cached) / block_tokens)
//
// Policies (ServingWorkload::scheduler):
//   continuous  iteration-level batching (Orca, Yu et al. OSDI'22; vLLM). Every iteration: the
//               running decodes first, one token each (a decode that needs a new KV block when none
//               is free preempts the most recently admitted request: vLLM's policy), then prompt
//               tokens up to the token budget max_batch_tokens (decodes count one token each).
//               How prompts fill what the decodes left (PrefillPacking):
//                 chunked        partial prefills continue and new requests are admitted FCFS
//                                with chunks cut to the budget (Sarathi-Serve, Agrawal et al.
//                                OSDI'24; vLLM V1's default)
//                 whole          whole prompts that fit the budget, FCFS, in the same iteration
//                                as the decodes; the first prompt that does not fit waits, and
//                                so does everyone behind it (TensorRT-LLM's in-flight batcher
//                                without context chunking: docs/source/performance/
//                                performance-tuning-guide/tuning-max-batch-size-and-max-num-
//                                tokens.md, its max-num-tokens walk-through)
//                 prefill_first  an iteration is either prefill-only (whole prompts that fit the
//                                budget; prefills first, as vLLM v0) or decode-only
//               In both whole modes a prompt longer than the whole budget runs as its
//               iteration's only prompt. A request is admitted when
//               the batch has a free slot (max_batch) and the pool has the blocks for what it
//               prefills now (head-of-line: FCFS, no skipping); with reserve_whole_sequence
//               (kv_admission: reserve) the blocks for its whole input + output instead, so
//               decodes never need a block that is not there and nothing is preempted. The output
//               reserved is the request's max_tokens when reserve_output_tokens is set (the
//               engine cannot know where a request will stop: TensorRT-LLM's GUARANTEED_NO_EVICT),
//               so a pool of B blocks runs at most B / ceil((input + max_tokens) / block_tokens)
//               requests at once however short their answers turn out.
//   static      a batch of max_batch requests is formed when that many wait (the simulation
//               flushes a last, partial batch when the stream has ended); each reserves KV for its
//               whole input + output. The batch prefills at once,
//               then decodes until its longest request finishes, shorter ones padded; every
//               request's answer is returned when the batch ends (the classic generate() loop).
//   dynamic     as static, but the batch also starts when the oldest waiting request has waited
//               batch_timeout (Triton's dynamic batcher).
// Preemption: recompute frees the victim's blocks and puts it at the head of the queue to
// prefill input + generated again; swap moves its blocks to host memory (the copy time,
// bytes / host bandwidth, is added to the iteration) and back before it resumes decoding.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "model/workload.h"
#include "simulator/inference/step_cost.h"

namespace stepcast::serving {

enum class EngineRole { mixed, prefill_only, decode_only };

struct RequestState {
  double arrival = 0.0;
  int input = 0;
  int output = 0;
  int prompt = 0;
  int cached = 0;
  int prefilled = 0;
  int kv = 0;
  int generated = 0;
  int blocks = 0;
  int preemptions = 0;
  bool swapped = false;
  double first_token = -1.0;
  double finish = -1.0;
  bool dropped = false;  // could never fit the KV pool
};

// How a continuous batcher fits prompts into an iteration (see the policies above).
enum class PrefillPacking { chunked, whole, prefill_first };

struct SchedulerConfig {
  BatchScheduler policy = BatchScheduler::continuous;
  int max_batch = 256;
  int max_batch_tokens = 8192;
  PrefillPacking prefill = PrefillPacking::chunked;
  double batch_timeout_s = 0.0;
  int block_tokens = 16;
  bool reserve_whole_sequence = false;  // continuous: admission takes blocks for input + output
  int reserve_output_tokens = 0;        // with it: the output reserved (each request's max_tokens; 0: its own output)
  bool swap = false;                   // preemption by swapping (false: recompute)
  double swap_seconds_per_block = 0.0;  // one block to or from host memory
};

// The output tokens a request holds KV for at most: its own output, or, when admission reserves
// the whole sequence with a max_tokens (reserve_output_tokens), that cap where it is larger.
inline double reserved_output_tokens(const SchedulerConfig& c, double output) {
  return c.reserve_whole_sequence ? std::max(output, static_cast<double>(c.reserve_output_tokens)) : output;
}

struct EngineCounters {
  std::int64_t iterations = 0;
  double busy_s = 0.0;
  double batch_seconds = 0.0;   // sum of batch size x iteration time
  int preemptions = 0;
  // Iterations that started with requests left waiting: the engine was serving as fast as it
  // can. Their time, and the requests they finished (or handed off), measure its capacity.
  double saturated_s = 0.0;
  int saturated_completions = 0;
};

class Engine {
 public:
  Engine(EngineRole role, const SchedulerConfig& config, int total_blocks, StepCostModel& cost);

  void enqueue(int request);
  // Starts an iteration at `now` if the engine is idle and has work the policy runs now;
  // returns whether it started. `stream_ended`: no request will arrive any more.
  bool try_start(double now, std::vector<RequestState>& requests, bool stream_ended);
  // Applies the running iteration, which ends now. Requests that finished are appended to
  // `finished`; requests whose prefill completed on a prefill-only engine to `handed_off`.
  void complete(std::vector<RequestState>& requests, std::vector<int>& finished, std::vector<int>& handed_off);

  [[nodiscard]] bool busy() const { return m_busy; }
  [[nodiscard]] double busy_until() const { return m_end; }
  // When a dynamic batcher's window closes (it must be woken then), if it is waiting for one.
  [[nodiscard]] std::optional<double> wake_time(const std::vector<RequestState>& requests) const;

  [[nodiscard]] EngineRole role() const { return m_role; }
  [[nodiscard]] std::size_t waiting() const { return m_waiting.size() + m_swapped.size(); }
  [[nodiscard]] std::size_t running() const { return m_running.size(); }
  [[nodiscard]] std::size_t load() const { return waiting() + running(); }
  [[nodiscard]] int used_blocks() const { return m_used_blocks; }
  [[nodiscard]] int total_blocks() const { return m_total_blocks; }
  [[nodiscard]] const EngineCounters& counters() const { return m_counters; }
  // Requests this engine dropped because they can never fit its KV pool.
  [[nodiscard]] const std::vector<int>& dropped() const { return m_dropped; }

 private:
  struct Chunk {
    int request = 0;
    int tokens = 0;
  };

  // Tokens a request may hold at most: its input plus what it is allowed to generate.
  [[nodiscard]] int sequence_bound(const RequestState& r) const {
    return r.input + static_cast<int>(reserved_output_tokens(m_config, r.output));
  }
  [[nodiscard]] int blocks_for(const RequestState& r, int kv_tokens) const {
    const int own = kv_tokens > r.cached ? kv_tokens - r.cached : 0;
    return (own + m_config.block_tokens - 1) / m_config.block_tokens;
  }
  bool plan_continuous(std::vector<RequestState>& requests);
  bool plan_batch(double now, std::vector<RequestState>& requests, bool stream_ended);
  void preempt_last(std::vector<RequestState>& requests);
  bool schedule_prefill(std::vector<RequestState>& requests, int request, int& budget, bool whole_prompt_only);
  void admit_swapped(std::vector<RequestState>& requests, int& budget);
  void start(double now, std::vector<RequestState>& requests);
  void apply_iteration(std::vector<RequestState>& requests, std::vector<int>& finished, std::vector<int>& handed_off);

  EngineRole m_role;
  SchedulerConfig m_config;
  StepCostModel* m_cost;
  int m_total_blocks = 0;
  int m_used_blocks = 0;

  std::deque<int> m_waiting;
  std::deque<int> m_swapped;
  std::vector<int> m_running;  // in admission order
  std::vector<int> m_dropped;

  // The iteration in flight.
  bool m_busy = false;
  double m_start = 0.0;
  double m_end = 0.0;
  double m_extra_s = 0.0;            // swap copies added to this iteration
  std::vector<int> m_decodes;
  std::vector<Chunk> m_prefills;
  bool m_saturated = false;          // requests were left waiting when it started
  bool m_batch_active = false;       // static/dynamic: a batch is running
  bool m_batch_prefilled = false;

  EngineCounters m_counters;
};

}  // namespace stepcast::serving
