// A step's input ids on the device when some of them are tokens the previous step drew
// and the host has not fetched yet (engine/step_inputs.h: input_sources).
#pragma once

#include <ATen/core/Tensor.h>

namespace rollout::engine {

// host_ids and sources: [N] int64 on the device; previous_samples: [S] int64, the
// previous step's sampled tokens. Entry i is previous_samples[sources[i]] where
// sources[i] >= 0, host_ids[i] elsewhere. No host synchronisation (CUDA-graph safe).
at::Tensor ResolveInputIds(const at::Tensor& host_ids, const at::Tensor& sources,
                           const at::Tensor& previous_samples);

}  // namespace rollout::engine
