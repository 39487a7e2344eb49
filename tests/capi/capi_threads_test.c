/* One graph and one session run by 8 threads at once through the C API, each
 * with its own nf_run: inference, and training-mode forward and backward,
 * must give the results of a lone run bit for bit. Run under ThreadSanitizer
 * in CI (.ci/run). Usage: capi_threads_test GRAPH.json */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "capi_support.h"

enum { THREADS = 8, ROUNDS = 3, BATCH = 2, GRAD_VALUES = 120 * 400 };

static const int64_t image_dims[] = {BATCH, 1, 28, 28};
static const int64_t label_dims[] = {BATCH};
static float images[BATCH * CAPI_IMAGE_VALUES];
static int64_t labels[BATCH];

struct result {
  float logits[BATCH * 10];
  float train_logits[BATCH * 10];
  float grad[GRAD_VALUES];
  int failed;
};

static struct result expected, results[THREADS];
static const nf_session* shared_session;

/* One inference and one forward/backward on `session`; nonzero on failure. */
static int run_once(const nf_session* session, struct result* out) {
  nf_run* run = NULL;
  const float one = 1.0f;
  int failed = nf_run_create(session, &run) != NF_OK;
  failed =
      failed ||
      nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, images, sizeof images) != NF_OK ||
      nf_run_set_input(run, "label", NF_INT64, 1, label_dims, labels, sizeof labels) != NF_OK ||
      nf_run_infer(run) != NF_OK ||
      nf_run_get_output(run, "logits", out->logits, sizeof out->logits, NULL) != NF_OK ||
      nf_run_forward(run, 11) != NF_OK ||
      nf_run_get_output(run, "logits", out->train_logits, sizeof out->train_logits, NULL) !=
          NF_OK ||
      nf_run_set_output_grad(run, "loss", NF_FLOAT32, 0, NULL, &one, sizeof one) != NF_OK ||
      nf_run_backward(run) != NF_OK ||
      nf_run_get_gradient(run, "fc1.W", out->grad, sizeof out->grad, NULL) != NF_OK;
  if (failed) fprintf(stderr, "run failed: %s\n", nf_last_error_message());
  nf_run_release(run);
  return failed;
}

static void* thread_main(void* arg) {
  struct result* out = (struct result*)arg;
  int round;
  for (round = 0; round < ROUNDS && !out->failed; ++round) {
    out->failed = run_once(shared_session, out);
    if (!out->failed && memcmp(out, &expected, offsetof(struct result, failed)) != 0) {
      fprintf(stderr, "thread %d, round %d: results differ from the lone run\n",
              (int)(out - results), round);
      out->failed = 1;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  nf_graph* graph = NULL;
  nf_session* session = NULL;
  pthread_t threads[THREADS];
  int i;
  if (argc != 2) {
    fprintf(stderr, "usage: capi_threads_test GRAPH.json\n");
    return 2;
  }
  capi_fill_batch(images, labels, BATCH, 0);
  OK(nf_graph_load_file(argv[1], &graph));
  OK(nf_session_create(graph, 1, &session));
  /* The session keeps the graph: release it before the threads use it. */
  nf_graph_release(graph);
  if (session == NULL || run_once(session, &expected)) return 1;
  shared_session = session;
  for (i = 0; i < THREADS; ++i)
    CHECK(pthread_create(&threads[i], NULL, thread_main, &results[i]) == 0);
  for (i = 0; i < THREADS; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(!results[i].failed);
  }
  nf_session_release(session);
  if (capi_failures) return 1;
  printf("capi_threads_test: %d threads x %d rounds gave identical results\n", THREADS, ROUNDS);
  return 0;
}
