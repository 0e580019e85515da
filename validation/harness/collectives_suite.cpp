// Collectives suite: NCCL all-reduce, all-gather, reduce-scatter, all-to-all, broadcast and
// send/recv over a size sweep and group sizes, measured as nccl-tests measures them
// (NVIDIA/nccl-tests src/common.cu, BenchTime): a warm-up, then `iters` back-to-back operations
// between two host timestamps and a stream synchronisation, time = elapsed / iters, averaged over
// ranks. algbw = size / time and busbw = algbw x the bus factor of nccl-tests' doc/PERFORMANCE.md
// (model/collective.h). Sizes follow nccl-tests' conventions (validation/measurement.h).
//
// Differences from nccl-tests, all toward stricter results: the operation is out of place and its
// inputs never change, so every timed iteration must produce the same output, and after each
// sample the outputs of every rank are compared with what the operation must give (nccl-tests
// checks one extra run, -c); samples repeat until the stopping rule is met instead of a fixed 20.
// All-to-all is a grouped ncclSend/ncclRecv to every peer, as in nccl-tests' alltoall.cu.
//
// NCCL's own estimate comes from ncclGroupSimulateEnd (NCCL >= 2.22), which returns the time its
// tuning model predicts for the group, in microseconds (the unit of src/graph/tuning.cc).
//
// Single process: ranks are the first g local GPUs. Under MPI: one GPU per process (the local
// rank), groups of the first g world ranks; the unique id travels by MPI_Bcast, and rank 0 alone
// decides when sampling stops so that every rank runs the same number of collectives.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/memory_ops.h"
#include "validation/harness/suites.h"
#include "validation/harness_grids.h"
#include "validation/measurement_records.h"

#if defined(STEPCAST_HAVE_NCCL)
#include <nccl.h>
#endif

namespace stepcast::harness {

#if !defined(STEPCAST_HAVE_NCCL)

void run_collectives_suite(Session& session, const MpiWorld&) {
  std::printf("collectives\n");
  session.skip("collective", "collectives", "built without NCCL (STEPCAST_WITH_NCCL=OFF or nccl.h not found)");
}

#else

namespace {

constexpr int kWarmupIterations = 5;              // nccl-tests -w default
constexpr double kSampleTargetSeconds = 1e-3;     // iterations per sample so one sample lasts this long
constexpr int kMaxIterationsPerSample = 100;

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) kernels::throw_cuda_error("NCCL", call, file, line, ncclGetErrorString(status));
}
#define STEPCAST_NCCL(call) check_nccl((call), #call, __FILE__, __LINE__)

using Clock = std::chrono::steady_clock;

// One rank this process drives.
struct LocalRank {
  int rank = 0;     // in the group
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  kernels::DeviceBuffer send;
  kernels::DeviceBuffer recv;
  kernels::DeviceBuffer mismatches;
};

using Counts = CollectiveCounts;

kernels::CollectiveExpectation expectation(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return kernels::CollectiveExpectation::sum_over_ranks;
    case CollectiveOp::all_gather: return kernels::CollectiveExpectation::gathered;
    case CollectiveOp::reduce_scatter: return kernels::CollectiveExpectation::reduce_scattered;
    case CollectiveOp::all_to_all: return kernels::CollectiveExpectation::all_to_all;
    default: return kernels::CollectiveExpectation::from_source;
  }
}

