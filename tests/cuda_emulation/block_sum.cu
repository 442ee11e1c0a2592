// A block-wide sum through shared memory: a tree whose every level reads what other threads wrote at the
// level before, so a __syncthreads must separate the levels. Not one of our kernels (they need no block
// barrier): the emulation's own test that __syncthreads is a real barrier and __shared__ one array per block.
// blockDim.x must be a power of two; out[blockIdx.x] = the sum of the block's grid-strided share of x.
template <typename T>
__global__ void block_sum(const T* __restrict__ x, T* __restrict__ out, long long n) {
    __shared__ T partial[1024];
    T acc = T(0);
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long e = first; e < n; e += (long long)gridDim.x * blockDim.x) acc += x[e];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
