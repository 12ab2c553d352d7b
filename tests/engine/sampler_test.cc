// engine/sampler.h on CPU. The noise is a fixed hash of (seed, step, token), so every
// statistical check below is deterministic: a tolerance derived from the binomial
// standard deviation either holds for these (seed, step) pairs or fails, the same way
// on every run.
#include "engine/sampler.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "engine/sampling_noise.h"

namespace rollout::engine {
namespace {

// One row's sampling parameters, with chained setters: Row().TopK(5).Seed(3).
struct Row {
  float temperature = 1;
  int64_t top_k = 0;
  float top_p = 1;
  float min_p = 0;
  int64_t seed = 0;
  int64_t step = 0;

  Row& Temperature(float v) {
    temperature = v;
    return *this;
  }
  Row& TopK(int64_t v) {
    top_k = v;
    return *this;
  }
  Row& TopP(float v) {
    top_p = v;
    return *this;
  }
  Row& MinP(float v) {
    min_p = v;
    return *this;
  }
  Row& Seed(int64_t v) {
    seed = v;
    return *this;
  }
  Row& Step(int64_t v) {
    step = v;
    return *this;
  }
};

SamplingTensors Params(const std::vector<Row>& rows) {
  std::vector<float> temperature, top_p, min_p;
  std::vector<int64_t> top_k, seed, step;
  SamplingTensors p;
  for (const Row& r : rows) {
    temperature.push_back(r.temperature);
    top_k.push_back(r.top_k);
    top_p.push_back(r.top_p);
    min_p.push_back(r.min_p);
    seed.push_back(r.seed);
    step.push_back(r.step);
    p.any_filter = p.any_filter || r.top_k > 0 || r.top_p < 1 || r.min_p > 0;
  }
  const auto n = static_cast<int64_t>(rows.size());
  p.temperature = at::tensor(temperature, at::kFloat).reshape({n});
  p.top_k = at::tensor(top_k, at::kLong).reshape({n});
  p.top_p = at::tensor(top_p, at::kFloat).reshape({n});
  p.min_p = at::tensor(min_p, at::kFloat).reshape({n});
  p.seed = at::tensor(seed, at::kLong).reshape({n});
  p.step = at::tensor(step, at::kLong).reshape({n});
  return p;
}

// n draws from one row of logits [V], each its own (seed, step) pair.
at::Tensor Draw(const at::Tensor& row, Row options, int64_t n) {
  std::vector<Row> rows(n, options);
  for (int64_t i = 0; i < n; ++i) {
    rows[i].seed = 1000 + i / 200;
    rows[i].step = i % 200;
  }
  return SampleTokens(row.unsqueeze(0).expand({n, row.size(0)}), Params(rows)).tokens;
}

std::set<int64_t> Drawn(const at::Tensor& tokens) {
  std::set<int64_t> out;
  for (int64_t i = 0; i < tokens.size(0); ++i) out.insert(tokens[i].item<int64_t>());
  return out;
}

// Logits whose softmax is `probs`.
at::Tensor LogitsOf(const std::vector<float>& probs) {
  return at::tensor(probs, at::kFloat).log();
}

// Every count of `tokens` within 4.5 binomial standard deviations of n * want.
void ExpectFrequencies(const at::Tensor& tokens, const at::Tensor& want) {
  const int64_t n = tokens.size(0);
  const at::Tensor counts = at::bincount(tokens, {}, want.size(0)).to(at::kDouble);
  for (int64_t j = 0; j < want.size(0); ++j) {
    const double p = want[j].item<double>();
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(counts[j].item<double>(), n * p, 4.5 * sigma + 1e-9) << "token " << j;
  }
}

TEST(SamplingNoise, UniformIsStrictlyInsideTheUnitIntervalAndUniform) {
  double sum = 0;
  float lowest = 1, highest = 0;
  const int n = 1 << 20;
  for (int j = 0; j < n; ++j) {
    const float u = SamplingUniform(7, 3, static_cast<uint32_t>(j));
    lowest = std::min(lowest, u);
    highest = std::max(highest, u);
    sum += u;
  }
  EXPECT_GT(lowest, 0.f);
  EXPECT_LT(highest, 1.f);
  EXPECT_LT(lowest, 1e-5f);
  EXPECT_GT(highest, 1 - 1e-5f);
  // Mean of n uniforms: standard deviation 1 / sqrt(12 n).
  EXPECT_NEAR(sum / n, 0.5, 4.5 / std::sqrt(12.0 * n));
}

// The two tokens of a pair share one hash (SamplingPairBits): each half is uniform on
// its own, and the two are uncorrelated (E[u v] = 1/4, standard deviation of the mean
// of n products sqrt(7/144 / n)).
TEST(SamplingNoise, TheTwoTokensOfAPairAreUniformAndUncorrelated) {
  const int pairs = 1 << 19;
  double even_sum = 0, odd_sum = 0, product_sum = 0;
  for (int m = 0; m < pairs; ++m) {
    const float even = SamplingUniform(5, 9, static_cast<uint32_t>(2 * m));
    const float odd = SamplingUniform(5, 9, static_cast<uint32_t>(2 * m + 1));
    even_sum += even;
    odd_sum += odd;
    product_sum += double(even) * odd;
  }
  const double mean_sigma = 1 / std::sqrt(12.0 * pairs);
  EXPECT_NEAR(even_sum / pairs, 0.5, 4.5 * mean_sigma);
  EXPECT_NEAR(odd_sum / pairs, 0.5, 4.5 * mean_sigma);
  EXPECT_NEAR(product_sum / pairs, 0.25, 4.5 * std::sqrt(7.0 / 144 / pairs));
}

TEST(SamplingNoise, DependsOnSeedStepAndToken) {
  const float u = SamplingUniform(1, 2, 3);
  EXPECT_EQ(u, SamplingUniform(1, 2, 3));
  EXPECT_NE(u, SamplingUniform(2, 2, 3));
  EXPECT_NE(u, SamplingUniform(1, 3, 3));
  EXPECT_NE(u, SamplingUniform(1, 2, 4));
  EXPECT_NE(SamplingUniform(1, 2, 3), SamplingUniform(2, 1, 3));
}

class GreedyTest : public ::testing::TestWithParam<c10::ScalarType> {};

TEST_P(GreedyTest, TakesTheArgmaxWithItsLogProb) {
  at::manual_seed(1);
  const at::Tensor logits = (at::randn({8, 1000}) * 3).to(GetParam());
  std::vector<Row> rows(8, Row().Temperature(0));
  for (int i = 0; i < 8; ++i) rows[i].seed = i;
  const SampledTokens out = SampleTokens(logits, Params(rows));
  const at::Tensor x = logits.to(at::kFloat);
  ASSERT_EQ(out.tokens.scalar_type(), at::kLong);
  ASSERT_EQ(out.log_probs.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(out.tokens, x.argmax(1)));
  const at::Tensor want = x.log_softmax(1).gather(1, out.tokens.unsqueeze(1)).squeeze(1);
  EXPECT_TRUE(at::allclose(out.log_probs, want, 1e-5, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GreedyTest,
                         ::testing::Values(at::kFloat, at::kBFloat16, at::kHalf));

TEST(Sampler, TiesGoToTheLowestTokenId) {
  const at::Tensor logits = at::tensor({0.f, 1.f, 0.f, 3.f, 2.f, 3.f, 3.f}).unsqueeze(0);
  // Greedy, and filters that keep only the top token (rank 0 of a stable sort).
  for (Row options : {Row().Temperature(0), Row().TopK(1), Row().TopP(0.01f)}) {
    for (int64_t seed = 0; seed < 20; ++seed) {
      options.seed = seed;
      EXPECT_EQ(SampleTokens(logits, Params({options})).tokens[0].item<int64_t>(), 3);
    }
  }
}

TEST(Sampler, LogProbsAreOfTheUnfilteredTemperatureScaledDistribution) {
  at::manual_seed(2);
  const at::Tensor logits = at::randn({6, 300}) * 2;
  const std::vector<float> temperatures = {0.5f, 1.f, 1.7f, 0.f, 0.9f, 1.3f};
  for (bool filtered : {false, true}) {
    std::vector<Row> rows;
    for (int i = 0; i < 6; ++i) {
      rows.push_back(Row()
                         .Temperature(temperatures[i])
                         .TopK(filtered ? 20 : 0)
                         .TopP(filtered ? 0.8f : 1.f)
                         .Seed(i)
                         .Step(5));
    }
    const SampledTokens out = SampleTokens(logits, Params(rows));
    const at::Tensor t = at::tensor(temperatures).masked_fill(at::tensor(temperatures) == 0, 1);
    const at::Tensor want =
        (logits / t.unsqueeze(1)).log_softmax(1).gather(1, out.tokens.unsqueeze(1)).squeeze(1);
    EXPECT_TRUE(at::allclose(out.log_probs, want, 1e-5, 1e-5)) << "filtered " << filtered;
  }
}

// A row's token depends on its logits, parameters, seed and step only: alone, in a
// batch, or in another position of another batch (where other rows filter, so the
// batch takes the filtered path).
TEST(Sampler, SameSeedAndStepGiveTheSameTokenWhateverTheBatch) {
  at::manual_seed(3);
  const int64_t n = 12;
  const at::Tensor logits = at::randn({n, 200});
  std::vector<Row> rows;
  for (int64_t i = 0; i < n; ++i) {
    rows.push_back(Row()
                       .Temperature(0.7f + 0.1f * i)
                       .TopK(i % 3 == 1 ? 30 : 0)
                       .TopP(i % 4 == 2 ? 0.9f : 1.f)
                       .Seed(50 + i)
                       .Step(3 * i));
  }
  const at::Tensor batched = SampleTokens(logits, Params(rows)).tokens;

  const at::Tensor order = at::randperm(n);
  std::vector<Row> permuted;
  for (int64_t i = 0; i < n; ++i) permuted.push_back(rows[order[i].item<int64_t>()]);
  const at::Tensor reordered = SampleTokens(logits.index_select(0, order), Params(permuted)).tokens;
  EXPECT_TRUE(at::equal(reordered, batched.index_select(0, order)));

  for (int64_t i = 0; i < n; ++i) {
    const SampledTokens alone = SampleTokens(logits.narrow(0, i, 1), Params({rows[i]}));
    EXPECT_EQ(alone.tokens[0].item<int64_t>(), batched[i].item<int64_t>()) << "row " << i;
  }
}

TEST(Sampler, FilteredPathWithFiltersOffMatchesTheFastPath) {
  at::manual_seed(4);
  const at::Tensor logits = at::randn({32, 500});
  std::vector<Row> rows;
  for (int64_t i = 0; i < 32; ++i) {
    rows.push_back(Row().Temperature(i % 5 == 0 ? 0.f : 1.1f).Seed(i));
  }
  SamplingTensors params = Params(rows);
  const SampledTokens fast = SampleTokens(logits, params);
  params.any_filter = true;
  const SampledTokens filtered = SampleTokens(logits, params);
  EXPECT_TRUE(at::equal(fast.tokens, filtered.tokens));
  EXPECT_TRUE(at::equal(fast.log_probs, filtered.log_probs));
}

TEST(Sampler, DifferentStepsAndSeedsGiveDifferentDraws) {
  const at::Tensor row = at::zeros({1000});  // uniform: draws are uniform token ids
  std::vector<Row> by_step, by_seed;
  for (int64_t i = 0; i < 100; ++i) {
    by_step.push_back(Row().Seed(9).Step(i));
    by_seed.push_back(Row().Seed(i).Step(9));
  }
  const at::Tensor logits = row.unsqueeze(0).expand({100, 1000});
  // 100 uniform draws from 1000 give about 95 distinct tokens.
  EXPECT_GE(Drawn(SampleTokens(logits, Params(by_step)).tokens).size(), 85u);
  EXPECT_GE(Drawn(SampleTokens(logits, Params(by_seed)).tokens).size(), 85u);
}

TEST(Sampler, TopKOfOneIsGreedy) {
  at::manual_seed(5);
  const at::Tensor logits = at::randn({64, 500});
  std::vector<Row> rows;
  for (int64_t i = 0; i < 64; ++i) rows.push_back(Row().Temperature(1.5f).TopK(1).Seed(i));
  EXPECT_TRUE(at::equal(SampleTokens(logits, Params(rows)).tokens, logits.argmax(1)));
}

TEST(Sampler, TopKDrawsFromExactlyTheKBest) {
  at::manual_seed(6);
  const at::Tensor row = at::randn({50}) * 0.5;
  const at::Tensor best = std::get<1>(row.topk(5));
  EXPECT_EQ(Drawn(Draw(row, Row().TopK(5), 4000)), Drawn(best));
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625 on tokens 3, 0, 4, 1, 2.
  const at::Tensor row = LogitsOf({0.25f, 0.0625f, 0.0625f, 0.5f, 0.125f});
  EXPECT_EQ(Drawn(Draw(row, Row().TopP(0.3f), 2000)), (std::set<int64_t>{3}));
  EXPECT_EQ(Drawn(Draw(row, Row().TopP(0.6f), 2000)), (std::set<int64_t>{3, 0}));
  EXPECT_EQ(Drawn(Draw(row, Row().TopP(0.8f), 2000)), (std::set<int64_t>{3, 0, 4}));
  EXPECT_EQ(Drawn(Draw(row, Row().TopP(0.99f), 4000)), (std::set<int64_t>{0, 1, 2, 3, 4}));
}

TEST(Sampler, TopPIsTakenOverTheTopKSurvivors) {
  // Top-2 renormalised: 0.4 / 0.7 = 0.57 >= 0.5 already, so top-p 0.5 keeps one token;
  // without top-k the mass above token 1 is 0.4 < 0.5 and it is kept.
  const at::Tensor row = LogitsOf({0.4f, 0.3f, 0.2f, 0.1f});
  EXPECT_EQ(Drawn(Draw(row, Row().TopK(2).TopP(0.5f), 2000)), (std::set<int64_t>{0}));
  EXPECT_EQ(Drawn(Draw(row, Row().TopP(0.5f), 2000)), (std::set<int64_t>{0, 1}));
  EXPECT_EQ(Drawn(Draw(row, Row().TopK(3).TopP(0.95f), 2000)), (std::set<int64_t>{0, 1, 2}));
}

TEST(Sampler, MinPKeepsTokensAboveAFractionOfTheTopProbability) {
  const at::Tensor row = LogitsOf({0.1f, 0.4f, 0.2f, 0.3f});
  EXPECT_EQ(Drawn(Draw(row, Row().MinP(0.6f), 2000)), (std::set<int64_t>{1, 3}));
  EXPECT_EQ(Drawn(Draw(row, Row().MinP(0.3f), 2000)), (std::set<int64_t>{1, 2, 3}));
  EXPECT_EQ(Drawn(Draw(row, Row().MinP(0.2f), 2000)), (std::set<int64_t>{0, 1, 2, 3}));
}

TEST(Sampler, FrequenciesFollowTheSoftmax) {
  const at::Tensor row = at::tensor({1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f});
  ExpectFrequencies(Draw(row, {}, 20000), row.softmax(0));
}

TEST(Sampler, TemperatureSharpensOrFlattensTheDistribution) {
  const at::Tensor row = at::tensor({1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f});
  for (float t : {0.5f, 2.0f}) {
    const at::Tensor tokens = Draw(row, Row().Temperature(t), 20000);
    ExpectFrequencies(tokens, (row / t).softmax(0));
    // Far (> 10 sigma) from the temperature-1 frequency of the top token.
    const double p1 = row.softmax(0)[2].item<double>();
    const double drawn = (tokens == 2).sum().item<double>();
    EXPECT_GT(std::abs(drawn - 20000 * p1), 10 * std::sqrt(20000 * p1 * (1 - p1))) << "T " << t;
  }
}

TEST(Sampler, FilteredFrequenciesFollowTheRenormalisedSoftmax) {
  const at::Tensor row = at::tensor({1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f});
  const at::Tensor kept = at::tensor({1, 0, 1, 0, 0, 1}).to(at::kBool);  // the top 3
  ExpectFrequencies(Draw(row, Row().TopK(3), 20000),
                    row.masked_fill(kept.logical_not(), -INFINITY).softmax(0));
}

TEST(Sampler, BFloat16LogitsSampleLikeTheirFloat32Values) {
  at::manual_seed(7);
  const at::Tensor logits = at::randn({16, 400}).to(at::kBFloat16);
  std::vector<Row> rows;
  for (int64_t i = 0; i < 16; ++i) {
    rows.push_back(Row().Temperature(0.8f).TopK(i % 2 == 0 ? 40 : 0).Seed(i).Step(i));
  }
  const SampledTokens low = SampleTokens(logits, Params(rows));
  const SampledTokens full = SampleTokens(logits.to(at::kFloat), Params(rows));
  EXPECT_TRUE(at::equal(low.tokens, full.tokens));
  EXPECT_TRUE(at::equal(low.log_probs, full.log_probs));
}

TEST(Sampler, EmptyBatch) {
  for (bool any_filter : {false, true}) {
    SamplingTensors params = Params({});
    params.any_filter = any_filter;
    const SampledTokens out = SampleTokens(at::zeros({0, 10}), params);
    EXPECT_EQ(out.tokens.sizes(), at::IntArrayRef({0}));
    EXPECT_EQ(out.tokens.scalar_type(), at::kLong);
    EXPECT_EQ(out.log_probs.sizes(), at::IntArrayRef({0}));
    EXPECT_EQ(out.log_probs.scalar_type(), at::kFloat);
  }
}

TEST(Sampler, RejectsParametersOfTheWrongShapeOrType) {
  const at::Tensor logits = at::zeros({2, 10});
  SamplingTensors params = Params({Row{}, Row{}});
  params.seed = at::zeros({3}, at::kLong);
  EXPECT_THROW(SampleTokens(logits, params), c10::Error);
  params = Params({Row{}, Row{}});
  params.temperature = at::ones({2}, at::kDouble);
  EXPECT_THROW(SampleTokens(logits, params), c10::Error);
  EXPECT_THROW(SampleTokens(at::zeros({2, 10}, at::kLong), Params({Row{}, Row{}})),
               c10::Error);
}

}  // namespace
}  // namespace rollout::engine
