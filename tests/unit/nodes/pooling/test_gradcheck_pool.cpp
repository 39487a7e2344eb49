// Finite-difference gradient check of every pooling op over seeded random
// configurations (docs/pooling.md, "Backward"). Each failure
// prints the whole configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "core/errors.hpp"
#include "nodes/pooling/pool_geometry.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow {
namespace {

constexpr int kConfigsPerOp = 300;

struct Config {
  std::string op;
  Attributes attrs;
  Shape input;
  std::uint64_t seed = 0;
  bool with_output_shape = false;  // MaxUnpool: pass output_shape explicitly
  double lda_coeff = 1.0;

  std::string describe() const {
    std::ostringstream os;
    os << op << " input " << to_string(input) << " seed " << seed << " lda_coeff " << lda_coeff;
    for (const auto& [name, value] : attrs) os << " " << name << "=" << to_string(value);
    if (with_output_shape) os << " output_shape given";
    return os.str();
  }
};

std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// A sliding-window configuration with every attribute drawn at random.
Config random_sliding(const std::string& op, std::mt19937_64& rng) {
  Config c;
  c.op = op;
  const auto rank = static_cast<std::size_t>(pick(rng, 1, 3));
  const std::int64_t max_kernel = rank == 3 ? 2 : 3;
  std::vector<std::int64_t> kernel, strides, dilations, pads(2 * rank);
  c.input = {pick(rng, 1, 2), pick(rng, 1, 3)};
  const bool dilated = op != "MaxUnpool" && pick(rng, 0, 1) == 1;
  for (std::size_t i = 0; i < rank; ++i) {
    kernel.push_back(pick(rng, 1, max_kernel));
    strides.push_back(pick(rng, 1, 3));
    dilations.push_back(dilated ? pick(rng, 1, 2) : 1);
    const std::int64_t ext = dilations[i] * (kernel[i] - 1) + 1;
    pads[i] = pick(rng, 0, ext - 1);
    pads[rank + i] = pick(rng, 0, ext - 1);
    c.input.push_back(pick(rng, 1, rank == 3 ? 4 : 6));
  }
  c.attrs["kernel_shape"] = kernel;
  if (pick(rng, 0, 1)) c.attrs["strides"] = strides;
  if (op == "MaxUnpool") {
    if (pick(rng, 0, 1)) c.attrs["pads"] = pads;
    return c;
  }
  if (dilated) c.attrs["dilations"] = dilations;
  static const char* const kAutoPad[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  const std::string auto_pad = kAutoPad[pick(rng, 0, 3)];
  if (auto_pad != "NOTSET" || pick(rng, 0, 1)) c.attrs["auto_pad"] = auto_pad;
  if (auto_pad == "NOTSET" && pick(rng, 0, 3) != 0) c.attrs["pads"] = pads;
  c.attrs["ceil_mode"] = pick(rng, 0, 1);
  if (op == "AveragePool") c.attrs["count_include_pad"] = pick(rng, 0, 1);
  if (op == "MaxPool") c.attrs["storage_order"] = pick(rng, 0, 1);
  if (op == "LpPool") c.attrs["p"] = pick(rng, 1, 3);
  return c;
}

Config random_global(const std::string& op, std::mt19937_64& rng) {
  Config c;
  c.op = op;
  c.input = {pick(rng, 1, 2), pick(rng, 1, 3)};
  const auto rank = pick(rng, 1, 3);
  for (std::int64_t i = 0; i < rank; ++i) c.input.push_back(pick(rng, 1, 4));
  if (op == "GlobalLpPool") c.attrs["p"] = pick(rng, 1, 3);
  return c;
}

// Distinct values k * 0.1 in a random order and, for LpPool, away from 0 with
// random signs: a step of 1e-6 cannot change which element wins a max window
// and never crosses |x| = 0.
Tensor well_spaced(const Shape& shape, bool away_from_zero, std::mt19937_64& rng) {
  Tensor t(DType::Float64, shape);
  auto v = t.values<double>();
  std::vector<std::int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto k = static_cast<double>(order[i]);
    v[i] = away_from_zero ? (0.5 + 0.1 * k) * (pick(rng, 0, 1) ? 1.0 : -1.0)
                          : 0.1 * (k - static_cast<double>(v.size()) / 2);
  }
  return t;
}

// Inputs of a configuration; nullopt-like empty vector when the geometry is
// invalid (the generator then draws again).
std::vector<Tensor> make_inputs(Config& c, std::mt19937_64& rng) {
  if (c.op != "MaxUnpool") {
    return {well_spaced(c.input, c.op == "LpPool" || c.op == "GlobalLpPool", rng)};
  }
  // MaxUnpool: X and distinct indices into the whole output (crossing planes).
  Shape out{c.input[0], c.input[1]};
  const auto kernel = std::get<std::vector<std::int64_t>>(c.attrs.at("kernel_shape"));
  const auto pads = c.attrs.count("pads") ? std::get<std::vector<std::int64_t>>(c.attrs.at("pads"))
                                          : std::vector<std::int64_t>(2 * kernel.size(), 0);
  const auto strides = c.attrs.count("strides")
                           ? std::get<std::vector<std::int64_t>>(c.attrs.at("strides"))
                           : std::vector<std::int64_t>(kernel.size(), 1);
  for (std::size_t i = 0; i < kernel.size(); ++i)
    out.push_back((c.input[i + 2] - 1) * strides[i] + kernel[i] - pads[i] -
                  pads[kernel.size() + i]);
  c.with_output_shape = pick(rng, 0, 1) == 1;
  if (c.with_output_shape)
    for (std::size_t i = 2; i < out.size(); ++i) out[i] += pick(rng, 0, 2);
  std::int64_t out_count = 1, in_count = 1;
  for (auto d : out) out_count *= d;
  for (auto d : c.input) in_count *= d;
  if (std::any_of(out.begin(), out.end(), [](std::int64_t d) { return d < 1; }) ||
      out_count < in_count)
    return {};
  std::vector<std::int64_t> positions(static_cast<std::size_t>(out_count));
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng);
  positions.resize(static_cast<std::size_t>(in_count));
  std::vector<Tensor> inputs{
      well_spaced(c.input, false, rng),
      Tensor::from<std::int64_t>(c.input, std::span<const std::int64_t>(positions))};
  if (c.with_output_shape)
    inputs.push_back(Tensor::from<std::int64_t>({static_cast<std::int64_t>(out.size())},
                                                std::span<const std::int64_t>(out)));
  return inputs;
}

