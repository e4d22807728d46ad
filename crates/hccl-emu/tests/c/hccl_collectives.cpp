/* HCCL from C-style code against the real headers (hccl.h is C++: it defines an inline
 * function), linked against the emulator root's libhccl.so, which is the runtime library itself:
 * ACL and HCCL share one emulated machine.
 *
 * Two devices of this process, one communicator each (HcclCommInitAll), an all-reduce and an
 * all-gather checked element by element; a named communicator from a root info configured with
 * the header's own HcclCommConfigInit; documented error codes. */
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_ACL(call)                                                               \
    do {                                                                              \
        aclError e_ = (call);                                                         \
        if (e_ != ACL_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s = %d: %s\n", __FILE__, __LINE__, #call, e_,    \
                    aclGetRecentErrMsg());                                            \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define CHECK_HCCL(call, want)                                                        \
    do {                                                                              \
        HcclResult r_ = (call);                                                       \
        if (r_ != (want)) {                                                           \
            fprintf(stderr, "%s:%d: %s = %d (%s), want %d: %s\n", __FILE__, __LINE__, \
                    #call, r_, HcclGetErrorString(r_), (want), aclGetRecentErrMsg()); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

enum { N = 2, COUNT = 1001 };

int main(void)
{
    CHECK_ACL(aclInit(NULL));
    int32_t devices[N] = {0, 1};
    HcclComm comms[N];
    aclrtStream streams[N];
    float *send[N], *recv[N], *gathered[N];
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_HCCL(HcclCommInitAll(N, devices, comms), HCCL_SUCCESS);

    static float host[COUNT];
    for (int r = 0; r < N; ++r) {
        uint32_t rank = 99, size = 0;
        CHECK_HCCL(HcclGetRankId(comms[r], &rank), HCCL_SUCCESS);
        CHECK_HCCL(HcclGetRankSize(comms[r], &size), HCCL_SUCCESS);
        if (rank != (uint32_t)r || size != N) {
            fprintf(stderr, "comm %d: rank %u of %u\n", r, rank, size);
            return 1;
        }
        CHECK_ACL(aclrtSetDevice(devices[r]));
        CHECK_ACL(aclrtCreateStream(&streams[r]));
        CHECK_ACL(aclrtMalloc((void **)&send[r], sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc((void **)&recv[r], sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc((void **)&gathered[r], N * sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
        for (int i = 0; i < COUNT; ++i) {
            host[i] = (float)((r + 1) * (i % 97));
        }
        CHECK_ACL(aclrtMemcpy(send[r], sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    for (int r = 0; r < N; ++r) {
        CHECK_HCCL(HcclAllReduce(send[r], recv[r], COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                                 comms[r], streams[r]),
                   HCCL_SUCCESS);
        CHECK_HCCL(HcclAllGather(send[r], gathered[r], COUNT, HCCL_DATA_TYPE_FP32, comms[r],
                                 streams[r]),
                   HCCL_SUCCESS);
    }
    static float out[N * COUNT];
    for (int r = 0; r < N; ++r) {
        CHECK_ACL(aclrtSetDevice(devices[r]));
        CHECK_ACL(aclrtSynchronizeStream(streams[r]));
        CHECK_ACL(aclrtMemcpy(out, sizeof host, recv[r], sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < COUNT; ++i) {
            float want = (float)(3 * (i % 97)); /* rank 0 gives 1x, rank 1 gives 2x */
            if (out[i] != want) {
                fprintf(stderr, "all-reduce: rank %d element %d = %f, want %f\n", r, i, out[i], want);
                return 1;
            }
        }
        CHECK_ACL(aclrtMemcpy(out, sizeof out, gathered[r], sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int j = 0; j < N * COUNT; ++j) {
            float want = (float)((j / COUNT + 1) * ((j % COUNT) % 97));
            if (out[j] != want) {
                fprintf(stderr, "all-gather: rank %d element %d = %f, want %f\n", r, j, out[j], want);
                return 1;
            }
        }
    }

    /* Documented codes; the message reaches aclGetRecentErrMsg (one library, one state). */
    CHECK_HCCL(HcclAllReduce(send[0], recv[0], 4, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM, comms[0],
                             streams[0]),
               HCCL_E_NOT_SUPPORT);
    const char *msg = aclGetRecentErrMsg();
    if (msg == NULL || strstr(msg, "HcclAllReduce") == NULL) {
        fprintf(stderr, "no message for the refused all-reduce: %s\n", msg ? msg : "(null)");
        return 1;
    }
    CHECK_HCCL(HcclBroadcast(send[0], 4, HCCL_DATA_TYPE_FP32, 2, comms[0], streams[0]), HCCL_E_PARA);
    CHECK_HCCL(HcclAllReduce(send[0], recv[0], 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, NULL,
                             streams[0]),
               HCCL_E_PTR);
    CHECK_HCCL(HcclGroupEnd(), HCCL_E_NOT_SUPPORT);
    if (strcmp(HcclGetErrorString(HCCL_E_PARA), "parameter error") != 0) {
        fprintf(stderr, "HcclGetErrorString(HCCL_E_PARA) = %s\n", HcclGetErrorString(HCCL_E_PARA));
        return 1;
    }

    /* A one-rank communicator named through the header's own HcclCommConfigInit. */
    CHECK_ACL(aclrtSetDevice(0));
    HcclRootInfo info;
    CHECK_HCCL(HcclGetRootInfo(&info), HCCL_SUCCESS);
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    strcpy(config.hcclCommName, "from-c");
    HcclComm named;
    CHECK_HCCL(HcclCommInitRootInfoConfig(1, &info, 0, &config, &named), HCCL_SUCCESS);
    char name[COMM_NAME_MAX_LENGTH];
    CHECK_HCCL(HcclGetCommName(named, name), HCCL_SUCCESS);
    if (strcmp(name, "from-c") != 0) {
        fprintf(stderr, "comm name %s\n", name);
        return 1;
    }
    CHECK_HCCL(HcclCommDestroy(named), HCCL_SUCCESS);

    for (int r = 0; r < N; ++r) {
        CHECK_ACL(aclrtSetDevice(devices[r]));
        CHECK_HCCL(HcclCommDestroy(comms[r]), HCCL_SUCCESS);
        CHECK_ACL(aclrtFree(send[r]));
        CHECK_ACL(aclrtFree(recv[r]));
        CHECK_ACL(aclrtFree(gathered[r]));
        CHECK_ACL(aclrtDestroyStream(streams[r]));
        CHECK_ACL(aclrtResetDevice(devices[r]));
    }
    CHECK_ACL(aclFinalize());
    printf("hccl_collectives: all-reduce and all-gather on %d devices checked\n", N);
    return 0;
}
