/* The C API from C99: LeNet-5 loaded, listed, run and trained through
 * libnodeflow.so, compared with the `nodeflow` command's run and backward,
 * saved and reloaded as JSON and ONNX, and every error path's status and
 * message. Usage: capi_test EXAMPLES_DIR NODEFLOW_CLI WORK_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_support.h"

enum { BATCH = 4, PATH_CAPACITY = 1024 };

static char graph_path[PATH_CAPACITY], cli[PATH_CAPACITY], work[PATH_CAPACITY];
static float images[BATCH * CAPI_IMAGE_VALUES];
static int64_t labels[BATCH];
static const int64_t image_dims[] = {BATCH, 1, 28, 28};
static const int64_t label_dims[] = {BATCH};

static const char* in_work(const char* name) {
  static char path[2 * PATH_CAPACITY];
  snprintf(path, sizeof path, "%s/%s", work, name);
  return path;
}

/* Runs the command line; 0 when it exits 0. */
static int run_cli(const char* arguments) {
  char command[12 * PATH_CAPACITY];
  snprintf(command, sizeof command, "'%s' %s > '%s/cli.log' 2>&1", cli, arguments, work);
  if (system(command) == 0) return 0;
  fprintf(stderr, "failed: %s\n", command);
  return -1;
}

/* The output or gradient `name` of `run` equals the .npy file bit for bit. */
static void expect_same_as_npy(const nf_run* run, const char* name, int gradient, const char* npy) {
  static float ours[120 * 400], theirs[120 * 400];
  size_t size = 0, read;
  nf_status s = gradient ? nf_run_get_gradient(run, name, ours, sizeof ours, &size)
                         : nf_run_get_output(run, name, ours, sizeof ours, &size);
  CHECK(s == NF_OK);
  read = capi_read_npy(npy, theirs, sizeof theirs);
  CHECK(read == size);
  if (read == size && memcmp(ours, theirs, size) != 0) {
    fprintf(stderr, "%s differs from %s\n", name, npy);
    ++capi_failures;
  }
}

static void test_version(void) {
  uint32_t abi = 0;
  size_t length = 0;
  char text[32];
  OK(nf_version(&abi, NULL, 0, &length));
  CHECK(abi >= NF_ABI_VERSION);
  CHECK(length > 0);
  OK(nf_version(NULL, text, sizeof text, &length));
  CHECK(strlen(text) == length);
  EXPECT_ERROR(nf_version(NULL, text, 2, &length), NF_ERR_BUFFER_TOO_SMALL, "the version needs");
}

static void test_listing(const nf_graph* graph) {
  size_t count = 0, length = 0;
  char name[64];
  nf_dtype dtype;
  int32_t rank = 0, trainable = 0;
  int64_t dims[8];
  OK(nf_graph_tensor_count(graph, NF_LIST_INPUTS, &count));
  CHECK(count == 2);
  OK(nf_graph_tensor_name(graph, NF_LIST_INPUTS, 0, name, sizeof name, &length));
  CHECK(strcmp(name, "image") == 0 && length == 5);
  OK(nf_graph_tensor_info(graph, "image", &dtype, &rank, dims, 8));
  CHECK(dtype == NF_FLOAT32 && rank == 4);
  CHECK(dims[0] == -1 && dims[1] == 1 && dims[2] == 28 && dims[3] == 28);
  OK(nf_graph_tensor_name(graph, NF_LIST_INPUTS, 1, name, sizeof name, NULL));
  CHECK(strcmp(name, "label") == 0);
  OK(nf_graph_tensor_info(graph, "label", &dtype, &rank, dims, 8));
  CHECK(dtype == NF_INT64 && rank == 1 && dims[0] == -1);
  OK(nf_graph_tensor_count(graph, NF_LIST_OUTPUTS, &count));
  CHECK(count == 2);
  OK(nf_graph_tensor_name(graph, NF_LIST_OUTPUTS, 0, name, sizeof name, NULL));
  CHECK(strcmp(name, "logits") == 0);
  /* Shape inference at load: a node output's shape. */
  OK(nf_graph_tensor_info(graph, "logits", &dtype, &rank, dims, 8));
  CHECK(dtype == NF_FLOAT32 && rank == 2 && dims[0] == -1 && dims[1] == 10);
  OK(nf_graph_tensor_count(graph, NF_LIST_INITIALIZERS, &count));
  CHECK(count == 10);
  OK(nf_graph_tensor_name(graph, NF_LIST_INITIALIZERS, 4, name, sizeof name, NULL));
  CHECK(strcmp(name, "fc1.W") == 0);
  OK(nf_graph_tensor_info(graph, "fc1.W", &dtype, &rank, dims, 8));
  CHECK(dtype == NF_FLOAT32 && rank == 2 && dims[0] == 120 && dims[1] == 400);
  OK(nf_graph_initializer_trainable(graph, "fc1.W", &trainable));
  CHECK(trainable == 1);
  OK(nf_graph_tensor_count(graph, NF_LIST_ALL, &count));
  CHECK(count > 12);
  /* Rank only, then a dims buffer too small. */
  EXPECT_ERROR(nf_graph_tensor_info(graph, "conv1.W", NULL, &rank, NULL, 0),
               NF_ERR_BUFFER_TOO_SMALL, "needs 4 dims, the buffer has 0");
  CHECK(rank == 4);
  EXPECT_ERROR(nf_graph_tensor_info(graph, "conv1.W", NULL, &rank, dims, 2),
               NF_ERR_BUFFER_TOO_SMALL, "needs 4 dims, the buffer has 2");
  CHECK(dims[0] == 6 && dims[1] == 1);
}

