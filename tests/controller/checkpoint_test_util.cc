#include "tests/controller/checkpoint_test_util.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"

namespace rollout::testing {

void WriteRoleFiles(const std::string& dir, int64_t step, const std::vector<std::string>& roles) {
  for (const std::string& role : roles) {
    const std::string role_dir = JoinPath(dir, role);
    MakeDirectories(JoinPath(role_dir, "extra")).IgnoreError();
    std::string weights;
    for (int i = 0; i < 1000; ++i) absl::StrAppend(&weights, role, ":", step, ":", i, ";");
    WriteFileDurably(JoinPath(role_dir, "model.safetensors"), weights).IgnoreError();
    WriteFileDurably(JoinPath(role_dir, "optim.pt"), absl::StrCat("optim ", role, " ", step))
        .IgnoreError();
    WriteFileDurably(JoinPath(role_dir, "extra/rng.bin"), std::string(1 + step % 7, 'r'))
        .IgnoreError();
  }
}

std::string TrainerStateJson(int64_t step) { return absl::StrCat("{\"global_step\": ", step, "}"); }

absl::Status SaveCheckpoint(controller::CheckpointStore& store, int64_t step,
                            const std::vector<std::string>& roles) {
  ASSIGN_OR_RETURN(std::string staging, store.BeginSave(step));
  WriteRoleFiles(staging, step, roles);
  return store.CommitSave(step, TrainerStateJson(step));
}

bool PathExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string TrackerContents(const std::string& root) {
  return ReadFile(JoinPath(root, controller::kTrackerFile)).value_or("");
}

}  // namespace rollout::testing
