/* The README's C example: LeNet-5's logits for one image through libnodeflow.so.
 *   cc -std=c99 lenet5_run.c $(pkg-config --cflags --libs nodeflow) -o lenet5_run
 *   ./lenet5_run examples/lenet5.json */
#include <nodeflow.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(void) {
  fprintf(stderr, "error: %s\n", nf_last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  static float image[28 * 28];
  const int64_t image_dims[] = {1, 1, 28, 28}, label_dims[] = {1};
  const int64_t label = 0;
  nf_graph* graph = NULL;
  nf_session* session = NULL;
  nf_run* run = NULL;
  int64_t dims[2];
  int32_t rank = 0;
  size_t size = 0, i;
  float* logits;
  for (i = 0; i < 28 * 28; ++i) image[i] = (float)(i % 28) / 28.0f;
  if (argc != 2) return 2;
  if (nf_graph_load_file(argv[1], &graph) != NF_OK) return fail();
  if (nf_session_create(graph, 1, &session) != NF_OK || nf_run_create(session, &run) != NF_OK ||
      nf_run_set_input(run, "image", NF_FLOAT32, 4, image_dims, image, sizeof image) != NF_OK ||
      nf_run_set_input(run, "label", NF_INT64, 1, label_dims, &label, sizeof label) != NF_OK ||
      nf_run_infer(run) != NF_OK)
    return fail();
  /* Ask for the output's shape and size, then copy it into our buffer. */
  if (nf_run_output_info(run, "logits", NULL, &rank, dims, 2, &size) != NF_OK) return fail();
  logits = (float*)malloc(size);
  if (nf_run_get_output(run, "logits", logits, size, NULL) != NF_OK) return fail();
  for (i = 0; i < (size_t)dims[1]; ++i) printf("%s%.4f", i ? " " : "logits: ", logits[i]);
  printf("\n");
  free(logits);
  nf_run_release(run);
  nf_session_release(session);
  nf_graph_release(graph);
  return 0;
}