static nf_run* make_run(const nf_session* session) {
  nf_run* run = NULL;
  OK(nf_run_create(session, &run));
  OK(nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, images, sizeof images));
  OK(nf_run_set_input_copy(run, "label", NF_INT64, 1, label_dims, labels, sizeof labels));
  return run;
}

static void test_inference_matches_cli(const nf_graph* graph) {
  nf_session* session = NULL;
  nf_run* run;
  nf_dtype dtype;
  int32_t rank = 0;
  int64_t dims[4];
  size_t size = 0;
  char arguments[8 * PATH_CAPACITY];
  OK(nf_session_create(graph, 1, &session));
  run = make_run(session);
  OK(nf_run_infer(run));
  OK(nf_run_output_info(run, "logits", &dtype, &rank, dims, 4, &size));
  CHECK(dtype == NF_FLOAT32 && rank == 2 && dims[0] == BATCH && dims[1] == 10);
  CHECK(size == BATCH * 10 * sizeof(float));
  OK(nf_run_output_info(run, "loss", &dtype, &rank, NULL, 0, &size));
  CHECK(rank == 0 && size == sizeof(float));

  CHECK(capi_write_npy(in_work("image.npy"), "<f4", 4, image_dims, images, sizeof images) == 0);
  CHECK(capi_write_npy(in_work("label.npy"), "<i8", 1, label_dims, labels, sizeof labels) == 0);
  snprintf(arguments, sizeof arguments,
           "run '%s' -i image='%s/image.npy' -i label='%s/label.npy' -o '%s/run'", graph_path, work,
           work, work);
  CHECK(run_cli(arguments) == 0);
  expect_same_as_npy(run, "logits", 0, in_work("run/logits.npy"));
  expect_same_as_npy(run, "loss", 0, in_work("run/loss.npy"));
  nf_run_release(run);
  nf_session_release(session);
}

