/* A kernel binary written directly against the kernel binary ABI the emulator implements (the
 * structures of ascendc-build's include/ascendc_host/binary.h, declared here again so that the
 * emulator's tests check the ABI as documented). tests/kernels.rs compiles it with `$CC` (else
 * `cc`) into a shared object and loads it.
 *
 * Kernels (arguments at 8-byte slots):
 *   store(uint32_t* p, uint32_t v)      block b: p[b] = v + b; prints "store block b"
 *   fail_odd(uint32_t* p)               even blocks: p[b] = 1; odd blocks fail
 *   probe(uint32_t* p, uint64_t off)    fails with a memory fault unless p + off is live memory
 *   cube(void)                          fails, declared for the cube core
 *   spin(uint32_t ms)                   busy-waits `ms` milliseconds
 *   sum(uint32_t* out, uint32_t* data, uint32_t n)   out[0] = data[0] + ... + data[n-1]
 *   meet(uint32_t* count)               two blocks wait for each other (1 s at most)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static int fail(block* b, uint32_t kind, const char* what)
{
    snprintf(b->fault, b->fault_capacity, "%s", what);
    b->fault_kind = kind;
    return 1;
}

static int need(block* b, uint64_t bytes)
{
    return b->args_size >= bytes ? 0 : fail(b, 1, "short arguments");
}

static void* ptr_at(block* b, uint64_t off)
{
    void* p;
    memcpy(&p, b->args + off, sizeof(p));
    return p;
}

static uint32_t u32_at(block* b, uint64_t off)
{
    uint32_t v;
    memcpy(&v, b->args + off, sizeof(v));
    return v;
}

static int store(block* b)
{
    if (need(b, 12)) return 1;
    uint32_t* p = (uint32_t*)ptr_at(b, 0);
    p[b->block_idx] = u32_at(b, 8) + b->block_idx;
    char line[64];
    int n = snprintf(line, sizeof(line), "store block %u\n", b->block_idx);
    b->print(b->runtime, line, (uint64_t)n);
    return 0;
}

static int fail_odd(block* b)
{
    if (need(b, 8)) return 1;
    if (b->block_idx % 2 == 1) return fail(b, 1, "odd block");
    ((uint32_t*)ptr_at(b, 0))[b->block_idx] = 1;
    return 0;
}

static int probe(block* b)
{
    if (need(b, 16)) return 1;
    uint64_t off;
    memcpy(&off, b->args + 8, sizeof(off));
    const uint8_t* p = (const uint8_t*)ptr_at(b, 0) + off;
    const void* base;
    uint64_t len;
    uint32_t w;
    if (b->find_memory(b->runtime, p, &base, &len, &w) != 0) {
        b->fault_addr = (uint64_t)(uintptr_t)p;
        b->fault_bytes = 4;
        return fail(b, 2, "outside every allocation");
    }
    return 0;
}

static int cube(block* b)
{
    b->core = 1;
    return fail(b, 1, "cube fault");
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int spin(block* b)
{
    if (need(b, 4)) return 1;
    double end = now_ms() + u32_at(b, 0);
    while (now_ms() < end) {
    }
    return 0;
}

static int sum(block* b)
{
    if (need(b, 20)) return 1;
    uint32_t* out = (uint32_t*)ptr_at(b, 0);
    const uint32_t* data = (const uint32_t*)ptr_at(b, 8);
    uint32_t n = u32_at(b, 16);
    const void* base;
    uint64_t len;
    uint32_t w;
    if (b->find_memory(b->runtime, data, &base, &len, &w) != 0) {
        return fail(b, 2, "the placeholder data is not device memory");
    }
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) s += data[i];
    out[0] = s;
    return 0;
}

static int meet(block* b)
{
    if (need(b, 8)) return 1;
    uint32_t* count = (uint32_t*)ptr_at(b, 0);
    __atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST);
    double end = now_ms() + 1000;
    while (__atomic_load_n(count, __ATOMIC_SEQ_CST) < 2 && now_ms() < end) {
    }
    return __atomic_load_n(count, __ATOMIC_SEQ_CST) >= 2 ? 0 : fail(b, 1, "alone");
}

/* Follows a device pointer stored in device memory: writes 77 where it points. */
static int indirect(block* b)
{
    if (need(b, 8)) return 1;
    uint32_t** slot = (uint32_t**)ptr_at(b, 0);
    uint32_t* target = *slot;
    *target = 77;
    return 0;
}

static const param p_store[] = {{8, 2}, {4, 0}};
static const param p_one[] = {{8, 2}};
static const param p_probe[] = {{8, 1}, {8, 0}};
static const param p_spin[] = {{4, 0}};
static const param p_sum[] = {{8, 2}, {8, 1}, {4, 0}};

/* The first kernel's name: tests/kernels.rs builds a second binary with another one. */
#ifndef STORE_NAME
#define STORE_NAME "store"
#endif

static const kernel kernels[] = {
    {STORE_NAME, store, 2, 0, p_store},   {"fail_odd", fail_odd, 1, 0, p_one},
    {"probe", probe, 2, 0, p_probe},   {"cube", cube, 0, 0, NULL},
    {"spin", spin, 1, 0, p_spin},      {"sum", sum, 3, 0, p_sum},
    {"meet", meet, 1, 0, p_one},       {"indirect", indirect, 1, 0, p_one},
};

__attribute__((visibility("default"))) const table ascendc_host_binary_v1 = {
    "ascendc-hostbin", 1, sizeof(kernels) / sizeof(kernels[0]), kernels};
