/*
 * nodeflow.h: the C API of nodeflow (libnodeflow.so), C99.
 *
 * docs/c-api.md describes the rules every function follows; in short:
 *
 * - Handles are opaque (nf_graph, nf_session, nf_run, nf_trainer). Each
 *   create/load has a release that accepts NULL.
 * - Every function but the releases and nf_last_error_message returns an
 *   nf_status. Each call sets this thread's last status and error text (NF_OK
 *   and "" on success); nf_last_error and nf_last_error_message read them
 *   without changing them. The text is the library's own message (JSON path,
 *   node, attribute, values).
 * - No C++ exception and no abort crosses this boundary, whatever the input.
 * - Tensors cross as (dtype code, rank, dims, data pointer, byte count), dense
 *   and row-major. Results are copied into buffers the caller allocates, after
 *   a query of their dtype, shape and byte count.
 * - Strings are NUL-terminated UTF-8. A string result is copied into
 *   (buffer, capacity) and its length (without the NUL) stored in *length;
 *   buffer may be NULL with capacity 0 to ask for the length only; a buffer
 *   too small for length + 1 bytes gives NF_ERR_BUFFER_TOO_SMALL.
 * - The ABI is versioned (nf_version): functions and enum values are only
 *   ever added, never changed or removed; NF_ABI_VERSION grows with each
 *   addition. Only nf_* symbols are exported.
 */
#ifndef NODEFLOW_H
#define NODEFLOW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NODEFLOW_C_BUILD)
#define NF_API __attribute__((visibility("default")))
#else
#define NF_API
#endif

/** The ABI version of this header; nf_version gives the library's. */
#define NF_ABI_VERSION 1

/** What a call did. Errors other than NF_ERR_BUFFER_TOO_SMALL leave the
 *  outputs of the call unchanged. */
typedef enum nf_status {
  NF_OK = 0,
  NF_ERR_INVALID_GRAPH = 1,       /**< the graph document or its wiring is wrong; a name that is no input, initializer or tensor of the graph */
  NF_ERR_INVALID_ATTRIBUTE = 2,   /**< an attribute or setting is out of its range */
  NF_ERR_SHAPE_MISMATCH = 3,      /**< shapes do not fit (inputs, seeds, initializers, byte counts) */
  NF_ERR_UNSUPPORTED_DTYPE = 4,   /**< a dtype the graph, op or request does not take */
  NF_ERR_IO = 5,                  /**< reading or writing a file failed, or a file is malformed */
  NF_ERR_RUN = 6,                 /**< a failure while running a valid graph (diverged loss, ...) */
  NF_ERR_INVALID_ARGUMENT = 7,    /**< a NULL handle or pointer, an unknown code, a name the run has no output or gradient of */
  NF_ERR_BUFFER_TOO_SMALL = 8,    /**< a caller's buffer is smaller than the result; sizes are set */
  NF_ERR_OUT_OF_MEMORY = 9,       /**< an allocation failed outside tensors (a tensor that cannot be allocated is NF_ERR_RUN, naming its bytes) */
  NF_ERR_INTERNAL = 10,           /**< a bug: an unexpected exception inside the library */
  NF_ERR_INVALID_CONFIG = 11      /**< the training configuration (JSON) is wrong */
} nf_status;

/** Element types: ONNX's TensorProto.DataType codes. */
typedef enum nf_dtype {
  NF_FLOAT32 = 1,
  NF_UINT8 = 2,
  NF_INT8 = 3,
  NF_INT64 = 7,
  NF_FLOAT16 = 10,
  NF_FLOAT64 = 11,
  NF_BFLOAT16 = 16
} nf_dtype;

/** The format of a graph in memory. Files are told apart by name: a name
 *  ending in ".onnx" is an ONNX model, any other a graph document. */
typedef enum nf_format {
  NF_FORMAT_JSON = 0, /**< the graph document (docs/graph-format.md) */
  NF_FORMAT_ONNX = 1  /**< an ONNX ModelProto (docs/onnx.md) */
} nf_format;

/** Which tensors of a graph nf_graph_tensor_count / nf_graph_tensor_name list. */
typedef enum nf_tensor_list {
  NF_LIST_INPUTS = 0,       /**< graph inputs, in document order */
  NF_LIST_OUTPUTS = 1,      /**< graph outputs, in document order */
  NF_LIST_INITIALIZERS = 2, /**< initializers (weights), in document order */
  NF_LIST_ALL = 3           /**< every tensor: inputs, initializers, then node outputs */
} nf_tensor_list;

