// Helpers shared by every kernel file. rawmodule.py prepends this text to each .cu file before compiling it:
// NVRTC is given no include path, and CuPy's disk cache is keyed on the source text, so an edit here must
// change the text of every module that uses it. No host #includes: NVRTC provides the CUDA math functions.
//
// Conventions: every integer parameter is `long long` (Python passes np.int64) and every floating-point one
// is T (np.float32 / np.float64 matching the arrays), so one rule covers every launch.

// ------------------------------------------------------------------------------------------ grid-stride
// Item loops: thread t of the grid handles items t, t + grid size, t + 2 * grid size, ...
__device__ inline long long first_item() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline long long item_stride() { return (long long)gridDim.x * blockDim.x; }

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

// m = max(row) and s = sum(exp(row - m)) of row x[0..cols), the same in every lane of the warp.
template <typename T>
__device__ inline void row_max_and_sum(const T* x, long long cols, T& m, T& s) {
    m = -positive_infinity<T>();
    for (long long c = lane_id(); c < cols; c += WARP_SIZE) m = math_fmax(m, x[c]);
    m = warp_max(m);
    s = T(0);
    for (long long c = lane_id(); c < cols; c += WARP_SIZE) s += math_exp(x[c] - m);
    s = warp_sum(s);
}
