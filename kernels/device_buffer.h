#pragma once
// Owning device allocations (cudaMalloc/cudaFree) and page-locked host allocations mapped into the
// device's address space (cudaHostAlloc with cudaHostAllocMapped). Move-only.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda_check.h"

namespace stepcast::kernels {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes > 0) STEPCAST_CUDA(cudaMalloc(&m_ptr, bytes));
  }
  ~DeviceBuffer() {
    if (m_ptr != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaFree(m_ptr));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : m_ptr(std::exchange(other.m_ptr, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(m_ptr, other.m_ptr);
    std::swap(m_bytes, other.m_bytes);
    return *this;
  }

  [[nodiscard]] void* get() const { return m_ptr; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(m_ptr);
  }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

class MappedHostBuffer {
 public:
  MappedHostBuffer() = default;
  explicit MappedHostBuffer(std::size_t bytes) {
    STEPCAST_CUDA(cudaHostAlloc(&m_host, bytes, cudaHostAllocMapped));
    STEPCAST_CUDA(cudaHostGetDevicePointer(&m_device, m_host, 0));
  }
  ~MappedHostBuffer() {
    if (m_host != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaFreeHost(m_host));
  }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;

  template <class T>
  [[nodiscard]] volatile T* host() const {
    return static_cast<volatile T*>(m_host);
  }
  template <class T>
  [[nodiscard]] T* device() const {
    return static_cast<T*>(m_device);
  }

 private:
  void* m_host = nullptr;
  void* m_device = nullptr;
};

}  // namespace stepcast::kernels
