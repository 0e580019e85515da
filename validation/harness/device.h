#pragma once
// What the harness learns about this machine's GPUs and libraries, for the provenance of every
// measurement file: device properties from the CUDA runtime, clocks and ECC from NVML when it can
// be loaded, and the versions of the driver, CUDA, cuBLASLt, cuDNN and NCCL actually loaded.

#include <string>

#include "validation/harness/nvml.h"
#include "validation/measurement.h"

namespace stepcast::harness {

// The number of CUDA devices, or 0 with `why` set when there are none (no driver, no GPU, or a
// driver older than the runtime).
int visible_gpu_count(std::string& why);

DeviceInfo query_device(int index, const Nvml& nvml);

// Fills driver, CUDA, cuBLASLt, cuDNN and NCCL versions and the compiled architectures.
void fill_versions(Provenance& provenance, const Nvml& nvml);

// Compute capability as major * 10 + minor (sm_90 -> 90).
int compute_capability(int index);

}  // namespace stepcast::harness