static void test_backward_matches_cli(const nf_graph* graph) {
  nf_session* session = NULL;
  nf_run* run;
  const float one = 1.0f;
  char arguments[8 * PATH_CAPACITY];
  nf_dtype dtype;
  int32_t rank = 0;
  int64_t dims[4];
  size_t size = 0;
  OK(nf_session_create(graph, 1, &session));
  run = make_run(session);
  OK(nf_run_forward(run, 7));
  OK(nf_run_set_output_grad(run, "loss", NF_FLOAT32, 0, NULL, &one, sizeof one));
  OK(nf_run_backward(run));
  OK(nf_run_gradient_info(run, "conv1.W", &dtype, &rank, dims, 4, &size));
  CHECK(dtype == NF_FLOAT32 && rank == 4 && dims[0] == 6 && size == 6 * 25 * sizeof(float));
  OK(nf_run_gradient_info(run, "image", NULL, &rank, dims, 4, &size));
  CHECK(rank == 4 && dims[0] == BATCH && size == sizeof images);
  /* The forward's state is consumed. */
  EXPECT_ERROR(nf_run_backward(run), NF_ERR_RUN, "training-mode forward first");

  CHECK(capi_write_npy(in_work("one.npy"), "<f4", 0, NULL, &one, sizeof one) == 0);
  snprintf(arguments, sizeof arguments,
           "backward '%s' -i image='%s/image.npy' -i label='%s/label.npy' -g loss='%s/one.npy' "
           "-o '%s/backward' --seed 7",
           graph_path, work, work, work, work);
  CHECK(run_cli(arguments) == 0);
  expect_same_as_npy(run, "logits", 0, in_work("backward/logits.npy"));
  expect_same_as_npy(run, "conv1.W", 1, in_work("backward/conv1.W.grad.npy"));
  expect_same_as_npy(run, "fc1.W", 1, in_work("backward/fc1.W.grad.npy"));
  expect_same_as_npy(run, "fc3.B", 1, in_work("backward/fc3.B.grad.npy"));
  expect_same_as_npy(run, "image", 1, in_work("backward/image.grad.npy"));
  nf_run_release(run);
  nf_session_release(session);
}

/* Progress callback: records the losses, stops at step `stop_at` (0: never). */
struct progress_log {
  int64_t steps, stop_at, last_epoch;
  double first_loss, last_loss;
};

static int32_t on_progress(void* user_data, int64_t epoch, int64_t step, double loss,
                           double accuracy, double lr) {
  struct progress_log* log = (struct progress_log*)user_data;
  if (log->steps == 0) log->first_loss = loss;
  log->last_loss = loss;
  log->last_epoch = epoch;
  ++log->steps;
  CHECK(step >= 1 && accuracy >= 0.0 && accuracy <= 1.0 && lr > 0.0);
  return log->stop_at == 0 || step < log->stop_at;
}

/* The logits of `graph` for the test batch. */
static void logits_of(const nf_graph* graph, float* logits) {
  nf_session* session = NULL;
  nf_run* run;
  OK(nf_session_create(graph, 1, &session));
  run = make_run(session);
  OK(nf_run_infer(run));
  OK(nf_run_get_output(run, "logits", logits, BATCH * 10 * sizeof(float), NULL));
  nf_run_release(run);
  nf_session_release(session);
}

static void expect_reload_same(const nf_graph* trained, const char* file) {
  nf_graph* reloaded = NULL;
  float expected[BATCH * 10], got[BATCH * 10];
  OK(nf_graph_save_file(trained, in_work(file)));
  OK(nf_graph_load_file(in_work(file), &reloaded));
  logits_of(trained, expected);
  logits_of(reloaded, got);
  CHECK(memcmp(expected, got, sizeof got) == 0);
  nf_graph_release(reloaded);
}

static void expect_buffer_reload_same(const nf_graph* trained, nf_format format) {
  nf_graph* reloaded = NULL;
  float expected[BATCH * 10], got[BATCH * 10];
  size_t size = 0;
  char* bytes;
  OK(nf_graph_save_buffer(trained, format, NULL, 0, &size));
  CHECK(size > 1000);
  bytes = (char*)malloc(size);
  EXPECT_ERROR(nf_graph_save_buffer(trained, format, bytes, size - 1, &size),
               NF_ERR_BUFFER_TOO_SMALL, "the saved graph needs");
  OK(nf_graph_save_buffer(trained, format, bytes, size, &size));
  OK(nf_graph_load_buffer(bytes, size, format, NULL, &reloaded));
  free(bytes);
  logits_of(trained, expected);
  logits_of(reloaded, got);
  CHECK(memcmp(expected, got, sizeof got) == 0);
  nf_graph_release(reloaded);
}

