// im2col and col2im: the index work of conv2d / conv_transpose2d as GEMMs (generic/conv.py has the layouts);
// the GEMMs themselves run in cuBLAS. x is (N, C, H, W); o = (oy, ox) an output position; a kernel offset
// (i, j) of output o reads the input at
// (oy * stride_h - pad_top + i * dil_h, ox * stride_w - pad_left + j * dil_w).

// cols (C * kH * kW, N, oH, oW), which is the base class's (G, Cg * kH * kW, N, oH * oW):
// cols[(c, i, j), n, oy, ox] = x[n, c, oy * sh - top + i * dh, ox * sw - left + j * dw], 0 in the padding.
template <typename T>
__global__ void im2col(const T* __restrict__ x, T* __restrict__ cols, long long batch, long long channels,
                       long long height, long long width, long long kernel_h, long long kernel_w,
                       long long out_h, long long out_w, long long stride_h, long long stride_w,
                       long long pad_top, long long pad_left, long long dil_h, long long dil_w) {
    const long long total = channels * kernel_h * kernel_w * batch * out_h * out_w;
    for (long long e = first_item(); e < total; e += item_stride()) {
        long long rest = e;
        const long long ox = rest % out_w; rest /= out_w;
        const long long oy = rest % out_h; rest /= out_h;
        const long long n = rest % batch; rest /= batch;
        const long long j = rest % kernel_w; rest /= kernel_w;
        const long long i = rest % kernel_h;
        const long long c = rest / kernel_h;
        const long long y = oy * stride_h - pad_top + i * dil_h;
        const long long xx = ox * stride_w - pad_left + j * dil_w;
        const bool inside = y >= 0 && y < height && xx >= 0 && xx < width;
        cols[e] = inside ? x[((n * channels + c) * height + y) * width + xx] : from_acc<T>(0);
    }
}

// The input gradient gx (N, C, H, W) of a convolution, from cols (G, N, oH, oW, Cg, kH, kW): the product,
// per group, of gy's channels-last rows with that group's weights. gx[n, c, y, x] sums
// cols[g, n, oy, ox, c - g * Cg, i, j] over every offset (i, j) and output (oy, ox) that read (y, x): a
// gather per input element, so no atomics, and the offsets are added in scan order as the base class does.
template <typename T>
__global__ void col2im(const T* __restrict__ cols, T* __restrict__ gx, long long batch, long long channels,
                       long long height, long long width, long long groups, long long kernel_h,
                       long long kernel_w, long long out_h, long long out_w, long long stride_h,
                       long long stride_w, long long pad_top, long long pad_left, long long dil_h,
                       long long dil_w) {
    const long long group_channels = channels / groups;
    const long long total = batch * channels * height * width;
    for (long long e = first_item(); e < total; e += item_stride()) {
        long long rest = e;
        const long long xx = rest % width; rest /= width;
        const long long y = rest % height; rest /= height;
        const long long c = rest % channels;
        const long long n = rest / channels;
        const long long g = c / group_channels;
        const long long c_in_group = c - g * group_channels;
        acc_t<T> acc = 0;  // the offsets of one input element summed in acc_t<T>, rounded once
        for (long long i = 0; i < kernel_h; ++i) {
            const long long ty = y + pad_top - i * dil_h;  // = oy * stride_h for the output that read y
            if (ty < 0) break;  // ty only decreases with i
            if (ty % stride_h != 0 || ty / stride_h >= out_h) continue;
            const long long oy = ty / stride_h;
            for (long long j = 0; j < kernel_w; ++j) {
                const long long tx = xx + pad_left - j * dil_w;
                if (tx < 0) break;
                if (tx % stride_w != 0 || tx / stride_w >= out_w) continue;
                const long long ox = tx / stride_w;
                const long long row = ((g * batch + n) * out_h + oy) * out_w + ox;
                acc += to_acc(cols[((row * group_channels + c_in_group) * kernel_h + i) * kernel_w + j]);
            }
        }
        gx[e] = from_acc<T>(acc);
    }
}
