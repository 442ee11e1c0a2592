// The embedding gradient as a scatter-add: gw (num_embeddings, dim), zero on entry, gets every gy row
// (lookups, dim) added to the row its index names. Repeated indices collide, hence the atomic add. Rows whose
// index is padding_idx (-1 for none) get nothing, nor do indices outside [0, num_embeddings), which would
// write out of bounds (the forward's gather has already refused them).
template <typename T>
__global__ void embedding_backward(const T* __restrict__ gy, const long long* __restrict__ indices,
                                   T* __restrict__ gw, long long lookups, long long dim,
                                   long long num_embeddings, long long padding_idx) {
    const long long total = lookups * dim;
    for (long long e = first_item(); e < total; e += item_stride()) {
        const long long lookup = e / dim;
        const long long row = indices[lookup];
        if (row == padding_idx || row < 0 || row >= num_embeddings) continue;
        atomicAdd(gw + row * dim + (e - lookup * dim), gy[e]);
    }
}
