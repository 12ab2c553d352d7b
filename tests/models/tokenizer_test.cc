// Tokenizer against the tiny Qwen2 fixture, whose expected ids, texts and chat
// prompts were produced by Hugging Face tokenizers/transformers
// (tests/data/tiny-qwen2/tokenizer_expect.json).
#include "models/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

std::unique_ptr<Tokenizer> MustLoad(const std::string& dir, const TokenizerOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load(dir, options);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *std::move(tokenizer) : nullptr;
}

json ReadJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return json::parse(text.value_or("{}"));
}

json Expectations() { return ReadJson(std::string(kFixture) + "/tokenizer_expect.json"); }

// A copy of the fixture's tokenizer.json with `edit` applied, alone in a temp dir.
std::string WriteEditedTokenizer(const testing::TempDir& dir, void (*edit)(json*)) {
  json tokenizer = ReadJson(std::string(kFixture) + "/tokenizer.json");
  edit(&tokenizer);
  dir.Write("tokenizer.json", tokenizer.dump());
  return dir.path();
}

absl::Status LoadStatus(void (*edit)(json*)) {
  testing::TempDir dir("tokenizer");
  return Tokenizer::Load(WriteEditedTokenizer(dir, edit)).status();
}

TEST(TokenizerParity, EncodesEveryFixtureTextExactly) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  const json expect = Expectations();
  ASSERT_FALSE(expect.at("encode").empty());
  for (const json& item : expect.at("encode")) {
    EXPECT_EQ(tokenizer->Encode(item.at("text").get<std::string>()),
              item.at("ids").get<std::vector<int32_t>>())
        << item.at("text");
  }
}

TEST(TokenizerParity, DecodesEveryFixtureIdListExactly) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  const json expect = Expectations();
  ASSERT_FALSE(expect.at("decode").empty());
  for (const json& item : expect.at("decode")) {
    EXPECT_EQ(tokenizer->Decode(item.at("ids").get<std::vector<int32_t>>()),
              item.at("text").get<std::string>());
  }
}

TEST(TokenizerParity, RendersAndEncodesEveryFixtureChatExactly) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  const json expect = Expectations();
  ASSERT_FALSE(expect.at("chat").empty());
  for (const json& item : expect.at("chat")) {
    std::vector<ChatMessage> messages;
    for (const json& m : item.at("messages")) {
      messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
    }
    absl::StatusOr<std::string> rendered = tokenizer->RenderChat(messages);
    ASSERT_TRUE(rendered.ok()) << rendered.status();
    EXPECT_EQ(*rendered, item.at("rendered").get<std::string>());
    absl::StatusOr<std::vector<int32_t>> ids = tokenizer->EncodeChat(messages);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, item.at("ids").get<std::vector<int32_t>>());
  }
}

TEST(Tokenizer, SpecialTokensInsideTextAreSingleIds) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_THAT(tokenizer->Encode("<|im_end|>"), ElementsAre(2));
  const std::vector<int32_t> ids = tokenizer->Encode("hi<|im_end|><|endoftext|>hi");
  const std::vector<int32_t> hi = tokenizer->Encode("hi");
  std::vector<int32_t> expected = hi;
  expected.push_back(2);
  expected.push_back(0);
  expected.insert(expected.end(), hi.begin(), hi.end());
  EXPECT_EQ(ids, expected);
  // Half a special token is plain text.
  EXPECT_THAT(tokenizer->Encode("<|im_end"), ::testing::Not(::testing::Contains(2)));
}

TEST(Tokenizer, DecodeSkipsSpecialTokensOnlyWhenAsked) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = tokenizer->Encode("<|im_start|>user\nhi<|im_end|>");
  EXPECT_EQ(tokenizer->Decode(ids), "<|im_start|>user\nhi<|im_end|>");
  EXPECT_EQ(tokenizer->Decode(ids, /*skip_special_tokens=*/true), "user\nhi");
  EXPECT_TRUE(tokenizer->IsSpecial(2));
  EXPECT_FALSE(tokenizer->IsSpecial(ids[1]));
}

