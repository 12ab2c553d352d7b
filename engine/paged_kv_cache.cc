#include "engine/paged_kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "common/check.h"
#include "common/torch_compat.h"
#include "engine/step_upload.h"

#ifdef ROLLOUT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>

#include "engine/cuda/kv_write_kernels.h"
#include "engine/cuda/paged_attention_kernels.h"
#include "engine/cuda/paged_attention_mma.h"
#include "models/fused_kernel_support.h"
#endif

namespace rollout::engine {

PagedKvCache::PagedKvCache(const models::TransformerConfig& config, int64_t num_blocks,
                           int64_t block_size, const at::TensorOptions& options)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      kv_heads_(config.num_key_value_heads),
      head_dim_(config.head_dim) {
  ROLLOUT_CHECK(num_blocks >= 1 && block_size >= 1);
#ifdef ROLLOUT_WITH_CUDA
  use_kernel_ = options.device().is_cuda() &&
                cuda::PagedAttentionSupports(config.num_attention_heads, kv_heads_, head_dim_);
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  flash_fresh_rows_ = use_kernel_ && compat::VariableLengthAttentionAvailable() &&
                      (dtype == at::kBFloat16 || dtype == at::kHalf) && head_dim_ % 8 == 0 &&
                      head_dim_ <= 256 && config.num_attention_heads % kv_heads_ == 0;
#endif
  storage_ = at::zeros(
      {config.num_hidden_layers, 2, num_blocks + 1, block_size, kv_heads_, head_dim_}, options);
}

int64_t PagedKvCache::BytesPerBlock(const models::TransformerConfig& config, int64_t block_size,
                                    c10::ScalarType dtype) {
  return config.num_hidden_layers * 2 * block_size * config.num_key_value_heads *
         config.head_dim * static_cast<int64_t>(c10::elementSize(dtype));
}

void PagedKvCache::BeginStep(const StepAttention* step) {
  step_ = step;
  fresh_row_offsets_ = at::Tensor();
  first_fresh_token_ = longest_fresh_row_ = 0;
  if (step == nullptr || !flash_fresh_rows_) return;
  const FreshRows fresh = TrailingFreshRows(*step);
  if (fresh.offsets.empty()) return;
  first_fresh_token_ = fresh.first_token;
  for (size_t i = 1; i < fresh.offsets.size(); ++i) {
    longest_fresh_row_ =
        std::max<int64_t>(longest_fresh_row_, fresh.offsets[i] - fresh.offsets[i - 1]);
  }
  StepUpload upload;
  upload.Add(fresh.offsets);
  fresh_row_offsets_ = upload.Send(storage_.device())[0];
}

PagedKvCache::FreshRows PagedKvCache::TrailingFreshRows(const StepAttention& step) {
  const std::vector<int64_t>& begin = step.row_token_begin;
  const size_t rows = step.row_context.size();
  if (rows == 0 || begin.size() != rows + 1) return {};
  // Walk back over the fresh rows; rows without tokens have no queries to attend.
  size_t first = rows;
  while (first > 0) {
    const int64_t tokens = begin[first] - begin[first - 1];
    if (tokens > 0 && step.row_context[first - 1] != tokens) break;
    --first;
  }
  FreshRows fresh;
  fresh.first_token = begin[first];
  fresh.offsets = {0};
  for (size_t row = first; row < rows; ++row) {
    if (begin[row + 1] > begin[row]) {
      fresh.offsets.push_back(static_cast<int32_t>(begin[row + 1] - fresh.first_token));
    }
  }
  if (fresh.offsets.size() < 2) fresh.offsets.clear();
  return fresh;
}

void PagedKvCache::CopyBlocks(const std::vector<BlockCopy>& copies) {
  if (copies.empty()) return;
  std::vector<int64_t> src, dst;
  for (const BlockCopy& copy : copies) {
    src.push_back(copy.src);
    dst.push_back(copy.dst);
  }
  const auto index_options = at::TensorOptions().dtype(at::kLong);
  const at::Tensor src_t = at::tensor(src, index_options).to(storage_.device());
  const at::Tensor dst_t = at::tensor(dst, index_options).to(storage_.device());
  storage_.index_copy_(2, dst_t, storage_.index_select(2, src_t));
}

at::Tensor PagedKvCache::AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                                         const at::Tensor& v, double scale) {
  ROLLOUT_CHECK(step_ != nullptr) << "AppendAndAttend without BeginStep";
  at::Tensor keys = storage_[layer][0];    // [blocks, block_size, kv_heads, D]
  at::Tensor values = storage_[layer][1];
#ifdef ROLLOUT_WITH_CUDA
  if (use_kernel_) {
    WriteKv(k, v, keys, values);
    const at::Tensor q_c = q.contiguous();
    if (!fresh_row_offsets_.defined()) {
      at::Tensor out = at::empty_like(q_c);
      AttendInPlace(q_c, q.size(0), keys, values, scale, out);
      return out;
    }
    const int64_t first = first_fresh_token_, fresh = q.size(0) - first;
    const at::Tensor fresh_out = compat::VariableLengthCausalAttention(
        q_c.narrow(0, first, fresh), k.narrow(0, first, fresh).contiguous(),
        v.narrow(0, first, fresh).contiguous(), fresh_row_offsets_, fresh_row_offsets_,
        longest_fresh_row_, longest_fresh_row_, scale);
    if (first == 0) return fresh_out;
    at::Tensor out = at::empty_like(q_c);
    AttendInPlace(q_c, first, keys, values, scale, out);
    out.narrow(0, first, fresh).copy_(fresh_out);
    return out;
  }
#endif
  keys.view({-1, kv_heads_, head_dim_}).index_copy_(0, step_->slot_mapping, k);
  values.view({-1, kv_heads_, head_dim_}).index_copy_(0, step_->slot_mapping, v);
  return AttendGathered(q, keys, values, scale);
}

