// Kernels of the hand-written test package; compiled by nvcc at build time
// to an sm_90 cubin and compute_90 PTX (no GPU needed).

extern "C" __global__ void test_affine_accumulate(const float *x,
                                                  const float *w, float *y,
                                                  int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Accumulates, so a missing memset node shows up on the second run.
  if (i < n)
    y[i] += x[i] * 2.0f + w[i];
}

extern "C" __global__ void test_relu(const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = y[i] > 0.0f ? y[i] : 0.0f;
}