TEST(Tokenizer, IdsOutsideTheVocabularyAreSkippedWhenDecoding) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> ids = tokenizer->Encode("ok");
  ids.insert(ids.begin(), -1);
  ids.push_back(tokenizer->vocab_size());
  EXPECT_EQ(tokenizer->Decode(ids), "ok");
  EXPECT_EQ(tokenizer->TokenBytes(tokenizer->vocab_size()), "");
}

TEST(Tokenizer, ExposesEosAndPadFromTheConfigFilesAndNoBos) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_THAT(tokenizer->eos_token_ids(), ElementsAre(2));  // <|im_end|>, also generation's
  EXPECT_EQ(tokenizer->pad_token_id(), 0);                  // <|endoftext|>
  EXPECT_EQ(tokenizer->bos_token_id(), std::nullopt);
  EXPECT_EQ(tokenizer->TokenToId("<|im_start|>"), 1);
  EXPECT_EQ(tokenizer->TokenToId("no such token"), -1);
  EXPECT_EQ(tokenizer->vocab_size(), 514);
}

TEST(Tokenizer, RoundTripsTextItHasNeverSeen) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  for (const char* text : {"Zebra quantum 9876 — ñandú ☃ 𝔘", "  \t\r\n  x", "'S'T'RE"}) {
    EXPECT_EQ(tokenizer->Decode(tokenizer->Encode(text)), text);
  }
  // Invalid UTF-8 is encoded byte by byte and decodes to replacement characters.
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("a\xff")), "a\xef\xbf\xbd");
}

TEST(Tokenizer, ConcurrentEncodingGivesTheSameIds) {
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(kFixture);
  ASSERT_NE(tokenizer, nullptr);
  const json expect = Expectations();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (const json& item : expect.at("encode")) {
          if (tokenizer->Encode(item.at("text").get<std::string>()) !=
              item.at("ids").get<std::vector<int32_t>>()) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
}

TEST(Tokenizer, MergesGivenAsPairsEncodeLikeMergesGivenAsStrings) {
  testing::TempDir dir("tokenizer");
  std::unique_ptr<Tokenizer> pairs = MustLoad(WriteEditedTokenizer(dir, [](json* t) {
    for (json& merge : (*t)["model"]["merges"]) {
      if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        merge = json::array({text.substr(0, text.find(' ')), text.substr(text.find(' ') + 1)});
      } else {
        merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
      }
    }
  }));
  std::unique_ptr<Tokenizer> original = MustLoad(kFixture);
  ASSERT_NE(pairs, nullptr);
  ASSERT_NE(original, nullptr);
  const std::string text = "Question: What is 185 * 125? Let's think step by step.";
  EXPECT_EQ(pairs->Encode(text), original->Encode(text));
}

TEST(Tokenizer, AddSpecialTokensAppliesThePostProcessorTemplate) {
  testing::TempDir dir("tokenizer");
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(WriteEditedTokenizer(dir, [](json* t) {
    (*t)["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
        "pair": [], "special_tokens": {
          "<|im_start|>": {"id": "<|im_start|>", "ids": [1], "tokens": ["<|im_start|>"]},
          "<|endoftext|>": {"id": "<|endoftext|>", "ids": [0], "tokens": ["<|endoftext|>"]}}})");
  }));
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> expected = {1};
  for (int32_t id : tokenizer->Encode("ok")) expected.push_back(id);
  expected.push_back(0);
  EXPECT_EQ(tokenizer->Encode("ok", /*add_special_tokens=*/true), expected);
}

TEST(Tokenizer, NfcNormalizerComposesBeforeEncoding) {
  testing::TempDir dir("tokenizer");
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(WriteEditedTokenizer(dir, [](json* t) {
    (*t)["normalizer"] = {{"type", "NFC"}};
  }));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Encode("cafe\xcc\x81"), tokenizer->Encode("caf\xc3\xa9"));
}

// The fixture with tokens "12", "123" (merged from digits) and "xyz" (no merges).
void AddDigitAndWholeWordTokens(json* t) {
  (*t)["model"]["vocab"]["12"] = 514;
  (*t)["model"]["vocab"]["123"] = 515;
  (*t)["model"]["vocab"]["xyz"] = 516;
  (*t)["model"]["merges"].push_back(json::array({"1", "2"}));
  (*t)["model"]["merges"].push_back(json::array({"12", "3"}));
}

