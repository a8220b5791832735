// Host definitions that let a cgc package's kernels.cu compile as C++ and run
// on the CPU (utils/ci/emulate.py). A launch runs its blocks one after the
// other (in a seeded order); the threads of a block are fibers of one host
// thread, each run until it reaches a barrier (__syncthreads, or a warp
// shuffle, which goes through shared slots) or returns, in a seeded order
// per phase, so a read that a missing barrier leaves unordered sees either
// order. A phase whose threads stopped at different kinds of barrier is
// reported: the templates reach every barrier with the whole block.
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <tuple>
#include <utility>
#include <ucontext.h>
#include <vector>
using namespace std;

struct cgc_dim3 { unsigned x = 0, y = 0, z = 0; };
static cgc_dim3 threadIdx, blockIdx, blockDim, gridDim;

// --- fibers ----------------------------------------------------------------
enum { CGC_NEW, CGC_WAITING, CGC_DONE };
enum { CGC_SYNC = 1, CGC_SHUFFLE = 2 };
struct CgcFiber {
  jmp_buf jb;
  ucontext_t uc;
  char *stack = nullptr;
  bool started = false;
  int state = CGC_NEW, kind = 0;
  unsigned shuffles = 0;
  unsigned votes = 0; ///< __syncthreads_or calls of this block so far
};
static const size_t kCgcStack = 256 * 1024;
static std::vector<CgcFiber> cgc_fibers;
static int cgc_current;
static jmp_buf cgc_scheduler;
static int cgc_kernel;
static void **cgc_args;
static const char *cgc_error;
static unsigned long long cgc_conditions[64];
static void cgc_dispatch(int kernel, void **args);

/// Calls kernel `f` with its parameters (arena pointers, a condition handle)
/// taken from the launch's argument slots.
template <typename... P, size_t... I>
static void cgc_call_with(void (*f)(P...), void **a, std::index_sequence<I...>) {
  f(((P)(uintptr_t)a[I])...);
}
template <typename... P> static void cgc_call(void (*f)(P...), void **a) {
  cgc_call_with(f, a, std::index_sequence_for<P...>{});
}

static void cgc_fiber_main() {
  for (;;) {
    cgc_dispatch(cgc_kernel, cgc_args);
    CgcFiber &f = cgc_fibers[cgc_current];
    f.state = CGC_DONE;
    if (!_setjmp(f.jb)) _longjmp(cgc_scheduler, 1);
  }
}

static void cgc_barrier(int kind) {
  CgcFiber &f = cgc_fibers[cgc_current];
  f.state = CGC_WAITING;
  f.kind = kind;
  if (!_setjmp(f.jb)) _longjmp(cgc_scheduler, 1);
}

static inline void __syncthreads() { cgc_barrier(CGC_SYNC); }
// One host thread: every write is already visible to every block.
static inline void __threadfence() {}

// The prelude's cgc_wait_for_flag: blocks run one at a time, so a flag that
// no earlier block set never will be; the launch reports it (and goes on).
static inline void cgc_host_wait_for_flag(const unsigned int *flag) {
  if (*flag == 0u)
    cgc_error = "a block waits for a flag that no block before it set "
                "(on a GPU it would wait forever)";
}

// __syncthreads_or: a barrier that returns whether any thread's predicate
// held. Call v of a block ORs into slot v % 3 and, past the barrier,
// clears slot (v + 2) % 3, which call v + 2 uses: every thread has passed
// call v + 1's barrier, so has finished reading it, before any thread
// reaches call v + 2. A block starts with all three clear.
static int cgc_votes[3];
static inline int __syncthreads_or(int predicate) {
  unsigned v = cgc_fibers[cgc_current].votes++;
  if (predicate) cgc_votes[v % 3] = 1;
  cgc_barrier(CGC_SYNC);
  int any = cgc_votes[v % 3];
  cgc_votes[(v + 2) % 3] = 0;
  return any;
}
static inline void __syncwarp(unsigned = 0xffffffffu) { cgc_barrier(CGC_SHUFFLE); }

