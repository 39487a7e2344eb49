#include "training/mpi/mpi_process_group.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "core/errors.hpp"

namespace nodeflow::training {
namespace {

// "MPI_Allreduce: MPI_ERR_TRUNCATE: message truncated"
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw RunError(std::string(call) + " failed: " +
                 (length > 0 ? std::string(text, static_cast<std::size_t>(length))
                             : "MPI error " + std::to_string(code)));
}

// inout[i] = in[i] + inout[i], where `in` holds the lower ranks' partial sum
// (MPI's rule for a non-commutative operation).
template <typename T>
void add_elements(void* in, void* inout, int* length, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = static_cast<T>(a[i] + b[i]);
}

}  // namespace

// One addition per float dtype, declared non-commutative so that MPI keeps
// the operands in rank order; float16 and bfloat16 travel as 16-bit words.
struct MpiProcessGroup::Ops {
  MPI_Op add[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

  ~Ops() {
    for (MPI_Op& op : add)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
  static int index(DType dtype) {
    switch (dtype) {
      case DType::Float32: return 0;
      case DType::Float64: return 1;
      case DType::Float16: return 2;
      case DType::BFloat16: return 3;
      default:
        throw UnsupportedDType("ProcessGroup::sum: " + std::string(dtype_name(dtype)) +
                               " is not a float dtype");
    }
  }
  static MPI_Datatype datatype(DType dtype) {
    switch (dtype) {
      case DType::Float32: return MPI_FLOAT;
      case DType::Float64: return MPI_DOUBLE;
      default: return MPI_UINT16_T;
    }
  }
};

MpiProcessGroup::MpiProcessGroup() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw RunError("MPI is initialized already: one MpiProcessGroup per process");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  try {
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    ops_ = std::make_unique<Ops>();
    check(MPI_Op_create(&add_elements<float>, 0, &ops_->add[0]), "MPI_Op_create");
    check(MPI_Op_create(&add_elements<double>, 0, &ops_->add[1]), "MPI_Op_create");
    check(MPI_Op_create(&add_elements<half>, 0, &ops_->add[2]), "MPI_Op_create");
    check(MPI_Op_create(&add_elements<bfloat16>, 0, &ops_->add[3]), "MPI_Op_create");
  } catch (...) {
    ops_.reset();
    MPI_Finalize();
    throw;
  }
}

MpiProcessGroup::~MpiProcessGroup() {
  ops_.reset();  // MPI_Op_free needs MPI alive
  MPI_Finalize();
}

void MpiProcessGroup::sum(DType dtype, std::byte* values, std::size_t count) {
  const MPI_Op op = ops_->add[Ops::index(dtype)];
  const MPI_Datatype type = Ops::datatype(dtype);
  const std::size_t element = dtype_size(dtype);
  while (count > 0) {
    const std::size_t piece = std::min<std::size_t>(count, INT_MAX);
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(piece), type, op, MPI_COMM_WORLD),
          "MPI_Allreduce");
    values += piece * element;
    count -= piece;
  }
}

std::vector<std::uint64_t> MpiProcessGroup::all_gather(std::uint64_t value) {
  std::vector<std::uint64_t> values(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_UINT64_T, values.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Allgather");
  return values;
}

void MpiProcessGroup::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; if it did, neither may we
}

}  // namespace nodeflow::training