at::Tensor PagedKvCache::TryRotateAppendAndAttend(int64_t layer, const at::Tensor& qkv,
                                                  const at::Tensor& cos, const at::Tensor& sin,
                                                  double scale) {
  ROLLOUT_CHECK(step_ != nullptr) << "TryRotateAppendAndAttend without BeginStep";
#ifdef ROLLOUT_WITH_CUDA
  const int64_t q_heads = qkv.size(1) / head_dim_ - 2 * kv_heads_;
  const at::ScalarType dtype = qkv.scalar_type();
  const bool half = dtype == at::kBFloat16 || dtype == at::kHalf;
  const bool layout_ok = qkv.stride(1) == 1 && qkv.stride(0) % 8 == 0 &&
                         reinterpret_cast<uintptr_t>(qkv.data_ptr()) % 16 == 0 &&
                         cos.scalar_type() == dtype && sin.scalar_type() == dtype &&
                         cos.is_contiguous() && sin.is_contiguous();
  if (!use_kernel_ || !step_->one_token_per_row || !half || !layout_ok ||
      !cuda::PagedAttentionMmaSupports(models::KernelElementType(dtype), q_heads, kv_heads_,
                                       head_dim_)) {
    return at::Tensor();
  }
  at::Tensor keys = storage_[layer][0];
  at::Tensor values = storage_[layer][1];
  at::Tensor out = at::empty({qkv.size(0), q_heads, head_dim_}, qkv.options());
  cuda::LaunchRotaryDecodeAttentionMma(
      models::KernelElementType(dtype), qkv.data_ptr(), qkv.stride(0), cos.data_ptr(),
      sin.data_ptr(), step_->slot_mapping.data_ptr<int64_t>(), keys.data_ptr(), values.data_ptr(),
      step_->block_tables.data_ptr<int32_t>(), step_->block_tables.size(1),
      step_->block_table_width.defined() ? step_->block_table_width.data_ptr<int32_t>() : nullptr,
      step_->token_rows.data_ptr<int32_t>(), step_->positions.data_ptr<int64_t>(), qkv.size(0),
      q_heads, kv_heads_, head_dim_, block_size_, static_cast<float>(scale), out.data_ptr(),
      at::cuda::getCurrentCUDAStream());
  return out;
#else
  return at::Tensor();
#endif
}

