// cuda_emu.h: the part of CUDA that our kernels (minitensor/backends/cuda/kernels/*.cu) use, for g++ on the
// CPU, so that the .cu text NVRTC compiles runs unchanged in CI (build.py includes this header first).
//
// Execution model. A launch runs its blocks one after another; the threads of a block run at the same time,
// one OS thread per CUDA thread, so that the order in which they reach memory is the operating system's, not
// the program's. Barriers are real: __syncthreads() waits for every thread of the block, __syncwarp() and each
// warp shuffle for the 32 lanes of the warp (a shuffle exchanges values through a per-warp buffer between two
// such barriers). A barrier that some threads reach while others have left the kernel, or that is never
// completed (divergent shuffles, a __syncthreads in a branch), fails the launch with a message rather than
// hanging. __shared__ variables are statics: one block runs at a time, so that is one copy per block.
// Atomics are the compiler's atomic builtins (a compare-and-swap loop for float and double). Built with
// -fsanitize=thread (build.py's sanitize="thread"), every unsynchronised access of two threads to one
// location (a race, such as a plain += where an atomicAdd is needed) is reported.
//
// What this cannot model: warps in lockstep (here lanes run independently between barriers, which is what
// CUDA's independent thread scheduling allows, so code correct here is correct there, not the converse for
// timing), blocks running concurrently, the GPU's memory model and caches, float flush-to-zero and FMA
// contraction (results differ from the GPU's in the last bits), and speed.
#pragma once

#include <math.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static  // blocks run one at a time: a static is the running block's shared memory

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
};

inline thread_local uint3 threadIdx;  // set by each emulated thread before it enters the kernel
inline thread_local uint3 blockIdx;
inline dim3 blockDim;  // the same for every thread of a launch
inline dim3 gridDim;

// ------------------------------------------------------------------------------------------- __half
// cuda_fp16.h's __half: IEEE binary16 storage, converted through g++'s _Float16 (round to nearest even, as
// __float2half). Deliberately narrower than cuda_fp16.h: no arithmetic, comparisons or implicit conversions,
// so a kernel that computes in __half instead of converting through common.cu's to_acc / from_acc fails to
// compile here. (tests/cuda_emulation/cuda_fp16.h, what the kernels #include, is empty: the type is here.)
struct __half {
    unsigned short __x;
};
static_assert(sizeof(__half) == 2 && sizeof(_Float16) == 2, "binary16");

inline float __half2float(__half h) {
    _Float16 f;
    std::memcpy(&f, &h.__x, sizeof f);
    return float(f);
}
inline __half __float2half(float v) {
    const _Float16 f = static_cast<_Float16>(v);
    __half h;
    std::memcpy(&h.__x, &f, sizeof f);
    return h;
}

// cuda_bf16.h's __nv_bfloat16, as narrow: the upper half of a float, rounded to nearest even (a NaN stays a
// quiet NaN), as __float2bfloat16 and ml_dtypes' bfloat16.
struct __nv_bfloat16 {
    unsigned short __x;
};

inline float __bfloat162float(__nv_bfloat16 h) {
    const std::uint32_t bits = std::uint32_t(h.__x) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline __nv_bfloat16 __float2bfloat16(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    __nv_bfloat16 h;
    h.__x = std::isnan(v) ? std::uint16_t(0x7fc0 | (bits >> 31 << 15))
                          : std::uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
    return h;
}

namespace emu {

constexpr int WARP = 32;
constexpr auto DEADLOCK_AFTER = std::chrono::seconds(60);  // no thread arrived for this long: never completes

struct Abort {};  // unwinds every thread of a failed launch

// ------------------------------------------------------------------------------------- launch failure
inline std::mutex error_mutex;
inline std::string error_text;
inline std::atomic<bool> failed{false};

inline void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) error_text = why;
}

// ------------------------------------------------------------------------------------------- barrier
// A reusable barrier of `count` threads. A member that leaves the kernel calls leave(): a barrier that some
// members wait at while another has left can never complete, and fails the launch (CUDA: undefined).
class Barrier {
public:
    void reset(int count, const char* what) {
        count_ = count;
        what_ = what;
        arrived_ = left_ = 0;
    }

    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (left_ > 0) divergent();
        const unsigned long generation = generation_;
        if (++arrived_ == count_) {
            arrived_ = 0;
            ++generation_;
            cv_.notify_all();
            return;
        }
        last_arrival_ = std::chrono::steady_clock::now();
        while (generation_ == generation) {
            if (failed) throw Abort{};
            cv_.wait_for(lock, std::chrono::milliseconds(20));
            if (generation_ == generation && std::chrono::steady_clock::now() > last_arrival_ + DEADLOCK_AFTER) {
                fail(std::string(what_) + " never completed: deadlock (a barrier or shuffle that not every "
                     "thread reaches the same number of times)");
                throw Abort{};
            }
        }
    }

    void leave() {
        std::lock_guard<std::mutex> lock(mutex_);
        ++left_;
        if (arrived_ > 0) divergent();
    }

