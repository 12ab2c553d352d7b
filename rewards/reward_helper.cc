#include "rewards/reward_helper.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "proto/reward.pb.h"
#include "rewards/frame_io.h"
#include "rewards/reward_selector.h"
#include "rewards/reward_wire.h"

namespace rollout::rewards {
namespace {

constexpr int kProtocolFd = STDIN_FILENO;

// The helper's virtual memory size now, from /proc/self/statm.
absl::StatusOr<uint64_t> AddressSpaceBytes() {
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return absl::InternalError("cannot read /proc/self/statm");
  unsigned long long pages = 0;
  const int read = std::fscanf(statm, "%llu", &pages);
  std::fclose(statm);
  if (read != 1) return absl::InternalError("cannot parse /proc/self/statm");
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

absl::Status LimitMemory(int64_t limit_mb) {
  if (limit_mb <= 0) return absl::OkStatus();
  absl::StatusOr<uint64_t> used = AddressSpaceBytes();
  if (!used.ok()) return used.status();
  const rlimit limit{*used + static_cast<uint64_t>(limit_mb) * (1u << 20),
                     *used + static_cast<uint64_t>(limit_mb) * (1u << 20)};
  if (setrlimit(RLIMIT_AS, &limit) != 0) {
    return absl::InternalError(absl::StrCat("setrlimit(RLIMIT_AS): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

int RunRewardHelperCommand(const std::vector<std::string>& args) {
  RewardSpec spec;
  int64_t memory_limit_mb = 0;
  FlagSet flags("rollout reward-helper [--name NAME | --plugin LIB.so] [--memory_limit_mb N]",
                "A helper process of reward.isolation: process (started by the trainer, not by hand).");
  flags.AddString("name", &spec.name, "reward function");
  flags.AddString("plugin", &spec.plugin, "reward plug-in library");
  flags.AddInt("memory_limit_mb", &memory_limit_mb, "allocation cap for the reward function; 0: none");
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok() || parsed->help) {
    std::cerr << (parsed.ok() ? flags.Usage() : absl::StrCat("rollout reward-helper: ", parsed.status().message(), "\n"));
    return parsed.ok() ? 0 : 2;
  }

  absl::StatusOr<std::shared_ptr<const RewardSelector>> selector = RewardSelector::Create(spec);
  absl::Status ready = selector.status();
  if (ready.ok()) ready = LimitMemory(memory_limit_mb);
  const ScoredSample hello = ready.ok() ? ScoredSample{}
                                        : FailedSample(SampleOutcome::kError, std::string(ready.message()));
  if (!WriteFrame(kProtocolFd, ToWire(hello)).ok() || !ready.ok()) return 2;

  wire::RewardSample sample;
  while (ReadFrame(kProtocolFd, &sample).ok()) {
    if (!WriteFrame(kProtocolFd, ToWire(ScoreOrFail(**selector, FromWire(sample)))).ok()) return 1;
  }
  return 0;
}

}  // namespace rollout::rewards