// Features of a checked configuration, so the sweep can prove it covered them.
std::vector<std::string> features(const Config& c) {
  std::vector<std::string> f{"rank " + std::to_string(c.input.size() - 2)};
  if (c.input[0] > 1 && c.input[1] > 1) f.push_back("batch and channels > 1");
  for (const auto& [name, value] : c.attrs)
    if (name != "kernel_shape" && name != "strides") f.push_back(name + "=" + to_string(value));
  if (c.attrs.count("dilations")) f.push_back("dilations");
  if (c.attrs.count("pads")) f.push_back("pads");
  if (c.attrs.count("strides")) f.push_back("strides");
  if (c.with_output_shape) f.push_back("output_shape");
  return f;
}

void sweep(const std::string& op, bool global, std::uint64_t seed,
           const std::vector<std::string>& must_cover) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int> covered;
  int checked = 0, attempts = 0;
  while (checked < kConfigsPerOp) {
    ASSERT_LT(++attempts, 20 * kConfigsPerOp) << op << ": too few valid random configurations";
    Config c = global ? random_global(op, rng) : random_sliding(op, rng);
    c.seed = rng();
    c.lda_coeff = pick(rng, 0, 3) == 0 ? 0.5 : 1.0;
    std::unique_ptr<Node> node;
    std::vector<Tensor> inputs;
    try {
      node = testing::make_node(op, c.attrs, true, c.lda_coeff);
      inputs = make_inputs(c, rng);
      if (inputs.empty()) continue;
      testing::run_forward(*node, inputs);
    } catch (const ShapeMismatch&) {
      continue;  // a geometry the spec refuses (checked in test_pool_geometry)
    }
    testing::GradCheckOptions options;
    options.seed = c.seed;
    options.num_outputs = op == "MaxPool" ? 2 : 1;
    const auto result = testing::check_gradient(*node, inputs, options);
    EXPECT_TRUE(result.ok) << c.describe() << "\n" << result.failures;
    if (!result.ok) return;
    ++checked;
    for (const auto& f : features(c)) ++covered[f];
  }
  for (const auto& f : must_cover)
    EXPECT_GE(covered[f], 5) << op << ": too few configurations with " << f;
}

