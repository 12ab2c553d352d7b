#include "algorithms/value_loss.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "absl/strings/str_cat.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {

absl::StatusOr<ValueLossResult> ComputeValueLoss(const at::Tensor& vpreds,
                                                 const at::Tensor& returns,
                                                 const at::Tensor& old_values,
                                                 const at::Tensor& response_mask,
                                                 const ValueLossOptions& options) {
  constexpr absl::string_view kContext = "value loss";
  // Written so that NaN fails too; +inf disables clipping.
  if (!(options.cliprange_value >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kContext, ": cliprange_value: must be >= 0; got ", options.cliprange_value));
  }
  RETURN_IF_ERROR(WithContext(
      CheckTokenLossInputs(response_mask, "response_mask",
                           {{"vpreds", vpreds}, {"returns", returns}, {"old_values", old_values}}),
      kContext));
  // verl's clip_by_value form: inside the interval `clipped` is vpreds bit for bit, so
  // vf_clipfrac counts no rounding noise (old + clamp(vpreds - old) would).
  const at::Tensor clipped = at::maximum(at::minimum(vpreds, old_values + options.cliprange_value),
                                         old_values - options.cliprange_value);
  const at::Tensor unclipped_error = (vpreds - returns).square();
  const at::Tensor clipped_error = (clipped - returns).square();
  ValueLossResult result;
  ASSIGN_OR_RETURN(
      const at::Tensor aggregated,
      WithContext(AggregateLoss(at::maximum(unclipped_error, clipped_error), response_mask,
                                options.loss_agg_mode, options.loss_scale_factor),
                  kContext));
  result.loss = 0.5 * aggregated;
  c10::NoGradGuard no_grad;
  result.vf_clipfrac =
      MaskedMean((clipped_error > unclipped_error).to(at::kDouble), response_mask.to(at::kDouble));
  return result;
}

}  // namespace rollout::algorithms
