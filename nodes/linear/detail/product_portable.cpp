// Eigen's product built for the portable instruction set (CMakeLists.txt gives
// this file its compiler switches); see product_eigen.hpp for the rename.
#define Eigen nodeflow_eigen_portable
#define NODEFLOW_PRODUCT_NAME portable
#include "nodes/linear/detail/product_eigen.hpp"
