// Max and average pooling over (N, C, H, W) seen as N * C planes of H * W; outputs are (planes, oH, oW). A
// window of output (oy, ox) covers rows oy * stride_h - pad_h + i * dil_h (i < kH) and the matching columns;
// positions outside the plane (padding, or past the end in ceil mode) take no part.

// y = the window's maximum and offsets = the scan-order offset i * kernel_w + j of its maximum inside the window
// (what backward needs, one byte: the caller takes this kernel for windows of at most 256 cells), as PyTorch:
// the first element inside the plane starts the scan (so a window of -inf values points at its first element,
// never at padding), a larger value or any NaN takes over (ties keep the first maximum; a NaN wins, the last
// NaN if several). A window with no element inside the plane gets -inf and offset 0 (a position outside it).
template <typename T>
__global__ void max_pool2d_forward(const T* __restrict__ x, T* __restrict__ y,
                                   unsigned char* __restrict__ offsets, long long planes, long long height,
                                   long long width, long long out_h, long long out_w, long long kernel_h,
                                   long long kernel_w, long long stride_h, long long stride_w,
                                   long long pad_h, long long pad_w, long long dil_h, long long dil_w) {
    const long long total = planes * out_h * out_w;
    for (long long e = first_item(); e < total; e += item_stride()) {
        const long long ox = e % out_w;
        const long long oy = (e / out_w) % out_h;
        const T* plane = x + (e / (out_w * out_h)) * height * width;
        acc_t<T> best = -positive_infinity<acc_t<T>>();  // a selection: exact in any type
        long long arg = -1;
        for (long long i = 0; i < kernel_h; ++i) {
            const long long yy = oy * stride_h - pad_h + i * dil_h;
            if (yy < 0 || yy >= height) continue;
            for (long long j = 0; j < kernel_w; ++j) {
                const long long xx = ox * stride_w - pad_w + j * dil_w;
                if (xx < 0 || xx >= width) continue;
                const acc_t<T> v = to_acc(plane[yy * width + xx]);
                if (arg < 0 || v > best || v != v) {
                    best = v;
                    arg = i * kernel_w + j;
                }
            }
        }
        y[e] = from_acc<T>(best);
        offsets[e] = static_cast<unsigned char>(arg < 0 ? 0 : arg);
    }
}

// gx (planes, H * W), zero on entry: gx[p, position of offsets[p, o]] += gy[p, o], the position being row
// oy * stride_h - pad_h + (k / kernel_w) * dil_h and the matching column. Overlapping windows can pick the same
// element, hence the atomic add; an offset outside the plane (a dilated window wholly in the padding) has no
// element to take it.
template <typename T>
__global__ void max_pool2d_backward(const T* __restrict__ gy, const unsigned char* __restrict__ offsets,
                                    T* __restrict__ gx, long long planes, long long height, long long width,
                                    long long out_h, long long out_w, long long kernel_w, long long stride_h,
                                    long long stride_w, long long pad_h, long long pad_w, long long dil_h,
                                    long long dil_w) {
    const long long total = planes * out_h * out_w;
    for (long long e = first_item(); e < total; e += item_stride()) {
        const long long ox = e % out_w;
        const long long oy = (e / out_w) % out_h;
        const long long k = offsets[e];
        const long long yy = oy * stride_h - pad_h + (k / kernel_w) * dil_h;
        const long long xx = ox * stride_w - pad_w + (k % kernel_w) * dil_w;
        if (yy >= 0 && yy < height && xx >= 0 && xx < width)
            atomic_add(gx + (e / (out_w * out_h)) * height * width + yy * width + xx, gy[e]);
    }
}

// PyTorch's average-pooling divisor of output position o along one axis, as a count of cells: the window
// [o * stride - pad, + kernel) cut at the end of the padded input, and to the input itself unless
// count_include_pad.
__device__ inline long long avg_window_cells(long long o, long long stride, long long pad, long long kernel,
                                             long long size, long long count_include_pad) {
    long long start = o * stride - pad;
    long long end = start + kernel < size + pad ? start + kernel : size + pad;
    if (!count_include_pad) {
        start = start > 0 ? start : 0;
        end = end < size ? end : size;
    }
    return end - start;
}