const std::vector<std::string> kSlidingCover{"rank 1",
                                             "rank 2",
                                             "rank 3",
                                             "batch and channels > 1",
                                             "pads",
                                             "strides",
                                             "dilations",
                                             "auto_pad=\"NOTSET\"",
                                             "auto_pad=\"SAME_UPPER\"",
                                             "auto_pad=\"SAME_LOWER\"",
                                             "auto_pad=\"VALID\"",
                                             "ceil_mode=0",
                                             "ceil_mode=1"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

TEST(GradCheckPool, AveragePool) {
  sweep("AveragePool", false, 101,
        with(kSlidingCover, {"count_include_pad=0", "count_include_pad=1"}));
}
TEST(GradCheckPool, MaxPool) {
  sweep("MaxPool", false, 202, with(kSlidingCover, {"storage_order=0", "storage_order=1"}));
}
TEST(GradCheckPool, LpPool) {
  sweep("LpPool", false, 303, with(kSlidingCover, {"p=1", "p=2", "p=3"}));
}
TEST(GradCheckPool, GlobalAveragePool) {
  sweep("GlobalAveragePool", true, 404, {"rank 1", "rank 2", "rank 3", "batch and channels > 1"});
}
TEST(GradCheckPool, GlobalMaxPool) {
  sweep("GlobalMaxPool", true, 505, {"rank 1", "rank 2", "rank 3", "batch and channels > 1"});
}
TEST(GradCheckPool, GlobalLpPool) {
  sweep("GlobalLpPool", true, 707, {"rank 1", "rank 2", "rank 3", "p=1", "p=2", "p=3"});
}
TEST(GradCheckPool, MaxUnpool) {
  sweep(
      "MaxUnpool", false, 606,
      {"rank 1", "rank 2", "rank 3", "batch and channels > 1", "pads", "strides", "output_shape"});
}

// The checker itself must be able to fail: a backward that is off by the
// lda_coeff factor is caught.
TEST(GradCheckPool, CheckerCatchesAWrongScale) {
  auto node = testing::make_node("AveragePool", {{"kernel_shape", std::vector<std::int64_t>{2}}},
                                 true, 0.5);
  Tensor x = Tensor::from<double>({1, 1, 4}, {0.1, 0.4, 0.2, 0.3});
  testing::ForwardResult f = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{Tensor(DType::Float64, {1, 1, 4})};
  testing::run_backward(*node, {x}, f, {Tensor::from<double>({1, 1, 3}, {1.0, 1.0, 1.0})}, grads);
  // Windows [0,1], [1,2], [2,3] each send 0.5 * 1/2 to their two elements.
  EXPECT_EQ(grads[0].values<double>()[0], 0.25);
  EXPECT_EQ(grads[0].values<double>()[1], 0.5);

  class DoubledBackward final : public Node {
   public:
    explicit DoubledBackward(const Node& inner) : Node(inner.config()), inner_(inner) {}
    std::vector<TensorInfo> infer(const InferContext& ctx) const override {
      return inner_.infer(ctx);
    }
    void forward(const ForwardContext& ctx) const override { inner_.forward(ctx); }
    void backward(const BackwardContext& ctx) const override {
      inner_.backward(ctx);
      inner_.backward(ctx);
    }

   private:
    const Node& inner_;
  };
  DoubledBackward wrong(*node);
  const auto result = testing::check_gradient(wrong, {x});
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.failures.find("input 0 element 0"), std::string::npos) << result.failures;
}

}  // namespace
}  // namespace nodeflow
