#pragma once
// The MPI world of a multi-process harness run (`mpirun -np N stepcast-harness collectives`),
// when the harness is built with MPI (STEPCAST_HAVE_MPI) and launched by an MPI launcher. In a
// plain single-process run, or a build without MPI, the world is one rank and every call here is
// a no-op that returns its input.

#include <cstdint>
#include <vector>

namespace stepcast::harness {

struct MpiWorld {
  bool active = false;
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // among the ranks on this node
  int local_size = 1;
};

// Initialises MPI when the process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK in the environment) and the build has MPI.
MpiWorld init_mpi(int* argc, char*** argv);
// Whether an MPI launcher started this process (whatever the build).
bool launched_by_mpi();
void finalize_mpi(const MpiWorld& world);

void mpi_barrier(const MpiWorld& world);
double mpi_sum(const MpiWorld& world, double value);
long long mpi_sum(const MpiWorld& world, long long value);
// Rank 0's bytes to every rank.
void mpi_broadcast(const MpiWorld& world, std::vector<char>& bytes);

}  // namespace stepcast::harness
