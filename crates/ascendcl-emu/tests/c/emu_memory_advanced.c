/* The newer memory families through the emulator's libacl_rt.so, as a C user of CANN calls them:
 * managed memory and its hints, the allocator registry (with C callbacks called through what
 * aclrtAllocatorGetByStream returns, as an operator executor would), copies described in device
 * memory, batched copies, allocation with a configuration, and virtual memory (reserve, allocate
 * physical memory, map, set access, use, then unmap, free and release in that order). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"
#include "emu_check.h"
#include "emu_gate.h"

#define MIB2 ((size_t)2 << 20)
/* aclrtPointerGetAttributes' location type of managed memory (the header names no value 3). */
#define MANAGED_LOCATION_TYPE 3u

/* Whether `n` bytes of device memory at `dev` all equal `b` (copied back to the host). */
static int device_bytes_are(const void *dev, size_t n, unsigned char b) {
    unsigned char *host = malloc(n);
    if (host == NULL) {
        return 0;
    }
    int ok = aclrtMemcpy(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
    for (size_t i = 0; ok && i < n; i++) {
        ok = host[i] == b;
    }
    free(host);
    return ok;
}

static aclrtMemManagedLocation managed_loc(aclrtMemManagedLocationType type, int32_t id) {
    aclrtMemManagedLocation l = {type, id};
    return l;
}

/* One int32 attribute of a managed range; 0x7777 when the query fails. */
static int32_t range_attr(aclrtMemManagedRangeAttribute a, const void *p, size_t size) {
    int32_t v = 0x7777;
    EXPECT(aclrtMemManagedGetAttr(a, p, size, &v, sizeof v), ACL_SUCCESS);
    return v;
}

/* Managed memory needs a current context: a thread that set no device has none. */
static void *managed_without_context(void *managed) {
    void *m = NULL;
    EXPECT(aclrtMemAllocManaged(&m, 64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_CONTEXT_NULL);
    aclrtMemManagedLocation host = {ACL_MEM_LOCATIONTYPE_HOST, 0};
    EXPECT(aclrtMemManagedAdvise(managed, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_RT_CONTEXT_NULL);
    /* Queries need none. */
    int32_t v = 9;
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, MIB2, &v, sizeof v), ACL_SUCCESS);
    CHECK(v == 0);
    return NULL;
}

static void managed_memory(aclrtStream s) {
    emu_section("managed memory: allocation");
    void *m = NULL;
    EXPECT(aclrtMemAllocManaged(NULL, 64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemAllocManaged(&m, 64, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemAllocManaged(&m, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_PARAM_INVALID);
    /* Two 2 MiB pages: the size is rounded up to whole pages. */
    EXPECT(aclrtMemAllocManaged(&m, 2 * MIB2 - 100, ACL_RT_MEM_ATTACH_GLOBAL), ACL_SUCCESS);
    CHECK(m != NULL && (uintptr_t)m % MIB2 == 0);
    if (m == NULL) {
        return;
    }
    void *second = (char *)m + MIB2;
    aclrtPtrAttributes pa;
    memset(&pa, 0, sizeof pa);
    EXPECT(aclrtPointerGetAttributes(m, &pa), ACL_SUCCESS);
    CHECK(pa.location.type == MANAGED_LOCATION_TYPE);
    CHECK(pa.pageSize == MIB2);
    /* Host and device share it: written by the host, copied by the device. */
    memset(m, 0x11, 256);
    void *dev = NULL;
    EXPECT(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMemcpy(dev, 256, m, 256, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    CHECK(device_bytes_are(dev, 256, 0x11));

    emu_section("managed memory: advice and range attributes");
    aclrtMemManagedLocation host = managed_loc(ACL_MEM_LOCATIONTYPE_HOST, 0);
    aclrtMemManagedLocation dev0 = managed_loc(ACL_MEM_LOCATIONTYPE_DEVICE, 0);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * MIB2) == 0);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 2 * MIB2) == -2);
    /* Read-mostly on the first page: that page answers 1, the whole range 0. */
    EXPECT(aclrtMemManagedAdvise(m, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, MIB2) == 1);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * MIB2) == 0);
    EXPECT(aclrtMemManagedAdvise(m, 2 * MIB2, ACL_MEM_ADVISE_UNSET_READ_MOSTLY, host), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, MIB2) == 0);
    /* Preferred location: device 0 everywhere, then the host on the second page. */
    EXPECT(aclrtMemManagedAdvise(m, 2 * MIB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 2 * MIB2) == 0);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m, 2 * MIB2) ==
          ACL_MEM_LOCATIONTYPE_DEVICE);
    EXPECT(aclrtMemManagedAdvise(second, MIB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, host), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, second, MIB2) == -1);
    /* The pages disagree: no location for the whole range. */
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m, 2 * MIB2) ==
          ACL_MEM_LOCATIONTYPE_INVALID);
    /* Accessed by the host and device 0: the host is listed first (-1), the rest padded -2. */
    EXPECT(aclrtMemManagedAdvise(m, 2 * MIB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, dev0), ACL_SUCCESS);
    EXPECT(aclrtMemManagedAdvise(m, 2 * MIB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, host), ACL_SUCCESS);
    int32_t ids[4] = {9, 9, 9, 9};
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, 2 * MIB2, ids, sizeof ids),
           ACL_SUCCESS);
    CHECK(ids[0] == -1 && ids[1] == 0 && ids[2] == -2 && ids[3] == -2);
    /* Several attributes at once. */
    aclrtMemManagedRangeAttribute attrs[2] = {ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                              ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID};
    int32_t type = -9, id = -9;
    void *outs[2] = {&type, &id};
    size_t sizes[2] = {sizeof type, sizeof id};
    EXPECT(aclrtMemManagedGetAttrs(attrs, 2, m, MIB2, outs, sizes), ACL_SUCCESS);
    CHECK(type == ACL_MEM_LOCATIONTYPE_DEVICE && id == 0);
    /* A wrong size for one of them: 107000 and nothing written. */
    type = id = 55;
    sizes[1] = 2;
    EXPECT(aclrtMemManagedGetAttrs(attrs, 2, m, MIB2, outs, sizes), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(type == 55 && id == 55);

    emu_section("managed memory: bad advice and queries");
    EXPECT(aclrtMemManagedAdvise(NULL, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemManagedAdvise(m, 0, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemManagedAdvise(m, MIB2, (aclrtMemManagedAdviseType)6, host), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemManagedAdvise(m, MIB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                 managed_loc(ACL_MEM_LOCATIONTYPE_DEVICE, 99)),
           ACL_ERROR_RT_PARAM_INVALID);
    /* Memory that is not managed, a range past the allocation. */
    EXPECT(aclrtMemManagedAdvise(dev, 256, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemManagedAdvise(m, 2 * MIB2 + 1, ACL_MEM_ADVISE_SET_READ_MOSTLY, host),
           ACL_ERROR_RT_PARAM_INVALID);
    int32_t v = 0;
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, MIB2, NULL, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemManagedGetAttr((aclrtMemManagedRangeAttribute)0, m, MIB2, &v, 4), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, MIB2, &v, 8), ACL_ERROR_RT_PARAM_INVALID);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, managed_without_context, m) == 0);
    pthread_join(t, NULL);

    emu_section("managed memory: prefetch");
    EXPECT(aclrtMemManagedPrefetchAsync(m, MIB2, dev0, 0, s), ACL_SUCCESS);
    EXPECT(aclrtMemManagedPrefetchAsync(second, MIB2, host, 0, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, MIB2) == 0);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, second, MIB2) ==
          ACL_MEM_LOCATIONTYPE_HOST);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 2 * MIB2) == -2);
    EXPECT(aclrtMemManagedPrefetchAsync(m, MIB2, dev0, 1, s), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemManagedPrefetchAsync(m, MIB2, managed_loc(ACL_MEM_LOCATIONTYPE_DEVICE, 7), 0, s),
           ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemManagedPrefetchAsync(dev, 256, dev0, 0, s), ACL_ERROR_RT_PARAM_INVALID);
    /* A batch: the first page to device 0, the second to the host (locations by first index). */
    const void *ptrs[2] = {m, second};
    size_t psizes[2] = {MIB2, MIB2};
    aclrtMemManagedLocation locs[2] = {dev0, host};
    size_t loc_idx[2] = {0, 1};
    EXPECT(aclrtMemManagedPrefetchAsync(m, 2 * MIB2, host, 0, s), ACL_SUCCESS);
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, psizes, 2, locs, loc_idx, 2, 0, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m, MIB2) == ACL_MEM_LOCATIONTYPE_DEVICE);
    CHECK(range_attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, second, MIB2) == -1);
    size_t bad_idx[2] = {1, 1};
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, psizes, 2, locs, bad_idx, 2, 0, s), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, psizes, 1, locs, loc_idx, 2, 0, s), ACL_ERROR_INVALID_PARAM);

    EXPECT(aclrtFree(m), ACL_SUCCESS);
    EXPECT(aclrtFree(dev), ACL_SUCCESS);
    /* Freed: no longer managed memory. */
    EXPECT(aclrtMemManagedAdvise(m, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_RT_PARAM_INVALID);
}

