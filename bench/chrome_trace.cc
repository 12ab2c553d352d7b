#include "bench/chrome_trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <set>

#ifdef ROLLOUT_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace rollout::bench {

void WriteChromeTrace(const std::string& path, bool cuda, const std::function<void()>& body) {
  namespace profiler = torch::profiler::impl;
  const profiler::ProfilerConfig config(profiler::ProfilerState::KINETO);
  std::set<profiler::ActivityType> activities = {profiler::ActivityType::CPU};
  if (cuda) activities.insert(profiler::ActivityType::CUDA);
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
  body();
#ifdef ROLLOUT_WITH_CUDA
  if (cuda) c10::cuda::device_synchronize();
#endif
  torch::autograd::profiler::disableProfiler()->save(path);
}

}  // namespace rollout::bench
