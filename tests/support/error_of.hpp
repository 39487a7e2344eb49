#pragma once
// The message of the error a call raises, for tests that pin error wording:
// EXPECT_EQ(error_of<ShapeMismatch>([&] { ... }), "...") keeps the expected
// text in the test while a missing or wrong exception still fails it.
#include <gtest/gtest.h>

#include <concepts>
#include <exception>
#include <string>
#include <typeinfo>

namespace nodeflow::testing {

/// The message of the E that f() throws. Throwing nothing or an exception of
/// another type is a test failure; the result is then "" or that exception's
/// message, so the test's own expectation on the text reports it as well.
template <typename E, std::invocable F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
  return "";
}

}  // namespace nodeflow::testing
