#pragma once
// Measurement files as the harness writes them (validation/measurement_records.h), for tests of
// the file format and of what reads it (calibration, validation): fixed provenance of one GPU's
// run and a passed correctness check. The records are the caller's.

#include <string>

#include "validation/measurement.h"
#include "validation/measurement_records.h"

namespace stepcast::test {

// A correctness check that passed: 64 sampled outputs within 1e-2 of a CPU reference.
inline CheckInfo passed_check() {
  CheckInfo c;
  c.passed = true;
  c.method = "64 sampled outputs against a CPU reference";
  c.checked = 64;
  c.max_abs_error = 1e-3;
  c.max_rel_error = 2e-3;
  c.tolerance = 1e-2;
  return c;
}

// An empty file with the provenance `stepcast-harness all` writes on one GPU of an 8-rank run:
// host_provenance plus fixed times and versions (driver 580.00, CUDA 13.0, cuBLAS 13.1.0, NCCL
// 2.27.7, sm_90) and one device named `device_name` (matched to the catalog GPU `catalog_gpu`)
// with `sms` SMs, 150 GB and a 1980 MHz SM clock.
inline MeasurementFile harness_file(const std::string& device_name, const std::string& catalog_gpu, int sms) {
  HarnessOptions options;
  options.command = "all";
  options.argv = {"stepcast-harness", "all", "--out", "synthetic.json"};
  MeasurementFile f;
  f.provenance = host_provenance(options, "0.1.0", "synthetic000");
  f.provenance.started_utc = "2026-01-01T00:00:00Z";
  f.provenance.finished_utc = "2026-01-01T00:08:00Z";
  f.provenance.driver_version = "580.00";
  f.provenance.cuda_driver_api = "13.0";
  f.provenance.cuda_runtime = "13.0";
  f.provenance.cublas = "13.1.0";
  f.provenance.nccl = "2.27.7";
  f.provenance.cuda_architectures = "90";
  f.provenance.ranks = 8;
  DeviceInfo d;
  d.name = device_name;
  d.catalog_gpu = catalog_gpu;
  d.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  d.pci_bus_id = "0000:18:00.0";
  d.compute_capability = "9.0";
  d.sm_count = sms;
  d.memory_bytes = 150'000'000'000;
  d.max_sm_clock_mhz = 1980;
  f.provenance.devices.push_back(d);
  return f;
}

}  // namespace stepcast::test
