#include "validation/harness/mpi_world.h"

#include <cstdlib>

#if defined(STEPCAST_HAVE_MPI)
#include <mpi.h>
#endif

namespace stepcast::harness {

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

#if defined(STEPCAST_HAVE_MPI)

MpiWorld init_mpi(int* argc, char*** argv) {
  MpiWorld w;
  if (!launched_by_mpi()) return w;
  MPI_Init(argc, argv);
  w.active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  return w;
}

void finalize_mpi(const MpiWorld& world) {
  if (world.active) MPI_Finalize();
}

void mpi_barrier(const MpiWorld& world) {
  if (world.active) MPI_Barrier(MPI_COMM_WORLD);
}

double mpi_sum(const MpiWorld& world, double value) {
  if (!world.active) return value;
  double total = 0.0;
  MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

long long mpi_sum(const MpiWorld& world, long long value) {
  if (!world.active) return value;
  long long total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

void mpi_broadcast(const MpiWorld& world, std::vector<char>& bytes) {
  if (!world.active) return;
  MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
}

#else

MpiWorld init_mpi(int*, char***) { return {}; }
void finalize_mpi(const MpiWorld&) {}
void mpi_barrier(const MpiWorld&) {}
double mpi_sum(const MpiWorld&, double value) { return value; }
long long mpi_sum(const MpiWorld&, long long value) { return value; }
void mpi_broadcast(const MpiWorld&, std::vector<char>&) {}

#endif

}  // namespace stepcast::harness
