/* The C example: an application that uses a package compiled from
 * examples/tiny_mlp/model.onnx through the typed header the package carries
 * (model.h: `model_run`) and the runtime library libcgrt.
 *
 *   build/bin/cgc examples/tiny_mlp/model.onnx -o pkg
 *   make -C examples/c PACKAGE=$PWD/pkg
 *   examples/c/tiny_mlp_c pkg
 *
 * It fills x[i] = sin(0.37 i), runs one inference and prints the first
 * outputs and their sum (the C++ and Python examples print the same lines).
 * Exit status 0 on success, 2 on a runtime error (message on stderr). */

#include "model.h" /* from the package: includes cgrt/cgrt.h */

#include <math.h>
#include <stdio.h>

enum { kWidth = 64 };

/* Prints a failed status, frees it and returns 1; returns 0 for success. */
static int failed(cgrt_status status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "tiny_mlp_c: %s failed: %s\n", what,
          cgrt_status_get_message(status));
  cgrt_status_free(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PACKAGE_DIR\n", argv[0]);
    return 2;
  }
  cgrt_model_options options;
  cgrt_model_options_init(&options); /* device 0 */
  cgrt_model *model = NULL;
  if (failed(cgrt_model_load(argv[1], &options, &model), "cgrt_model_load"))
    return 2;

  float x[kWidth], y[kWidth];
  for (int i = 0; i < kWidth; ++i)
    x[i] = (float)sin(0.37 * i);
  /* The typed wrapper of model.h checks nothing itself: cgrt_model_run
   * validates dtypes and shapes against the package. */
  int status = failed(model_run(model, x, y), "model_run") ? 2 : 0;
  if (status == 0) {
    double sum = 0;
    for (int i = 0; i < kWidth; ++i)
      sum += y[i];
    printf("y[0:4] = %.6f %.6f %.6f %.6f\n", y[0], y[1], y[2], y[3]);
    printf("sum(y) = %.6f\n", sum);
  }
  cgrt_model_release(model);
  return status;
}
