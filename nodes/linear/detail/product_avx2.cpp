// Eigen's product built for the avx2 instruction set (CMakeLists.txt gives
// this file its compiler switches); see product_eigen.hpp for the rename.
#define Eigen nodeflow_eigen_avx2
#define NODEFLOW_PRODUCT_NAME avx2
#include "nodes/linear/detail/product_eigen.hpp"
