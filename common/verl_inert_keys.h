// Internal to the recipe loader (common/recipe_loader.h): verl recipe keys that set up
// verl's own machinery — FSDP sharding and offload, the vLLM / SGLang engines, Ray,
// sequence and tensor parallelism, kernel and compile switches — rather than what is
// trained, so that a recipe or command line written for verl loads here unchanged.
//
// Each entry accepts the values that ask for nothing this project does otherwise; the
// loader then ignores the key and reports it (LoadedRecipe::ignored_verl_keys). Any
// other value is an error that says why the key has no counterpart here. A key the
// table does not list stays an unknown key.
#pragma once

#include <string>
#include <vector>

namespace rollout::config {

struct VerlInertKey {
  std::string key;  // canonical dotted key ("actor.fsdp_config"); a map value is covered whole
  // The values accepted, as lower-case YAML text ("1", "false", "null", "{}"); empty
  // accepts any value.
  std::vector<std::string> accepted;
  std::string why;  // what the key does in verl and why it means nothing here
};

// The entry for canonical `key`, or nullptr.
const VerlInertKey* FindVerlInertKey(const std::string& key);

// Whether some entry lies below canonical `key` (`reward_model` for
// `reward_model.enable`): a map there is walked key by key.
bool HasVerlInertKeysUnder(const std::string& key);

// The names of the entries directly below `key`, sorted (for unknown-key messages).
std::vector<std::string> VerlInertKeysUnder(const std::string& key);

// Whether `value` (lower-case YAML text, as VerlInertKey::accepted holds it) is one the
// entry accepts; numbers by value ("0." is "0").
bool VerlInertKeyAccepts(const VerlInertKey& entry, const std::string& value);

}  // namespace rollout::config