static unsigned cgc_linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static uint64_t cgc_rng = 0x9E3779B97F4A7C15ull;
static unsigned cgc_random(unsigned n) {
  cgc_rng ^= cgc_rng << 13;
  cgc_rng ^= cgc_rng >> 7;
  cgc_rng ^= cgc_rng << 17;
  return (unsigned)(cgc_rng % n);
}
static void cgc_permute(std::vector<unsigned> &v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[cgc_random((unsigned)i)]);
}

/// Runs one block: every fiber until all have returned.
static bool cgc_run_block(unsigned n) {
  cgc_votes[0] = cgc_votes[1] = cgc_votes[2] = 0;
  for (unsigned t = 0; t < n; ++t) {
    cgc_fibers[t].state = CGC_NEW;
    cgc_fibers[t].shuffles = 0;
    cgc_fibers[t].votes = 0;
  }
  std::vector<unsigned> order(n);
  for (unsigned t = 0; t < n; ++t) order[t] = t;
  for (;;) {
    cgc_permute(order);
    for (unsigned t : order) {
      CgcFiber &f = cgc_fibers[t];
      if (f.state == CGC_DONE) continue;
      cgc_current = (int)t;
      threadIdx.x = t % blockDim.x;
      threadIdx.y = (t / blockDim.x) % blockDim.y;
      threadIdx.z = t / (blockDim.x * blockDim.y);
      if (!_setjmp(cgc_scheduler)) {
        if (!f.started) {
          f.started = true;
          getcontext(&f.uc);
          f.uc.uc_stack.ss_sp = f.stack;
          f.uc.uc_stack.ss_size = kCgcStack;
          f.uc.uc_link = nullptr;
          makecontext(&f.uc, cgc_fiber_main, 0);
          setcontext(&f.uc);
        }
        _longjmp(f.jb, 1);
      }
    }
    int kind = 0;
    bool waiting = false;
    for (unsigned t = 0; t < n; ++t) {
      if (cgc_fibers[t].state != CGC_WAITING) continue;
      if (kind && cgc_fibers[t].kind != kind) {
        cgc_error = "threads of a block stopped at different barriers "
                    "(__syncthreads and a warp shuffle)";
        return false;
      }
      kind = cgc_fibers[t].kind;
      waiting = true;
    }
    if (!waiting) return true;
  }
}

