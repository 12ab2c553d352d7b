#include "controller/checkpoint_manifest.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/crc32c.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"

namespace rollout::controller {
namespace {

using Json = nlohmann::json;

// The role a relative path belongs to: its first component when it has more.
std::string RoleOf(const std::string& path) {
  const size_t slash = path.find('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsManifestName(const std::string& name) {
  return name == kManifestFile || name == AtomicWriteTempPath(kManifestFile);
}

// A relative path that stays inside the checkpoint directory.
bool IsSafeRelativePath(absl::string_view path) {
  if (path.empty() || path[0] == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

absl::StatusOr<uint32_t> ChecksumFile(FileSystem& fs, const std::string& path) {
  uint32_t crc = 0;
  RETURN_IF_ERROR(fs.ReadFileInChunks(
      path, [&crc](absl::string_view chunk) { crc = crc32c::Extend(crc, chunk); }));
  return crc;
}

absl::Status ScanInto(FileSystem& fs, const std::string& dir, const std::string& relative,
                      bool checksums, std::vector<ManifestFile>* files) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDirectory(JoinPath(dir, relative)));
  for (const std::string& name : names) {
    if (relative.empty() && IsManifestName(name)) continue;
    const std::string path = relative.empty() ? name : absl::StrCat(relative, "/", name);
    ASSIGN_OR_RETURN(FileInfo info, fs.Stat(JoinPath(dir, path)));
    if (!info.exists) continue;  // a dangling symlink: there is nothing to read
    if (info.is_directory) {
      RETURN_IF_ERROR(ScanInto(fs, dir, path, checksums, files));
      continue;
    }
    ManifestFile file{path, info.size, 0};
    if (checksums) {
      ASSIGN_OR_RETURN(file.crc32c, ChecksumFile(fs, JoinPath(dir, path)));
    }
    files->push_back(std::move(file));
  }
  return absl::OkStatus();
}

absl::StatusOr<ManifestFile> ParseFileEntry(const Json& entry) {
  const auto malformed = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("MANIFEST.json: file entry ", entry.dump(), " ", what));
  };
  if (!entry.is_object()) return malformed("is not an object");
  const auto path = entry.find("path");
  const auto size = entry.find("size");
  const auto crc = entry.find("crc32c");
  if (path == entry.end() || !path->is_string()) return malformed("has no \"path\" string");
  if (size == entry.end() || !size->is_number_unsigned()) return malformed("has no \"size\" count");
  if (crc == entry.end() || !crc->is_string()) return malformed("has no \"crc32c\" string");
  ManifestFile file{path->get<std::string>(), size->get<uint64_t>(), 0};
  if (!IsSafeRelativePath(file.path)) return malformed("has a path outside the checkpoint");
  const std::string hex = crc->get<std::string>();
  const bool all_hex = std::all_of(hex.begin(), hex.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c));
  });
  if (hex.size() != 8 || !all_hex || !absl::SimpleHexAtoi(hex, &file.crc32c)) {
    return malformed("has a \"crc32c\" that is not 8 hex digits");
  }
  return file;
}

}  // namespace

std::vector<std::string> Manifest::Roles() const {
  std::vector<std::string> roles;
  for (const ManifestFile& file : files) {
    const std::string role = RoleOf(file.path);
    if (!role.empty() && !Contains(roles, role)) roles.push_back(role);
  }
  std::sort(roles.begin(), roles.end());
  return roles;
}

uint64_t Manifest::TotalBytes() const {
  uint64_t total = 0;
  for (const ManifestFile& file : files) total += file.size;
  return total;
}

Manifest Manifest::WithoutRoles(const std::vector<std::string>& roles) const {
  Manifest result = *this;
  result.files.clear();
  for (const ManifestFile& file : files) {
    if (!Contains(roles, RoleOf(file.path))) result.files.push_back(file);
  }
  for (const std::string& role : roles) {
    if (!Contains(result.removed_roles, role)) result.removed_roles.push_back(role);
  }
  std::sort(result.removed_roles.begin(), result.removed_roles.end());
  return result;
}

