#include "controller/rendezvous_store.h"

#include "absl/strings/str_cat.h"

namespace rollout::controller {

absl::Status RendezvousStore::Set(const std::string& key, const std::string& value) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous key of ", key.size(), " bytes: must have 1..", kMaxKeyBytes));
  }
  if (value.size() > kMaxValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("rendezvous value for '", key, "' has ", value.size(),
                                                   " bytes; at most ", kMaxValueBytes));
  }
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = values_.emplace(key, value);
  if (inserted) {
    if (values_.size() > kMaxKeys) {
      values_.erase(it);
      return absl::ResourceExhaustedError(absl::StrCat("rendezvous store full (", kMaxKeys, " keys)"));
    }
    return absl::OkStatus();
  }
  if (it->second == value) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat("rendezvous key '", key, "' was already written"));
}

std::optional<std::string> RendezvousStore::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace rollout::controller
