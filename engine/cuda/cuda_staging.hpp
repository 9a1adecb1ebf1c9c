// Host bytes to and from the device through one pinned buffer, and the data sets uploaded once
// per GPU (as the bytes of the IDX files) and shared by every replica on it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>

#include "engine/backend/backend.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

class CudaStaging {
 public:
  CudaStaging();  // pinned memory; usable with a stream of any device
  // Copies in chunks through the pinned buffer and waits for each: returns when done.
  void upload(void* device, const void* host, size_t bytes, cudaStream_t stream);
  void download(void* host, const void* device, size_t bytes, cudaStream_t stream);

 private:
  kernels::cuda::PinnedBuffer<uint8_t> buffer_;
};

// A data set on the device, as the bytes of the IDX files.
struct DeviceImageSet {
  const data::ImageSet* host = nullptr;  // what it is a copy of
  kernels::cuda::DeviceBuffer<uint8_t> pixels, labels;
  int count = 0, image_size = 0;
};

struct DeviceDataSets {
  std::map<Split, DeviceImageSet> sets;
  const DeviceImageSet* find(const data::ImageSet& host) const;  // null when not uploaded
};

// Checks the sets against the model (values per image, labels below `classes`; ConfigError) and
// uploads them to the current device; returns when the copies are done.
std::shared_ptr<DeviceDataSets> upload_data_sets(const DataSets& data, int image_size, int classes);

}  // namespace gpulab
