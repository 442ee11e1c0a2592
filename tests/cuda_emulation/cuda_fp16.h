// The kernels' #include <cuda_fp16.h> under the emulation: cuda_emu.h (included first) defines __half and
// the conversions the kernels use.
#pragma once
