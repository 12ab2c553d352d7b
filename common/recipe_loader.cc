#include "common/recipe_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/lr_schedule_family.h"
#include "common/recipe_apply.h"
#include "common/recipe_interpolate.h"
#include "common/recipe_schema.h"
#include "common/status_macros.h"
#include "common/verl_default_links.h"

namespace rollout::config {
namespace {

// `extended_from` ("recipes/y.yaml:1", or "" for the recipe named by the caller) is
// added to the error so a missing base can be told from a missing recipe.
absl::StatusOr<std::string> ReadRecipeFile(const std::string& path,
                                           const std::string& extended_from) {
  const std::string suffix =
      extended_from.empty() ? "" : absl::StrCat(" (extended from ", extended_from, ")");
  absl::StatusOr<std::string> text = ReadFile(path);
  if (text.ok()) return text;
  if (text.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("recipe file '", path, "' not found", suffix));
  }
  return absl::InvalidArgumentError(absl::StrCat("recipe file '", path, "' could not be read (",
                                                 text.status().message(), ")", suffix));
}

std::string Describe(const YAML::Node& node) {
  return node.IsSequence() ? "a list" : absl::StrCat("'", node.Scalar(), "'");
}

// Parses recipe text named `origin` in errors; its top level must be a map (or empty).
absl::StatusOr<YAML::Node> ParseRecipeText(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ":", error.mark.line + 1, ":",
                                                   error.mark.column + 1,
                                                   ": YAML syntax error: ", error.msg));
  }
  if (!root.IsNull() && !root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ":", root.Mark().line + 1,
                                                   ": expected a map of recipe keys at ",
                                                   "the top level, got ", Describe(root)));
  }
  return root;
}

// A base named in `from` is relative to from's folder; kept relative, not absolutized.
std::string BasePath(const std::string& from, const std::string& name) {
  return NormalizePath(JoinPath(Dirname(from), name));
}

class RecipeBuilder {
 public:
  // Applies the file at `path` after the bases it extends. `chain` holds the files
  // being loaded, outermost first, as (path, identity).
  absl::Status ApplyFile(const std::string& path, const std::string& extended_from,
                         std::vector<std::pair<std::string, std::string>>* chain);
  // Applies the base named by `root`'s top-level `extends`, if any.
  absl::Status FollowExtends(const YAML::Node& root, const LayerOrigin& origin,
                             std::vector<std::pair<std::string, std::string>>* chain);
  // Applies one `a.b.c=value` override.
  absl::Status ApplyOverride(const std::string& text);
  absl::Status ApplyText(const std::string& yaml, const std::string& origin);
  // Default lists, then references.
  absl::StatusOr<LoadedRecipe> Finish() &&;

 private:
  LoadedRecipe loaded_;
  PendingReferences pending_;
};

absl::Status RecipeBuilder::ApplyFile(const std::string& path, const std::string& extended_from,
                                      std::vector<std::pair<std::string, std::string>>* chain) {
  const std::string identity = FileIdentity(path);
  for (const auto& link : *chain) {
    if (link.second != identity) continue;
    std::vector<std::string> names;
    for (const auto& named : *chain) names.push_back(named.first);
    return absl::InvalidArgumentError(absl::StrCat("extends cycle at ", extended_from, ": ",
                                                   absl::StrJoin(names, " -> "), " -> ", path));
  }
  ASSIGN_OR_RETURN(const std::string text, ReadRecipeFile(path, extended_from));
  ASSIGN_OR_RETURN(const YAML::Node root, ParseRecipeText(text, path));
  chain->emplace_back(path, identity);
  const LayerOrigin origin{path, "", /*extends_followed=*/true};
  RETURN_IF_ERROR(FollowExtends(root, origin, chain));
  RETURN_IF_ERROR(ApplyLayer(root, origin, &loaded_.recipe, &loaded_.sources, &loaded_.ignored_verl_keys, &pending_));
  chain->pop_back();
  return absl::OkStatus();
}