void enqueue(CollectiveOp op, const Counts& c, LocalRank& r, int ranks) {
  const auto* send = r.send.as<float>();
  auto* recv = r.recv.as<float>();
  switch (op) {
    case CollectiveOp::all_reduce:
      STEPCAST_NCCL(ncclAllReduce(send, recv, c.recv, ncclFloat, ncclSum, r.comm, r.stream));
      break;
    case CollectiveOp::all_gather:
      STEPCAST_NCCL(ncclAllGather(send, recv, c.chunk, ncclFloat, r.comm, r.stream));
      break;
    case CollectiveOp::reduce_scatter:
      STEPCAST_NCCL(ncclReduceScatter(send, recv, c.chunk, ncclFloat, ncclSum, r.comm, r.stream));
      break;
    case CollectiveOp::broadcast:
      STEPCAST_NCCL(ncclBroadcast(send, recv, c.recv, ncclFloat, 0, r.comm, r.stream));
      break;
    case CollectiveOp::all_to_all:
      STEPCAST_NCCL(ncclGroupStart());
      for (int peer = 0; peer < ranks; ++peer) {
        STEPCAST_NCCL(ncclSend(send + peer * c.chunk, c.chunk, ncclFloat, peer, r.comm, r.stream));
        STEPCAST_NCCL(ncclRecv(recv + peer * c.chunk, c.chunk, ncclFloat, peer, r.comm, r.stream));
      }
      STEPCAST_NCCL(ncclGroupEnd());
      break;
    case CollectiveOp::send_recv:
      STEPCAST_NCCL(ncclGroupStart());
      STEPCAST_NCCL(ncclSend(send, c.send, ncclFloat, (r.rank + 1) % ranks, r.comm, r.stream));
      STEPCAST_NCCL(ncclRecv(recv, c.recv, ncclFloat, (r.rank + ranks - 1) % ranks, r.comm, r.stream));
      STEPCAST_NCCL(ncclGroupEnd());
      break;
    case CollectiveOp::reduce:
      STEPCAST_NCCL(ncclReduce(send, recv, c.recv, ncclFloat, ncclSum, 0, r.comm, r.stream));
      break;
  }
}

class Group {
 public:
  Group(const MpiWorld& world, int size, int first_local_device, std::size_t max_bytes)
      : m_world(world), m_size(size) {
    if (world.active) {
      // One rank per process: the first `size` world ranks take part.
      m_member = world.rank < size;
      ncclUniqueId id{};
      std::vector<char> bytes(sizeof id);
      if (world.rank == 0) {
        STEPCAST_NCCL(ncclGetUniqueId(&id));
        std::copy_n(reinterpret_cast<const char*>(&id), sizeof id, bytes.begin());
      }
      mpi_broadcast(world, bytes);
      std::copy_n(bytes.begin(), sizeof id, reinterpret_cast<char*>(&id));
      if (m_member) {
        int local_gpus = 1;
        STEPCAST_CUDA(cudaGetDeviceCount(&local_gpus));
        LocalRank& r = add_rank(world.rank, world.local_rank % std::max(local_gpus, 1), max_bytes);
        STEPCAST_NCCL(ncclCommInitRank(&r.comm, size, id, world.rank));
      }
    } else {
      std::vector<int> devices;
      for (int i = 0; i < size; ++i) {
        add_rank(i, first_local_device + i, max_bytes);
        devices.push_back(first_local_device + i);
      }
      std::vector<ncclComm_t> comms(static_cast<std::size_t>(size));
      STEPCAST_NCCL(ncclCommInitAll(comms.data(), size, devices.data()));
      for (int i = 0; i < size; ++i) m_ranks[static_cast<std::size_t>(i)]->comm = comms[static_cast<std::size_t>(i)];
    }
  }

  ~Group() {
    for (auto& r : m_ranks) {
      cudaSetDevice(r->device);
      if (r->comm != nullptr) ncclCommDestroy(r->comm);
      if (r->stream != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaStreamDestroy(r->stream));
    }
  }

  [[nodiscard]] bool member() const { return m_member; }

  void fill(std::size_t elements) {
    for (auto& r : m_ranks) {
      STEPCAST_CUDA(cudaSetDevice(r->device));
      kernels::fill_collective_pattern(r->stream, r->send.as<float>(), elements, r->rank);
    }
    sync();
  }

  void launch(CollectiveOp op, const Counts& c, int iterations) {
    for (int it = 0; it < iterations; ++it) {
      STEPCAST_NCCL(ncclGroupStart());
      for (auto& r : m_ranks) enqueue(op, c, *r, m_size);
      STEPCAST_NCCL(ncclGroupEnd());
    }
  }

