// Host-mode runtime support for the kernels: block index storage, the entry point the Rust
// launcher uses to select a block, and the device printf.
#include "kernel_operator.h"

#include <cstdarg>
#include <cstdio>

thread_local int64_t block_idx = 0;
thread_local int64_t block_num = 1;

// Selects the block the calling thread runs next: `idx` in [0, num).
extern "C" void ascendc_kernels_host_set_block(uint32_t idx, uint32_t num)
{
    block_idx = static_cast<int64_t>(idx);
    block_num = static_cast<int64_t>(num);
}

namespace AscendC {

void printf(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    flockfile(stdout);  // one kernel line stays whole when several threads print
    std::vfprintf(stdout, fmt, args);
    std::fflush(stdout);
    funlockfile(stdout);
    va_end(args);
}

}  // namespace AscendC
