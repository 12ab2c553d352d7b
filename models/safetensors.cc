#include "models/safetensors.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file_writer.h"
#include "common/file_util.h"
#include "common/status_macros.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian and is copied without byte swapping");

namespace rollout::models {
namespace {

using Json = nlohmann::json;

constexpr char kMetadataKey[] = "__metadata__";
constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";

using NamedTensor = std::pair<std::string, at::Tensor>;

struct DtypeName {
  const char* name;
  c10::ScalarType type;
};
constexpr DtypeName kDtypes[] = {
    {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16}, {"F64", at::kDouble},
    {"I64", at::kLong},  {"I32", at::kInt},   {"I16", at::kShort},     {"I8", at::kChar},
    {"U8", at::kByte},   {"BOOL", at::kBool},
};
constexpr char kSupported[] = "F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL";

absl::StatusOr<c10::ScalarType> DtypeFromName(const std::string& name) {
  for (const DtypeName& d : kDtypes) {
    if (name == d.name) return d.type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype '", name, "' (supported: ", kSupported, ")"));
}

absl::StatusOr<std::string> DtypeToName(c10::ScalarType type) {
  for (const DtypeName& d : kDtypes) {
    if (type == d.type) return std::string(d.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype ", c10::toString(type), " (supported: ", kSupported, ")"));
}

// A file open for positioned reads (pread): any number of threads may read it at once.
// The descriptor lives until destruction; replacing the file by rename meanwhile is
// safe (the reads see the old file), truncating it in place makes reads past the new
// end fail with DataLoss.
class ReadOnlyFile {
 public:
  // NotFound for a missing file, DataLoss for one too short to hold a header.
  static absl::StatusOr<std::unique_ptr<ReadOnlyFile>> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      const std::string message = absl::StrCat("opening ", path, ": ", strerror(error));
      return error == ENOENT ? absl::NotFoundError(message) : absl::UnavailableError(message);
    }
    auto file = std::unique_ptr<ReadOnlyFile>(new ReadOnlyFile(path, fd));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
    }
    file->size_ = static_cast<uint64_t>(st.st_size);
    if (file->size_ < 8) {
      return absl::DataLossError(absl::StrCat(path, ": file of ", file->size_, " bytes has no header"));
    }
    return file;
  }
  ~ReadOnlyFile() { close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // at least 8, as found at Open

  // Bytes [offset, offset + count) into `out`, in large reads (the kernel then reads
  // ahead in large requests, near the disk's sequential speed).
  absl::Status ReadAt(uint64_t offset, uint64_t count, void* out) const {
    constexpr uint64_t kMaxRead = uint64_t{1} << 30;  // Linux returns at most ~2 GiB a call
    char* dst = static_cast<char*>(out);
    while (count > 0) {
      const ssize_t got = pread(fd_, dst, std::min(count, kMaxRead), static_cast<off_t>(offset));
      const int error = errno;
      if (got < 0 && error == EINTR) continue;
      if (got < 0) {
        return absl::UnavailableError(
            absl::StrCat("reading ", path_, " at byte ", offset, ": ", strerror(error)));
      }
      if (got == 0) {
        return absl::DataLossError(absl::StrCat(path_, " ends before byte ", offset,
                                                " (truncated while open?)"));
      }
      dst += got;
      offset += static_cast<uint64_t>(got);
      count -= static_cast<uint64_t>(got);
    }
    return absl::OkStatus();
  }

 private:
  ReadOnlyFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  const std::string path_;
  const int fd_;
  uint64_t size_ = 0;
};

// Memory about to be filled by a read: asks the kernel for transparent huge pages,
// so filling fresh memory takes one fault per 2 MiB instead of one per 4 KiB (on this
// project's 2-core VM that halves reading 4 GB of AdamW state into new tensors: 19.6
// -> 9.0 s). Advice only: where huge pages are off, nothing changes.
void AdviseHugePages(void* data, uint64_t bytes) {
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  const uint64_t begin = (reinterpret_cast<uint64_t>(data) + kHugePage - 1) / kHugePage * kHugePage;
  const uint64_t end = (reinterpret_cast<uint64_t>(data) + bytes) / kHugePage * kHugePage;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Where a tensor's bytes lie: [begin, end) in the file, absolute.
struct Slot {
  TensorInfo info;
  uint64_t begin = 0;
  uint64_t end = 0;
  const ReadOnlyFile* file = nullptr;
};

struct ParsedFile {
  std::unique_ptr<ReadOnlyFile> file;
  std::map<std::string, Slot> tensors;
  std::map<std::string, std::string> metadata;
};

// The header's JSON object; DataLoss for bad JSON or a name given twice (which the
// JSON library would otherwise silently collapse).
absl::StatusOr<Json> ParseHeaderJson(const char* begin, const char* end) {
  std::set<std::string> seen;
  std::string duplicate;
  const Json::parser_callback_t check_keys = [&](int depth, Json::parse_event_t event,
                                                 Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 &&
        !seen.insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(begin, end, check_keys);
  } catch (const Json::exception& e) {
    return absl::DataLossError(absl::StrCat("header is not valid JSON: ", e.what()));
  }
  if (!header.is_object()) return absl::DataLossError("header is not a JSON object");
  if (!duplicate.empty()) {
    return absl::DataLossError(absl::StrCat("tensor '", duplicate, "' appears twice"));
  }
  return header;
}

absl::StatusOr<std::map<std::string, std::string>> ParseMetadata(const Json& value) {
  if (!value.is_object()) return absl::DataLossError("__metadata__ is not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      return absl::DataLossError(absl::StrCat("__metadata__ '", key, "' is not a string"));
    }
    metadata[key] = item.get<std::string>();
  }
  return metadata;
}

// `entry` of the header, with offsets relative to the data section of `data_size`
// bytes. Errors do not name the tensor; the caller adds it.
absl::StatusOr<Slot> ParseSlot(const Json& entry, uint64_t data_size) {
  if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
      !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
      !entry["data_offsets"].is_array()) {
    return absl::DataLossError("entry needs dtype (string), shape and data_offsets (arrays)");
  }
  Slot slot;
  ASSIGN_OR_RETURN(slot.info.dtype, DtypeFromName(entry["dtype"].get<std::string>()));
  uint64_t bytes = c10::elementSize(slot.info.dtype);
  for (const Json& dim : entry["shape"]) {
    if (!dim.is_number_unsigned()) return absl::DataLossError("shape has a non-integer");
    const uint64_t size = dim.get<uint64_t>();
    if (size > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(bytes, size, &bytes)) {
      return absl::DataLossError("shape overflows");
    }
    slot.info.shape.push_back(static_cast<int64_t>(size));
  }
  const Json& offsets = entry["data_offsets"];
  if (offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
    return absl::DataLossError("data_offsets is not [begin, end]");
  }
  slot.begin = offsets[0].get<uint64_t>();
  slot.end = offsets[1].get<uint64_t>();
  if (slot.begin > slot.end || slot.end > data_size) {
    return absl::DataLossError(absl::StrCat("data_offsets [", slot.begin, ", ", slot.end,
                                            "] outside the data section of ", data_size, " bytes"));
  }
  if (slot.end - slot.begin != bytes) {
    return absl::DataLossError(
        absl::StrCat("data_offsets [", slot.begin, ", ", slot.end, "] hold ", slot.end - slot.begin,
                     " bytes but ", entry["dtype"].get<std::string>(), " [",
                     absl::StrJoin(slot.info.shape, ", "), "] needs ", bytes));
  }
  return slot;
}

// DataLoss when two non-empty tensors share bytes.
absl::Status CheckNoOverlap(const std::map<std::string, Slot>& tensors) {
  std::vector<std::pair<const std::string*, const Slot*>> order;
  for (const auto& [name, slot] : tensors) {
    if (slot.end > slot.begin) order.emplace_back(&name, &slot);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i].second->begin < order[i - 1].second->end) {
      return absl::DataLossError(
          absl::StrCat("tensors '", *order[i - 1].first, "' and '", *order[i].first, "' overlap"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseHeader(ParsedFile& parsed) {
  const ReadOnlyFile& file = *parsed.file;
  uint64_t header_size = 0;
  RETURN_IF_ERROR(file.ReadAt(0, 8, &header_size));
  if (header_size > file.size() - 8) {
    return absl::DataLossError(absl::StrCat(
        "header length ", header_size, " runs past the end of the file (", file.size(), " bytes)"));
  }
  std::string text(header_size, '\0');
  RETURN_IF_ERROR(file.ReadAt(8, header_size, text.data()));
  ASSIGN_OR_RETURN(Json header, ParseHeaderJson(text.data(), text.data() + text.size()));
  const uint64_t data_start = 8 + header_size;
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      ASSIGN_OR_RETURN(parsed.metadata, ParseMetadata(entry));
      continue;
    }
    ASSIGN_OR_RETURN(Slot slot, WithContext(ParseSlot(entry, file.size() - data_start),
                                            absl::StrCat("tensor '", name, "'")));
    slot.begin += data_start;
    slot.end += data_start;
    slot.file = &file;
    parsed.tensors.emplace(name, std::move(slot));
  }
  return CheckNoOverlap(parsed.tensors);
}

absl::StatusOr<ParsedFile> OpenAndParse(const std::string& path) {
  ParsedFile parsed;
  ASSIGN_OR_RETURN(parsed.file, ReadOnlyFile::Open(path));
  RETURN_IF_ERROR(WithContext(ParseHeader(parsed), path));
  return parsed;
}

// The shard file of every tensor in a model.safetensors.index.json.
absl::StatusOr<std::map<std::string, std::string>> ParseIndex(const std::string& text,
                                                              const std::string& path) {
  Json index;
  try {
    index = Json::parse(text);
  } catch (const Json::exception& e) {
    return absl::DataLossError(absl::StrCat(path, ": not valid JSON: ", e.what()));
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return absl::DataLossError(absl::StrCat(path, ": no \"weight_map\" object"));
  }
  std::map<std::string, std::string> shard_of;
  for (const auto& [name, file] : index["weight_map"].items()) {
    const std::string normal = file.is_string() ? NormalizePath(file.get<std::string>()) : "";
    const bool plain = !normal.empty() && normal != "." && normal != ".." && normal[0] != '/' &&
                       normal.rfind("../", 0) != 0;
    if (!plain) {
      return absl::DataLossError(absl::StrCat(path, ": weight_map entry for '", name,
                                              "' is not a file name inside the directory"));
    }
    shard_of[name] = file.get<std::string>();
  }
  return shard_of;
}

class FileReader final : public SafetensorsReader {
 public:
  explicit FileReader(std::string origin) : origin_(std::move(origin)) {}

  // Takes the mapping of `parsed`; exposes `names` of it (all when null).
  absl::Status Add(ParsedFile parsed, const std::vector<std::string>* names) {
    if (files_.empty()) metadata_ = parsed.metadata;
    if (names == nullptr) {
      slots_.merge(parsed.tensors);
    } else {
      for (const std::string& name : *names) {
        auto it = parsed.tensors.find(name);
        if (it == parsed.tensors.end()) {
          return absl::DataLossError(absl::StrCat(kIndexFile, " places tensor '", name, "' in ",
                                                  parsed.file->path(), ", which does not hold it"));
        }
        slots_[name] = it->second;
      }
    }
    files_.push_back(std::move(parsed.file));
    return absl::OkStatus();
  }

  std::vector<std::string> Names() const override {
    std::vector<std::string> names;
    names.reserve(slots_.size());
    for (const auto& [name, slot] : slots_) names.push_back(name);
    return names;
  }
  std::vector<std::string> NamesInFileOrder() const override {
    std::vector<std::pair<std::pair<size_t, uint64_t>, const std::string*>> order;
    order.reserve(slots_.size());
    for (const auto& [name, slot] : slots_) {
      const size_t file = std::find_if(files_.begin(), files_.end(), [&](const auto& f) {
                            return f.get() == slot.file;
                          }) - files_.begin();
      order.push_back({{file, slot.begin}, &name});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> names;
    names.reserve(order.size());
    for (const auto& entry : order) names.push_back(*entry.second);
    return names;
  }
  bool Has(const std::string& name) const override { return slots_.count(name) > 0; }
  absl::StatusOr<TensorInfo> Info(const std::string& name) const override {
    ASSIGN_OR_RETURN(const Slot* slot, Find(name));
    return slot->info;
  }
  absl::StatusOr<at::Tensor> Load(const std::string& name) const override {
    ASSIGN_OR_RETURN(const Slot* slot, Find(name));
    at::Tensor tensor = at::empty(slot->info.shape, at::TensorOptions().dtype(slot->info.dtype));
    AdviseHugePages(tensor.data_ptr(), tensor.nbytes());
    RETURN_IF_ERROR(slot->file->ReadAt(slot->begin, slot->end - slot->begin, tensor.data_ptr()));
    return tensor;
  }
  absl::Status ReadInto(const std::string& name, at::Tensor& destination) const override {
    ASSIGN_OR_RETURN(const Slot* slot, Find(name));
    if (!destination.device().is_cpu() || !destination.is_contiguous() ||
        destination.scalar_type() != slot->info.dtype ||
        destination.sizes() != at::IntArrayRef(slot->info.shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reading '", name, "' of ", origin_, " into a tensor that is not a contiguous CPU ",
          c10::toString(slot->info.dtype), " [", absl::StrJoin(slot->info.shape, ","), "]"));
    }
    AdviseHugePages(destination.data_ptr(), destination.nbytes());
    return slot->file->ReadAt(slot->begin, slot->end - slot->begin, destination.data_ptr());
  }
  std::map<std::string, std::string> Metadata() const override { return metadata_; }

 private:
  absl::StatusOr<const Slot*> Find(const std::string& name) const {
    auto it = slots_.find(name);
    if (it == slots_.end()) {
      return absl::NotFoundError(absl::StrCat("no tensor '", name, "' in ", origin_));
    }
    return &it->second;
  }

  std::string origin_;
  std::vector<std::unique_ptr<ReadOnlyFile>> files_;
  std::map<std::string, Slot> slots_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SafetensorsReader>> SafetensorsReader::OpenFile(
    const std::string& path) {
  ASSIGN_OR_RETURN(ParsedFile parsed, OpenAndParse(path));
  auto reader = std::make_unique<FileReader>(path);
  RETURN_IF_ERROR(reader->Add(std::move(parsed), nullptr));
  return reader;
}

absl::StatusOr<std::unique_ptr<SafetensorsReader>> SafetensorsReader::OpenDirectory(
    const std::string& dir) {
  const std::string index_path = JoinPath(dir, kIndexFile);
  absl::StatusOr<std::string> index_text = ReadFile(index_path);
  if (absl::IsNotFound(index_text.status())) {
    absl::StatusOr<std::unique_ptr<SafetensorsReader>> single =
        OpenFile(JoinPath(dir, kSingleFile));
    if (absl::IsNotFound(single.status())) {
      return absl::NotFoundError(
          absl::StrCat(dir, " has neither ", kIndexFile, " nor ", kSingleFile));
    }
    return single;
  }
  if (!index_text.ok()) return index_text.status();
  ASSIGN_OR_RETURN(auto shard_of, ParseIndex(*index_text, index_path));
  std::map<std::string, std::vector<std::string>> names_in_shard;
  for (const auto& [name, shard] : shard_of) names_in_shard[shard].push_back(name);
  auto reader = std::make_unique<FileReader>(dir);
  for (const auto& [shard, names] : names_in_shard) {
    ASSIGN_OR_RETURN(ParsedFile parsed, OpenAndParse(JoinPath(dir, shard)));
    RETURN_IF_ERROR(WithContext(reader->Add(std::move(parsed), &names), dir));
  }
  return reader;
}

namespace {

// Compact header JSON padded with spaces to a multiple of 8 bytes, as the Python
// library writes it. Entries are in name order; the data is packed from offset 0 in
// `data_order`, which keeps every tensor aligned to its element size.
absl::StatusOr<std::string> BuildHeader(const std::vector<const NamedTensor*>& name_order,
                                        const std::vector<const NamedTensor*>& data_order,
                                        const std::map<std::string, std::string>& metadata) {
  std::map<const NamedTensor*, std::pair<uint64_t, uint64_t>> offsets;
  uint64_t offset = 0;
  for (const NamedTensor* named : data_order) {
    const uint64_t bytes = named->second.numel() * named->second.element_size();
    offsets[named] = {offset, offset + bytes};
    offset += bytes;
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  for (const NamedTensor* named : name_order) {
    const auto& [name, tensor] = *named;
    ASSIGN_OR_RETURN(std::string dtype,
                     WithContext(DtypeToName(tensor.scalar_type()), "tensor '" + name + "'"));
    const auto [begin, end] = offsets[named];
    header[name] = {
        {"dtype", dtype}, {"shape", tensor.sizes().vec()}, {"data_offsets", {begin, end}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("names or metadata: ", e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::vector<const NamedTensor*> name_order;
  for (const NamedTensor& named : tensors) {
    if (!named.second.defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("writing ", path, ": tensor '", named.first, "' is undefined"));
    }
    name_order.push_back(&named);
  }
  std::sort(name_order.begin(), name_order.end(),
            [](const NamedTensor* a, const NamedTensor* b) { return a->first < b->first; });
  for (size_t i = 0; i < name_order.size(); ++i) {
    const std::string& name = name_order[i]->first;
    if (name == kMetadataKey || (i > 0 && name == name_order[i - 1]->first)) {
      return absl::InvalidArgumentError(
          absl::StrCat("writing ", path, ": tensor name '", name, "' is reserved or repeated"));
    }
  }
  // Widest elements first, as the Python library does, so no tensor is misaligned.
  std::vector<const NamedTensor*> data_order = name_order;
  std::stable_sort(data_order.begin(), data_order.end(),
                   [](const NamedTensor* a, const NamedTensor* b) {
                     return a->second.element_size() > b->second.element_size();
                   });
  ASSIGN_OR_RETURN(const std::string header,
                   WithContext(BuildHeader(name_order, data_order, metadata), "writing " + path));
  ASSIGN_OR_RETURN(const std::unique_ptr<AtomicFileWriter> file, AtomicFileWriter::Open(path));
  char header_size[8];
  const uint64_t size = header.size();
  std::memcpy(header_size, &size, 8);
  RETURN_IF_ERROR(file->Append(absl::string_view(header_size, 8)));
  RETURN_IF_ERROR(file->Append(header));
  // Streamed one tensor at a time: no host copy of the whole file (a GPU tensor is
  // copied to the host alone; a contiguous CPU tensor is written from its memory).
  for (const NamedTensor* named : data_order) {
    const at::Tensor host = named->second.to(at::kCPU).contiguous();
    if (host.nbytes() > 0) {
      RETURN_IF_ERROR(file->Append(absl::string_view(static_cast<const char*>(host.data_ptr()), host.nbytes())));
    }
  }
  return file->Commit();
}

}  // namespace rollout::models
