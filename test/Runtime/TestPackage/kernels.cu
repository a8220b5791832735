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

// For the zero-copy mode: the same computation without accumulation (no
// memset node needed), and a copy as a kernel, so every node is a kernel
// node whose parameters are all pointers.
extern "C" __global__ void test_affine(const float *x, const float *w,
                                       float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 256)
    y[i] = x[i] * 2.0f + w[i];
}

extern "C" __global__ void test_relu_copy(const float *y, float *out,
                                          float *copy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 256) {
    float r = y[i] > 0.0f ? y[i] : 0.0f;
    out[i] = r;
    copy[i] = r;
  }
}
