#include "models/cuda/swiglu_gemm_kernels.h"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "models/cuda/dependent_launch.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "swiglu_gemm_kernels.cu uses wgmma and TMA: build it for sm_90a only"
#endif

namespace rollout::models::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kRows = 64;    // x rows a block: one warpgroup's wgmma M
constexpr int kBK = 64;      // inner elements a stage: one 128-byte swizzle row
constexpr int kRowBytes = kBK * 2;
constexpr int kThreads = 128;

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

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma descriptor of a K-major operand in 128-byte-swizzled rows (8-row groups 1024
// bytes apart), starting at shared address `addr`.
__device__ __forceinline__ uint64_t Descriptor(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

__device__ __forceinline__ void MbarrierInit(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar));
}
__device__ __forceinline__ void MbarrierExpectBytes(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void MbarrierWait(uint32_t bar, int parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// The box {64 inner elements, box rows} at (k0, row0) of `map` into shared `dst`,
// counted on mbarrier `bar`. Rows past the tensor arrive as zeros.
__device__ __forceinline__ void TmaLoad(uint32_t dst, const CUtensorMap* map, int k0, int row0,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(k0), "r"(row0), "r"(bar)
      : "memory");
}

// d += A * B for A 64 x 16 and B 128 x 16 (both K-major in shared memory), d 64 x 128
// float32 across the warpgroup.
__device__ __forceinline__ void Wgmma(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// The same for B 64 x 16, d 64 x 64.
__device__ __forceinline__ void Wgmma(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommitAndWait() {
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::
                   : "memory");
}

// Block (m, j): rows [64 m, 64 m + 64) of x against gate rows [kOutputs j, kOutputs (j +
// 1)) and the up rows `width` further; thread 0 keeps every stage's TMA loads in flight
// (one mbarrier a stage), the warpgroup multiplies the oldest. Launched dependent
// (models/cuda/dependent_launch.cuh): the first stages' weight loads are issued before
// the wait for the kernel that writes x, so they overlap its tail.
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
  const int blocks = in / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) MbarrierInit(SmemAddr(&full[s]));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  // A stage's loads, counted on its mbarrier: the weight rows and the x rows.
  auto issue_weights = [&](int stage, int block) {
    const uint32_t base = smem + stage * kStage, bar = SmemAddr(&full[stage]);
    const int k0 = block * kBK;
    MbarrierExpectBytes(bar, kStage);
    TmaLoad(base + kRows * kRowBytes, &weight_map, k0, out0, bar);
    TmaLoad(base + (kRows + kOutputs) * kRowBytes, &weight_map, k0, width + out0, bar);
  };
  auto issue_x = [&](int stage, int block) {
    TmaLoad(smem + stage * kStage, &x_map, block * kBK, row0, SmemAddr(&full[stage]));
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages && s < blocks; ++s) issue_weights(s, s);
  }
  WaitForPriorKernels();
  LetDependentsStart();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages && s < blocks; ++s) issue_x(s, s);
  }

  float acc[kOutputs];  // the 64 x (2 kOutputs) tile over 128 threads
#pragma unroll
  for (int i = 0; i < kOutputs; ++i) acc[i] = 0.f;
  for (int block = 0; block < blocks; ++block) {
    const int stage = block % kStages;
    MbarrierWait(SmemAddr(&full[stage]), (block / kStages) & 1);
    const uint32_t a = smem + stage * kStage, b = a + kRows * kRowBytes;
    WgmmaFence();
#pragma unroll
    for (int k = 0; k < kBK / 16; ++k) Wgmma(acc, Descriptor(a + k * 32), Descriptor(b + k * 32));
    WgmmaCommitAndWait();
    __syncthreads();  // the whole warpgroup is done with the stage: refill it
    if (threadIdx.x == 0 && block + kStages < blocks) {
      issue_weights(stage, block + kStages);
      issue_x(stage, block + kStages);
    }
  }

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

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's tensor-map encoder, through the runtime (no link against libcuda);
// nullptr where the driver has none.
EncodeTiled TensorMapEncoder() {
  static const EncodeTiled encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return EncodeTiled{nullptr};
    }
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  return encoder;
}

// A [rows, in] bfloat16 matrix read in boxes of {64, box_rows}, 128-byte swizzled.
bool EncodeMap(const void* base, int64_t rows, int64_t in, int box_rows, CUtensorMap* map) {
  const cuuint64_t dims[2] = {cuuint64_t(in), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(in) * 2};
  const cuuint32_t box[2] = {cuuint32_t(kBK), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  return TensorMapEncoder()(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base),
                            dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

bool SwigluGemmSupports(int device, int64_t rows, int64_t in, int64_t width) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return false;
  }
  return major == 9 && minor == 0 && TensorMapEncoder() != nullptr && in % kBK == 0 &&
         width % 64 == 0 && rows >= kMinRows && rows <= kMaxRows;
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