static void test_training(void) {
  enum { SAMPLES = 16 };
  static float samples[SAMPLES * CAPI_IMAGE_VALUES];
  static float before[120 * 400], after[120 * 400];
  int64_t targets[SAMPLES];
  const int64_t dims[] = {SAMPLES, 1, 28, 28};
  const char* config =
      "{\"optimizer\": {\"type\": \"adam\", \"lr\": 0.002}, \"batch_size\": 4, \"seed\": 3, "
      "\"log_every\": 0}";
  struct progress_log log = {0, 0, 0, 0.0, 0.0};
  nf_graph* graph = NULL;
  nf_trainer* trainer = NULL;
  double loss = 0.0, accuracy = 0.0, first_epoch_loss = 0.0;
  float changed[2] = {1.0f, 2.0f};
  const int64_t fc3b_dims[] = {10};
  float fc3b[10];

  OK(nf_graph_load_file(graph_path, &graph));
  capi_fill_batch(samples, targets, SAMPLES, 1);
  OK(nf_trainer_create(graph, config, &trainer));
  EXPECT_ERROR(nf_trainer_train_steps(trainer, 1, NULL, NULL, NULL, NULL), NF_ERR_INVALID_ARGUMENT,
               "no data");
  OK(nf_trainer_set_data(trainer, NF_FLOAT32, 4, dims, samples, sizeof samples, targets, SAMPLES));
  OK(nf_graph_get_initializer(graph, "fc1.W", before, sizeof before, NULL));
  /* 3 steps, then the callback stops the 4th call's epoch at its 2nd step. */
  OK(nf_trainer_train_steps(trainer, 3, on_progress, &log, &loss, &accuracy));
  CHECK(log.steps == 3);
  first_epoch_loss = log.first_loss;
  log.stop_at = 5;
  OK(nf_trainer_train_epochs(trainer, 10, on_progress, &log, NULL, NULL));
  CHECK(log.steps == 5 && log.last_epoch == 2);
  log.stop_at = 0;
  OK(nf_trainer_train_epochs(trainer, 8, on_progress, &log, &loss, &accuracy));
  CHECK(log.steps == 5 + 8 * 4);
  /* The loss falls: the last epoch's mean against the first steps'. */
  CHECK(loss < first_epoch_loss * 0.5);
  CHECK(accuracy > 0.5);
  OK(nf_graph_get_initializer(graph, "fc1.W", after, sizeof after, NULL));
  CHECK(memcmp(before, after, sizeof after) != 0);

  expect_reload_same(graph, "trained.json");
  expect_reload_same(graph, "trained.onnx");
  expect_buffer_reload_same(graph, NF_FORMAT_JSON);
  expect_buffer_reload_same(graph, NF_FORMAT_ONNX);

  /* Writing a weight, and reading it back. */
  OK(nf_graph_get_initializer(graph, "fc3.B", fc3b, sizeof fc3b, NULL));
  fc3b[0] = changed[0];
  fc3b[9] = changed[1];
  OK(nf_graph_set_initializer(graph, "fc3.B", NF_FLOAT32, 1, fc3b_dims, fc3b, sizeof fc3b));
  memset(fc3b, 0, sizeof fc3b);
  OK(nf_graph_get_initializer(graph, "fc3.B", fc3b, sizeof fc3b, NULL));
  CHECK(fc3b[0] == changed[0] && fc3b[9] == changed[1]);
  EXPECT_ERROR(nf_graph_set_initializer(graph, "fc3.B", NF_FLOAT32, 1, fc3b_dims, fc3b, 8),
               NF_ERR_SHAPE_MISMATCH, "initializer 'fc3.B': 8 bytes given");
  EXPECT_ERROR(nf_graph_set_initializer(graph, "fc3.B", NF_FLOAT64, 1, fc3b_dims, fc3b, 80),
               NF_ERR_UNSUPPORTED_DTYPE, "fc3.B");
  EXPECT_ERROR(nf_graph_set_initializer(graph, "nope", NF_FLOAT32, 1, fc3b_dims, fc3b, sizeof fc3b),
               NF_ERR_INVALID_GRAPH, "nope");
  nf_trainer_release(trainer);
  nf_graph_release(graph);
}

