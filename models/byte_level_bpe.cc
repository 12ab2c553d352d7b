#include "models/byte_level_bpe.h"

#include <array>
#include <queue>

#include "absl/strings/str_cat.h"
#include "models/unicode.h"

namespace rollout::models {
namespace {

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves, the other
// 68 bytes for U+0100 upwards in byte order.
struct ByteLevelTables {
  std::array<char32_t, 256> byte_to_char;
  std::array<int16_t, 512> char_to_byte;  // -1: not a mapped character

  ByteLevelTables() {
    char_to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      byte_to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      char_to_byte[byte_to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables* tables = new ByteLevelTables();
  return *tables;
}

}  // namespace

std::string BytesToByteLevel(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char byte : bytes) AppendUtf8(Tables().byte_to_char[static_cast<unsigned char>(byte)], &out);
  return out;
}

std::string ByteLevelToBytes(absl::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t pos = 0; pos < token.size();) {
    const DecodedChar decoded = DecodeUtf8(token, pos);
    const char32_t c = decoded.code_point;
    if (c >= Tables().char_to_byte.size() || Tables().char_to_byte[c] < 0) {
      return std::string(token);
    }
    out.push_back(static_cast<char>(Tables().char_to_byte[c]));
    pos += decoded.length;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ByteLevelBpe>> ByteLevelBpe::Create(BpeModelSpec spec) {
  std::unique_ptr<ByteLevelBpe> bpe(new ByteLevelBpe());
  bpe->vocab_ = std::move(spec.vocab);
  bpe->ignore_merges_ = spec.ignore_merges;
  for (const auto& [token, id] : bpe->vocab_) {
    if (id < 0)
      return absl::InvalidArgumentError(absl::StrCat("negative id ", id, " for '", token, "'"));
    if (static_cast<size_t>(id) >= bpe->id_to_token_.size()) bpe->id_to_token_.resize(id + 1);
    bpe->id_to_token_[id] = token;
  }
  for (int b = 0; b < 256; ++b) {
    bpe->byte_ids_[b] = bpe->TokenToId(BytesToByteLevel(std::string(1, static_cast<char>(b))));
  }
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    const int32_t left_id = bpe->TokenToId(left);
    const int32_t right_id = bpe->TokenToId(right);
    const int32_t merged_id = bpe->TokenToId(left + right);
    if (left_id < 0 || right_id < 0 || merged_id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("merge ", rank, " '", left, " ", right,
                       "' uses or makes a token missing from the vocab ('",
                       left_id < 0    ? left
                       : right_id < 0 ? right
                                      : left + right,
                       "')"));
    }
    bpe->merges_[PairKey(left_id, right_id)] = {static_cast<uint32_t>(rank), merged_id};
  }
  return bpe;
}

int32_t ByteLevelBpe::TokenToId(absl::string_view token) const {
  auto it = vocab_.find(std::string(token));
  return it == vocab_.end() ? -1 : it->second;
}

void ByteLevelBpe::EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const {
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(std::string(word));
    if (it != cache_.end()) {
      ids->insert(ids->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> word_ids;
  if (ignore_merges_) {
    if (int32_t id = TokenToId(BytesToByteLevel(word)); id >= 0) word_ids.push_back(id);
  }
  if (word_ids.empty()) Merge(word, &word_ids);
  ids->insert(ids->end(), word_ids.begin(), word_ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(word_ids));
  }
}

// tokenizers' Word::merge_all: a min-heap of candidate merges by (rank, position);
// entries made stale by earlier merges are skipped when popped.
void ByteLevelBpe::Merge(absl::string_view word, std::vector<int32_t>* ids) const {
  struct Symbol {
    int32_t id;
    int prev, next;
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (char byte : word) {
    const int32_t id = byte_ids_[static_cast<unsigned char>(byte)];
    if (id < 0) continue;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, -1, true});
    if (index > 0) symbols[index - 1].next = index;
  }
  struct Candidate {
    uint32_t rank;
    int pos;
    int32_t new_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto push_pair = [&](int pos) {
    if (pos < 0 || symbols[pos].next < 0) return;
    auto it = merges_.find(PairKey(symbols[pos].id, symbols[symbols[pos].next].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.id});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) push_pair(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    auto it = merges_.find(PairKey(left.id, symbols[left.next].id));
    if (it == merges_.end() || it->second.id != top.new_id) continue;
    Symbol& right = symbols[left.next];
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    push_pair(left.prev);
    push_pair(top.pos);
  }
  for (const Symbol& symbol : symbols) {
    if (symbol.alive) ids->push_back(symbol.id);
  }
}

}  // namespace rollout::models