  void sync() {
    for (auto& r : m_ranks) {
      STEPCAST_CUDA(cudaSetDevice(r->device));
      STEPCAST_CUDA(cudaStreamSynchronize(r->stream));
    }
  }

  // Seconds per operation over `iterations` back-to-back operations, averaged over the group's
  // ranks (nccl-tests' Allreduce(average) of deltaSec).
  double timed(CollectiveOp op, const Counts& c, int iterations) {
    mpi_barrier(m_world);
    double seconds = 0.0;
    if (m_member) {
      const auto t0 = Clock::now();
      launch(op, c, iterations);
      sync();
      seconds = std::chrono::duration<double>(Clock::now() - t0).count() / iterations;
    }
    return mpi_sum(m_world, seconds * static_cast<double>(local_members())) / m_size;
  }

  // Fills every output with NaN so a collective that wrote nothing cannot pass the check.
  void poison(const Counts& c) {
    for (auto& r : m_ranks) {
      STEPCAST_CUDA(cudaSetDevice(r->device));
      STEPCAST_CUDA(cudaMemsetAsync(r->recv.get(), 0xFF, c.recv * sizeof(float), r->stream));
    }
    sync();
  }

  // Wrong output elements over all ranks of the group.
  long long mismatches(CollectiveOp op, const Counts& c) {
    long long bad = 0;
    for (auto& r : m_ranks) {
      STEPCAST_CUDA(cudaSetDevice(r->device));
      const int source = op == CollectiveOp::send_recv ? (r->rank + m_size - 1) % m_size : 0;
      kernels::count_collective_mismatches(r->stream, r->recv.as<float>(), c.recv, c.chunk, expectation(op), m_size,
                                           r->rank, source, r->mismatches.as<unsigned long long>());
      unsigned long long count = 0;
      STEPCAST_CUDA(cudaMemcpyAsync(&count, r->mismatches.get(), sizeof count, cudaMemcpyDeviceToHost, r->stream));
      STEPCAST_CUDA(cudaStreamSynchronize(r->stream));
      bad += static_cast<long long>(count);
    }
    return mpi_sum(m_world, bad);
  }

  std::optional<double> nccl_estimate(CollectiveOp op, const Counts& c) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 22, 0)
    if (!m_member) return std::nullopt;
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    STEPCAST_NCCL(ncclGroupStart());
    for (auto& r : m_ranks) enqueue(op, c, *r, m_size);
    if (ncclGroupSimulateEnd(&info) != ncclSuccess || !(info.estimatedTime > 0.0f)) return std::nullopt;
    return static_cast<double>(info.estimatedTime) * 1e-6;  // microseconds
#else
    (void)op;
    (void)c;
    return std::nullopt;
#endif
  }

 private:
  LocalRank& add_rank(int rank, int device, std::size_t max_bytes) {
    auto r = std::make_unique<LocalRank>();
    r->rank = rank;
    r->device = device;
    STEPCAST_CUDA(cudaSetDevice(device));
    STEPCAST_CUDA(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    r->send = kernels::DeviceBuffer(max_bytes);
    r->recv = kernels::DeviceBuffer(max_bytes);
    r->mismatches = kernels::DeviceBuffer(sizeof(unsigned long long));
    m_ranks.push_back(std::move(r));
    return *m_ranks.back();
  }

  [[nodiscard]] int local_members() const { return static_cast<int>(m_ranks.size()); }

  const MpiWorld& m_world;
  int m_size;
  bool m_member = true;
  std::vector<std::unique_ptr<LocalRank>> m_ranks;
};

}  // namespace