// The divisor of the window at output (oy, ox): divisor_override when nonzero, else the product of both
// axes' counts.
__device__ inline long long avg_divisor(long long oy, long long ox, long long height, long long width,
                                        long long kernel_h, long long kernel_w, long long stride_h,
                                        long long stride_w, long long pad_h, long long pad_w,
                                        long long count_include_pad, long long divisor_override) {
    return divisor_override ? divisor_override
        : avg_window_cells(oy, stride_h, pad_h, kernel_h, height, count_include_pad)
          * avg_window_cells(ox, stride_w, pad_w, kernel_w, width, count_include_pad);
}

// The geometry both average-pooling kernels take after their two arrays (rawmodule.declared_kernels expands
// it): `planes` planes of height x width in and out_h x out_w out, the window, and the divisor's rule.
#define AVG_POOL2D_GEOMETRY                                                                                  \
    long long planes, long long height, long long width, long long out_h, long long out_w, long long kernel_h, \
        long long kernel_w, long long stride_h, long long stride_w, long long pad_h, long long pad_w,          \
        long long count_include_pad, long long divisor_override

// y = the sum of the window's elements inside the plane, in scan order, divided by the window's divisor.
template <typename T>
__global__ void avg_pool2d_forward(const T* __restrict__ x, T* __restrict__ y, AVG_POOL2D_GEOMETRY) {
    for (const long long e : grid_stride(planes * out_h * out_w)) {
        const auto [p, oy, ox] = plane_cell(e, out_h, out_w);
        const T* plane = x + p * height * width;
        acc_t<T> acc = 0;
        for (long long i = 0; i < kernel_h; ++i) {
            const long long yy = oy * stride_h - pad_h + i;
            if (yy < 0 || yy >= height) continue;
            for (long long j = 0; j < kernel_w; ++j) {
                const long long xx = ox * stride_w - pad_w + j;
                if (xx >= 0 && xx < width) acc += to_acc(plane[yy * width + xx]);
            }
        }
        y[e] = from_acc<T>(acc / acc_t<T>(avg_divisor(oy, ox, height, width, kernel_h, kernel_w, stride_h,
                                                     stride_w, pad_h, pad_w, count_include_pad,
                                                     divisor_override)));
    }
}

// gx[p, y, x] = the sum of gy[p, o] / divisor(o) over the windows o that contain (y, x): a gather per input
// element (no atomics). The windows holding row y are oy from ceil((y + pad - k + 1) / s) to
// floor((y + pad) / s); they are visited last to first, the order in which the base class adds them.
template <typename T>
__global__ void avg_pool2d_backward(const T* __restrict__ gy, T* __restrict__ gx, AVG_POOL2D_GEOMETRY) {
    for (const long long e : grid_stride(planes * height * width)) {
        const auto [p, yy, xx] = plane_cell(e, height, width);
        const T* g = gy + p * out_h * out_w;
        const long long top = yy + pad_h - kernel_h + 1, left = xx + pad_w - kernel_w + 1;
        const long long oy_first = top > 0 ? (top + stride_h - 1) / stride_h : 0;
        const long long ox_first = left > 0 ? (left + stride_w - 1) / stride_w : 0;
        const long long oy_last = (yy + pad_h) / stride_h < out_h - 1 ? (yy + pad_h) / stride_h : out_h - 1;
        const long long ox_last = (xx + pad_w) / stride_w < out_w - 1 ? (xx + pad_w) / stride_w : out_w - 1;
        acc_t<T> acc = 0;
        for (long long oy = oy_last; oy >= oy_first; --oy) {
            for (long long ox = ox_last; ox >= ox_first; --ox) {
                acc += to_acc(g[oy * out_w + ox])
                       / acc_t<T>(avg_divisor(oy, ox, height, width, kernel_h, kernel_w, stride_h, stride_w,
                                              pad_h, pad_w, count_include_pad, divisor_override));
            }
        }
        gx[e] = from_acc<T>(acc);
    }
}