private:
    void divergent() {
        fail(std::string(what_) + " reached by some threads while others had left the kernel (divergent "
             "barrier)");
        cv_.notify_all();
        throw Abort{};
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    int count_ = 0, arrived_ = 0, left_ = 0;
    unsigned long generation_ = 0;
    std::chrono::steady_clock::time_point last_arrival_;  // no arrival for DEADLOCK_AFTER: a deadlock
    const char* what_ = "";
};

// ------------------------------------------------------------------------------------- block state
struct Warp {
    Barrier barrier;
    int lanes = WARP;                 // fewer in the last warp of a block whose size is not a multiple of 32
    std::uint64_t slots[2][WARP] = {};  // shuffle exchange, double-buffered so one barrier per shuffle
};

struct Block {
    Barrier sync;              // __syncthreads
    std::vector<Warp> warps;
};

inline Block block;
inline thread_local int linear_thread;  // threadIdx as one number
inline thread_local unsigned shuffle_phase;

inline Warp& my_warp() { return block.warps[linear_thread / WARP]; }

inline void check_full_mask(unsigned mask, const char* what) {
    const Warp& warp = my_warp();
    const unsigned lanes_mask = warp.lanes == WARP ? 0xffffffffu : (1u << warp.lanes) - 1;
    if (mask != 0xffffffffu) {
        fail(std::string(what) + ": only the full mask 0xffffffff is emulated");
        throw Abort{};
    }
    if (lanes_mask != mask) {
        fail(std::string(what) + ": the mask names lanes that this warp does not have (block size not a "
             "multiple of 32)");
        throw Abort{};
    }
}

// Every lane publishes v, waits for the warp, reads lane `source(lane)`'s value (its own when out of range).
template <typename T, typename Source>
T shuffle(unsigned mask, T v, int width, Source source, const char* what) {
    static_assert(sizeof(T) <= sizeof(std::uint64_t), "shuffles of at most 8 bytes");
    check_full_mask(mask, what);
    Warp& warp = my_warp();
    const int lane = linear_thread % WARP;
    const unsigned buffer = shuffle_phase++ & 1;
    std::memcpy(&warp.slots[buffer][lane], &v, sizeof(T));
    warp.barrier.wait();
    const int segment = lane / width * width;  // shuffles stay inside segments of `width` lanes
    const int from = source(lane - segment);
    T out = v;
    if (from >= 0 && from < width) std::memcpy(&out, &warp.slots[buffer][segment + from], sizeof(T));
    return out;
}

template <typename F, typename Op>
F atomic_float_update(F* address, Op op) {
    using Bits = std::conditional_t<sizeof(F) == 2, std::uint16_t,
                                    std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>>;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
    for (;;) {
        F old;
        std::memcpy(&old, &expected, sizeof old);
        const F updated = op(old);
        Bits desired;
        std::memcpy(&desired, &updated, sizeof desired);
        if (__atomic_compare_exchange_n(bits, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return old;
    }
}

}  // namespace emu

// --------------------------------------------------------------------------------------- intrinsics
inline void __syncthreads() { emu::block.sync.wait(); }

inline void __syncwarp(unsigned mask = 0xffffffffu) {
    emu::check_full_mask(mask, "__syncwarp");
    emu::my_warp().barrier.wait();
}

template <typename T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = emu::WARP) {
    return emu::shuffle(mask, v, width, [&](int) { return src_lane % width; }, "__shfl_sync");
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = emu::WARP) {
    return emu::shuffle(mask, v, width, [&](int lane) { return lane ^ lane_mask; }, "__shfl_xor_sync");
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = emu::WARP) {
    return emu::shuffle(mask, v, width, [&](int lane) { return lane + int(delta); }, "__shfl_down_sync");
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = emu::WARP) {
    return emu::shuffle(mask, v, width, [&](int lane) { return lane - int(delta); }, "__shfl_up_sync");
}