#ifdef ROLLOUT_WITH_CUDA
void PagedKvCache::AttendInPlace(const at::Tensor& q, int64_t tokens, const at::Tensor& keys,
                                 const at::Tensor& values, double scale, at::Tensor& out) const {
  cuda::LaunchPagedAttention(
      models::KernelElementType(q.scalar_type()), q.data_ptr(), keys.data_ptr(), values.data_ptr(),
      step_->block_tables.data_ptr<int32_t>(), step_->block_tables.size(1),
      step_->block_table_width.defined() ? step_->block_table_width.data_ptr<int32_t>() : nullptr,
      step_->token_rows.data_ptr<int32_t>(), step_->positions.data_ptr<int64_t>(), tokens,
      q.size(1), kv_heads_, head_dim_, block_size_, static_cast<float>(scale), out.data_ptr(),
      at::cuda::getCurrentCUDAStream());
}

void PagedKvCache::WriteKv(const at::Tensor& k_in, const at::Tensor& v_in, at::Tensor& keys,
                           at::Tensor& values) const {
  // Rows of kv_heads x D contiguous elements, at any row stride (v may be a column
  // range of a fused projection).
  auto rows = [&](const at::Tensor& x) {
    return x.stride(2) == 1 && x.stride(1) == head_dim_ ? x : x.contiguous();
  };
  const at::Tensor k = rows(k_in), v = rows(v_in);
  cuda::LaunchWriteKv(models::KernelElementType(k.scalar_type()), k.data_ptr(), k.stride(0),
                      v.data_ptr(), v.stride(0), step_->slot_mapping.data_ptr<int64_t>(), k.size(0),
                      kv_heads_ * head_dim_, keys.data_ptr(), values.data_ptr(),
                      at::cuda::getCurrentCUDAStream());
}
#endif

at::Tensor PagedKvCache::AttendGathered(const at::Tensor& q, const at::Tensor& keys,
                                        const at::Tensor& values, double scale) const {
  at::Tensor out = at::empty_like(q);  // [N, Hq, D]
  const auto index_options = at::TensorOptions().dtype(at::kLong);
  const int64_t width = step_->block_tables.size(1);
  for (size_t row = 0; row < step_->row_context.size(); ++row) {
    const int64_t begin = step_->row_token_begin[row];
    const int64_t end = step_->row_token_begin[row + 1];
    if (begin == end) continue;
    const int64_t context = step_->row_context[row];
    const auto blocks = step_->host_block_tables.begin() + static_cast<int64_t>(row) * width;
    const std::vector<int64_t> ids(blocks, blocks + (context + block_size_ - 1) / block_size_);
    const at::Tensor block_ids = at::tensor(ids, index_options);
    // [blocks, block_size, Hkv, D] -> [1, Hkv, context, D]
    auto gather = [&](const at::Tensor& cache) {
      return cache.index_select(0, block_ids)
          .reshape({-1, kv_heads_, head_dim_})
          .narrow(0, 0, context)
          .transpose(0, 1)
          .unsqueeze(0);
    };
    const at::Tensor row_q = q.narrow(0, begin, end - begin).transpose(0, 1).unsqueeze(0);
    const at::Tensor attended = compat::ScaledDotProductAttention(
        row_q, gather(keys), gather(values), std::nullopt, /*causal=*/true, scale);
    out.narrow(0, begin, end - begin).copy_(attended.squeeze(0).transpose(0, 1));
  }
  return out;
}

}  // namespace rollout::engine
