// Activations whose plain-CuPy form takes several kernels and temporaries (generic/activation.py has each
// formula; these evaluate the same expressions in one pass). Inputs and outputs are contiguous, n elements.
// relu and tanh forward are single CuPy kernels already and have no kernel here.

// gx = gy * (y > 0).
template <typename T>
__global__ void relu_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                              long long n) {
    for (long long e = first_item(); e < n; e += item_stride()) gx[e] = gy[e] * T(y[e] > T(0));
}

// y = x where x > 0, else x * negative_slope.
template <typename T>
__global__ void leaky_relu_forward(const T* __restrict__ x, T* __restrict__ y, long long n,
                                   T negative_slope) {
    for (long long e = first_item(); e < n; e += item_stride())
        y[e] = x[e] > T(0) ? x[e] : x[e] * negative_slope;
}

// gx = gy where the input was > 0 (read from y or x, which share its sign), else gy * negative_slope.
template <typename T>
__global__ void leaky_relu_backward(const T* __restrict__ gy, const T* __restrict__ y_or_x,
                                    T* __restrict__ gx, long long n, T negative_slope) {
    for (long long e = first_item(); e < n; e += item_stride())
        gx[e] = y_or_x[e] > T(0) ? gy[e] : gy[e] * negative_slope;
}

// y = (tanh(x / 2) + 1) / 2, which cannot overflow.
template <typename T>
__global__ void sigmoid_forward(const T* __restrict__ x, T* __restrict__ y, long long n) {
    for (long long e = first_item(); e < n; e += item_stride())
        y[e] = (math_tanh(x[e] * T(0.5)) + T(1)) * T(0.5);
}

// gx = gy * y * (1 - y).
template <typename T>
__global__ void sigmoid_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                                 long long n) {
    for (long long e = first_item(); e < n; e += item_stride()) gx[e] = gy[e] * y[e] * (T(1) - y[e]);
}

// gx = gy * (1 - y * y).
template <typename T>
__global__ void tanh_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                              long long n) {
    for (long long e = first_item(); e < n; e += item_stride()) gx[e] = gy[e] * (T(1) - y[e] * y[e]);
}

constexpr double SQRT_2_OVER_PI = 0.7978845608028654;
constexpr double INV_SQRT_2 = 0.7071067811865476;
constexpr double INV_SQRT_2PI = 0.3989422804014327;
constexpr double GELU_CUBIC = 0.044715;

// y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)),
// or with use_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <typename T>
__global__ void gelu_forward(const T* __restrict__ x, T* __restrict__ y, long long n, long long use_tanh) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const T v = x[e];
        const T cdf = use_tanh ? math_tanh(T(SQRT_2_OVER_PI) * (v + T(GELU_CUBIC) * v * v * v))
                               : math_erf(v * T(INV_SQRT_2));
        y[e] = (cdf + T(1)) * v * T(0.5);
    }
}

// gx = gy * d/dx [x Phi(x)] = gy (Phi(x) + x phi(x)), or the derivative of the tanh form:
// gy (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)),
// t = tanh(sqrt(2/pi) x (1 + 0.044715 x^2)).
template <typename T>
__global__ void gelu_backward(const T* __restrict__ gy, const T* __restrict__ x, T* __restrict__ gx,
                              long long n, long long use_tanh) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const T v = x[e];
        T slope;
        if (use_tanh) {
            const T v2 = v * v;
            const T t = math_tanh(T(SQRT_2_OVER_PI) * v * (T(1) + T(GELU_CUBIC) * v2));
            const T dt = (T(1) - t * t) * (T(SQRT_2_OVER_PI) * (T(1) + T(3 * GELU_CUBIC) * v2));
            slope = T(0.5) * (T(1) + t) + T(0.5) * v * dt;
        } else {
            const T cdf = T(0.5) * (T(1) + math_erf(v * T(INV_SQRT_2)));
            const T pdf = math_exp(T(-0.5) * v * v) * T(INV_SQRT_2PI);
            slope = cdf + v * pdf;
        }
        gx[e] = gy[e] * slope;
    }
}

// Row-wise softmax and log-softmax over a contiguous (rows, cols) array: one warp per row, the max and the
// sum of exponentials reduced with warp shuffles (common.cu's row_max_and_sum), then one more pass that
// writes the row.

// y = exp(x - m) / s.
template <typename T>
__global__ void softmax_forward(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols) {
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        T m, s;
        row_max_and_sum(x + r * cols, cols, m, s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            y[r * cols + c] = math_exp(x[r * cols + c] - m) / s;
    }
}

// y = (x - m) - log(s).
template <typename T>
__global__ void log_softmax_forward(const T* __restrict__ x, T* __restrict__ y, long long rows,
                                    long long cols) {
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        T m, s;
        row_max_and_sum(x + r * cols, cols, m, s);
        const T log_s = math_log(s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            y[r * cols + c] = (x[r * cols + c] - m) - log_s;
    }
}

// Both backward passes, a warp per row: one warp-summed reduction s of the row, then gx from gy, y and s.
// softmax: s = sum(gy * y), gx = gy * y - y * s. log_softmax (y the log-probabilities): s = sum(gy),
// gx = gy - exp(y) * s.
template <typename T, bool LOG>
__device__ inline void softmax_backward_rows(const T* __restrict__ gy, const T* __restrict__ y,
                                             T* __restrict__ gx, long long rows, long long cols) {
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        const T* g = gy + r * cols;
        const T* p = y + r * cols;
        T s = T(0);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE) s += LOG ? g[c] : g[c] * p[c];
        s = warp_sum(s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            gx[r * cols + c] = LOG ? g[c] - math_exp(p[c]) * s : g[c] * p[c] - p[c] * s;
    }
}

template <typename T>
__global__ void softmax_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                                 long long rows, long long cols) {
    softmax_backward_rows<T, false>(gy, y, gx, rows, cols);
}

template <typename T>
__global__ void log_softmax_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                                     long long rows, long long cols) {
    softmax_backward_rows<T, true>(gy, y, gx, rows, cols);
}
