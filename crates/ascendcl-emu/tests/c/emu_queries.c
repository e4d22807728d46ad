/* Device queries, resource limits, stream ids and stream-ordered value writes and waits, called
 * from C through the emulator's libacl_rt.so. */
#include <stdint.h>
#include <string.h>
#include "acl/acl.h"
#include "emu_check.h"

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);

    int64_t v = 0;
    EXPECT(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_SUCCESS);
    CHECK(v == 24);
    EXPECT(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &v), ACL_SUCCESS);
    CHECK(v == 192 * 1024 * 1024);
    EXPECT(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v), ACL_SUCCESS);
    CHECK(v == 48);
    EXPECT(aclrtGetDeviceInfo(99, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v), ACL_ERROR_RT_PARAM_INVALID);

    uint32_t limit = 0;
    EXPECT(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 8), ACL_SUCCESS);
    EXPECT(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &limit), ACL_SUCCESS);
    CHECK(limit == 8);
    EXPECT(aclrtResetDeviceResLimit(0), ACL_SUCCESS);

    aclrtStream a = NULL, b = NULL;
    EXPECT(aclrtCreateStream(&a), ACL_SUCCESS);
    EXPECT(aclrtCreateStream(&b), ACL_SUCCESS);
    int32_t ida = -1, idb = -1;
    EXPECT(aclrtStreamGetId(a, &ida), ACL_SUCCESS);
    EXPECT(aclrtStreamGetId(b, &idb), ACL_SUCCESS);
    CHECK(ida >= 0 && idb >= 0 && ida != idb);

    /* Stream a waits until stream b writes 123, then copies the word back. */
    void *word = NULL;
    EXPECT(aclrtMalloc(&word, 64, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    EXPECT(aclrtMemset(word, 64, 0, 64), ACL_SUCCESS);
    void *host = NULL;
    EXPECT(aclrtMallocHost(&host, 8), ACL_SUCCESS);
    memset(host, 0, 8);
    EXPECT(aclrtValueWait(word, 123, ACL_STREAM_WAIT_VALUE_EQ, a), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(host, 8, word, 8, ACL_MEMCPY_DEVICE_TO_HOST, a), ACL_SUCCESS);
    aclrtStreamStatus st = ACL_STREAM_STATUS_COMPLETE;
    EXPECT(aclrtStreamQuery(a, &st), ACL_SUCCESS);
    CHECK(st == ACL_STREAM_STATUS_NOT_READY);
    EXPECT(aclrtValueWrite(word, 123, 0, b), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(a), ACL_SUCCESS);
    uint64_t got = 0;
    memcpy(&got, host, 8);
    CHECK(got == 123);

    EXPECT(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT(aclrtFree(word), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(a), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(b), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_queries");
}
