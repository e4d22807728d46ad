// A kernel binary written directly against the binary ABI (ascendc_host/binary.h), without the
// host layer, for tests/it/rt_support.rs: `fill(uint32_t* p, uint32_t v)` stores v + b at p[b] in
// block b; `broken(uint32_t* p, uint32_t v)` fails in block 1.
#include "ascendc_host/binary.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

static const ascendc_host_param params[] = {{8, ASCENDC_HOST_PARAM_GM_WRITE},
                                            {4, ASCENDC_HOST_PARAM_VALUE}};

static int fill(ascendc_host_block* b) noexcept
{
    if (b->args_size < 12) {
        std::snprintf(b->fault, b->fault_capacity, "short arguments");
        b->fault_kind = ASCENDC_HOST_FAULT_KERNEL;
        return 1;
    }
    uint32_t* p;
    uint32_t v;
    std::memcpy(&p, b->args, sizeof(p));
    std::memcpy(&v, b->args + 8, sizeof(v));
    p[b->block_idx] = v + b->block_idx;
    return 0;
}

static int broken(ascendc_host_block* b) noexcept
{
    if (b->block_idx == 1) {
        std::snprintf(b->fault, b->fault_capacity, "broken went wrong");
        b->fault_kind = ASCENDC_HOST_FAULT_KERNEL;
        return 1;
    }
    return 0;
}

static const ascendc_host_kernel kernels[] = {{"fill", &fill, 2, 0, params},
                                              {"broken", &broken, 2, 0, params}};

extern "C" __attribute__((visibility("default"))) const ascendc_host_binary ascendc_host_binary_v1 = {
    ASCENDC_HOST_MAGIC, ASCENDC_HOST_ABI, 2, kernels};
