#include "models/hf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kFixture = std::string(ROLLOUT_TEST_DATA_DIR) + "/tiny-qwen2";

// Qwen2.5-0.5B-Instruct's config.json as transformers 4 writes it.
constexpr char kQwen2V4[] = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu",
  "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 21, "model_type": "qwen2",
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936})";

// Llama-3.2-1B-Instruct's config.json (transformers 4).
constexpr char kLlama3V4[] = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 64,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
  "intermediate_size": 8192, "max_position_embeddings": 131072, "mlp_bias": false,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16,
  "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256})";

// The same model as transformers 5 writes it.
constexpr char kLlama3V5[] = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 128000,
  "dtype": "bfloat16", "eos_token_id": [128001, 128008, 128009], "head_dim": 64,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pad_token_id": null, "rms_norm_eps": 1e-05,
  "rope_parameters": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192, "rope_theta": 500000.0,
                      "rope_type": "llama3"},
  "tie_word_embeddings": true, "transformers_version": "5.0.0", "vocab_size": 128256})";

// Qwen3-0.6B's config.json (transformers 4.51).
constexpr char kQwen3V4[] = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// A small valid llama config; `overrides` (key: raw JSON value) replace or add keys.
std::string Llama(const std::map<std::string, std::string>& overrides = {}) {
  std::map<std::string, std::string> fields = {
      {"model_type", R"("llama")"},      {"vocab_size", "100"},      {"hidden_size", "64"},
      {"intermediate_size", "128"},      {"num_hidden_layers", "2"}, {"num_attention_heads", "4"},
      {"max_position_embeddings", "256"}};
  for (const auto& [key, value] : overrides) fields[key] = value;
  std::string json = "{";
  for (const auto& [key, value] : fields) {
    json += (json.size() > 1 ? ", \"" : "\"") + key + "\": " + value;
  }
  return json + "}";
}

void ExpectSameConfig(const TransformerConfig& a, const TransformerConfig& b) {
  EXPECT_EQ(a.model_type, b.model_type);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_hidden_layers, b.num_hidden_layers);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.rope_scaling.type, b.rope_scaling.type);
  EXPECT_EQ(a.rope_scaling.factor, b.rope_scaling.factor);
  EXPECT_EQ(a.rope_scaling.low_freq_factor, b.rope_scaling.low_freq_factor);
  EXPECT_EQ(a.rope_scaling.high_freq_factor, b.rope_scaling.high_freq_factor);
  EXPECT_EQ(a.rope_scaling.original_max_position_embeddings,
            b.rope_scaling.original_max_position_embeddings);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.mlp_bias, b.mlp_bias);
  EXPECT_EQ(a.hidden_act, b.hidden_act);
  EXPECT_EQ(a.torch_dtype, b.torch_dtype);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.pad_token_id, b.pad_token_id);
  EXPECT_EQ(a.eos_token_ids, b.eos_token_ids);
}

void ExpectInvalid(const std::string& json, const std::string& key) {
  SCOPED_TRACE(json);
  const absl::Status status = ParseHfConfig(json, "models/x/config.json").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("models/x/config.json"));
  EXPECT_THAT(status.message(), HasSubstr(key));
}

TEST(HfConfig, TinyQwen2FixtureLoadsToItsDocumentedValues) {
  absl::StatusOr<TransformerConfig> config = LoadHfConfig(kFixture);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->model_type, "qwen2");
  EXPECT_EQ(config->vocab_size, 514);
  EXPECT_EQ(config->hidden_size, 64);
  EXPECT_EQ(config->num_hidden_layers, 2);
  EXPECT_EQ(config->num_attention_heads, 4);
  EXPECT_EQ(config->num_key_value_heads, 2);
  EXPECT_EQ(config->intermediate_size, 160);
  EXPECT_EQ(config->head_dim, 16);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_TRUE(config->attention_bias);
  EXPECT_THAT(config->eos_token_ids, ElementsAre(2));
  EXPECT_EQ(config->pad_token_id, 0);
  EXPECT_EQ(config->bos_token_id, -1);
  EXPECT_EQ(config->rope_theta, 10000.0);
  EXPECT_EQ(config->rope_scaling.type, "default");
  EXPECT_EQ(config->rms_norm_eps, 1e-6);
  EXPECT_EQ(config->torch_dtype, "float32");
}

TEST(HfConfig, Transformers4QwenSpellingParses) {
  const TransformerConfig c = ParseHfConfig(kQwen2V4, "qwen").value();
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.rope_theta, 1000000.0);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FALSE(c.mlp_bias);
  EXPECT_EQ(c.bos_token_id, 151643);
  EXPECT_EQ(c.pad_token_id, -1);
  EXPECT_THAT(c.eos_token_ids, ElementsAre(151645));
}