/* A progress callback that calls its own trainer: refused, and training goes on. */
static int32_t calls_its_trainer(void* user_data, int64_t epoch, int64_t step, double loss,
                                 double accuracy, double lr) {
  nf_trainer* trainer = (nf_trainer*)user_data;
  (void)epoch, (void)loss, (void)accuracy, (void)lr;
  EXPECT_ERROR(nf_trainer_train_steps(trainer, 1, NULL, NULL, NULL, NULL), NF_ERR_INVALID_ARGUMENT,
               "the trainer is training");
  EXPECT_ERROR(nf_trainer_set_data(trainer, NF_FLOAT32, 0, NULL, NULL, 0, NULL, 0),
               NF_ERR_INVALID_ARGUMENT, "the trainer is training");
  return step < 2;
}

/* What nodeflow.h promises about a host's memory and a failed call: no output
 * refers to an input array once another is set, setting an input ends a
 * pending forward, a refused seed leaves the forward for another try, and a
 * trainer's callback cannot call the trainer. */
static void test_host_memory_and_retries(const nf_graph* lenet) {
  const char* identity =
      "{\"format\": \"nodeflow.graph\", \"version\": 1, \"name\": \"g\", "
      "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2, 3]}], "
      "\"outputs\": [\"y\"], \"nodes\": [{\"op_type\": \"Reshape\", \"name\": \"y\", "
      "\"inputs\": [\"x\", \"s\"]}], \"initializers\": [{\"name\": \"s\", \"dtype\": \"int64\", "
      "\"shape\": [1], \"data\": [6]}]}";
  const int64_t dims[] = {2, 3}, sample_dims[] = {BATCH, 1, 28, 28};
  float* first = (float*)malloc(6 * sizeof(float));
  float second[6] = {7, 8, 9, 10, 11, 12}, got[6] = {0}, one = 1.0f, two[2] = {1.0f, 1.0f};
  const int64_t two_dims[] = {2};
  nf_graph* graph = NULL;
  nf_session* session = NULL;
  nf_run* run = NULL;
  nf_trainer* trainer = NULL;
  int i;

  CHECK(first != NULL);
  for (i = 0; i < 6; ++i) first[i] = (float)i;
  OK(nf_graph_load_buffer(identity, strlen(identity), NF_FORMAT_JSON, NULL, &graph));
  OK(nf_session_create(graph, 1, &session));
  OK(nf_run_create(session, &run));
  /* y is a Reshape of the borrowed x: after x is set again and its first array
   * freed, y still holds the first array's values. */
  OK(nf_run_set_input(run, "x", NF_FLOAT32, 2, dims, first, 6 * sizeof(float)));
  OK(nf_run_infer(run));
  OK(nf_run_set_input(run, "x", NF_FLOAT32, 2, dims, second, sizeof second));
  free(first);
  OK(nf_run_get_output(run, "y", got, sizeof got, NULL));
  for (i = 0; i < 6; ++i) CHECK(got[i] == (float)i);
  nf_run_release(run);
  nf_session_release(session);
  nf_graph_release(graph);

  OK(nf_session_create(lenet, 1, &session));
  OK(nf_run_create(session, &run));
  OK(nf_run_set_input(run, "image", NF_FLOAT32, 4, sample_dims, images, sizeof images));
  OK(nf_run_set_input(run, "label", NF_INT64, 1, label_dims, labels, sizeof labels));
  OK(nf_run_forward(run, 0));
  /* A seed of the wrong shape is refused; the right one then works. */
  OK(nf_run_set_output_grad(run, "loss", NF_FLOAT32, 1, two_dims, two, sizeof two));
  EXPECT_ERROR(nf_run_backward(run), NF_ERR_SHAPE_MISMATCH, "gradient for output 'loss'");
  OK(nf_run_set_output_grad(run, "loss", NF_FLOAT32, 0, NULL, &one, sizeof one));
  OK(nf_run_backward(run));
  /* Setting an input ends the pending forward. */
  OK(nf_run_forward(run, 0));
  OK(nf_run_set_input(run, "image", NF_FLOAT32, 4, sample_dims, images, sizeof images));
  EXPECT_ERROR(nf_run_backward(run), NF_ERR_RUN, "training-mode forward first");
  nf_run_release(run);
  nf_session_release(session);

  OK(nf_graph_load_file(graph_path, &graph));
  OK(nf_trainer_create(graph, "{\"optimizer\": {\"type\": \"sgd\", \"lr\": 0.01}, \"batch_size\": 2}",
                       &trainer));
  OK(nf_trainer_set_data(trainer, NF_FLOAT32, 4, sample_dims, images, sizeof images, labels, BATCH));
  OK(nf_trainer_train_epochs(trainer, 1, calls_its_trainer, trainer, NULL, NULL));
  OK(nf_trainer_train_steps(trainer, 1, NULL, NULL, NULL, NULL));
  nf_trainer_release(trainer);
  nf_graph_release(graph);
}