/** A validated, loaded graph and its weights. */
typedef struct nf_graph nf_graph;
/** Runs one graph (inference, training forward and backward); shared by threads. */
typedef struct nf_session nf_session;
/** One thread's run of a session: its inputs, outputs, seeds and gradients. */
typedef struct nf_run nf_run;
/** Trains a graph's weights in place. */
typedef struct nf_trainer nf_trainer;

/* ---- Version and errors ------------------------------------------------ */

/** The library's ABI version (>= the NF_ABI_VERSION a host was built with
 *  means every function it knows is there) in *abi_version (may be NULL),
 *  and its version, "0.1.0", copied as a string result (buffer may be NULL).
 *  Thread safe. */
NF_API nf_status nf_version(uint32_t* abi_version, char* buffer, size_t capacity,
                            size_t* length);

/** Copies this thread's last error text (the library's message; "" after a
 *  success) as a string result; *status (may be NULL) gets the last status.
 *  Does not change the last error. Thread safe (per thread). */
NF_API nf_status nf_last_error(nf_status* status, char* buffer, size_t capacity,
                               size_t* length);

/** This thread's last error text, borrowed: valid until the next nf_* call on
 *  this thread other than nf_last_error / nf_last_error_message. Never NULL.
 *  Thread safe (per thread). */
NF_API const char* nf_last_error_message(void);

/* ---- Graphs ------------------------------------------------------------ */

/** Loads and validates the graph file `path` (an ONNX model when the name
 *  ends in ".onnx", else a graph document) into *graph. NF_ERR_IO for a file
 *  that cannot be read, NF_ERR_INVALID_GRAPH / NF_ERR_INVALID_ATTRIBUTE /
 *  NF_ERR_SHAPE_MISMATCH / NF_ERR_UNSUPPORTED_DTYPE naming the place in the
 *  file. Thread safe. */
NF_API nf_status nf_graph_load_file(const char* path, nf_graph** graph);

/** Loads a graph from `size` bytes in memory in `format`. `model_dir` is the
 *  folder of an ONNX model's external data (NULL: the current folder; ignored
 *  for JSON). Errors as nf_graph_load_file. Thread safe. */
NF_API nf_status nf_graph_load_buffer(const void* data, size_t size, nf_format format,
                                      const char* model_dir, nf_graph** graph);

/** Releases a graph (NULL is allowed). Sessions and trainers made from it
 *  keep what they need, so they may be released later. */
NF_API void nf_graph_release(nf_graph* graph);

/** Saves the graph with its current weights, atomically, in the format the
 *  name says (".onnx" or a graph document). NF_ERR_IO naming the path. Not
 *  while the graph's weights change on another thread (nf_graph_set_initializer,
 *  training); concurrent runs are fine. */
NF_API nf_status nf_graph_save_file(const nf_graph* graph, const char* path);

/** The graph as the bytes of a file in `format`, copied into (buffer,
 *  capacity); *size gets the byte count (buffer may be NULL with capacity 0
 *  to ask for it; NF_ERR_BUFFER_TOO_SMALL when capacity < *size). The bytes
 *  are serialized again by each call. Thread safety as nf_graph_save_file. */
NF_API nf_status nf_graph_save_buffer(const nf_graph* graph, nf_format format, void* buffer,
                                      size_t capacity, size_t* size);

/** The number of tensors in `list` in *count. Thread safe. */
NF_API nf_status nf_graph_tensor_count(const nf_graph* graph, nf_tensor_list list,
                                       size_t* count);

/** The name of tensor `index` (0-based) of `list`, as a string result.
 *  NF_ERR_INVALID_ARGUMENT for an index >= the count. Thread safe. */
NF_API nf_status nf_graph_tensor_name(const nf_graph* graph, nf_tensor_list list, size_t index,
                                      char* buffer, size_t capacity, size_t* length);

/** Dtype and shape of any tensor of the graph by name: as declared for
 *  inputs and initializers, as shape inference found at load for node
 *  outputs. A dimension known only at run time is -1. *rank gets the rank;
 *  dims (may be NULL when dims_capacity is 0) gets min(rank, dims_capacity)
 *  dimensions; NF_ERR_BUFFER_TOO_SMALL when dims_capacity < rank (rank and
 *  dtype set). dtype may be NULL. NF_ERR_INVALID_GRAPH for an unknown name.
 *  Thread safe. */
NF_API nf_status nf_graph_tensor_info(const nf_graph* graph, const char* name, nf_dtype* dtype,
                                      int32_t* rank, int64_t* dims, size_t dims_capacity);