void run_collectives_suite(Session& session, const MpiWorld& world) {
  std::printf("collectives\n");
  const HarnessOptions& options = session.options();
  int local_gpus = 0;
  STEPCAST_CUDA(cudaGetDeviceCount(&local_gpus));
  const int available = world.active ? world.size : local_gpus;
  const auto group_sizes = collective_group_sizes(options, available);
  if (group_sizes.empty()) {
    session.skip("collective", "collectives", "needs at least two ranks; this run has " + std::to_string(available) +
                                                  (world.active ? " MPI ranks" : " local GPUs"));
    return;
  }
  const auto sizes = collective_sizes(options);
  const std::size_t max_bytes = static_cast<std::size_t>(*std::max_element(sizes.begin(), sizes.end()));
  session.file().provenance.ranks = std::max(session.file().provenance.ranks, *std::max_element(group_sizes.begin(), group_sizes.end()));
  for (int g : group_sizes) {
    if (session.out_of_time()) break;
    Group group(world, g, 0, max_bytes);
    const int nodes = world.active ? (g + world.local_size - 1) / world.local_size : 1;
    const int per_node = world.active ? std::min(g, world.local_size) : g;
    for (CollectiveOp op : collective_ops(options)) {
      for (std::int64_t size : sizes) {
        if (session.out_of_time()) break;
        const Counts c = collective_counts(op, size, g);
        if (c.chunk == 0) continue;  // too small to give each rank one element, as nccl-tests prints 0
        CollectiveInputs in;
        in.op = op;
        in.dtype = "fp32";
        in.redop = op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter ? "sum" : "none";
        // The size actually moved, after rounding the count to a multiple of the ranks.
        in.size_bytes = static_cast<std::int64_t>(std::max(c.send, c.recv) * sizeof(float));
        in.count = static_cast<std::int64_t>(c.chunk);
        in.ranks = g;
        in.nodes = nodes;
        in.ranks_per_node = per_node;
        in.in_place = false;
        in.root = 0;
        if (group.member()) group.fill(std::max(c.send, c.recv));
        mpi_barrier(world);

        // Warm-up, then pick iterations so one sample lasts about a millisecond.
        group.timed(op, c, kWarmupIterations);
        const double estimate = group.timed(op, c, 1);
        const int iterations = std::clamp(static_cast<int>(std::ceil(kSampleTargetSeconds / std::max(estimate, 1e-7))), 1,
                                          kMaxIterationsPerSample);
        StdrelCriterion criterion(options.stopping);
        TimingResult t;
        t.mode = "host_timer";
        t.batch = iterations;
        const auto t0 = Clock::now();
        long long wrong = 0;
        while (true) {
          if (group.member()) group.poison(c);
          const double seconds = group.timed(op, c, iterations);
          wrong += group.mismatches(op, c);
          t.samples.push_back(seconds);
          criterion.add_sample(units::seconds(seconds * iterations));
          // Rank 0 decides; everyone follows, so all ranks run the same collectives.
          std::vector<char> stop(1, 0);
          if (world.rank == 0) {
            const StopReason reason =
                criterion.decide(units::seconds(std::chrono::duration<double>(Clock::now() - t0).count()));
            stop[0] = static_cast<char>(reason);
          }
          mpi_broadcast(world, stop);
          if (static_cast<StopReason>(stop[0]) != StopReason::running) {
            t.stop_reason = static_cast<StopReason>(stop[0]);
            break;
          }
        }
        t.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
        CheckInfo check;
        check.passed = wrong == 0;
        check.method = "every output element of every rank after each timed sample";
        check.checked = static_cast<std::int64_t>(t.samples.size()) * static_cast<std::int64_t>(c.recv) * g;
        check.max_abs_error = wrong == 0 ? 0.0 : 1.0;
        check.max_rel_error = check.max_abs_error;
        Measurement m = make_measurement(in, t, check, session.device());
        CollectiveResult result;
        result.bus_factor = bus_bandwidth_factor(op, g);
        result.algbw_bytes_per_s = static_cast<double>(in.size_bytes) / m.time.mean_s;
        result.busbw_bytes_per_s = result.algbw_bytes_per_s * result.bus_factor;
        result.nccl_estimate_s = group.nccl_estimate(op, c);
        m.collective = result;
        m.notes.push_back("algbw and busbw use the mean time, as nccl-tests reports");
        if (wrong > 0) m.notes.push_back(std::to_string(wrong) + " wrong output elements");
        if (world.rank == 0) session.record(std::move(m));
      }
    }
  }
}

#endif

}  // namespace stepcast::harness