TEST(Tokenizer, Llama3PatternKeepsDigitsInGroupsOfThree) {
  testing::TempDir dir("tokenizer");
  std::unique_ptr<Tokenizer> qwen2 =
      MustLoad(WriteEditedTokenizer(dir, AddDigitAndWholeWordTokens));
  ASSERT_NE(qwen2, nullptr);
  EXPECT_EQ(qwen2->Encode("12345").size(), 5u);  // one word per digit: nothing to merge
  std::unique_ptr<Tokenizer> llama3 = MustLoad(WriteEditedTokenizer(dir, [](json* t) {
    AddDigitAndWholeWordTokens(t);
    (*t)["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] =
        SplitPatternRegex(SplitPattern::kLlama3);
  }));
  ASSERT_NE(llama3, nullptr);
  EXPECT_THAT(llama3->Encode("12345"),
              ElementsAre(515, llama3->TokenToId("4"), llama3->TokenToId("5")));
}

TEST(Tokenizer, IgnoreMergesTakesAWholeWordFoundInTheVocabulary) {
  testing::TempDir dir("tokenizer");
  std::unique_ptr<Tokenizer> merging =
      MustLoad(WriteEditedTokenizer(dir, AddDigitAndWholeWordTokens));
  ASSERT_NE(merging, nullptr);
  EXPECT_EQ(merging->Encode("xyz").size(), 3u);
  std::unique_ptr<Tokenizer> whole = MustLoad(WriteEditedTokenizer(dir, [](json* t) {
    AddDigitAndWholeWordTokens(t);
    (*t)["model"]["ignore_merges"] = true;
  }));
  ASSERT_NE(whole, nullptr);
  EXPECT_THAT(whole->Encode("xyz"), ElementsAre(516));
}

TEST(TokenizerLoad, UnsupportedComponentsAreNamed) {
  absl::Status normalizer = LoadStatus([](json* t) { (*t)["normalizer"] = {{"type", "NFKC"}}; });
  EXPECT_EQ(normalizer.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(normalizer.message(), HasSubstr("unsupported normalizer 'NFKC'"));
  EXPECT_THAT(normalizer.message(), HasSubstr("tokenizer.json"));

  absl::Status pattern = LoadStatus(
      [](json* t) { (*t)["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+"; });
  EXPECT_THAT(pattern.message(), HasSubstr("unsupported pre-tokenizer regex '\\w+'"));

  absl::Status pre_tokenizer = LoadStatus([](json* t) {
    (*t)["pre_tokenizer"] = {{"type", "Whitespace"}};
  });
  EXPECT_THAT(pre_tokenizer.message(), HasSubstr("unsupported pre-tokenizer 'Whitespace'"));

  absl::Status model = LoadStatus([](json* t) { (*t)["model"]["type"] = "WordPiece"; });
  EXPECT_THAT(model.message(), HasSubstr("unsupported model type 'WordPiece'"));

  absl::Status decoder = LoadStatus([](json* t) { (*t)["decoder"] = {{"type", "Metaspace"}}; });
  EXPECT_THAT(decoder.message(), HasSubstr("unsupported decoder 'Metaspace'"));
}

TEST(TokenizerLoad, MalformedOrMissingFilesAreErrorsNamingThem) {
  testing::TempDir dir("tokenizer");
  EXPECT_EQ(Tokenizer::Load(dir.path()).status().code(), absl::StatusCode::kNotFound);
  dir.Write("tokenizer.json", "{not json");
  absl::Status malformed = Tokenizer::Load(dir.path()).status();
  EXPECT_EQ(malformed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(malformed.message(), HasSubstr("tokenizer.json"));

  absl::Status bad_merge = LoadStatus([](json* t) { (*t)["model"]["merges"][0] = "zz qq"; });
  EXPECT_THAT(bad_merge.message(), HasSubstr("merge 0 'zz qq'"));
}

TEST(TokenizerLoad, SpecialTokenMissingFromTheVocabularyIsAnError) {
  testing::TempDir dir("tokenizer");
  WriteEditedTokenizer(dir, [](json*) {});
  dir.Write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  absl::Status status = Tokenizer::Load(dir.path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      status.message(),
      HasSubstr("tokenizer_config.json's eos_token '</s>' is not in the tokenizer's vocabulary"));
}

TEST(TokenizerChat, WithoutATemplateAFormatMustBeGiven) {
  testing::TempDir dir("tokenizer");
  WriteEditedTokenizer(dir, [](json*) {});
  std::unique_ptr<Tokenizer> bare = MustLoad(dir.path());
  ASSERT_NE(bare, nullptr);
  absl::StatusOr<std::string> refused = bare->RenderChat({{"user", "Hi"}});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("explicit prompt format"));

  TokenizerOptions options;
  options.chat_format = "llama3";
  std::unique_ptr<Tokenizer> llama = MustLoad(dir.path(), options);
  ASSERT_NE(llama, nullptr);
  EXPECT_EQ(llama->RenderChat({{"user", "Hi"}}).value_or(""),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(TokenizerChat, TemplateFromTokenizerConfigListIsRecognised) {
  testing::TempDir dir("tokenizer");
  WriteEditedTokenizer(dir, [](json*) {});
  dir.Write(
      "tokenizer_config.json",
      json{{"chat_template",
            json::array({{{"name", "tool_use"}, {"template", "[INST]"}},
                         {{"name", "default"}, {"template", "<|im_start|>{{ m }}<|im_end|>"}}})}}
          .dump());
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(dir.path());
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->RenderChat({{"user", "Hi"}}).value_or(""),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

  dir.Write("chat_template.jinja", "[INST] {{ messages }} [/INST]");
  std::unique_ptr<Tokenizer> unknown = MustLoad(dir.path());
  ASSERT_NE(unknown, nullptr);
  absl::StatusOr<std::string> refused = unknown->RenderChat({{"user", "Hi"}});
  EXPECT_THAT(refused.status().message(), HasSubstr("chat_template.jinja"));
  EXPECT_THAT(refused.status().message(), HasSubstr("unknown chat template"));
}

// TokenizerOptions::chat_template (verl's custom_chat_template) replaces the model's: a
// Jinja template recognised as the model's would be, or a format's name; one not
// recognised fails loading instead of failing each chat prompt later.
TEST(TokenizerChat, ACustomTemplateReplacesTheModels) {
  testing::TempDir dir("tokenizer");
  WriteEditedTokenizer(dir, [](json*) {});
  dir.Write("chat_template.jinja", "[INST] {{ messages }} [/INST]");
  TokenizerOptions options;
  options.chat_template = ReadFile("tests/data/llama3.2_chat_template.jinja").value();
  options.date_string = "05 Mar 2026";
  std::unique_ptr<Tokenizer> llama = MustLoad(dir.path(), options);
  ASSERT_NE(llama, nullptr);
  EXPECT_THAT(llama->RenderChat({{"user", "Hi"}}).value_or(""),
              HasSubstr("\nToday Date: 05 Mar 2026\n\n<|eot_id|><|start_header_id|>user"));
  options.chat_template = "chatml";
  EXPECT_EQ(MustLoad(dir.path(), options)->RenderChat({{"user", "Hi"}}).value_or(""),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  options.chat_template = "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{% endfor %}";
  absl::Status refused = Tokenizer::Load(dir.path(), options).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("custom chat template: "));
  EXPECT_THAT(refused.message(), HasSubstr("actor.model.custom_chat_template in a recipe"));
}

// TokenizerOptions' enable_thinking and date_string reach the chat template
// (data.apply_chat_template_kwargs).
TEST(TokenizerChat, ChatTemplateKwargsReachTheTemplate) {
  testing::TempDir dir("tokenizer");
  WriteEditedTokenizer(dir, [](json*) {});
  TokenizerOptions options;
  options.chat_format = "qwen3";
  options.enable_thinking = false;
  std::unique_ptr<Tokenizer> tokenizer = MustLoad(dir.path(), options);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->RenderChat({{"user", "Hi"}}).value_or(""),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  options.enable_thinking = true;
  EXPECT_EQ(MustLoad(dir.path(), options)->RenderChat({{"user", "Hi"}}).value_or(""),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  options.chat_format = "llama3.1";
  options.date_string = "05 Mar 2026";
  EXPECT_THAT(MustLoad(dir.path(), options)->RenderChat({{"user", "Hi"}}).value_or(""),
              HasSubstr("\nToday Date: 05 Mar 2026\n\n<|eot_id|>"));
}

}  // namespace
}  // namespace rollout::models
