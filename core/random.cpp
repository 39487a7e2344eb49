#include "core/random.hpp"

#include <cmath>
#include <numbers>
#include <sstream>

#include "core/errors.hpp"

namespace nodeflow {

std::string Rng::state() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

void Rng::restore(std::string_view state) {
  std::istringstream in{std::string(state)};
  std::mt19937_64 engine;
  in >> engine;
  std::string rest;
  if (in.fail() || (in >> rest))
    throw InvalidAttribute("not a state of the random stream (std::mt19937_64's 312 words and position)");
  engine_ = engine;
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) {
  // Rejection of the top partial block keeps every residue equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x = next();
  while (x >= limit) x = next();
  return x % n;
}

double Rng::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<std::size_t> shuffled_indices(std::size_t n, Rng& rng) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

}  // namespace nodeflow
