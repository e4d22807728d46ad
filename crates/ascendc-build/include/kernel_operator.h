// AscendC on the host: the subset of CANN's "kernel_operator.h" that ascendc-build's host mode
// provides, so that AscendC kernels compile with the host C++ compiler and run on the emulator.
// Which APIs are provided, and how they behave on the host, is listed in docs/kernels.md.
//
// - runtime.h: qualifiers, blocks on a thread pool, printf buffering, failures, launches;
// - types.h:   half, bfloat16_t, RoundMode and exact conversions;
// - tensor.h:  TPosition, LocalTensor, GlobalTensor;
// - pipe.h:    TPipe, TQue / TQueBind, TBuf;
// - ops.h:     DataCopy, DataCopyPad, vector instructions, Duplicate, Cast, synchronisation, Trap,
//              printf, DumpTensor.
#ifndef ASCENDC_HOST_KERNEL_OPERATOR_H
#define ASCENDC_HOST_KERNEL_OPERATOR_H

#include "ascendc_host/runtime.h"
#include "ascendc_host/types.h"
#include "ascendc_host/tensor.h"
#include "ascendc_host/pipe.h"
#include "ascendc_host/ops.h"

#include <cstdint>

// A global-memory address as kernels receive it.
typedef uint8_t* GM_ADDR;

// Kernel type declarations (a statement in the kernel's body): the core type decides the code a
// failure of the kernel is reported with (vector-core or AI-core exception). Per tiling key:
// nothing to do on the host.
#define KERNEL_TASK_TYPE_DEFAULT(type) ::ascendc_host::declare_core(static_cast<int>(type))
#define KERNEL_TASK_TYPE(key, type)

enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
};

// Fails the block when `expr` is false.
#ifndef ASSERT
#define ASSERT(expr)                                                                     \
    ((expr) ? static_cast<void>(0)                                                       \
            : ::ascendc_host::fault("ASSERT(%s) failed at %s:%d", #expr, __FILE__, __LINE__))
#endif

#endif
