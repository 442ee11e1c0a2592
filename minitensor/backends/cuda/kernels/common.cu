// Helpers shared by every kernel file. rawmodule.py prepends this text to each .cu file before compiling it:
// CuPy's disk cache is keyed on the source text, so an edit here must change the text of every module that
// uses it. No host #includes: NVRTC provides the CUDA math functions; cuda_fp16.h and cuda_bf16.h (the
// __half and __nv_bfloat16 types) are found on the include path CuPy gives NVRTC (the CUDA toolkit's,
// $CUDA_PATH/include, or the headers' wheel).
//
// Conventions: every integer parameter is `long long` (Python passes np.int64); array elements are T
// (float, double, __half or __nv_bfloat16); a floating-point scalar is acc_t<T> (np.float32 for the 16-bit
// types), so one rule covers every launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// ------------------------------------------------------------------------------------------ accumulation
// Kernels read T, compute in acc_t<T> and write T: float and double compute in their own type, the 16-bit
// types in float (as PyTorch's opmath_t), so a sum over a row or a window is rounded once, at the store.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };
template <typename T> using acc_t = typename Acc<T>::type;

__device__ inline float to_acc(float v) { return v; }
__device__ inline double to_acc(double v) { return v; }
__device__ inline float to_acc(__half v) { return __half2float(v); }
__device__ inline float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ inline T from_acc(acc_t<T> v) { return v; }
template <> __device__ inline __half from_acc<__half>(float v) { return __float2half(v); }  // nearest even
template <> __device__ inline __nv_bfloat16 from_acc<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

// ------------------------------------------------------------------------------------------ grid-stride
// Item loops: thread t of the grid handles items t, t + grid size, t + 2 * grid size, ...
__device__ inline long long first_item() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline long long item_stride() { return (long long)gridDim.x * blockDim.x; }

// The same loop as a range: `for (const long long e : grid_stride(total))`.
struct GridStride {
    struct Item {
        long long e, step;
        __device__ long long operator*() const { return e; }
        __device__ Item& operator++() { e += step; return *this; }
        __device__ bool operator!=(const Item& end) const { return e < end.e; }
    };
    long long total;
    __device__ Item begin() const { return {first_item(), item_stride()}; }
    __device__ Item end() const { return {total, 0}; }
};
__device__ inline GridStride grid_stride(long long total) { return {total}; }

// Where item e sits when the items are planes of rows x cols laid end to end (NCHW):
// `const auto [plane, row, col] = plane_cell(e, rows, cols);`.
struct PlaneCell { long long plane, row, col; };
__device__ inline PlaneCell plane_cell(long long e, long long rows, long long cols) {
    return {e / (rows * cols), (e / cols) % rows, e % cols};
}

// Row loops: one warp per row (blockDim.x is a multiple of WARP_SIZE), rows grid-strided by warp, so the
// 32 lanes of a warp always take the same rows and may exchange values with warp shuffles.
constexpr int WARP_SIZE = 32;
__device__ inline int lane_id() { return threadIdx.x % WARP_SIZE; }
__device__ inline long long first_warp() { return first_item() / WARP_SIZE; }
__device__ inline long long warp_stride() { return item_stride() / WARP_SIZE; }

// ------------------------------------------------------------------------- float / double math overloads
// The f-suffixed functions keep float arithmetic in float (a bare exp(float) would be resolved by overload
// rules that differ between compilers).
__device__ inline float math_exp(float v) { return expf(v); }
__device__ inline double math_exp(double v) { return exp(v); }
__device__ inline float math_log(float v) { return logf(v); }
__device__ inline double math_log(double v) { return log(v); }
__device__ inline float math_tanh(float v) { return tanhf(v); }
__device__ inline double math_tanh(double v) { return tanh(v); }
__device__ inline float math_erf(float v) { return erff(v); }
__device__ inline double math_erf(double v) { return erf(v); }
__device__ inline float math_fmax(float a, float b) { return fmaxf(a, b); }
__device__ inline double math_fmax(double a, double b) { return fmax(a, b); }

// ------------------------------------------------------------------------------------------- atomics
// atomicAdd on __half exists from compute capability 7.0 (Volta, the first GPUs with Tensor Cores), on
// __nv_bfloat16 from 8.0 (Ampere); on older GPUs those instances trap instead of failing the whole module.
__device__ inline void atomic_add(float* address, float v) { atomicAdd(address, v); }
__device__ inline void atomic_add(double* address, double v) { atomicAdd(address, v); }
__device__ inline void atomic_add(__half* address, __half v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
    __trap();
#else
    atomicAdd(address, v);
#endif
}
__device__ inline void atomic_add(__nv_bfloat16* address, __nv_bfloat16 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    atomicAdd(address, v);
#endif
}

template <typename T> __device__ T positive_infinity();
template <> __device__ inline float positive_infinity<float>() { return __int_as_float(0x7f800000); }
template <> __device__ inline double positive_infinity<double>() {
    return __longlong_as_double(0x7ff0000000000000LL);
}
template <typename T> __device__ T quiet_nan();
template <> __device__ inline float quiet_nan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ inline double quiet_nan<double>() {
    return __longlong_as_double(0x7ff8000000000000LL);
}

// ---------------------------------------------------------------------------------------- warp reductions
// Butterfly (xor) reductions: every lane ends with the same, bit-identical result.
template <typename T>
__device__ inline T warp_sum(T v) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

template <typename T>
__device__ inline T warp_max(T v) {  // fmax ignores NaN; a NaN in a row still reaches its sum of exps
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        v = math_fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// m = max(row) and s = sum(exp(row - m)) of row x[0..cols), in acc_t<T>, the same in every lane of the warp.
template <typename T>
__device__ inline void row_max_and_sum(const T* x, long long cols, acc_t<T>& m, acc_t<T>& s) {
    using A = acc_t<T>;
    m = -positive_infinity<A>();
    for (long long c = lane_id(); c < cols; c += WARP_SIZE) m = math_fmax(m, to_acc(x[c]));
    m = warp_max(m);
    s = A(0);
    for (long long c = lane_id(); c < cols; c += WARP_SIZE) s += math_exp(to_acc(x[c]) - m);
    s = warp_sum(s);
}