/** *trainable gets 1 for a trainable initializer, 0 for another one.
 *  NF_ERR_INVALID_GRAPH when `name` is no initializer. Thread safe. */
NF_API nf_status nf_graph_initializer_trainable(const nf_graph* graph, const char* name,
                                                int32_t* trainable);

/** Copies the value of initializer `name` (its shape: nf_graph_tensor_info)
 *  into (data, capacity); *size (may be NULL) gets its byte count.
 *  NF_ERR_BUFFER_TOO_SMALL when capacity is smaller (*size set).
 *  NF_ERR_INVALID_GRAPH when `name` is no initializer. Not while its weights
 *  change on another thread. */
NF_API nf_status nf_graph_get_initializer(const nf_graph* graph, const char* name, void* data,
                                          size_t capacity, size_t* size);

/** Replaces the value of initializer `name` with a copy of the tensor
 *  (dtype, rank, dims, data, size), which must have its dtype and shape
 *  (NF_ERR_UNSUPPORTED_DTYPE / NF_ERR_SHAPE_MISMATCH). Not safe while the
 *  graph runs or is read on another thread. */
NF_API nf_status nf_graph_set_initializer(nf_graph* graph, const char* name, nf_dtype dtype,
                                          int32_t rank, const int64_t* dims, const void* data,
                                          size_t size);

/* ---- Sessions and runs ------------------------------------------------- */

/** A session runs `graph` with `threads` (>= 1) threads per node kernel.
 *  Thread safe; the session may then be used by many threads at once, each
 *  with its own nf_run. */
NF_API nf_status nf_session_create(const nf_graph* graph, int32_t threads, nf_session** session);

/** Releases a session (NULL is allowed); its runs keep what they need. */
NF_API void nf_session_release(nf_session* session);

/** A run of `session`: the inputs set, then the outputs and gradients of the
 *  last inference, forward or backward. A run is used by one thread at a
 *  time; runs of one session on different threads are independent. */
NF_API nf_status nf_run_create(const nf_session* session, nf_run** run);

/** Releases a run (NULL is allowed). */
NF_API void nf_run_release(nf_run* run);

/** Sets graph input `name` to the tensor (dtype, rank, dims, data, size):
 *  `size` must be the product of dims times the dtype's size. Without a copy
 *  when data is aligned to the dtype's size: the bytes must then stay valid
 *  and unchanged until the input is set again or the run is released
 *  (nf_run_set_input_copy for a buffer that lives only during the call, as
 *  LabVIEW's arrays do). Nothing refers to them after that: outputs that would
 *  share them (an output that is an input, a Reshape of it) are copies, and
 *  setting an input ends a pending forward (nf_run_backward then needs a new
 *  nf_run_forward). NF_ERR_INVALID_GRAPH for a name that is no graph input;
 *  dtype and shape are checked by the run. One thread per run. */
NF_API nf_status nf_run_set_input(nf_run* run, const char* name, nf_dtype dtype, int32_t rank,
                                  const int64_t* dims, const void* data, size_t size);

/** nf_run_set_input with a copy of the bytes. */
NF_API nf_status nf_run_set_input_copy(nf_run* run, const char* name, nf_dtype dtype,
                                       int32_t rank, const int64_t* dims, const void* data,
                                       size_t size);

/** Inference on the inputs set: computes every graph output. Errors name the
 *  input or node (NF_ERR_INVALID_GRAPH for a missing input,
 *  NF_ERR_UNSUPPORTED_DTYPE / NF_ERR_SHAPE_MISMATCH for a wrong one,
 *  NF_ERR_RUN inside a node). One thread per run. */
NF_API nf_status nf_run_infer(nf_run* run);

/** Training-mode forward on the inputs set, keeping what backward needs;
 *  `seed` drives the random nodes (Dropout): the same seed, the same masks.
 *  Computes every graph output. Errors as nf_run_infer. */
NF_API nf_status nf_run_forward(nf_run* run, uint64_t seed);

/** Sets the gradient that backward starts from at graph output `name` (its
 *  dtype and shape; outputs without one get zero). Copied. Errors are
 *  reported by nf_run_backward. One thread per run. */
NF_API nf_status nf_run_set_output_grad(nf_run* run, const char* name, nf_dtype dtype,
                                        int32_t rank, const int64_t* dims, const void* data,
                                        size_t size);