TEST(HfConfig, Qwen3HasQkNormAndTheBiasItsConfigSays) {
  const TransformerConfig c = ParseHfConfig(kQwen3V4, "qwen3").value();
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FALSE(c.mlp_bias);
  EXPECT_EQ(c.head_dim, 128);  // given: 16 heads of 128 against a hidden size of 1024
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.rope_theta, 1000000.0);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_THAT(c.eos_token_ids, ElementsAre(151645));
  std::string biased = kQwen3V4;
  biased.replace(biased.find(R"("attention_bias": false)"), 23, R"("attention_bias": true)");
  EXPECT_TRUE(ParseHfConfig(biased, "biased")->attention_bias);
  EXPECT_FALSE(ParseHfConfig(kQwen2V4, "qwen2")->qk_norm);
  EXPECT_FALSE(ParseHfConfig(kLlama3V4, "llama")->qk_norm);
}

TEST(HfConfig, Llama3ScalingReadsTheSameFromBothSpellings) {
  const TransformerConfig v4 = ParseHfConfig(kLlama3V4, "v4").value();
  EXPECT_EQ(v4.rope_scaling.type, "llama3");
  EXPECT_EQ(v4.rope_scaling.factor, 32.0);
  EXPECT_EQ(v4.rope_scaling.low_freq_factor, 1.0);
  EXPECT_EQ(v4.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(v4.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(v4.rope_theta, 500000.0);
  EXPECT_EQ(v4.head_dim, 64);
  EXPECT_EQ(v4.rms_norm_eps, 1e-5);
  EXPECT_FALSE(v4.attention_bias);
  EXPECT_THAT(v4.eos_token_ids, ElementsAre(128001, 128008, 128009));
  ExpectSameConfig(ParseHfConfig(kLlama3V5, "v5").value(), v4);
}

TEST(HfConfig, OlderSpellingsAndDefaultsAreRead) {
  const TransformerConfig c =
      ParseHfConfig(Llama({{"rope_scaling", R"({"type": "llama3", "factor": 8.0,
                                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192})"},
                           {"attention_bias", "true"},
                           {"eos_token_id", "null"},
                           {"bos_token_id", "null"}}),
                    "old")
          .value();
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_THAT(c.eos_token_ids, IsEmpty());
  EXPECT_EQ(c.bos_token_id, -1);
  EXPECT_EQ(c.num_key_value_heads, 4);  // defaults to num_attention_heads
  EXPECT_EQ(c.head_dim, 16);            // hidden_size / num_attention_heads
  EXPECT_EQ(c.torch_dtype, "float32");
  EXPECT_EQ(c.rope_theta, 10000.0);
}

TEST(HfConfig, ErrorsNameTheKeyAndOrigin) {
  ExpectInvalid(R"({"model_type": "gpt2"})", "model_type");
  ExpectInvalid(R"({"vocab_size": 3})", "model_type");
  ExpectInvalid(R"({"model_type": "llama", "vocab_size": 100})", "hidden_size");
  ExpectInvalid(Llama({{"vocab_size", "0"}}), "vocab_size");
  ExpectInvalid(Llama({{"num_attention_heads", "5"}}), "num_attention_heads");
  ExpectInvalid(Llama({{"num_key_value_heads", "3"}}), "num_key_value_heads");
  ExpectInvalid(Llama({{"hidden_act", R"("gelu")"}}), "hidden_act");
  ExpectInvalid(Llama({{"rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})"}}), "rope_type");
  ExpectInvalid(Llama({{"rope_scaling", R"({"rope_type": "llama3", "factor": 4.0})"}}),
                "rope_scaling.low_freq_factor");
  ExpectInvalid(Llama({{"rope_parameters", R"({"rope_type": "linear", "rope_theta": 1.0})"}}),
                "rope_parameters.rope_type");
  ExpectInvalid(Llama({{"torch_dtype", R"("float64")"}}), "torch_dtype");
  ExpectInvalid(Llama({{"dtype", R"("int8")"}}), "dtype");
  ExpectInvalid(Llama({{"bos_token_id", R"("<s>")"}}), "bos_token_id");
  ExpectInvalid(Llama({{"eos_token_id", "[1, -2]"}}), "eos_token_id");
  ExpectInvalid(Llama({{"tie_word_embeddings", R"("yes")"}}), "tie_word_embeddings");
  ExpectInvalid(Llama({{"hidden_size", "64.5"}}), "hidden_size");
  ExpectInvalid(R"({"model_type": "llama",)", "JSON");
  std::string sliding = kQwen2V4;
  sliding.replace(sliding.find(R"("use_sliding_window": false)"), 27,
                  R"("use_sliding_window": true)");
  ExpectInvalid(sliding, "use_sliding_window");
  std::string qwen3_sliding = kQwen3V4;
  qwen3_sliding.replace(qwen3_sliding.find(R"("use_sliding_window": false)"), 27,
                        R"("use_sliding_window": true)");
  ExpectInvalid(qwen3_sliding, "use_sliding_window");
}

TEST(HfConfig, ExplicitHeadDimNeedNotDivideHiddenSize) {
  const TransformerConfig c =
      ParseHfConfig(
          Llama({{"num_attention_heads", "6"}, {"num_key_value_heads", "2"}, {"head_dim", "32"}}),
          "x")
          .value();
  EXPECT_EQ(c.head_dim, 32);
}

TEST(HfConfig, GenerationConfigTokenIdsTakePrecedence) {
  TempDir dir;
  dir.Write("config.json", kLlama3V4);
  dir.Write("generation_config.json",
            R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009], "pad_token_id": null,
                "do_sample": true, "temperature": 0.6})");
  const TransformerConfig c = LoadHfConfig(dir.path()).value();
  EXPECT_THAT(c.eos_token_ids, ElementsAre(128001, 128009));
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.pad_token_id, -1);

  dir.Write("generation_config.json", R"({"eos_token_id": 7})");
  EXPECT_THAT(LoadHfConfig(dir.path())->eos_token_ids, ElementsAre(7));

  dir.Write("generation_config.json", R"({"eos_token_id": "x"})");
  const absl::Status status = LoadHfConfig(dir.path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("generation_config.json"));
}

