#include "models/cuda/decode_gemm_kernels.h"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "models/cuda/dependent_launch.cuh"
#include "models/cuda/hopper_gemm.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "decode_gemm_kernels.cu uses wgmma and TMA: build it for sm_90a only"
#endif

namespace rollout::models::cuda {
namespace {

using bf16 = __nv_bfloat16;
using hopper::Descriptor;
using hopper::EncodeMap;
using hopper::kBK;
using hopper::kRowBytes;
using hopper::SmemAddr;
using hopper::TmaLoad;
using hopper::Wgmma;
using hopper::FenceAccumulator;

constexpr int kRows = hopper::kTileRows;
constexpr int kThreads = hopper::kWarpgroupThreads;
// Stages of TMA loads in flight a block: kShallowStages lets several blocks share an SM;
// kDeepStages (64-output tiles, one block an SM) holds a whole short product's weight
// tile, all of it loaded before the wait for the kernel that writes x.
constexpr int kShallowStages = 4, kDeepStages = 14;
constexpr int64_t kMinRows = 64, kMaxRows = 320, kMaxSliceStages = 24;
template <int kOutputs> constexpr int kStageBytes = (kRows + kOutputs) * kRowBytes;
template <int kOutputs, int kStages>
constexpr int kSmemBytes = kStages * kStageBytes<kOutputs> + 1024;  // + alignment

// Block (m, j, s): rows [64 m, 64 m + 64) of x against weight rows [kOutputs j, kOutputs
// (j + 1)) over the stages [s slice_stages, (s + 1) slice_stages) of the inner dimension,
// through hopper::RunStagePipeline with kStages stages. Launched dependent: the first
// stages' weight loads are issued before waiting for the kernel that writes x. kPartials: `out` is float32
// [slices, rows, out_width] and slice s writes its own plane; else `out` is bfloat16
// [rows, out_width] and the bias (if any) is added before the one rounding.
template <int kOutputs, bool kPartials, int kStages>
__global__ void __launch_bounds__(kThreads)
    DecodeGemmKernel(const __grid_constant__ CUtensorMap x_map,
                     const __grid_constant__ CUtensorMap weight_map, int rows, int out_width,
                     int slice_stages, const bf16* __restrict__ bias, void* __restrict__ out) {
  extern __shared__ uint8_t smem_raw[];
  constexpr int kStage = kStageBytes<kOutputs>;
  __shared__ __align__(8) uint64_t full[kStages];
  const uint32_t smem = (SmemAddr(smem_raw) + 1023) & ~1023u;  // swizzle atoms are 1024 B
  const int row0 = blockIdx.x * kRows, out0 = blockIdx.y * kOutputs, slice = blockIdx.z;
  const int first = slice * slice_stages;

  // A stage: the x rows, then the weight rows.
  float acc[kOutputs / 2];  // the 64 x kOutputs tile over 128 threads
#pragma unroll
  for (int i = 0; i < kOutputs / 2; ++i) acc[i] = 0.f;
  hopper::RunStagePipeline<kStages, kStage>(
      full, slice_stages,
      [&](int stage, int step, uint32_t bar) {
        TmaLoad(smem + stage * kStage + kRows * kRowBytes, &weight_map, (first + step) * kBK,
                out0, bar);
      },
      [&](int stage, int step, uint32_t bar) {
        TmaLoad(smem + stage * kStage, &x_map, (first + step) * kBK, row0, bar);
      },
      [&](int stage) {
        const uint32_t a = smem + stage * kStage, b = a + kRows * kRowBytes;
#pragma unroll
        for (int k = 0; k < kBK / 16; ++k) Wgmma(acc, Descriptor(a + k * 32), Descriptor(b + k * 32));
      });
  FenceAccumulator(acc);

  // Accumulator layout: models/cuda/hopper_gemm.cuh.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < kOutputs / 8; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + warp * 16 + lane / 4 + 8 * h;
      const int col = out0 + 8 * c + 2 * (lane % 4);
      if (row >= rows) continue;
      float v0 = acc[4 * c + 2 * h], v1 = acc[4 * c + 2 * h + 1];
      if constexpr (kPartials) {
        float* dst = static_cast<float*>(out) + (int64_t(slice) * rows + row) * out_width + col;
        *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
      } else {
        if (bias != nullptr) {
          const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(bias + col));
          v0 += b.x;
          v1 += b.y;
        }
        bf16* dst = static_cast<bf16*>(out) + int64_t(row) * out_width + col;
        *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(v0, v1);
      }
    }
  }
}

template <int kOutputs, bool kPartials, int kStages>
bool Launch(const void* x, const void* weight, const void* bias, int64_t rows, int64_t in,
            int64_t out, int64_t slices, void* y, cudaStream_t stream) {
  static const bool configured =
      cudaFuncSetAttribute(DecodeGemmKernel<kOutputs, kPartials, kStages>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           kSmemBytes<kOutputs, kStages>) == cudaSuccess;
  CUtensorMap x_map, weight_map;
  if (!configured || !EncodeMap(x, rows, in, kRows, &x_map) ||
      !EncodeMap(weight, out, in, kOutputs, &weight_map)) {
    return false;
  }
  const dim3 grid(static_cast<unsigned>((rows + kRows - 1) / kRows),
                  static_cast<unsigned>(out / kOutputs), static_cast<unsigned>(slices));
  LaunchDependent(DecodeGemmKernel<kOutputs, kPartials, kStages>, grid, dim3(kThreads),
                  kSmemBytes<kOutputs, kStages>, stream, x_map, weight_map, static_cast<int>(rows),
                  static_cast<int>(out), static_cast<int>(in / kBK / slices),
                  static_cast<const bf16*>(bias), y);
  return true;
}

// The launch for a product: 64-output tiles holding all their stages where the product
// is short and its tiles fit the SMs one a piece; else shallow tiles, 32 outputs wide
// where 64 would leave SMs without a block (twice the blocks, each reading x again from
// L2).
template <bool kPartials>
auto LaunchFor(int64_t rows, int64_t in, int64_t out, int64_t slices) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int64_t wide_tiles = (rows + kRows - 1) / kRows * (out / 64) * slices;
  if (in / kBK / slices <= kDeepStages && wide_tiles <= sms) {
    return Launch<64, kPartials, kDeepStages>;
  }
  return wide_tiles < sms ? Launch<32, kPartials, kShallowStages>
                          : Launch<64, kPartials, kShallowStages>;
}

}  // namespace

bool DecodeGemmSupports(int device, int64_t rows, int64_t in, int64_t out, int64_t slices) {
  if (slices < 1 || in % (kBK * slices) != 0) return false;
  return hopper::DeviceSupports(device) && rows >= kMinRows && rows <= kMaxRows &&
         out % 64 == 0 && in / kBK / slices <= kMaxSliceStages;
}

bool LaunchDecodeGemm(const void* x, const void* weight, const void* bias, int64_t rows,
                      int64_t in, int64_t out, void* y, cudaStream_t stream) {
  return LaunchFor<false>(rows, in, out, 1)(x, weight, bias, rows, in, out, 1, y, stream);
}

bool LaunchDecodeGemmPartials(const void* x, const void* weight, int64_t rows, int64_t in,
                              int64_t out, int64_t slices, float* partials, cudaStream_t stream) {
  return LaunchFor<true>(rows, in, out, slices)(x, weight, nullptr, rows, in, out, slices, partials, stream);
}

}  // namespace rollout::models::cuda
