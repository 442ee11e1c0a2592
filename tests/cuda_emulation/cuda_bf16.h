// The kernels' #include <cuda_bf16.h> under the emulation: cuda_emu.h (included first) defines
// __nv_bfloat16 and the conversions the kernels use.
#pragma once