extern "C" const char *cgc_emu_launch(int kernel, const unsigned *grid,
                                      const unsigned *block, void **args,
                                      unsigned long long seed) {
  cgc_rng = seed * 2654435761ull + 0x9E3779B97F4A7C15ull;
  cgc_error = nullptr;
  unsigned n = block[0] * block[1] * block[2];
  if (n == 0 || n > 1024) return "block size out of range";
  while (cgc_fibers.size() < n) {
    cgc_fibers.emplace_back();
    cgc_fibers.back().stack = (char *)mmap(nullptr, kCgcStack, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  cgc_kernel = kernel;
  cgc_args = args;
  blockDim = {block[0], block[1], block[2]};
  gridDim = {grid[0], grid[1], grid[2]};
  std::vector<unsigned> blocks(grid[0] * grid[1] * grid[2]);
  for (unsigned b = 0; b < blocks.size(); ++b) blocks[b] = b;
  cgc_permute(blocks);
  for (unsigned b : blocks) {
    blockIdx = {b % grid[0], (b / grid[0]) % grid[1], b / (grid[0] * grid[1])};
    if (!cgc_run_block(n)) return cgc_error;
  }
  return cgc_error;
}

/// Returns the fibers' stacks (a suite loads many packages in one process).
extern "C" void cgc_emu_release() {
  for (CgcFiber &f : cgc_fibers) munmap(f.stack, kCgcStack);
  cgc_fibers.clear();
}

static const unsigned kCgcHandles = sizeof cgc_conditions / sizeof cgc_conditions[0];

extern "C" unsigned long long cgc_emu_condition(int handle) {
  return (unsigned)handle < kCgcHandles ? cgc_conditions[handle] : 0;
}

/// The device built-in a condition kernel calls: the value the conditional
/// node with this handle reads next.
extern "C" void cudaGraphSetConditional(unsigned long long handle, unsigned int value) {
  if (handle >= kCgcHandles) {
    fprintf(stderr, "emulate: condition handle %llu out of range\n", handle);
    abort();
  }
  cgc_conditions[handle] = value;
}

// --- warp shuffles: through slots, one barrier each; two slot sets so that
// a shuffle's writes never meet the previous shuffle's reads ----------------
static unsigned long long cgc_slots[2][1024];
template <typename T> static T cgc_shuffle(T v, int src) {
  static_assert(sizeof(T) <= 8, "shuffle of a value above 8 bytes");
  unsigned me = cgc_linear_tid();
  unsigned parity = cgc_fibers[cgc_current].shuffles++ & 1;
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof v);
  cgc_slots[parity][me] = bits;
  cgc_barrier(CGC_SHUFFLE);
  T r = v;
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  if (src >= 0 && (unsigned)src < n) memcpy(&r, &cgc_slots[parity][src], sizeof r);
  return r;
}
static inline int cgc_lane_base(int width) {
  return (int)(cgc_linear_tid() & ~31u) + ((int)(cgc_linear_tid() & 31u) / width) * width;
}
template <typename T> static T __shfl_xor_sync(unsigned, T v, int o, int width = 32) {
  int base = cgc_lane_base(width), lane = (int)cgc_linear_tid() - base;
  return cgc_shuffle(v, (lane ^ o) < width ? base + (lane ^ o) : -1);
}
template <typename T> static T __shfl_down_sync(unsigned, T v, unsigned o, int width = 32) {
  int base = cgc_lane_base(width), lane = (int)cgc_linear_tid() - base;
  return cgc_shuffle(v, lane + (int)o < width ? base + lane + (int)o : -1);
}
template <typename T> static T __shfl_up_sync(unsigned, T v, unsigned o, int width = 32) {
  int base = cgc_lane_base(width), lane = (int)cgc_linear_tid() - base;
  return cgc_shuffle(v, lane >= (int)o ? base + lane - (int)o : -1);
}
template <typename T> static T __shfl_sync(unsigned, T v, int src, int width = 32) {
  int base = cgc_lane_base(width);
  return cgc_shuffle(v, base + (src % width));
}

// --- mma.sync: each lane leaves its fragments in slots, one barrier, then
// computes its four accumulators from the warp's fragments (the PTX ISA's
// layouts); kind 0 f16, 1 bf16 (m16n8k16), 2 tf32 (m16n8k8) ---------------
static unsigned cgc_mma_slots[2][1024][6];
static float cgc_host_from_f16(unsigned short h);
static float cgc_mma_value(unsigned word, int half, int kind) {
  if (kind == 2) { float f; memcpy(&f, &word, 4); return f; }
  unsigned short h = (unsigned short)(half ? word >> 16 : word & 0xffff);
  if (kind == 0) return cgc_host_from_f16(h);
  unsigned u = (unsigned)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static void cgc_host_mma(float *d, const unsigned *a, const unsigned *b, int kind) {
  unsigned me = cgc_linear_tid();
  unsigned parity = cgc_fibers[cgc_current].shuffles++ & 1;
  unsigned *mine = cgc_mma_slots[parity][me];
  for (int i = 0; i < 4; ++i) mine[i] = a[i];
  mine[4] = b[0];
  mine[5] = b[1];
  cgc_barrier(CGC_SHUFFLE);
  const unsigned base = me & ~31u, lane = me & 31u, g = lane / 4, t4 = lane % 4;
  const int K = kind == 2 ? 8 : 16;
  for (int c = 0; c < 4; ++c) {
    const int row = (int)g + (c / 2) * 8, col = (int)t4 * 2 + c % 2;
    double sum = 0;
    for (int k = 0; k < K; ++k) {
      // A: 16-bit words hold k pairs (lane t4 = k%8/2), tf32 one k (t4 = k%4);
      // registers: row+8 -> +1, upper k half -> +2. B likewise, col = group.
      const int kh = kind == 2 ? k / 4 : k / 8;
      const int kl = kind == 2 ? k % 4 : (k % 8) / 2;
      const int half = kind == 2 ? 0 : k % 2;
      const unsigned *fa = cgc_mma_slots[parity][base + (row % 8) * 4 + kl];
      const unsigned *fb = cgc_mma_slots[parity][base + col * 4 + kl];
      float x = cgc_mma_value(fa[(row >= 8) + 2 * kh], half, kind);
      float y = cgc_mma_value(fb[4 + kh], half, kind);
      sum += (double)x * (double)y;
    }
    d[c] = (float)((double)d[c] + sum);
  }
}

// --- ldmatrix .trans: each lane leaves its row address, one barrier, then
// reads its registers from the rows the warp's lanes named ----------------
static const unsigned short *cgc_row_slots[2][1024];
static void cgc_host_ldmatrix_trans(unsigned *r, const unsigned short *row, int tiles) {
  unsigned me = cgc_linear_tid();
  unsigned parity = cgc_fibers[cgc_current].shuffles++ & 1;
  cgc_row_slots[parity][me] = row;
  cgc_barrier(CGC_SHUFFLE);
  const unsigned base = me & ~31u, lane = me & 31u;
  for (int i = 0; i < tiles; ++i) {
    const unsigned short *r0 = cgc_row_slots[parity][base + 8 * i + (lane % 4) * 2];
    const unsigned short *r1 = cgc_row_slots[parity][base + 8 * i + (lane % 4) * 2 + 1];
    r[i] = (unsigned)r0[lane / 4] | ((unsigned)r1[lane / 4] << 16);
  }
}
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
static inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

// --- bit casts, atomics (one host thread: plain read-modify-write) ---------
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline int __float_as_int(float f) { int u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
template <typename T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> static inline T atomicMax(T *p, T v) { T old = *p; *p = old > v ? old : v; return old; }
template <typename T> static inline T atomicMin(T *p, T v) { T old = *p; *p = old < v ? old : v; return old; }
template <typename T> static inline T atomicExch(T *p, T v) { T old = *p; *p = v; return old; }
template <typename T> static inline T atomicCAS(T *p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }

// --- f16: the conversions PTX's cvt does, rounding to nearest even ---------
static inline unsigned short cgc_host_to_f16(double d) {
  unsigned short sign = std::signbit(d) ? 0x8000 : 0;
  double a = std::fabs(d);
  if (a != a) return 0x7fff;                      // cvt's canonical NaN
  if (a >= 65520.0) return sign | 0x7c00;         // rounds to infinity
  if (a < 0x1p-14) return sign | (unsigned short)std::nearbyint(a * 0x1p24);
  int e;
  std::frexp(a, &e);                              // a = m * 2^e, m in [0.5, 1)
  double q = std::nearbyint(std::ldexp(a, 11 - e)); // 11 bits, [1024, 2048]
  if (q == 2048.0) { q = 1024.0; ++e; }
  if (e - 1 + 15 >= 31) return sign | 0x7c00;
  return sign | (unsigned short)(((e - 1 + 15) << 10) | ((unsigned)q - 1024));
}
static inline float cgc_host_from_f16(unsigned short h) {
  unsigned e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp((float)m, -24)
          : e == 31 ? (m ? NAN : INFINITY)
                    : std::ldexp((float)(m | 1024), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static inline float2 make_float2(float x, float y) { return {x, y}; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __fdividef(float a, float b) { return a / b; }
template <typename T> static inline T __ldg(const T *p) { return *p; }

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
/// An asm statement emulate.py has no host version of: reaching it fails.
static inline void cgc_unknown_asm(const char *text) {
  fprintf(stderr, "emulate: reached an asm statement without a host version: %s\n", text);
  abort();
}
#define asm(...) cgc_unknown_asm(#__VA_ARGS__)
