#include "core/node.hpp"

#include "core/errors.hpp"

namespace nodeflow {

void Node::backward(const BackwardContext&) const {
  throw RunError(op_type() + " has no gradient");
}

}  // namespace nodeflow