/** Backward through the last nf_run_forward with the seeds set (then
 *  cleared): gradients of every float graph input and trainable initializer,
 *  by their names. NF_ERR_RUN without a forward, or a second time after one.
 *  A seed refused (wrong name, dtype or shape) leaves the forward and the
 *  seeds as they were: set the right seed and call it again. */
NF_API nf_status nf_run_backward(nf_run* run);

/** Dtype, shape (as nf_graph_tensor_info, never -1) and byte count (*size,
 *  may be NULL) of output `name` of the last inference or forward.
 *  NF_ERR_INVALID_ARGUMENT when there is no such output yet. One thread per run. */
NF_API nf_status nf_run_output_info(const nf_run* run, const char* name, nf_dtype* dtype,
                                    int32_t* rank, int64_t* dims, size_t dims_capacity,
                                    size_t* size);

/** Copies output `name` into (data, capacity) (*size, may be NULL, gets its
 *  byte count). NF_ERR_BUFFER_TOO_SMALL when capacity is smaller. */
NF_API nf_status nf_run_get_output(const nf_run* run, const char* name, void* data,
                                   size_t capacity, size_t* size);

/** nf_run_output_info for the gradient of `name` (a float graph input or a
 *  trainable initializer) of the last backward. */
NF_API nf_status nf_run_gradient_info(const nf_run* run, const char* name, nf_dtype* dtype,
                                      int32_t* rank, int64_t* dims, size_t dims_capacity,
                                      size_t* size);

/** nf_run_get_output for the gradient of `name` of the last backward. */
NF_API nf_status nf_run_get_gradient(const nf_run* run, const char* name, void* data,
                                     size_t capacity, size_t* size);

/* ---- Training ---------------------------------------------------------- */

/** Called after every optimizer step: the 1-based epoch and step of the
 *  trainer, the mean loss and the accuracy (fraction in [0, 1]) over the
 *  epoch's samples so far, and the epoch's learning rate. Return nonzero to
 *  go on, 0 to stop training after this step. Runs on the calling thread. It
 *  may read the graph (nf_graph_save, nf_graph_get_initializer) but must not
 *  call the trainer: nf_trainer_set_data and nf_trainer_train_* return
 *  NF_ERR_INVALID_ARGUMENT there, and nf_trainer_release is not allowed. */
typedef int32_t (*nf_progress_fn)(void* user_data, int64_t epoch, int64_t step, double loss,
                                  double accuracy, double lr);

/** A trainer of `graph`'s weights with the training configuration
 *  `config_json` (the JSON text of docs/training-config.md: optimizer,
 *  schedule, batch_size, seed, threads, bindings, ...). NF_ERR_INVALID_CONFIG
 *  naming the JSON path; errors of the bindings against the graph. Training
 *  changes the graph's initializers in place: no run or read of the graph on
 *  another thread while it trains. */
NF_API nf_status nf_trainer_create(nf_graph* graph, const char* config_json,
                                   nf_trainer** trainer);

/** Releases a trainer (NULL is allowed). */
NF_API void nf_trainer_release(nf_trainer* trainer);

/** The data to train on, copied: samples (dtype, rank, dims, data, size),
 *  [N, ...] as the graph input bound to "input" takes them, and N int64 class
 *  labels in [0, classes), classes being the last dimension of the
 *  "prediction" output. Replaces earlier data. */
NF_API nf_status nf_trainer_set_data(nf_trainer* trainer, nf_dtype dtype, int32_t rank,
                                     const int64_t* dims, const void* samples, size_t size,
                                     const int64_t* labels, size_t label_count);

/** Trains `epochs` (>= 1) epochs over the data, each in a new shuffled order,
 *  the schedule's epoch counting on across calls. `progress` (may be NULL)
 *  sees every step and may stop training. *loss and *accuracy (may be NULL)
 *  get the training metrics of the last (possibly partial) epoch. */
NF_API nf_status nf_trainer_train_epochs(nf_trainer* trainer, int64_t epochs,
                                         nf_progress_fn progress, void* user_data, double* loss,
                                         double* accuracy);

/** Trains `steps` (>= 1) optimizer steps: each call starts a new epoch (a new
 *  shuffled order, the schedule's next epoch) and goes on into further epochs
 *  while steps remain. *loss and *accuracy as nf_trainer_train_epochs. */
NF_API nf_status nf_trainer_train_steps(nf_trainer* trainer, int64_t steps,
                                        nf_progress_fn progress, void* user_data, double* loss,
                                        double* accuracy);

#ifdef __cplusplus
}
#endif

#endif /* NODEFLOW_H */
