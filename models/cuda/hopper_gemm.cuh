// Building blocks of the Hopper (sm_90a) GEMM kernels of the decode step
// (models/cuda/swiglu_gemm_kernels.cu, models/cuda/decode_gemm_kernels.cu): TMA loads of
// 128-byte-swizzled bfloat16 tiles counted on mbarriers, wgmma on them, and the host
// side's tensor maps. Include only from .cu files built for sm_90a.
//
// Layout shared by both kernels: an operand is read in boxes of kBK = 64 inner elements
// (one 128-byte swizzle row) by some rows; a warpgroup's wgmma has M = 64 rows, and its
// float32 accumulator holds, for each 8-column block c, acc[4c + 2h + e] = row
// 16 (warp) + lane / 4 + 8h, column 8c + 2 (lane % 4) + e.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "models/cuda/dependent_launch.cuh"

namespace rollout::models::cuda::hopper {

constexpr int kBK = 64;       // inner elements a stage: one 128-byte swizzle row
constexpr int kRowBytes = kBK * 2;
constexpr int kTileRows = 64;  // x rows a block: one warpgroup's wgmma M
constexpr int kWarpgroupThreads = 128;

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

// The same for B 32 x 16, d 64 x 32.
__device__ __forceinline__ void Wgmma(float (&d)[16], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Closes the wgmma operations issued since the last commit into one group.
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups are still running: their shared-memory
// operands may be overwritten and (kPending = 0) the accumulators read.
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Pins the accumulator registers here, after WgmmaWait<0>: wgmma writes them
// asynchronously, so the compiler must not move their reads above the wait.
template <int N>
__device__ __forceinline__ void FenceAccumulator(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The k-loop of a block of 128 threads (one warpgroup) over `steps` k-steps, with
// kStages shared-memory stages of kStageBytes each, one mbarrier a stage in `full`
// (shared, uninitialised). Thread 0 keeps every stage's TMA loads in flight and refills
// a stage once the products that read it are done; the products of consecutive steps
// overlap (the warpgroup waits only for the group before the current one). For a
// kernel launched dependent (models/cuda/dependent_launch.cuh): each stage's weight
// loads are issued before WaitForPriorKernels, the activation loads after it.
//   issue_weights(stage, step, bar), issue_activations(stage, step, bar): thread 0's TMA
//     loads of the step into stage `stage`, counted on mbarrier `bar` (whose expected
//     bytes, the whole stage, the pipeline sets);
//   multiply(stage): the warpgroup's wgmmas on stage `stage` (fenced and committed here).
// Returns with every product finished; read the accumulators after FenceAccumulator.
template <int kStages, int kStageBytes, typename IssueWeights, typename IssueActivations,
          typename Multiply>
__device__ __forceinline__ void RunStagePipeline(uint64_t (&full)[kStages], int steps,
                                                 IssueWeights issue_weights,
                                                 IssueActivations issue_activations,
                                                 Multiply multiply) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) MbarrierInit(SmemAddr(&full[s]));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](auto loads, int stage, int step, bool first_of_stage) {
    const uint32_t bar = SmemAddr(&full[stage]);
    if (first_of_stage) MbarrierExpectBytes(bar, kStageBytes);
    loads(stage, step, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages && s < steps; ++s) issue(issue_weights, s, s, true);
  }
  WaitForPriorKernels();
  LetDependentsStart();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages && s < steps; ++s) issue(issue_activations, s, s, false);
  }
  for (int step = 0; step < steps; ++step) {
    const int stage = step % kStages;
    MbarrierWait(SmemAddr(&full[stage]), (step / kStages) & 1);
    WgmmaFence();
    multiply(stage);
    WgmmaCommit();
    // Once the previous step's products are done (this one's may still run), refill
    // its stage.
    const int refill = step - 1 + kStages;
    if (step > 0 && refill < steps) {
      WgmmaWait<1>();
      __syncthreads();
      if (threadIdx.x == 0) {
        issue(issue_weights, (step - 1) % kStages, refill, true);
        issue(issue_activations, (step - 1) % kStages, refill, false);
      }
    }
  }
  WgmmaWait<0>();
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's tensor-map encoder, through the runtime (no link against libcuda);
// nullptr where the driver has none.
inline EncodeTiled TensorMapEncoder() {
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
inline bool EncodeMap(const void* base, int64_t rows, int64_t in, int box_rows, CUtensorMap* map) {
  const cuuint64_t dims[2] = {cuuint64_t(in), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(in) * 2};
  const cuuint32_t box[2] = {cuuint32_t(kBK), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  return TensorMapEncoder()(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base),
                            dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether `device` runs these kernels: compute capability 9.0 and a driver with the
// tensor-map encoder.
inline bool DeviceSupports(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return false;
  }
  return major == 9 && minor == 0 && TensorMapEncoder() != nullptr;
}

}  // namespace rollout::models::cuda::hopper
