#include "tools/plugin_interaction.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/plugin_library.h"
#include "common/status_macros.h"
#include "tools/interaction_plugin_api.h"

namespace rollout::tools {
namespace {

using CreateFn = void* (*)(const char*, char*, size_t);
using CheckKwargsFn = int (*)(void*, const char*, char*, size_t);
using RespondFn = int (*)(void*, const char*, const char*, RolloutInteractionWrite, void*, int*, double*);
using DestroyFn = void (*)(void*);

class PluginInteraction final : public Interaction {
 public:
  PluginInteraction(PluginLibrary library, std::string path, void* interaction)
      : library_(std::move(library)),
        path_(std::move(path)),
        interaction_(interaction),
        check_kwargs_(library_.Get<CheckKwargsFn>("rollout_interaction_check_kwargs")),
        respond_(library_.Get<RespondFn>("rollout_interaction_respond")),
        destroy_(library_.Get<DestroyFn>("rollout_interaction_destroy")) {}
  ~PluginInteraction() override { destroy_(interaction_); }
  PluginInteraction(const PluginInteraction&) = delete;
  PluginInteraction& operator=(const PluginInteraction&) = delete;

  absl::Status CheckKwargs(const nlohmann::ordered_json& interaction_kwargs) const override {
    char error[512] = {0};
    if (const int rc = check_kwargs_(interaction_, interaction_kwargs.dump().c_str(), error, sizeof(error)); rc != 0) {
      error[sizeof(error) - 1] = '\0';
      return absl::InvalidArgumentError(error[0] != '\0' ? std::string(error)
                                                         : absl::StrCat(path_, " refused them (code ", rc, ")"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<UserTurn> Respond(const nlohmann::ordered_json& messages,
                                   const nlohmann::ordered_json& interaction_kwargs) const override {
    UserTurn turn;
    int ends = 0;
    const int rc = respond_(interaction_, messages.dump().c_str(), interaction_kwargs.dump().c_str(), &AppendToString,
                            &turn.content, &ends, &turn.score);
    if (rc != 0) {
      return absl::InternalError(
          absl::StrCat(path_, " failed (code ", rc, ")", turn.content.empty() ? "" : ": ", turn.content));
    }
    turn.ends = ends != 0;
    return turn;
  }

 private:
  PluginLibrary library_;  // first: unloaded after the interaction is destroyed
  std::string path_;
  void* interaction_;
  CheckKwargsFn check_kwargs_;
  RespondFn respond_;
  DestroyFn destroy_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Interaction>> LoadInteractionPlugin(const std::string& library,
                                                                   const nlohmann::ordered_json& config) {
  ASSIGN_OR_RETURN(PluginLibrary plugin,
                   PluginLibrary::Open(library, {"interaction", "tools/interaction_plugin_api.h",
                                                 "rollout_interaction_abi_version", ROLLOUT_INTERACTION_ABI_VERSION,
                                                 {"rollout_interaction_create", "rollout_interaction_check_kwargs",
                                                  "rollout_interaction_respond", "rollout_interaction_destroy"}}));
  char error[512] = {0};
  void* interaction = plugin.Get<CreateFn>("rollout_interaction_create")(config.dump().c_str(), error, sizeof(error));
  if (interaction == nullptr) {
    error[sizeof(error) - 1] = '\0';
    return absl::InvalidArgumentError(
        absl::StrCat("interaction plug-in ", library, " could not create its interaction: ", error));
  }
  return std::make_unique<PluginInteraction>(std::move(plugin), library, interaction);
}

}  // namespace rollout::tools
