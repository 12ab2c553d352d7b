// Internal to the recipe loader (common/recipe_loader.h): verl recipe keys that name a
// setting this schema holds under another key — verl's copies (its rollout's
// prompt_length of data.max_prompt_length) and its second spellings (the optimizer's
// clip_grad beside the actor's grad_clip). The loader writes such a key's value to its
// target, so a recipe or command line written for verl loads here unchanged. One layer
// (a file, or one override) that sets a target under two spellings to different values
// is an error naming both: here one value serves both. A null (reset) under one spelling
// leaves the other spelling's value in that layer standing, as verl reads its
// deprecated spellings only when they are set.
#pragma once

#include <string>
#include <vector>

namespace rollout::config {

struct VerlSynonymKey {
  std::string key;     // canonical dotted key as verl spells it ("actor.optim.clip_grad")
  std::string target;  // the schema's key of the same setting ("actor.grad_clip")
};

// The entry for canonical `key`, or nullptr.
const VerlSynonymKey* FindVerlSynonymKey(const std::string& key);

// Whether canonical `key` is the target of some entry.
bool IsVerlSynonymTarget(const std::string& key);

// The names of the entries directly below `key`, sorted (for unknown-key messages).
std::vector<std::string> VerlSynonymKeysUnder(const std::string& key);

}  // namespace rollout::config
