#pragma once
// Fixture (expect_refusals.cmake): only allowed includes.
#include <Eigen/Core>

#include "core/detail/own_detail.hpp"
#include "core/dtype.hpp"
#include "local_header.hpp"