absl::Status RecipeBuilder::FollowExtends(const YAML::Node& root, const LayerOrigin& origin,
                                          std::vector<std::pair<std::string, std::string>>* chain) {
  if (!root.IsMap()) return absl::OkStatus();
  for (const auto& entry : root) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != "extends") continue;
    if (entry.second.IsNull()) return absl::OkStatus();
    const std::string where = origin.Location(entry.first.Mark());
    if (!entry.second.IsScalar()) {
      return absl::InvalidArgumentError(absl::StrCat("wrong type for 'extends' at ", where,
                                                     ": expected a recipe file path, got ",
                                                     Describe(entry.second)));
    }
    return ApplyFile(BasePath(origin.file, entry.second.Scalar()), where, chain);
  }
  return absl::OkStatus();
}

absl::Status RecipeBuilder::ApplyOverride(const std::string& text) {
  const std::string where = absl::StrCat("command line '", text, "'");
  const size_t equals = text.find('=');
  if (equals == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected key=value, e.g. actor.optim.lr=1e-5"));
  }
  std::string key(absl::StripAsciiWhitespace(text.substr(0, equals)));
  // Hydra's `+key=v` (add a key) and `++key=v` (add or set): every key of the schema
  // exists here, so both set it. Hydra's `~key` (delete) is `key=null` here.
  key.erase(0, std::min<size_t>(key.find_first_not_of('+'), 2));
  const std::vector<std::string> segments = absl::StrSplit(key, '.');
  for (const std::string& segment : segments) {
    if (segment.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": '", key, "' is not a dotted key"));
    }
  }
  YAML::Node layer;
  try {
    layer = YAML::Load(text.substr(equals + 1));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": YAML syntax error in the value: ", error.msg));
  }
  // `a.b=v` is the layer {a: {b: v}}, so overrides share the file layers' rules.
  for (auto segment = segments.rbegin(); segment != segments.rend(); ++segment) {
    YAML::Node wrapper(YAML::NodeType::Map);
    wrapper[*segment] = layer;
    layer.reset(wrapper);
  }
  return ApplyLayer(layer, LayerOrigin{"", text, false}, &loaded_.recipe, &loaded_.sources, &loaded_.ignored_verl_keys, &pending_);
}

absl::Status RecipeBuilder::ApplyText(const std::string& yaml, const std::string& origin) {
  ASSIGN_OR_RETURN(const YAML::Node root, ParseRecipeText(yaml, origin));
  return ApplyLayer(root, LayerOrigin{origin, "", false}, &loaded_.recipe, &loaded_.sources, &loaded_.ignored_verl_keys, &pending_);
}

absl::StatusOr<LoadedRecipe> RecipeBuilder::Finish() && {
  ApplyDefaultLists(&loaded_.recipe);
  RETURN_IF_ERROR(ResolveReferences(&loaded_.sources, &pending_, &loaded_.recipe,
                                    &loaded_.ignored_verl_keys));
  RETURN_IF_ERROR(ApplyVerlDefaultLinks(loaded_.sources, &loaded_.recipe));
  RETURN_IF_ERROR(CheckOneLrScheduleFamily(loaded_.recipe, loaded_.sources));
  return std::move(loaded_);
}

}  // namespace

absl::StatusOr<LoadedRecipe> LoadRecipe(const std::string& path,
                                        const std::vector<std::string>& overrides) {
  try {
    RecipeBuilder builder;
    std::vector<std::pair<std::string, std::string>> chain;
    RETURN_IF_ERROR(builder.ApplyFile(path, "", &chain));
    for (const std::string& override_text : overrides) {
      RETURN_IF_ERROR(builder.ApplyOverride(override_text));
    }
    return std::move(builder).Finish();
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("loading recipe ", path, ": ", error.what()));
  }
}

absl::StatusOr<LoadedRecipe> ParseRecipeYaml(const std::string& yaml, const std::string& origin) {
  try {
    RecipeBuilder builder;
    RETURN_IF_ERROR(builder.ApplyText(yaml, origin));
    return std::move(builder).Finish();
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("parsing recipe ", origin, ": ", error.what()));
  }
}

std::string SourceOf(const LoadedRecipe& loaded, const std::string& key) {
  const std::string canonical = absl::StrJoin(CanonicalSegments(absl::StrSplit(key, '.')), ".");
  const auto it = loaded.sources.find(canonical);
  return it == loaded.sources.end() ? "default" : it->second;
}

}  // namespace rollout::config
