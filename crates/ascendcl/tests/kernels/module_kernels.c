/* A kernel binary for tests/it/modules.rs, written directly against the kernel binary ABI the
 * emulator runs (what ascendc-build generates for AscendC kernels; docs/kernels.md describes it).
 * Arguments sit at 8-byte slots.
 *
 *   add(const float* x, float* y, uint32_t n)      y[i] += x[i], blocks strided over i
 *   scale(float* data, float factor, uint32_t n)   data[i] *= factor
 *   fill(float* out, Fill f)                       out[i] = f.value for i < f.n (a struct by value)
 *   table_sum(float* out, const float* t, uint32_t n)  out[0] = t[0] + ... + t[n-1]
 *   fault(float* out)                              block 1 fails
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct block {
    uint32_t abi, block_idx, block_num, reserved;
    const uint8_t* args;
    uint64_t args_size;
    void* runtime;
    int (*find_memory)(void*, const void*, const void**, uint64_t*, uint32_t*);
    void (*print)(void*, const char*, uint64_t);
    char* fault;
    uint64_t fault_capacity;
    uint32_t fault_kind, core;
    uint64_t fault_addr, fault_bytes;
} block;

typedef struct param {
    uint32_t size, kind;
} param;

typedef struct kernel {
    const char* name;
    int (*entry)(block*);
    uint32_t param_count, reserved;
    const param* params;
} kernel;

typedef struct table {
    char magic[16];
    uint32_t abi, kernel_count;
    const kernel* kernels;
} table;

typedef struct fill_args {
    uint32_t n;
    float value;
} fill_args;

static int fail(block* b, const char* what)
{
    snprintf(b->fault, b->fault_capacity, "%s", what);
    b->fault_kind = 1;
    return 1;
}

static void* ptr_at(block* b, uint64_t off)
{
    void* p;
    memcpy(&p, b->args + off, sizeof(p));
    return p;
}

static int add(block* b)
{
    if (b->args_size < 20) return fail(b, "short arguments");
    const float* x = (const float*)ptr_at(b, 0);
    float* y = (float*)ptr_at(b, 8);
    uint32_t n;
    memcpy(&n, b->args + 16, 4);
    for (uint32_t i = b->block_idx; i < n; i += b->block_num) y[i] += x[i];
    return 0;
}

static int scale(block* b)
{
    if (b->args_size < 20) return fail(b, "short arguments");
    float* d = (float*)ptr_at(b, 0);
    float f;
    uint32_t n;
    memcpy(&f, b->args + 8, 4);
    memcpy(&n, b->args + 16, 4);
    for (uint32_t i = b->block_idx; i < n; i += b->block_num) d[i] *= f;
    return 0;
}

static int fill(block* b)
{
    if (b->args_size < 16) return fail(b, "short arguments");
    float* out = (float*)ptr_at(b, 0);
    fill_args f;
    memcpy(&f, b->args + 8, sizeof(f));
    for (uint32_t i = b->block_idx; i < f.n; i += b->block_num) out[i] = f.value;
    return 0;
}

static int table_sum(block* b)
{
    if (b->args_size < 20) return fail(b, "short arguments");
    float* out = (float*)ptr_at(b, 0);
    const float* t = (const float*)ptr_at(b, 8);
    uint32_t n;
    memcpy(&n, b->args + 16, 4);
    float s = 0;
    for (uint32_t i = 0; i < n; ++i) s += t[i];
    out[0] = s;
    return 0;
}

static int fault(block* b)
{
    return b->block_idx == 1 ? fail(b, "deliberate fault") : 0;
}

static const param p_add[] = {{8, 1}, {8, 2}, {4, 0}};
static const param p_scale[] = {{8, 2}, {4, 0}, {4, 0}};
static const param p_fill[] = {{8, 2}, {8, 0}};
static const param p_table[] = {{8, 2}, {8, 1}, {4, 0}};
static const param p_fault[] = {{8, 2}};

static const kernel kernels[] = {
    {"add", add, 3, 0, p_add},          {"scale", scale, 3, 0, p_scale},
    {"fill", fill, 2, 0, p_fill},       {"table_sum", table_sum, 3, 0, p_table},
    {"fault", fault, 1, 0, p_fault},
};

__attribute__((visibility("default"))) const table ascendc_host_binary_v1 = {
    "ascendc-hostbin", 1, sizeof(kernels) / sizeof(kernels[0]), kernels};