TEST(HfConfig, MissingConfigIsNotFound) {
  TempDir dir;
  EXPECT_EQ(LoadHfConfig(dir.path()).status().code(), absl::StatusCode::kNotFound);
}

TEST(HfConfig, WrittenConfigParsesBackToTheSameConfig) {
  for (const char* text : {kQwen2V4, kQwen3V4, kLlama3V4, kLlama3V5}) {
    const TransformerConfig original = ParseHfConfig(text, "original").value();
    const std::string written = HfConfigJson(original);
    SCOPED_TRACE(written);
    ExpectSameConfig(ParseHfConfig(written, "written").value(), original);
  }
  const TransformerConfig odd = ParseHfConfig(Llama({{"mlp_bias", "true"},
                                                     {"pad_token_id", "3"},
                                                     {"rms_norm_eps", "1.25e-7"},
                                                     {"rope_theta", "12345.678"},
                                                     {"torch_dtype", R"("float16")"}}),
                                              "odd")
                                    .value();
  ExpectSameConfig(ParseHfConfig(HfConfigJson(odd), "written").value(), odd);
}

TEST(HfConfig, WrittenConfigHasTheKeysTransformersExpects) {
  const std::string qwen = HfConfigJson(ParseHfConfig(kQwen2V4, "q").value());
  EXPECT_THAT(qwen, HasSubstr(R"("architectures": [
    "Qwen2ForCausalLM"
  ])"));
  EXPECT_THAT(qwen, HasSubstr(R"("use_sliding_window": false)"));
  EXPECT_THAT(qwen, HasSubstr(R"("sliding_window": null)"));
  EXPECT_THAT(qwen, HasSubstr(R"("max_window_layers": 24)"));
  EXPECT_THAT(qwen, HasSubstr(R"("rope_scaling": null)"));
  EXPECT_THAT(qwen, HasSubstr(R"("transformers_version": "4.46.0")"));
  const std::string qwen3 = HfConfigJson(ParseHfConfig(kQwen3V4, "q3").value());
  EXPECT_THAT(qwen3, HasSubstr(R"("architectures": [
    "Qwen3ForCausalLM"
  ])"));
  EXPECT_THAT(qwen3, HasSubstr(R"("attention_bias": false)"));
  EXPECT_THAT(qwen3, HasSubstr(R"("use_sliding_window": false)"));
  EXPECT_THAT(qwen3, HasSubstr(R"("head_dim": 128)"));
  const std::string llama = HfConfigJson(ParseHfConfig(kLlama3V4, "l").value());
  EXPECT_THAT(llama, HasSubstr(R"("rope_type": "llama3")"));
  EXPECT_THAT(llama, HasSubstr(R"("attention_bias": false)"));
  EXPECT_THAT(llama, HasSubstr(R"("torch_dtype": "bfloat16")"));
}

TEST(HfConfig, GenerationConfigRoundTripsThroughADirectory) {
  TempDir dir;
  TransformerConfig config = ParseHfConfig(kLlama3V4, "l").value();
  config.pad_token_id = 128004;
  dir.Write("config.json", HfConfigJson(config));
  dir.Write("generation_config.json", HfGenerationConfigJson(config));
  ExpectSameConfig(LoadHfConfig(dir.path()).value(), config);
  config.eos_token_ids = {128009};
  dir.Write("generation_config.json", HfGenerationConfigJson(config));
  EXPECT_THAT(LoadHfConfig(dir.path())->eos_token_ids, ElementsAre(128009));
}

}  // namespace
}  // namespace rollout::models
