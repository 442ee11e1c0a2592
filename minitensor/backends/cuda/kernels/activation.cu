// Activations whose plain-CuPy form takes several kernels and temporaries (generic/activation.py has each
// formula; these evaluate the same expressions in one pass, in acc_t<T>). Inputs and outputs are contiguous, n
// elements. relu and tanh forward are single CuPy kernels already and have no kernel here.

// gx = gy where y > 0, else 0 (PyTorch's threshold_backward: a NaN or infinite gy there gives 0, not NaN).
template <typename T>
__global__ void relu_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                              long long n) {
    for (long long e = first_item(); e < n; e += item_stride())
        gx[e] = from_acc<T>(to_acc(y[e]) <= 0 ? acc_t<T>(0) : to_acc(gy[e]));  // gy at NaN, as PyTorch
}

// y = x where x > 0, else x * negative_slope.
template <typename T>
__global__ void leaky_relu_forward(const T* __restrict__ x, T* __restrict__ y, long long n,
                                   acc_t<T> negative_slope) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const acc_t<T> v = to_acc(x[e]);
        y[e] = from_acc<T>(v > 0 ? v : v * negative_slope);
    }
}

// gx = gy where the input was > 0 (read from y or x, which share its sign), else gy * negative_slope.
template <typename T>
__global__ void leaky_relu_backward(const T* __restrict__ gy, const T* __restrict__ y_or_x,
                                    T* __restrict__ gx, long long n, acc_t<T> negative_slope) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const acc_t<T> g = to_acc(gy[e]);
        gx[e] = from_acc<T>(to_acc(y_or_x[e]) > 0 ? g : g * negative_slope);
    }
}

// y = (tanh(x / 2) + 1) / 2, which cannot overflow.
template <typename T>
__global__ void sigmoid_forward(const T* __restrict__ x, T* __restrict__ y, long long n) {
    using A = acc_t<T>;
    for (long long e = first_item(); e < n; e += item_stride())
        y[e] = from_acc<T>((math_tanh(to_acc(x[e]) * A(0.5)) + A(1)) * A(0.5));
}

// gx = gy * y * (1 - y).
template <typename T>
__global__ void sigmoid_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                                 long long n) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const acc_t<T> v = to_acc(y[e]);
        gx[e] = from_acc<T>(to_acc(gy[e]) * v * (acc_t<T>(1) - v));
    }
}

// gx = gy * (1 - y * y).
template <typename T>
__global__ void tanh_backward(const T* __restrict__ gy, const T* __restrict__ y, T* __restrict__ gx,
                              long long n) {
    for (long long e = first_item(); e < n; e += item_stride()) {
        const acc_t<T> v = to_acc(y[e]);
        gx[e] = from_acc<T>(to_acc(gy[e]) * (acc_t<T>(1) - v * v));
    }
}

constexpr double SQRT_2_OVER_PI = 0.7978845608028654;
constexpr double INV_SQRT_2 = 0.7071067811865476;
constexpr double INV_SQRT_2PI = 0.3989422804014327;
constexpr double GELU_CUBIC = 0.044715;

// y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)),
// or with use_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <typename T>
__global__ void gelu_forward(const T* __restrict__ x, T* __restrict__ y, long long n, long long use_tanh) {
    using A = acc_t<T>;
    for (long long e = first_item(); e < n; e += item_stride()) {
        const A v = to_acc(x[e]);
        const A cdf = use_tanh ? math_tanh(A(SQRT_2_OVER_PI) * (v + A(GELU_CUBIC) * v * v * v))
                               : math_erf(v * A(INV_SQRT_2));
        y[e] = from_acc<T>((cdf + A(1)) * v * A(0.5));
    }
}

// gx = gy * d/dx [x Phi(x)] = gy (Phi(x) + x phi(x)), or the derivative of the tanh form:
// gy (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)),
// t = tanh(sqrt(2/pi) x (1 + 0.044715 x^2)).
template <typename T>
__global__ void gelu_backward(const T* __restrict__ gy, const T* __restrict__ x, T* __restrict__ gx,
                              long long n, long long use_tanh) {
    using A = acc_t<T>;
    for (long long e = first_item(); e < n; e += item_stride()) {
        const A v = to_acc(x[e]);
        A slope;
        if (use_tanh) {
            const A v2 = v * v;
            const A t = math_tanh(A(SQRT_2_OVER_PI) * v * (A(1) + A(GELU_CUBIC) * v2));
            const A dt = (A(1) - t * t) * (A(SQRT_2_OVER_PI) * (A(1) + A(3 * GELU_CUBIC) * v2));
            slope = A(0.5) * (A(1) + t) + A(0.5) * v * dt;
        } else {
            const A cdf = A(0.5) * (A(1) + math_erf(v * A(INV_SQRT_2)));
            const A pdf = math_exp(A(-0.5) * v * v) * A(INV_SQRT_2PI);
            slope = cdf + v * pdf;
        }
        gx[e] = from_acc<T>(to_acc(gy[e]) * slope);
    }
}

// Row-wise softmax and log-softmax over a contiguous (rows, cols) array: one warp per row, the max and the
// sum of exponentials reduced with warp shuffles (common.cu's row_max_and_sum), then one more pass that
// writes the row.

// y = exp(x - m) / s.
template <typename T>
__global__ void softmax_forward(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols) {
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        acc_t<T> m, s;
        row_max_and_sum(x + r * cols, cols, m, s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            y[r * cols + c] = from_acc<T>(math_exp(to_acc(x[r * cols + c]) - m) / s);
    }
}

// y = (x - m) - log(s).
template <typename T>
__global__ void log_softmax_forward(const T* __restrict__ x, T* __restrict__ y, long long rows,
                                    long long cols) {
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        acc_t<T> m, s;
        row_max_and_sum(x + r * cols, cols, m, s);
        const acc_t<T> log_s = math_log(s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            y[r * cols + c] = from_acc<T>((to_acc(x[r * cols + c]) - m) - log_s);
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
        acc_t<T> s = 0;
        for (long long c = lane_id(); c < cols; c += WARP_SIZE)
            s += LOG ? to_acc(g[c]) : to_acc(g[c]) * to_acc(p[c]);
        s = warp_sum(s);
        for (long long c = lane_id(); c < cols; c += WARP_SIZE) {
            const acc_t<T> gc = to_acc(g[c]), pc = to_acc(p[c]);
            gx[r * cols + c] = from_acc<T>(LOG ? gc - math_exp(pc) * s : gc * pc - pc * s);
        }
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