template <typename T>
T atomicAdd(T* address, T v) {
    if constexpr (std::is_floating_point_v<T>) {
        return emu::atomic_float_update(address, [v](T old) { return old + v; });
    } else {
        return __atomic_fetch_add(address, v, __ATOMIC_RELAXED);
    }
}
inline __half atomicAdd(__half* address, __half v) {  // compute capability 7.0 and later
    return emu::atomic_float_update(address, [v](__half old) {
        return __float2half(__half2float(old) + __half2float(v));
    });
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 v) {  // compute capability 8.0 and later
    return emu::atomic_float_update(address, [v](__nv_bfloat16 old) {
        return __float2bfloat16(__bfloat162float(old) + __bfloat162float(v));
    });
}
template <typename T>
T atomicSub(T* address, T v) { return __atomic_fetch_sub(address, v, __ATOMIC_RELAXED); }
template <typename T>
T atomicExch(T* address, T v) {
    if constexpr (std::is_floating_point_v<T>) {
        return emu::atomic_float_update(address, [v](T) { return v; });
    } else {
        return __atomic_exchange_n(address, v, __ATOMIC_RELAXED);
    }
}
template <typename T>
T atomicCAS(T* address, T compare, T v) {
    __atomic_compare_exchange_n(address, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return compare;  // the old value either way
}
template <typename T>
T atomicMax(T* address, T v) {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(address, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
template <typename T>
T atomicMin(T* address, T v) {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (old > v && !__atomic_compare_exchange_n(address, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}

inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, sizeof f); return f; }
inline int __float_as_int(float v) { int i; std::memcpy(&i, &v, sizeof i); return i; }
inline double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, sizeof d); return d; }
inline long long __double_as_longlong(double v) { long long i; std::memcpy(&i, &v, sizeof i); return i; }

// ------------------------------------------------------------------------------------------- launch
namespace emu {

inline std::mutex launch_mutex;  // one launch at a time: the block state above is global

inline void reset_barriers(unsigned threads) {
    block.sync.reset(int(threads), "__syncthreads");
    for (std::size_t w = 0; w < block.warps.size(); ++w) {
        block.warps[w].lanes = int(std::min<unsigned>(WARP, threads - unsigned(w) * WARP));
        block.warps[w].barrier.reset(block.warps[w].lanes, "a warp shuffle or __syncwarp");
    }
}

// Thread t of every block in turn; `phases` are the block's start and end, where no kernel code runs.
template <typename Kernel, typename Values>
void run_thread(Kernel kernel, const Values& values, unsigned t, unsigned threads, unsigned blocks,
                Barrier* phases) {
    linear_thread = int(t);
    threadIdx = {t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
    try {
        for (unsigned b = 0; b < blocks; ++b) {
            blockIdx = {b % gridDim.x, b / gridDim.x % gridDim.y, b / (gridDim.x * gridDim.y)};
            shuffle_phase = 0;
            phases[0].wait();
            std::apply(kernel, values);
            my_warp().barrier.leave();
            block.sync.leave();
            phases[1].wait();
            if (t == 0) reset_barriers(threads);  // the others wait at the next block's start meanwhile
        }
    } catch (const Abort&) {
    } catch (const std::exception& e) {
        fail(std::string("exception in the kernel: ") + e.what());
    }
}

// cuLaunchKernel's contract: params[i] points at the value of parameter i, read as the kernel declares it.
template <typename... Args, std::size_t... I>
std::tuple<Args...> read_params(void** params, std::index_sequence<I...>) {
    return std::tuple<Args...>{*static_cast<Args*>(params[I])...};
}

// Run `kernel` over grid x block; 0 on success, 1 with the reason in error_text.
template <typename... Args>
int launch(void (*kernel)(Args...), const char* name, const unsigned* grid, const unsigned* block_shape,
           void** params, int param_count) {
    std::lock_guard<std::mutex> one_at_a_time(launch_mutex);
    failed = false;
    error_text.clear();
    const std::string where = std::string(name) + ": ";
    if (param_count != int(sizeof...(Args))) {
        fail(where + std::to_string(param_count) + " arguments for " + std::to_string(sizeof...(Args)) +
             " parameters");
        return 1;
    }
    const unsigned threads = block_shape[0] * block_shape[1] * block_shape[2];
    const unsigned blocks = grid[0] * grid[1] * grid[2];
    if (threads == 0 || threads > 1024 || blocks == 0) {
        fail(where + "a block has 1 to 1024 threads and a grid at least one block");
        return 1;
    }
    blockDim = {block_shape[0], block_shape[1], block_shape[2]};
    gridDim = {grid[0], grid[1], grid[2]};
    const auto values = read_params<Args...>(params, std::index_sequence_for<Args...>{});
    block.warps = std::vector<Warp>((threads + WARP - 1) / WARP);
    reset_barriers(threads);
    Barrier phases[2];
    phases[0].reset(int(threads), "the block's start");
    phases[1].reset(int(threads), "the block's end");
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] { run_thread(kernel, values, t, threads, blocks, phases); });
    for (auto& thread : pool) thread.join();
    if (failed) error_text = where + error_text;
    return failed ? 1 : 0;
}

inline const char* last_error() { return error_text.c_str(); }

}  // namespace emu