static void test_errors(const nf_graph* graph) {
  nf_graph* none = NULL;
  nf_session* session = NULL;
  nf_trainer* trainer = NULL;
  nf_run* run;
  float logits[BATCH * 10];
  static double wrong[BATCH * CAPI_IMAGE_VALUES];
  size_t size = 0, length = 0;
  char small[8], text[512];
  nf_status status = NF_OK;
  const char* bad_json = "{\"format\": \"nodeflow.graph\", \"version\": 1,";
  const char* unknown_op =
      "{\"format\": \"nodeflow.graph\", \"version\": 1, \"name\": \"g\", "
      "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [1, 1, 4]}], "
      "\"outputs\": [\"p\"], \"nodes\": [{\"op_type\": \"MaxPool2d\", \"name\": \"p\", "
      "\"inputs\": [\"x\"]}]}";

  EXPECT_ERROR(nf_graph_load_file(in_work("absent.json"), &none), NF_ERR_IO, "absent.json");
  CHECK(none == NULL);
  EXPECT_ERROR(nf_graph_load_file(in_work("absent.onnx"), &none), NF_ERR_IO, "absent.onnx");
  EXPECT_ERROR(nf_graph_load_buffer(bad_json, strlen(bad_json), NF_FORMAT_JSON, NULL, &none),
               NF_ERR_INVALID_GRAPH, "invalid JSON");
  EXPECT_ERROR(nf_graph_load_buffer(unknown_op, strlen(unknown_op), NF_FORMAT_JSON, NULL, &none),
               NF_ERR_INVALID_GRAPH, "nodes[0] (p).op_type: unknown op_type 'MaxPool2d'");
  EXPECT_ERROR(nf_graph_load_buffer(bad_json, strlen(bad_json), NF_FORMAT_ONNX, NULL, &none),
               NF_ERR_INVALID_GRAPH, "not a valid ModelProto");
  EXPECT_ERROR(nf_graph_load_buffer(bad_json, 4, (nf_format)7, NULL, &none),
               NF_ERR_INVALID_ARGUMENT, "format 7 is not a graph format");

  /* NULL handles and pointers. */
  EXPECT_ERROR(nf_graph_load_file(NULL, &none), NF_ERR_INVALID_ARGUMENT, "path is NULL");
  EXPECT_ERROR(nf_graph_load_file(graph_path, NULL), NF_ERR_INVALID_ARGUMENT, "graph is NULL");
  EXPECT_ERROR(nf_graph_load_buffer(NULL, 10, NF_FORMAT_JSON, NULL, &none), NF_ERR_INVALID_ARGUMENT,
               "data is NULL");
  EXPECT_ERROR(nf_graph_tensor_count(NULL, NF_LIST_INPUTS, &size), NF_ERR_INVALID_ARGUMENT,
               "graph is NULL");
  EXPECT_ERROR(nf_graph_tensor_count(graph, NF_LIST_INPUTS, NULL), NF_ERR_INVALID_ARGUMENT,
               "count is NULL");
  EXPECT_ERROR(nf_graph_tensor_info(graph, NULL, NULL, NULL, NULL, 0), NF_ERR_INVALID_ARGUMENT,
               "name is NULL");
  EXPECT_ERROR(nf_session_create(NULL, 1, &session), NF_ERR_INVALID_ARGUMENT, "graph is NULL");
  EXPECT_ERROR(nf_run_create(NULL, &run), NF_ERR_INVALID_ARGUMENT, "session is NULL");
  EXPECT_ERROR(nf_run_infer(NULL), NF_ERR_INVALID_ARGUMENT, "run is NULL");
  EXPECT_ERROR(nf_run_get_output(NULL, "logits", logits, sizeof logits, NULL),
               NF_ERR_INVALID_ARGUMENT, "run is NULL");
  EXPECT_ERROR(nf_trainer_create(NULL, "{}", &trainer), NF_ERR_INVALID_ARGUMENT, "graph is NULL");
  EXPECT_ERROR(nf_trainer_train_epochs(NULL, 1, NULL, NULL, NULL, NULL), NF_ERR_INVALID_ARGUMENT,
               "trainer is NULL");
  EXPECT_ERROR(nf_graph_save_file(NULL, in_work("x.json")), NF_ERR_INVALID_ARGUMENT,
               "graph is NULL");
  nf_graph_release(NULL);
  nf_session_release(NULL);
  nf_run_release(NULL);
  nf_trainer_release(NULL);

  /* Other arguments. */
  EXPECT_ERROR(nf_graph_tensor_name(graph, NF_LIST_INPUTS, 2, small, sizeof small, NULL),
               NF_ERR_INVALID_ARGUMENT, "index 2 is outside the 2 tensors");
  EXPECT_ERROR(nf_graph_tensor_count(graph, (nf_tensor_list)9, &size), NF_ERR_INVALID_ARGUMENT,
               "list 9 is not a tensor list");
  EXPECT_ERROR(nf_graph_tensor_info(graph, "nope", NULL, NULL, NULL, 0), NF_ERR_INVALID_GRAPH,
               "'nope' is not a tensor of the graph");
  EXPECT_ERROR(nf_session_create(graph, 0, &session), NF_ERR_INVALID_ATTRIBUTE,
               "threads must be >= 1");
  EXPECT_ERROR(nf_graph_tensor_name(graph, NF_LIST_INITIALIZERS, 0, small, 4, &length),
               NF_ERR_BUFFER_TOO_SMALL, "needs 8 bytes (with the NUL), the buffer has 4");
  CHECK(length == 7); /* conv1.W */
  EXPECT_ERROR(
      nf_trainer_create((nf_graph*)graph, "{\"optimizer\": {\"type\": \"adam\"}}", &trainer),
      NF_ERR_INVALID_CONFIG, "optimizer.lr");
  EXPECT_ERROR(nf_trainer_create((nf_graph*)graph,
                                 "{\"optimizer\": {\"type\": \"sgd\", "
                                 "\"lr\": 0.1}, \"bindings\": {\"input\": \"x\"}}",
                                 &trainer),
               NF_ERR_INVALID_GRAPH, "bindings.input");
  CHECK(trainer == NULL);

  OK(nf_session_create(graph, 1, &session));
  OK(nf_run_create(session, &run));
  EXPECT_ERROR(nf_run_get_output(run, "logits", logits, sizeof logits, NULL),
               NF_ERR_INVALID_ARGUMENT, "no output 'logits' (nothing was run yet)");
  EXPECT_ERROR(nf_run_set_input(run, "imag", NF_FLOAT32, 4, image_dims, images, sizeof images),
               NF_ERR_INVALID_GRAPH,
               "'imag' is not a graph input (the graph's inputs: image, label)");
  EXPECT_ERROR(nf_run_set_input(run, "image", (nf_dtype)99, 4, image_dims, images, sizeof images),
               NF_ERR_UNSUPPORTED_DTYPE, "dtype code 99 is not a nodeflow dtype");
  EXPECT_ERROR(nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, images, 100),
               NF_ERR_SHAPE_MISMATCH, "input 'image': 100 bytes given for float32 [4, 1, 28, 28]");
  EXPECT_ERROR(nf_run_set_input(run, "image", NF_FLOAT32, 4, NULL, images, sizeof images),
               NF_ERR_INVALID_ARGUMENT, "input 'image': dims is NULL");
  EXPECT_ERROR(nf_run_set_input(run, "image", NF_FLOAT32, -1, image_dims, images, sizeof images),
               NF_ERR_INVALID_ARGUMENT, "rank -1 < 0");
  EXPECT_ERROR(nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, NULL, sizeof images),
               NF_ERR_INVALID_ARGUMENT, "input 'image': data is NULL");
  /* A missing input, then the wrong dtype: the run names the input. */
  OK(nf_run_set_input_copy(run, "label", NF_INT64, 1, label_dims, labels, sizeof labels));
  EXPECT_ERROR(nf_run_infer(run), NF_ERR_INVALID_GRAPH, "graph input 'image' is missing");
  OK(nf_run_set_input(run, "image", NF_FLOAT64, 4, image_dims, wrong, sizeof wrong));
  EXPECT_ERROR(nf_run_infer(run), NF_ERR_UNSUPPORTED_DTYPE,
               "graph input 'image': expected dtype float32");
  OK(nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, images, sizeof images));
  EXPECT_ERROR(nf_run_backward(run), NF_ERR_RUN, "training-mode forward first");
  OK(nf_run_infer(run));
  EXPECT_ERROR(nf_run_get_output(run, "logits", logits, 16, &size), NF_ERR_BUFFER_TOO_SMALL,
               "output 'logits' needs 160 bytes, the buffer has 16");
  CHECK(size == sizeof logits);
  EXPECT_ERROR(nf_run_get_output(run, "nope", logits, sizeof logits, &size),
               NF_ERR_INVALID_ARGUMENT, "the run has no output 'nope'");
  EXPECT_ERROR(nf_run_get_gradient(run, "image", logits, sizeof logits, &size),
               NF_ERR_INVALID_ARGUMENT, "the run has no gradient 'image'");
  OK(nf_run_forward(run, 0));
  OK(nf_run_set_output_grad(run, "logits", NF_FLOAT32, 1, label_dims, logits, 16));
  EXPECT_ERROR(nf_run_backward(run), NF_ERR_SHAPE_MISMATCH, "gradient for output 'logits'");

  /* The error text: copied with its length, truncated into a small buffer; a
   * success clears it. */
  EXPECT_ERROR(nf_run_get_output(run, "nope", logits, sizeof logits, &size),
               NF_ERR_INVALID_ARGUMENT, "nope");
  CHECK(nf_last_error(&status, NULL, 0, &length) == NF_OK);
  CHECK(status == NF_ERR_INVALID_ARGUMENT && length == strlen(nf_last_error_message()));
  CHECK(nf_last_error(NULL, text, sizeof text, NULL) == NF_OK);
  CHECK(strcmp(text, nf_last_error_message()) == 0);
  CHECK(nf_last_error(NULL, small, sizeof small, &length) == NF_ERR_BUFFER_TOO_SMALL);
  CHECK(strlen(small) == sizeof small - 1 && strncmp(small, text, sizeof small - 1) == 0);
  CHECK(nf_last_error(&status, NULL, 0, NULL) == NF_OK && status == NF_ERR_INVALID_ARGUMENT);
  OK(nf_graph_tensor_count(graph, NF_LIST_INPUTS, &size));
  CHECK(nf_last_error(&status, NULL, 0, &length) == NF_OK && status == NF_OK && length == 0);
  CHECK(strcmp(nf_last_error_message(), "") == 0);

  nf_run_release(run);
  nf_session_release(session);
}

int main(int argc, char** argv) {
  nf_graph* graph = NULL;
  if (argc != 4) {
    fprintf(stderr, "usage: capi_test EXAMPLES_DIR NODEFLOW_CLI WORK_DIR\n");
    return 2;
  }
  snprintf(graph_path, sizeof graph_path, "%s/lenet5.json", argv[1]);
  snprintf(cli, sizeof cli, "%s", argv[2]);
  snprintf(work, sizeof work, "%s", argv[3]);
  capi_fill_batch(images, labels, BATCH, 0);

  test_version();
  OK(nf_graph_load_file(graph_path, &graph));
  if (graph == NULL) return 1;
  test_listing(graph);
  test_inference_matches_cli(graph);
  test_backward_matches_cli(graph);
  test_errors(graph);
  test_host_memory_and_retries(graph);
  nf_graph_release(graph);
  test_training();
  if (capi_failures) {
    fprintf(stderr, "%d check(s) failed\n", capi_failures);
    return 1;
  }
  printf("capi_test: OK\n");
  return 0;
}
