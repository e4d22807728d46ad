// Host-mode runtime support for the kernels: block index storage, the entry point the Rust
// launcher uses to select a block, and the device printf (formatted here, written by Rust).
#include "kernel_operator.h"

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <vector>

thread_local int64_t block_idx = 0;
thread_local int64_t block_num = 1;

// Selects the block the calling thread runs next: `idx` in [0, num).
extern "C" void ascendc_kernels_host_set_block(uint32_t idx, uint32_t num)
{
    block_idx = static_cast<int64_t>(idx);
    block_num = static_cast<int64_t>(num);
}

// Defined by the Rust crate: writes one formatted kernel line through Rust's stdout, so that it is
// ordered with the program's own output and captured with it by the test harness.
extern "C" void ascendc_kernels_host_write(const char* data, size_t len);

namespace AscendC {

void printf(const char* fmt, ...)
{
    char small[256];
    va_list args;
    va_start(args, fmt);
    va_list again;
    va_copy(again, args);
    int n = std::vsnprintf(small, sizeof small, fmt, args);
    va_end(args);
    if (n < 0) {
        va_end(again);
        return;
    }
    if (static_cast<size_t>(n) < sizeof small) {
        ascendc_kernels_host_write(small, static_cast<size_t>(n));
    } else {
        std::vector<char> big(static_cast<size_t>(n) + 1);
        std::vsnprintf(big.data(), big.size(), fmt, again);
        ascendc_kernels_host_write(big.data(), static_cast<size_t>(n));
    }
    va_end(again);
}

}  // namespace AscendC
