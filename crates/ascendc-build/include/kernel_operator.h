// AscendC on the host: what ascendc-build's host mode provides of CANN's "kernel_operator.h",
// so that AscendC kernels compile with the host C++ compiler and run on the emulator. Which APIs
// are provided, and how they behave on the host, is listed in docs/kernels.md. One header per
// family under ascendc_host/:
//
// - core.h, fiber.h, sync.h: the core a thread runs, cores that wait for each other, events and
//   cross-core synchronisation;
// - memory.h, static_memory.h, sysvar.h: local memories, LocalMemAllocator, InitSocState, block
//   indices and system variables;
// - types.h, tensor.h, pipe.h: half, bfloat16_t, conversions; LocalTensor, GlobalTensor; TPipe,
//   TQue, TBuf;
// - vector.h: how vector instructions walk their operands (mask, repeats, strides);
// - vec_arith.h, vec_convert.h: element-wise arithmetic and logic, Duplicate, Cast, ...;
// - copy.h: DataCopy, DataCopyPad, atomic writes to global memory;
// - cube.h: LoadData, Mmad, Fixpipe (the Cube path);
// - print.h: printf, DumpTensor, Trap;
// - entry.h, launch.h: kernel entries of the binary ABI, `<<<...>>>` launches.
#ifndef ASCENDC_HOST_KERNEL_OPERATOR_H
#define ASCENDC_HOST_KERNEL_OPERATOR_H

#include "ascendc_host/core.h"
#include "ascendc_host/fiber.h"
#include "ascendc_host/sync.h"
#include "ascendc_host/memory.h"
#include "ascendc_host/types.h"
#include "ascendc_host/utils.h"
#include "ascendc_host/tensor.h"
#include "ascendc_host/static_memory.h"
#include "ascendc_host/sysvar.h"
#include "ascendc_host/pipe.h"
#include "ascendc_host/vector.h"
#include "ascendc_host/vec_arith.h"
#include "ascendc_host/vec_convert.h"
#include "ascendc_host/compare.h"
#include "ascendc_host/gather.h"
#include "ascendc_host/reduce.h"
#include "ascendc_host/copy.h"
#include "ascendc_host/block_sync.h"
#include "ascendc_host/cache.h"
#include "ascendc_host/cube.h"
#include "kernel_tiling/kernel_tiling.h"
#include "ascendc_host/print.h"
#include "ascendc_host/entry.h"
#include "ascendc_host/launch.h"

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