/* A pool allocator as a framework would register it: blocks are device allocations. */
typedef struct {
    int allocs, frees, advised;
} pool_t;

typedef struct {
    void *dev;
    size_t size;
} block_t;

static void *pool_alloc(aclrtAllocator allocator, size_t size) {
    pool_t *pool = allocator;
    block_t *b = malloc(sizeof *b);
    if (b == NULL) {
        return NULL;
    }
    if (aclrtMalloc(&b->dev, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        free(b);
        return NULL;
    }
    b->size = size;
    pool->allocs++;
    return b;
}

static void pool_free(aclrtAllocator allocator, aclrtAllocatorBlock block) {
    pool_t *pool = allocator;
    block_t *b = block;
    if (aclrtFree(b->dev) != ACL_SUCCESS) {
        fprintf(stderr, "pool_free: aclrtFree failed\n");
        failures++;
    }
    free(b);
    pool->frees++;
}

static void *pool_advise(aclrtAllocator allocator, size_t size, aclrtAllocatorAddr addr) {
    pool_t *pool = allocator;
    (void)size;
    (void)addr;
    pool->advised++;
    return NULL;
}

static void *pool_addr(aclrtAllocatorBlock block) { return ((block_t *)block)->dev; }

static void allocators(aclrtStream s) {
    emu_section("allocator registry: descriptors");
    pool_t pool = {0, 0, 0};
    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    CHECK(desc != NULL);
    EXPECT(aclrtAllocatorSetObjToDesc(NULL, &pool), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorSetObjToDesc(desc, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorSetAllocFuncToDesc(desc, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorSetObjToDesc(desc, &pool), ACL_SUCCESS);
    EXPECT(aclrtAllocatorSetAllocFuncToDesc(desc, pool_alloc), ACL_SUCCESS);
    /* The free and get-address functions are required. */
    EXPECT(aclrtAllocatorRegister(s, desc), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorSetFreeFuncToDesc(desc, pool_free), ACL_SUCCESS);
    EXPECT(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, pool_addr), ACL_SUCCESS);
    /* No default stream: NULL is refused. */
    EXPECT(aclrtAllocatorRegister(NULL, desc), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorRegister(s, desc), ACL_SUCCESS);
    /* The registration is a copy: an advise function set afterwards is not in it. */
    EXPECT(aclrtAllocatorSetAllocAdviseFuncToDesc(desc, pool_advise), ACL_SUCCESS);

    emu_section("allocator registry: callbacks called through aclrtAllocatorGetByStream");
    aclrtAllocatorDesc got_desc = NULL;
    aclrtAllocator obj = NULL;
    aclrtAllocatorAllocFunc alloc = NULL;
    aclrtAllocatorFreeFunc release = NULL;
    aclrtAllocatorAllocAdviseFunc advise = pool_advise;
    aclrtAllocatorGetAddrFromBlockFunc addr = NULL;
    EXPECT(aclrtAllocatorGetByStream(s, NULL, &obj, &alloc, &release, &advise, &addr), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorGetByStream(s, &got_desc, &obj, &alloc, &release, &advise, &addr), ACL_SUCCESS);
    CHECK(got_desc == desc && obj == &pool);
    CHECK(alloc == pool_alloc && release == pool_free && addr == pool_addr && advise == NULL);
    if (alloc != NULL && release != NULL && addr != NULL) {
        /* What an operator executor does: a block for its workspace, used on the stream. */
        aclrtAllocatorBlock block = alloc(obj, 4096);
        CHECK(block != NULL);
        void *workspace = block ? addr(block) : NULL;
        CHECK(workspace != NULL);
        if (workspace != NULL) {
            EXPECT(aclrtMemsetAsync(workspace, 4096, 0x6b, 4096, s), ACL_SUCCESS);
            EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
            CHECK(device_bytes_are(workspace, 4096, 0x6b));
            release(obj, block);
        }
        CHECK(pool.allocs == 1 && pool.frees == 1 && pool.advised == 0);
    }
    /* A later registration (now with the advise function) replaces the first. */
    EXPECT(aclrtAllocatorRegister(s, desc), ACL_SUCCESS);
    EXPECT(aclrtAllocatorGetByStream(s, &got_desc, NULL, NULL, NULL, &advise, NULL), ACL_SUCCESS);
    CHECK(advise == pool_advise);
    if (advise != NULL) {
        CHECK(advise(obj, 64, NULL) == NULL && pool.advised == 1);
    }

    emu_section("allocator registry: unregistering");
    EXPECT(aclrtAllocatorUnregister(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorUnregister(s), ACL_SUCCESS);
    EXPECT(aclrtAllocatorUnregister(s), ACL_SUCCESS);
    EXPECT(aclrtAllocatorGetByStream(s, &got_desc, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    /* A stream's registration goes with the stream. */
    aclrtStream t = NULL;
    EXPECT(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT(aclrtAllocatorRegister(t, desc), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT(aclrtAllocatorGetByStream(t, &got_desc, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtAllocatorDestroyDesc(desc), ACL_SUCCESS);
    EXPECT(aclrtAllocatorDestroyDesc(desc), ACL_ERROR_INVALID_PARAM);
}

static void descriptor_copies(aclrtStream s) {
    emu_section("memcpy descriptors: size and contents");
    const aclrtMemcpyKind inner = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
    size_t desc_size = 0;
    EXPECT(aclrtGetMemcpyDescSize(inner, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &desc_size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtGetMemcpyDescSize(inner, &desc_size), ACL_SUCCESS);
    CHECK(desc_size == 32);
    void *desc = NULL, *src = NULL, *dst = NULL;
    EXPECT(aclrtMalloc(&desc, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&src, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&dst, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMemset(src, 256, 0x42, 256), ACL_SUCCESS);
    EXPECT(aclrtMemset(dst, 256, 0, 256), ACL_SUCCESS);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, src, dst, 100, NULL), ACL_SUCCESS);
    /* The descriptor holds the length at offset 0, the source at 8, the destination at 16. */
    unsigned char raw[32];
    EXPECT(aclrtMemcpy(raw, 32, desc, 32, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    uint32_t len = 0;
    void *rsrc = NULL, *rdst = NULL;
    memcpy(&len, raw, 4);
    memcpy(&rsrc, raw + 8, sizeof rsrc);
    memcpy(&rdst, raw + 16, sizeof rdst);
    CHECK(len == 100 && rsrc == src && rdst == dst);

    emu_section("memcpy descriptors: aclrtMemcpyAsyncWithDesc");
    EXPECT(aclrtMemcpyAsyncWithDesc(desc, inner, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(device_bytes_are(dst, 100, 0x42));
    CHECK(device_bytes_are((char *)dst + 100, 156, 0));
    /* The descriptor is read when the copy runs: rewritten after the launch, before the run. */
    EXPECT(aclrtMemset(dst, 256, 0, 256), ACL_SUCCESS);
    emu_gate gate;
    emu_gate_init(&gate);
    EXPECT(aclrtLaunchHostFunc(s, emu_gate_wait, &gate), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsyncWithDesc(desc, inner, s), ACL_SUCCESS);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, src, dst, 200, NULL), ACL_SUCCESS);
    emu_gate_open(&gate);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    emu_gate_destroy(&gate);
    CHECK(device_bytes_are(dst, 200, 0x42));
    CHECK(device_bytes_are((char *)dst + 200, 56, 0));

    emu_section("memcpy descriptors: bad input");
    unsigned char host[64];
    EXPECT(aclrtSetMemcpyDesc(NULL, inner, src, dst, 8, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, src, dst, 0, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, src, dst, 8, desc), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_DEVICE_TO_DEVICE, src, dst, 8, NULL),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtSetMemcpyDesc((char *)desc + 8, inner, src, dst, 8, NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, host, dst, 8, NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtSetMemcpyDesc(desc, inner, src, dst, 512, NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemcpyAsyncWithDesc(desc, inner, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpyAsyncWithDesc(host, inner, s), ACL_ERROR_RT_PARAM_INVALID);
    /* A descriptor naming freed memory fails the copy when it runs. */
    EXPECT(aclrtFree(src), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsyncWithDesc(desc, inner, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
    (void)aclGetRecentErrMsg();
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(aclrtFree(dst), ACL_SUCCESS);
    EXPECT(aclrtFree(desc), ACL_SUCCESS);
}

static aclrtMemcpyBatchAttr batch_attr(aclrtMemLocationType src, aclrtMemLocationType dst) {
    aclrtMemcpyBatchAttr a;
    memset(&a, 0, sizeof a);
    a.srcLoc.type = src;
    a.dstLoc.type = dst;
    return a;
}

static void batch_copies(aclrtStream s) {
    emu_section("batched copies: aclrtMemcpyBatchAsync");
    void *a = NULL, *b = NULL, *pa = NULL, *pb = NULL;
    EXPECT(aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMallocHost(&pa, 64), ACL_SUCCESS);
    EXPECT(aclrtMallocHost(&pb, 64), ACL_SUCCESS);
    memset(pa, 1, 64);
    memset(pb, 2, 64);
    unsigned char pageable[32];
    memset(pageable, 3, sizeof pageable);
    /* Three host-to-device copies: two from pinned memory, one from pageable memory. */
    void *dsts[3] = {a, b, (char *)a + 32};
    size_t maxs[3] = {64, 64, 32};
    void *srcs[3] = {pa, pb, pageable};
    size_t sizes[3] = {32, 64, 32};
    aclrtMemcpyBatchAttr h2d = batch_attr(ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE);
    aclrtMemcpyBatchAttr d2h = batch_attr(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST);
    size_t idx[2] = {0, 1};
    size_t fail = 7;
    EXPECT(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 3, &h2d, idx, 1, &fail, s), ACL_SUCCESS);
    CHECK(fail == SIZE_MAX);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(device_bytes_are(a, 32, 1));
    CHECK(device_bytes_are((char *)a + 32, 32, 3));
    CHECK(device_bytes_are(b, 64, 2));
    /* Device to host, with two attributes. */
    aclrtMemcpyBatchAttr back[2] = {d2h, d2h};
    void *bdsts[2] = {pa, pb};
    void *bsrcs[2] = {b, a};
    size_t bsizes[2] = {64, 64};
    EXPECT(aclrtMemcpyBatchAsync(bdsts, maxs, bsrcs, bsizes, 2, back, idx, 2, &fail, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(((unsigned char *)pa)[0] == 2 && ((unsigned char *)pb)[40] == 3);

    emu_section("batched copies: bad input and the failing index");
    EXPECT(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 3, &h2d, idx, 1, NULL, s), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 0, &h2d, idx, 1, &fail, s), ACL_ERROR_INVALID_PARAM);
    /* Every size 0: nothing to do, whatever the other arguments. */
    size_t zeros[3] = {0, 0, 0};
    fail = 7;
    EXPECT(aclrtMemcpyBatchAsync(NULL, NULL, NULL, zeros, 3, NULL, NULL, 0, &fail, s), ACL_SUCCESS);
    CHECK(fail == SIZE_MAX);
    /* A destination smaller than its copy: 100000, naming the entry. */
    size_t small[3] = {64, 8, 32};
    EXPECT(aclrtMemcpyBatchAsync(dsts, small, srcs, sizes, 3, &h2d, idx, 1, &fail, s), ACL_ERROR_INVALID_PARAM);
    CHECK(fail == 1);
    /* Attribute indexes must start at 0; no entry is to blame (the index stays SIZE_MAX). */
    size_t late[1] = {1};
    fail = 7;
    EXPECT(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 3, &h2d, late, 1, &fail, s), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(fail == SIZE_MAX);
    /* A device-to-device entry: only host-to-device and device-to-host are batched. */
    void *d2d_srcs[3] = {pa, a, pageable};
    aclrtMemcpyBatchAttr mixed[2] = {h2d, batch_attr(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_DEVICE)};
    size_t mixed_idx[2] = {0, 1};
    EXPECT(aclrtMemcpyBatchAsync(dsts, maxs, d2d_srcs, sizes, 3, mixed, mixed_idx, 2, &fail, s),
           ACL_ERROR_RT_PARAM_INVALID);
    CHECK(fail == 1);
    /* A location the entry's attribute does not describe (a device source for host-to-device). */
    void *device_src[3] = {a, pb, pageable};
    void *device_src_dsts[3] = {b, a, (char *)a + 32};
    EXPECT(aclrtMemcpyBatchAsync(device_src_dsts, maxs, device_src, sizes, 3, &h2d, idx, 1, &fail, s),
           ACL_ERROR_RT_PARAM_INVALID);
    CHECK(fail == 0);

    emu_section("batched copies: aclrtMemcpyBatch (synchronous)");
    memset(pa, 6, 64);
    void *sync_dsts[1] = {b};
    void *sync_srcs[1] = {pa};
    size_t sync_sizes[1] = {16};
    fail = 7;
    EXPECT(aclrtMemcpyBatch(sync_dsts, maxs, sync_srcs, sync_sizes, 1, &h2d, idx, 1, &fail), ACL_SUCCESS);
    CHECK(fail == SIZE_MAX);
    CHECK(device_bytes_are(b, 16, 6) && device_bytes_are((char *)b + 16, 48, 2));
    /* The runtime's checks answer 107000 here too: attribute indexes (no copy to blame), a NULL
     * copy (named). */
    fail = 7;
    EXPECT(aclrtMemcpyBatch(sync_dsts, maxs, sync_srcs, sync_sizes, 1, &h2d, late, 1, &fail),
           ACL_ERROR_RT_PARAM_INVALID);
    CHECK(fail == SIZE_MAX);
    sync_srcs[0] = NULL;
    EXPECT(aclrtMemcpyBatch(sync_dsts, maxs, sync_srcs, sync_sizes, 1, &h2d, idx, 1, &fail),
           ACL_ERROR_RT_PARAM_INVALID);
    CHECK(fail == 0);

    emu_section("batched copies: aclrtMemcpyBatchV2 and aclrtMemcpyBatchAsyncV2");
    memset(pa, 4, 64);
    memset(pb, 5, 64);
    void *v2_dsts[2] = {a, b};
    void *v2_srcs[2] = {pa, pb};
    size_t v2_sizes[2] = {64, 32};
    EXPECT(aclrtMemcpyBatchV2(v2_dsts, maxs, v2_srcs, v2_sizes, 2, &h2d, idx, 1), ACL_SUCCESS);
    CHECK(device_bytes_are(a, 64, 4));
    CHECK(device_bytes_are(b, 32, 5) && device_bytes_are((char *)b + 32, 32, 2));
    EXPECT(aclrtMemcpyBatchV2(v2_dsts, maxs, v2_srcs, NULL, 2, &h2d, idx, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpyBatchV2(v2_dsts, maxs, v2_srcs, v2_sizes, 2, &d2h, idx, 1), ACL_ERROR_RT_PARAM_INVALID);
    memset(pa, 0, 64);
    memset(pb, 0, 64);
    void *v2_back_dsts[2] = {pa, pb};
    void *v2_back_srcs[2] = {b, a};
    size_t v2_back_sizes[2] = {64, 64};
    EXPECT(aclrtMemcpyBatchAsyncV2(v2_back_dsts, maxs, v2_back_srcs, v2_back_sizes, 2, &d2h, idx, 1, s),
           ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(((unsigned char *)pa)[0] == 5 && ((unsigned char *)pa)[63] == 2 && ((unsigned char *)pb)[10] == 4);
    size_t too_big[2] = {65, 64};
    EXPECT(aclrtMemcpyBatchAsyncV2(v2_back_dsts, maxs, v2_back_srcs, too_big, 2, &d2h, idx, 1, s),
           ACL_ERROR_INVALID_PARAM);
    aclrtStream dead = NULL;
    EXPECT(aclrtCreateStream(&dead), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(dead), ACL_SUCCESS);
    EXPECT(aclrtMemcpyBatchAsyncV2(v2_back_dsts, maxs, v2_back_srcs, v2_back_sizes, 2, &d2h, idx, 1, dead),
           ACL_ERROR_RT_INVALID_HANDLE);

    EXPECT(aclrtFree(a), ACL_SUCCESS);
    EXPECT(aclrtFree(b), ACL_SUCCESS);
    EXPECT(aclrtFreeHost(pa), ACL_SUCCESS);
    EXPECT(aclrtFreeHost(pb), ACL_SUCCESS);
}

static aclrtMallocAttribute malloc_attr(aclrtMallocAttrType type, uint32_t value) {
    aclrtMallocAttribute a;
    memset(&a, 0, sizeof a);
    a.attr = type;
    if (type == ACL_RT_MEM_ATTR_MODULE_ID) {
        a.value.moduleId = (uint16_t)value;
    } else {
        a.value.deviceId = value;
    }
    return a;
}

static void allocation_with_a_configuration(void) {
    emu_section("allocation with a configuration");
    void *p = NULL;
    aclrtMallocAttribute attrs[2] = {malloc_attr(ACL_RT_MEM_ATTR_MODULE_ID, 7),
                                     malloc_attr(ACL_RT_MEM_ATTR_DEVICE_ID, 0)};
    aclrtMallocConfig cfg = {attrs, 2};
    EXPECT(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_SUCCESS);
    aclrtPtrAttributes pa;
    memset(&pa, 0, sizeof pa);
    EXPECT(aclrtPointerGetAttributes(p, &pa), ACL_SUCCESS);
    CHECK(pa.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && pa.location.id == 0);
    /* The block is the size asked for. */
    void *base = NULL;
    size_t size = 0;
    EXPECT(aclrtMemGetAddressRange((char *)p + 10, &base, &size), ACL_SUCCESS);
    CHECK(base == p && size == 100);
    EXPECT(aclrtFree(p), ACL_SUCCESS);
    EXPECT(aclrtMallocForTaskScheduler(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, NULL), ACL_SUCCESS);
    EXPECT(aclrtMemset(p, 64, 0x21, 64), ACL_SUCCESS);
    CHECK(device_bytes_are(p, 64, 0x21));
    EXPECT(aclrtFree(p), ACL_SUCCESS);
    /* Bad input: NULL, size 0, attributes NULL with a count, another device, the VA flag. */
    aclrtMallocConfig broken = {NULL, 1};
    EXPECT(aclrtMallocWithCfg(NULL, 8, ACL_MEM_MALLOC_HUGE_FIRST, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocWithCfg(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocWithCfg(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST, &broken), ACL_ERROR_INVALID_PARAM);
    aclrtMallocAttribute other[1] = {malloc_attr(ACL_RT_MEM_ATTR_DEVICE_ID, 1)};
    aclrtMallocConfig other_cfg = {other, 1};
    EXPECT(aclrtMallocWithCfg(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST, &other_cfg), ACL_ERROR_RT_PARAM_INVALID);
    aclrtMallocAttribute va[1] = {malloc_attr(ACL_RT_MEM_ATTR_VA_FLAG, 1)};
    aclrtMallocConfig va_cfg = {va, 1};
    EXPECT(aclrtMallocForTaskScheduler(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST, &va_cfg), ACL_ERROR_RT_PARAM_INVALID);

    /* Host memory with a configuration: pinned host memory, freed with aclrtFreeHost. */
    void *h = NULL;
    aclrtMallocAttribute host_attrs[1] = {malloc_attr(ACL_RT_MEM_ATTR_MODULE_ID, 3)};
    aclrtMallocConfig host_cfg = {host_attrs, 1};
    EXPECT(aclrtMallocHostWithCfg(&h, 4096, &host_cfg), ACL_SUCCESS);
    memset(&pa, 0, sizeof pa);
    pa.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    EXPECT(aclrtPointerGetAttributes(h, &pa), ACL_SUCCESS);
    CHECK(pa.location.type == ACL_MEM_LOCATION_TYPE_HOST);
    EXPECT(aclrtMemGetAddressRange((char *)h + 4000, &base, &size), ACL_SUCCESS);
    CHECK(base == h && size == 4096);
    memset(h, 0x5a, 4096);
    EXPECT(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT(aclrtMallocHostWithCfg(&h, 0, NULL), ACL_ERROR_INVALID_PARAM);
    aclrtMallocConfig host_broken = {NULL, 2};
    EXPECT(aclrtMallocHostWithCfg(&h, 16, &host_broken), ACL_ERROR_RT_PARAM_INVALID);
}

static aclrtPhysicalMemProp physical_prop(aclrtMemAttr attr, aclrtMemLocationType type, uint32_t id) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = attr;
    p.location.type = type;
    p.location.id = id;
    return p;
}

static void virtual_memory(aclrtStream s) {
    emu_section("virtual memory: granularity");
    aclrtPhysicalMemProp prop = physical_prop(ACL_HBM_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
    size_t g = 0;
    EXPECT(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_SUCCESS);
    CHECK(g == MIB2);
    EXPECT(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g), ACL_SUCCESS);
    CHECK(g == MIB2);
    EXPECT(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL),
           ACL_ERROR_INVALID_PARAM);
    aclrtPhysicalMemProp ddr_on_device = physical_prop(ACL_DDR_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
    EXPECT(aclrtMemGetAllocationGranularity(&ddr_on_device, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
           ACL_ERROR_INVALID_PARAM);
    aclrtPhysicalMemProp no_device = physical_prop(ACL_HBM_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE, 99);
    EXPECT(aclrtMemGetAllocationGranularity(&no_device, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
           ACL_ERROR_RT_INVALID_DEVICEID);

    emu_section("virtual memory: reserve, allocate, map");
    void *va = NULL;
    EXPECT(aclrtReserveMemAddress(NULL, 4 * MIB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 4 * MIB2, 0, NULL, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReserveMemAddress(&va, 4 * MIB2, 0, NULL, 0), ACL_SUCCESS);
    CHECK(va != NULL && (uintptr_t)va % MIB2 == 0);
    aclrtDrvMemHandle h = NULL;
    EXPECT(aclrtMallocPhysical(NULL, MIB2, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h, MIB2, &prop, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h, MIB2, &ddr_on_device, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMallocPhysical(&h, MIB2, &no_device, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtMallocPhysical(&h, MIB2, &prop, 0), ACL_SUCCESS);
    void *second = (char *)va + MIB2;
    EXPECT(aclrtMapMem(second, MIB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMapMem(second, MIB2, 0, h, 1), ACL_ERROR_INVALID_PARAM);
    /* A whole allocation is mapped: offset 0 and its size. */
    EXPECT(aclrtMapMem(second, MIB2, 4096, h, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMapMem(second, 2 * MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
    /* At an address that is not a multiple of the granularity. */
    EXPECT(aclrtMapMem((char *)second + 1, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMapMem((char *)va + 4096, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
    /* Outside the reservation. */
    EXPECT(aclrtMapMem((char *)va + 4 * MIB2, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMapMem(second, MIB2, 0, h, 0), ACL_SUCCESS);
    EXPECT(aclrtMapMem(second, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);

    emu_section("virtual memory: access and use");
    aclrtMemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    EXPECT(aclrtMemSetAccess(NULL, MIB2, &access, 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemSetAccess(second, 4096, &access, 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemSetAccess(second, MIB2, &access, 1), ACL_SUCCESS);
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    EXPECT(aclrtMemSetAccess(second, MIB2, &access, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    aclrtMemLocation loc = {9, ACL_MEM_LOCATION_TYPE_HOST};
    uint64_t flag = 0;
    EXPECT(aclrtMemGetAccess(second, &loc, &flag), ACL_SUCCESS);
    CHECK(loc.type == ACL_MEM_LOCATION_TYPE_DEVICE && loc.id == 0 && flag == ACL_RT_MEM_ACCESS_FLAGS_READWRITE);
    /* The mapping is device memory: copies, queued work and attributes see it. */
    EXPECT(aclrtMemsetAsync(second, MIB2, 0x7e, MIB2, s), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    CHECK(device_bytes_are(second, MIB2, 0x7e));
    aclrtPtrAttributes pa;
    memset(&pa, 0, sizeof pa);
    EXPECT(aclrtPointerGetAttributes(second, &pa), ACL_SUCCESS);
    CHECK(pa.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && pa.location.id == 0);
    void *base = NULL;
    size_t size = 0;
    EXPECT(aclrtMemGetAddressRange((char *)second + 100, &base, &size), ACL_SUCCESS);
    CHECK(base == second && size == MIB2);
    /* The unmapped half of the reservation is no memory block. */
    EXPECT(aclrtMemGetAddressRange(va, &base, &size), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtFree(second), ACL_ERROR_RT_PARAM_INVALID);

    emu_section("virtual memory: unmap, free, release");
    /* The reservation cannot go while mapped. */
    EXPECT(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtUnmapMem(va), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtUnmapMem(second), ACL_SUCCESS);
    EXPECT(aclrtUnmapMem(second), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT(aclrtFreePhysical(h), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM);

    emu_section("virtual memory: a free while mapped is deferred to the unmap");
    EXPECT(aclrtReserveMemAddress(&va, MIB2, 0, NULL, 0), ACL_SUCCESS);
    EXPECT(aclrtMallocPhysical(&h, MIB2, &prop, 0), ACL_SUCCESS);
    EXPECT(aclrtMapMem(va, MIB2, 0, h, 0), ACL_SUCCESS);
    EXPECT(aclrtMemset(va, MIB2, 0x19, MIB2), ACL_SUCCESS);
    EXPECT(aclrtFreePhysical(h), ACL_SUCCESS);
    CHECK(device_bytes_are(va, MIB2, 0x19));
    EXPECT(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = NULL;
    EXPECT(aclrtCreateStream(&s), ACL_SUCCESS);
    managed_memory(s);
    allocators(s);
    descriptor_copies(s);
    batch_copies(s);
    allocation_with_a_configuration();
    virtual_memory(s);
    EXPECT(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_memory_advanced");
}
