/* The installed C API (nodeflow::nodeflow_c): a graph from memory, run once. */
#include <nodeflow.h>
#include <string.h>

int main(void) {
  static const char* graph_json =
      "{\"format\": \"nodeflow.graph\", \"version\": 1, \"name\": \"c_pool\", "
      "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [1, 1, 4]}], "
      "\"outputs\": [\"pool\"], \"nodes\": [{\"op_type\": \"MaxPool\", \"name\": \"pool\", "
      "\"inputs\": [\"x\"], \"attributes\": {\"kernel_shape\": [2]}}]}";
  const float x[4] = {1, 3, 2, 4};
  const int64_t dims[3] = {1, 1, 4};
  float y[3] = {0, 0, 0};
  uint32_t abi = 0;
  nf_graph* graph = NULL;
  nf_session* session = NULL;
  nf_run* run = NULL;
  int ok =
      nf_version(&abi, NULL, 0, NULL) == NF_OK && abi >= NF_ABI_VERSION &&
      nf_graph_load_buffer(graph_json, strlen(graph_json), NF_FORMAT_JSON, NULL, &graph) == NF_OK &&
      nf_session_create(graph, 1, &session) == NF_OK && nf_run_create(session, &run) == NF_OK &&
      nf_run_set_input(run, "x", NF_FLOAT32, 3, dims, x, sizeof x) == NF_OK &&
      nf_run_infer(run) == NF_OK && nf_run_get_output(run, "pool", y, sizeof y, NULL) == NF_OK;
  nf_run_release(run);
  nf_session_release(session);
  nf_graph_release(graph);
  return ok && y[0] == 3 && y[1] == 3 && y[2] == 4 ? 0 : 1;
}
