#pragma once
// Seeded random numbers whose sequences are the same on every platform and
// standard library: std::mt19937_64 is specified bit for bit, the standard
// distributions are not, so the ones used here are spelled out.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace nodeflow {

/// splitmix64 of `a` combined with `b`: derives independent seeds (per epoch,
/// per step, per initializer) from one user seed.
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

/// A reproducible stream: the same seed gives the same numbers everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  /// Next raw 64-bit value of the mt19937_64 stream.
  std::uint64_t next() { return engine_(); }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [0, n) without modulo bias; n must be > 0.
  std::uint64_t below(std::uint64_t n);
  /// Standard normal (Box-Muller, one value per two uniforms).
  double normal();
  /// The engine's state as text (std::mt19937_64's 312 words and position,
  /// decimal, space-separated): a checkpoint keeps it so that a resumed run
  /// continues the stream exactly (docs/training-config.md, "Resuming").
  std::string state() const;
  /// Restores a state() text; throws InvalidAttribute for text that is not one.
  void restore(std::string_view state);

 private:
  std::mt19937_64 engine_;
};

/// 0..n-1 in the order of a Fisher-Yates shuffle driven by `rng`.
std::vector<std::size_t> shuffled_indices(std::size_t n, Rng& rng);

}  // namespace nodeflow
