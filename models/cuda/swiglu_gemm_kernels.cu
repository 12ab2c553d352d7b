#include "models/cuda/swiglu_gemm_kernels.h"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "models/cuda/dependent_launch.cuh"
#include "models/cuda/hopper_gemm.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "swiglu_gemm_kernels.cu uses wgmma and TMA: build it for sm_90a only"
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

// A block's outputs (kOutputs gate and the kOutputs matching up rows of the weight: the
// wgmma's N is twice that) and its stages in flight, by row count. Measured on an H200
// against cuBLAS + SwiGLU at Qwen2.5-0.5B's MLP: 32 outputs and four stages (64 KB a
// block) for 64-128 rows, where 64-output blocks would leave SMs idle; 64 outputs and
// three stages (72 KB: three blocks an SM, five 64-row tiles in one wave) for 129-320.
constexpr int64_t kMinRows = 64, kNarrowMaxRows = 128, kMaxRows = 320;
template <int kOutputs> constexpr int kStagesFor = kOutputs == 32 ? 4 : 3;
template <int kOutputs> constexpr int kStageBytes = (kRows + 2 * kOutputs) * kRowBytes;
template <int kOutputs>
constexpr int kSmemBytes = kStagesFor<kOutputs> * kStageBytes<kOutputs> + 1024;  // + alignment

// Block (m, j): rows [64 m, 64 m + 64) of x against gate rows [kOutputs j, kOutputs (j +
// 1)) and the up rows `width` further, through hopper::RunStagePipeline. Launched
// dependent (models/cuda/dependent_launch.cuh): the first stages' weight loads are
// issued before the wait for the kernel that writes x, so they overlap its tail.
template <int kOutputs>
__global__ void __launch_bounds__(kThreads)
    SwigluGemmKernel(const __grid_constant__ CUtensorMap x_map,
                     const __grid_constant__ CUtensorMap weight_map, int rows, int in, int width,
                     bf16* __restrict__ out) {
  extern __shared__ uint8_t smem_raw[];
  constexpr int kStages = kStagesFor<kOutputs>, kStage = kStageBytes<kOutputs>;
  __shared__ __align__(8) uint64_t full[kStages];
  const uint32_t smem = (SmemAddr(smem_raw) + 1023) & ~1023u;  // swizzle atoms are 1024 B
  const int row0 = blockIdx.x * kRows, out0 = blockIdx.y * kOutputs;

  // A stage: the x rows, the gate rows, then the up rows.
  float acc[kOutputs];  // the 64 x (2 kOutputs) tile over 128 threads
#pragma unroll
  for (int i = 0; i < kOutputs; ++i) acc[i] = 0.f;
  hopper::RunStagePipeline<kStages, kStage>(
      full, in / kBK,
      [&](int stage, int step, uint32_t bar) {
        const uint32_t gate = smem + stage * kStage + kRows * kRowBytes;
        TmaLoad(gate, &weight_map, step * kBK, out0, bar);
        TmaLoad(gate + kOutputs * kRowBytes, &weight_map, step * kBK, width + out0, bar);
      },
      [&](int stage, int step, uint32_t bar) {
        TmaLoad(smem + stage * kStage, &x_map, step * kBK, row0, bar);
      },
      [&](int stage) {
        const uint32_t a = smem + stage * kStage, b = a + kRows * kRowBytes;
#pragma unroll
        for (int k = 0; k < kBK / 16; ++k) Wgmma(acc, Descriptor(a + k * 32), Descriptor(b + k * 32));
      });
  FenceAccumulator(acc);

  // Warp w holds rows 16w..16w+15; for each 8-column block c, acc[4c + 2h + e] is row
  // lane/4 + 8h, column 8c + 2(lane % 4) + e. The first kOutputs columns are gate
  // outputs and the next the matching up outputs, so blocks c and c + kOutputs / 8 hold
  // g and u of the same output.
  constexpr int kBlocks = kOutputs / 8;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < kBlocks; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + warp * 16 + lane / 4 + 8 * h;
      const int col = out0 + 8 * c + 2 * (lane % 4);
      if (row < rows) {
        float v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float g = acc[4 * c + 2 * h + e], u = acc[4 * (c + kBlocks) + 2 * h + e];
          v[e] = g / (1.f + __expf(-g)) * u;
        }
        *reinterpret_cast<__nv_bfloat162*>(out + int64_t(row) * width + col) =
            __floats2bfloat162_rn(v[0], v[1]);
      }
    }
  }
}

}  // namespace

bool SwigluGemmSupports(int device, int64_t rows, int64_t in, int64_t width) {
  return hopper::DeviceSupports(device) && in % kBK == 0 && width % 64 == 0 &&
         rows >= kMinRows && rows <= kMaxRows;
}

namespace {

template <int kOutputs>
bool Launch(const void* x, const void* weight, int64_t rows, int64_t in, int64_t width,
            void* out, cudaStream_t stream) {
  static const bool configured =
      cudaFuncSetAttribute(SwigluGemmKernel<kOutputs>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           kSmemBytes<kOutputs>) == cudaSuccess;
  CUtensorMap x_map, weight_map;
  if (!configured || !EncodeMap(x, rows, in, kRows, &x_map) ||
      !EncodeMap(weight, 2 * width, in, kOutputs, &weight_map)) {
    return false;
  }
  const dim3 grid(static_cast<unsigned>((rows + kRows - 1) / kRows),
                  static_cast<unsigned>(width / kOutputs));
  LaunchDependent(SwigluGemmKernel<kOutputs>, grid, dim3(kThreads), kSmemBytes<kOutputs>, stream,
                  x_map, weight_map, static_cast<int>(rows), static_cast<int>(in),
                  static_cast<int>(width), static_cast<bf16*>(out));
  return true;
}

}  // namespace

bool LaunchSwigluGemm(const void* x, const void* weight, int64_t rows, int64_t in,
                      int64_t width, void* out, cudaStream_t stream) {
  const auto launch = rows <= kNarrowMaxRows ? Launch<32> : Launch<64>;
  return launch(x, weight, rows, in, width, out, stream);
}

}  // namespace rollout::models::cuda
