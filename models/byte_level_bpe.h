// Byte-level BPE (GPT-2, Qwen2, Llama 3): the GPT-2 mapping between bytes and
// printable characters, and the merge model of Hugging Face tokenizers' `BPE`.
//
// Vocabulary entries and merges are spelled in mapped characters ("Ġthe" is " the").
// A word is encoded by starting from one symbol per byte and repeatedly applying the
// merge of lowest rank among adjacent pairs (leftmost first on ties), exactly as
// tokenizers' `Word::merge_all` does.
//
// Thread-safety: a ByteLevelBpe is immutable after construction except for its word
// cache, which is guarded; EncodeWord may be called from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::models {

// "hello world" -> "helloĠworld": each byte as its GPT-2 printable character (UTF-8).
std::string BytesToByteLevel(absl::string_view bytes);

// The inverse for one token string: the bytes its characters stand for. A string with
// a character outside the mapping decodes to its own UTF-8 bytes unchanged (what
// tokenizers' ByteLevel decoder does, e.g. for added tokens containing a space).
std::string ByteLevelToBytes(absl::string_view token);

struct BpeModelSpec {
  // Token string (mapped characters) -> id.
  std::unordered_map<std::string, int32_t> vocab;
  // In rank order: merges[0] is applied first.
  std::vector<std::pair<std::string, std::string>> merges;
  // A word found whole in the vocabulary is one token, merges or not (Llama 3).
  bool ignore_merges = false;
};

class ByteLevelBpe {
 public:
  // InvalidArgument when a merge names a token missing from the vocabulary or makes
  // one that is missing (the message gives the merge's rank and text).
  static absl::StatusOr<std::unique_ptr<ByteLevelBpe>> Create(BpeModelSpec spec);

  // Appends the ids of one pre-tokenized word, given as raw bytes. Bytes whose
  // character is not in the vocabulary are dropped (tokenizers' BPE without an unk
  // token); byte-level vocabularies hold all 256.
  void EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const;

  // The id of a token string, or -1.
  int32_t TokenToId(absl::string_view token) const;
  // Token string of every id in the vocabulary (index = id; "" for gaps).
  const std::vector<std::string>& id_to_token() const { return id_to_token_; }

  // Words cached at most; the cache is emptied when it fills up.
  static constexpr size_t kCacheCapacity = 50000;
  // Longer words are encoded every time, never cached.
  static constexpr size_t kMaxCachedWordBytes = 256;

 private:
  struct MergeResult {
    uint32_t rank;
    int32_t id;
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  ByteLevelBpe() = default;
  void Merge(absl::string_view word, std::vector<int32_t>* ids) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::unordered_map<uint64_t, MergeResult> merges_;
  int32_t byte_ids_[256];  // id of each single byte's token, -1 when absent
  bool ignore_merges_ = false;

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace rollout::models
