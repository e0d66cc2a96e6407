// CUB's DeviceSegmentedReduce::Sum / ArgMax on float32 with int offsets, as bench/segmented_reduce.py calls
// them (ctypes): temporary storage is asked once per shape and kept by the caller.
#include <cub/device/device_segmented_reduce.cuh>

extern "C" int cub_segmented(int op, const float* in, const int* offsets, int segments, void* out, void* temp,
                             size_t* temp_bytes, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaError_t e;
  if (op == 0)
    e = cub::DeviceSegmentedReduce::Sum(temp, *temp_bytes, in, static_cast<float*>(out), segments, offsets,
                                        offsets + 1, s);
  else
    e = cub::DeviceSegmentedReduce::ArgMax(temp, *temp_bytes, in, static_cast<cub::KeyValuePair<int, float>*>(out),
                                           segments, offsets, offsets + 1, s);
  return (int)e;
}
