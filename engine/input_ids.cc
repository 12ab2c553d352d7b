#include "engine/input_ids.h"

#include <ATen/ATen.h>

namespace rollout::engine {

at::Tensor ResolveInputIds(const at::Tensor& host_ids, const at::Tensor& sources,
                           const at::Tensor& previous_samples) {
  const at::Tensor drawn = previous_samples.index_select(0, sources.clamp_min(0));
  return at::where(sources.ge(0), drawn, host_ids);
}

}  // namespace rollout::engine
