// Staged copies and the uploaded data sets.
#include "engine/cuda/cuda_staging.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/base/errors.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

namespace {
constexpr size_t kStagingBytes = size_t(8) << 20;
}

CudaStaging::CudaStaging() : buffer_(kStagingBytes, "the upload staging buffer") {}

void CudaStaging::upload(void* device, const void* host, size_t bytes, cudaStream_t stream) {
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t chunk = std::min(kStagingBytes, bytes - done);
    std::memcpy(buffer_.data(), static_cast<const uint8_t*>(host) + done, chunk);
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(device) + done, buffer_.data(), chunk,
                                      cudaMemcpyHostToDevice, stream));
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // the staging buffer is reused
  }
}

void CudaStaging::download(void* host, const void* device, size_t bytes, cudaStream_t stream) {
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t chunk = std::min(kStagingBytes, bytes - done);
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), static_cast<const uint8_t*>(device) + done,
                                      chunk, cudaMemcpyDeviceToHost, stream));
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::memcpy(static_cast<uint8_t*>(host) + done, buffer_.data(), chunk);
  }
}

const DeviceImageSet* DeviceDataSets::find(const data::ImageSet& host) const {
  for (const auto& [split, set] : sets)
    if (set.host == &host) return &set;
  return nullptr;
}

std::shared_ptr<DeviceDataSets> upload_data_sets(const DataSets& data, int image_size,
                                                 int classes) {
  auto uploaded = std::make_shared<DeviceDataSets>();
  const kc::Stream stream = kc::make_stream();
  CudaStaging staging;
  for (const Split split : {Split::Train, Split::Validation, Split::Test}) {
    const data::ImageSet* set = split == Split::Train        ? data.train
                                : split == Split::Validation ? data.validation
                                                             : data.test;
    if (!set) continue;
    if (set->image_size() != image_size)
      throw ConfigError("the model expects " + std::to_string(image_size) +
                        " values per image but the " + split_name(split) + " set has " +
                        std::to_string(set->image_size()));
    for (const uint8_t label : set->labels)
      if (label >= classes)
        throw ConfigError(std::string("the ") + split_name(split) + " set has label " +
                          std::to_string(label) + " but the model has " + std::to_string(classes) +
                          " classes");
    DeviceImageSet& device = uploaded->sets[split];
    device.host = set;
    device.count = set->count;
    device.image_size = image_size;
    const std::string name = std::string("the ") + split_name(split) + " set";
    device.pixels = kc::DeviceBuffer<uint8_t>(set->pixels.size(), name + " images");
    device.labels = kc::DeviceBuffer<uint8_t>(set->labels.size(), name + " labels");
    staging.upload(device.pixels.data(), set->pixels.data(), set->pixels.size(), stream.get());
    staging.upload(device.labels.data(), set->labels.data(), set->labels.size(), stream.get());
  }
  return uploaded;
}

}  // namespace gpulab
