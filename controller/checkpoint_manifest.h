// MANIFEST.json: the list of every file in a checkpoint directory with its size and
// CRC32C, written last by a save, so that a checkpoint with a manifest is complete
// and any later damage (a truncated, missing, extra or bit-flipped file) is found.
//
//   {"format_version": 1, "deleted_after_load": false, "removed_roles": [],
//    "files": [{"path": "actor/model.safetensors", "size": 1024, "crc32c": "8a9136aa"},
//              {"path": "trainer_state.json", ...}]}
//
// Paths are relative to the checkpoint directory, '/'-separated, sorted. The
// manifest never lists itself or its temporary file (common/file_system.h
// AtomicWriteTempPath). `removed_roles` names role directories (top-level
// directories: "actor", "critic") removed since the save, by retention or by
// del_local_ckpt_after_load: the manifest is rewritten without them FIRST and the
// directories deleted after, so files still under a removed role are leftovers of
// an interrupted removal, not damage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_system.h"

namespace rollout::controller {

struct ManifestFile {
  std::string path;  // relative to the checkpoint directory
  uint64_t size = 0;
  uint32_t crc32c = 0;
};

struct Manifest {
  static constexpr int kFormatVersion = 1;

  std::vector<ManifestFile> files;         // sorted by path
  std::vector<std::string> removed_roles;  // sorted
  // Set by del_local_ckpt_after_load: the role directories are gone, only
  // trainer_state.json is left, so the tracker never names a missing directory.
  bool deleted_after_load = false;

  // The top-level directories the files are in, sorted: the roles saved here.
  std::vector<std::string> Roles() const;
  uint64_t TotalBytes() const;
  // A copy without the files under `roles`, which are added to removed_roles.
  Manifest WithoutRoles(const std::vector<std::string>& roles) const;
};

std::string ManifestToJson(const Manifest& manifest);
// DataLoss naming what is malformed (bad JSON, a missing field, an absolute or ".."
// path); FailedPrecondition for a format_version this build does not read.
absl::StatusOr<Manifest> ParseManifest(absl::string_view json);

// Every regular file under `dir` (recursively, symlinks followed) except the
// manifest and its temporary file, with sizes; checksums too when `checksums`.
absl::StatusOr<std::vector<ManifestFile>> ScanCheckpointFiles(FileSystem& fs,
                                                              const std::string& dir,
                                                              bool checksums);

// The manifest of what is in `dir` now (files checksummed, chunk by chunk).
absl::StatusOr<Manifest> BuildManifest(FileSystem& fs, const std::string& dir);

// dir/MANIFEST.json parsed. NotFound when there is none.
absl::StatusOr<Manifest> ReadManifest(FileSystem& fs, const std::string& dir);

enum class VerifyLevel {
  kSizes,      // presence and sizes: a stat per file
  kChecksums,  // and then every byte against its CRC32C
};

// Checks `dir` against `manifest`: every listed file present with its size, no
// file that is not listed (except under removed roles), then, at kChecksums, every
// checksum. DataLoss naming the first problem, e.g. "checksum mismatch for
// actor/model.safetensors", "missing file critic/optim.pt", "unexpected file
// actor/extra.bin", "actor/model.safetensors is 10 bytes, the manifest says 12".
// Other codes for I/O errors. Callers add which checkpoint it was.
absl::Status VerifyManifest(FileSystem& fs, const std::string& dir, const Manifest& manifest,
                            VerifyLevel level);

}  // namespace rollout::controller
