// GradScaler's unscale-and-check over many gradients in one launch (PyTorch's
// _amp_foreach_non_finite_check_and_unscale_). The count gradients of one dtype are seen as one range of
// total elements: gradient t lives at address addresses[t] and covers [offsets[t], offsets[t + 1]) of it.
// Each element v: a non-finite v sets *found_inf to 1 (tested before unscaling, as PyTorch), and v becomes
// v * inv_scale, computed in acc_t<T>. One atomic store per thread that saw one, none otherwise.

// The gradient holding element e: the last t with offsets[t] <= e (empty gradients, offsets[t] ==
// offsets[t + 1], are skipped over), by binary search over offsets[0..count].
__device__ inline long long segment_of(const long long* __restrict__ offsets, long long count, long long e) {
    long long lo = 0, hi = count;  // offsets[lo] <= e < offsets[hi]
    while (hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= e) lo = mid; else hi = mid;
    }
    return lo;
}

template <typename T>
__global__ void amp_unscale_and_check_inf(const long long* __restrict__ addresses,
                                          const long long* __restrict__ offsets, long long count,
                                          long long total, acc_t<T> inv_scale, float* __restrict__ found_inf) {
    bool found = false;
    for (long long e = first_item(); e < total; e += item_stride()) {
        const long long t = segment_of(offsets, count, e);
        T* g = reinterpret_cast<T*>(addresses[t]) + (e - offsets[t]);
        const acc_t<T> v = to_acc(*g);
        found = found || !isfinite(v);
        *g = from_acc<T>(v * inv_scale);
    }
    if (found) atomicExch(found_inf, 1.0f);
}