std::string ManifestToJson(const Manifest& manifest) {
  Json files = Json::array();
  for (const ManifestFile& file : manifest.files) {
    files.push_back(
        {{"path", file.path}, {"size", file.size}, {"crc32c", crc32c::ToHex(file.crc32c)}});
  }
  const Json json = {{"format_version", Manifest::kFormatVersion},
                     {"deleted_after_load", manifest.deleted_after_load},
                     {"removed_roles", manifest.removed_roles},
                     {"files", files}};
  return json.dump(1) + "\n";
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text) {
  const Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::DataLossError("MANIFEST.json is not a JSON object");
  }
  const auto version = json.find("format_version");
  if (version == json.end() || !version->is_number_integer()) {
    return absl::DataLossError("MANIFEST.json has no format_version");
  }
  if (version->get<int64_t>() != Manifest::kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat("MANIFEST.json has format_version ",
                                                      version->dump(), "; this build reads ",
                                                      Manifest::kFormatVersion));
  }
  const auto deleted = json.find("deleted_after_load");
  const auto removed = json.find("removed_roles");
  const auto files = json.find("files");
  if (deleted == json.end() || !deleted->is_boolean() || removed == json.end() ||
      !removed->is_array() || files == json.end() || !files->is_array()) {
    return absl::DataLossError(
        "MANIFEST.json lacks \"deleted_after_load\", \"removed_roles\" or \"files\"");
  }
  Manifest manifest;
  manifest.deleted_after_load = deleted->get<bool>();
  for (const Json& role : *removed) {
    if (!role.is_string() || !IsSafeRelativePath(role.get<std::string>())) {
      return absl::DataLossError(absl::StrCat("MANIFEST.json: bad removed role ", role.dump()));
    }
    manifest.removed_roles.push_back(role.get<std::string>());
  }
  for (const Json& entry : *files) {
    ASSIGN_OR_RETURN(ManifestFile file, ParseFileEntry(entry));
    manifest.files.push_back(std::move(file));
  }
  return manifest;
}

absl::StatusOr<std::vector<ManifestFile>> ScanCheckpointFiles(FileSystem& fs,
                                                              const std::string& dir,
                                                              bool checksums) {
  std::vector<ManifestFile> files;
  RETURN_IF_ERROR(ScanInto(fs, dir, "", checksums, &files));
  std::sort(files.begin(), files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  return files;
}

absl::StatusOr<Manifest> BuildManifest(FileSystem& fs, const std::string& dir) {
  Manifest manifest;
  ASSIGN_OR_RETURN(manifest.files, ScanCheckpointFiles(fs, dir, /*checksums=*/true));
  return manifest;
}

absl::StatusOr<Manifest> ReadManifest(FileSystem& fs, const std::string& dir) {
  ASSIGN_OR_RETURN(std::string text, fs.ReadFile(JoinPath(dir, kManifestFile)));
  return ParseManifest(text);
}

absl::Status VerifyManifest(FileSystem& fs, const std::string& dir, const Manifest& manifest,
                            VerifyLevel level) {
  ASSIGN_OR_RETURN(std::vector<ManifestFile> present,
                   ScanCheckpointFiles(fs, dir, /*checksums=*/false));
  std::map<std::string, uint64_t> sizes;
  for (const ManifestFile& file : present) sizes[file.path] = file.size;
  for (const ManifestFile& file : manifest.files) {
    const auto it = sizes.find(file.path);
    if (it == sizes.end()) return absl::DataLossError(absl::StrCat("missing file ", file.path));
    if (it->second != file.size) {
      return absl::DataLossError(
          absl::StrCat(file.path, " is ", it->second, " bytes, the manifest says ", file.size));
    }
    sizes.erase(it);
  }
  for (const auto& [path, size] : sizes) {
    if (!Contains(manifest.removed_roles, RoleOf(path))) {
      return absl::DataLossError(absl::StrCat("unexpected file ", path));
    }
  }
  if (level == VerifyLevel::kSizes) return absl::OkStatus();
  for (const ManifestFile& file : manifest.files) {
    ASSIGN_OR_RETURN(uint32_t crc, ChecksumFile(fs, JoinPath(dir, file.path)));
    if (crc != file.crc32c) {
      return absl::DataLossError(absl::StrCat("checksum mismatch for ", file.path));
    }
  }
  return absl::OkStatus();
}

}  // namespace rollout::controller
