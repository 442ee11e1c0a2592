// Softmax cross-entropy over contiguous (rows, cols) logits: one warp per row, the max and the sum of
// exponentials reduced with warp shuffles (common.cu's row_max_and_sum). Every formula is the base class's
// (generic/loss.py), in the same order.

// Cross-entropy of logits (rows, cols) against class indices: log_probs = log_softmax(logits) and, with
// eps = label_smoothing, w the class weights (all 1 unless has_weight) and t = target[r],
//   loss[r] = (1 - eps) * w[t] * (-log_probs[t]) + eps / cols * sum_c w[c] * (-log_probs[c]),
// 0 where t == ignore_index, NaN where t lies outside [0, cols) (the GPU cannot raise PyTorch's error).
template <typename T>
__global__ void softmax_cross_entropy_forward(const T* __restrict__ logits,
                                              const long long* __restrict__ target,
                                              const T* __restrict__ weight, T* __restrict__ losses,
                                              T* __restrict__ log_probs, long long rows, long long cols,
                                              long long has_weight, long long ignore_index,
                                              acc_t<T> label_smoothing) {
    using A = acc_t<T>;
    for (long long r = first_warp(); r < rows; r += warp_stride()) {
        const T* x = logits + r * cols;
        A m, s;
        row_max_and_sum(x, cols, m, s);
        const A log_s = math_log(s);
        A weighted_sum = A(0);  // sum_c w[c] * log_probs[c], needed only for label smoothing
        for (long long c = lane_id(); c < cols; c += WARP_SIZE) {
            const A lp = (to_acc(x[c]) - m) - log_s;
            log_probs[r * cols + c] = from_acc<T>(lp);
            weighted_sum += (has_weight ? to_acc(weight[c]) : A(1)) * lp;
        }
        weighted_sum = warp_sum(weighted_sum);
        if (lane_id() == 0) {
            const long long t = target[r];
            A loss;
            if (t == ignore_index) {
                loss = A(0);
            } else if (t < 0 || t >= cols) {
                loss = quiet_nan<A>();
            } else {  // log_probs[t] recomputed rather than read back: another lane wrote it
                loss = -((to_acc(x[t]) - m) - log_s) * (has_weight ? to_acc(weight[t]) : A(1));
                if (label_smoothing != A(0))
                    loss = loss * (A(1) - label_smoothing) + weighted_sum * (-label_smoothing / A(cols));
            }
            losses[r] = from_acc<T>(loss);
        }
    }
}

// d loss[r] / d logits[r, c] times g[r]: with p = exp(log_probs), W = sum_c w[c] (*weight_sum; cols without
// weights), g_pick = g (1 - eps) w[t] and g_smooth = g eps / cols,
//   gx[r, c] = p[c] (g_pick + g_smooth W) - g_smooth w[c] - (c == t) g_pick,
// 0 on ignored rows and NaN on rows whose target lies outside [0, cols).
template <typename T>
__global__ void softmax_cross_entropy_backward(const T* __restrict__ g, const T* __restrict__ log_probs,
                                               const long long* __restrict__ target,
                                               const T* __restrict__ weight, const T* __restrict__ weight_sum,
                                               T* __restrict__ gx,
                                               long long rows, long long cols, long long has_weight,
                                               long long ignore_index, acc_t<T> label_smoothing) {
    using A = acc_t<T>;
    const long long total = rows * cols;
    for (long long e = first_item(); e < total; e += item_stride()) {
        const long long r = e / cols, c = e - r * cols;
        const long long t = target[r];
        if (t == ignore_index) {
            gx[e] = from_acc<T>(A(0));
            continue;
        }
        if (t < 0 || t >= cols) {
            gx[e] = from_acc<T>(quiet_nan<A>());
            continue;
        }
        const A p = math_exp(to_acc(log_probs[e]));
        const A g_pick = to_acc(g[r]) * (has_weight ? to_acc(weight[t]) : A(1)) * (A(1) - label_smoothing);
        A v = p * g_pick;
        if (label_smoothing != A(0)) {
            const A g_smooth = to_acc(g[r]) * (label_smoothing / A(cols));
            v = p * (g_pick + g_smooth * (has_weight ? to_acc(*weight_sum) : A(cols)))
                - g_smooth * (has_weight ? to_acc(weight[c]) : A(1));
        }
        if (c == t) v -= g_pick;
        gx[e] = from_acc<T>(v);
    }
}
