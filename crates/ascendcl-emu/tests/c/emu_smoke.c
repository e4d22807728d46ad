/* A C program compiled against the real AscendCL headers and run on the emulator's shared
 * library (libacl_rt.so). It exercises init, devices, streams, memory, copies, events and
 * finalize, checks every return code, and exits non-zero on the first mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include "acl/acl.h"
#include "emu_check.h"
#include "emu_gate.h"

static void host_func(void *arg) { *(int *)arg += 1; }

/* The report thread: once subscribed (the gate `arg` opens then; before, aclrtProcessReport
 * would answer 107012), runs callbacks launched with aclrtLaunchCallback until told to stop. */
static atomic_int stop_reports = 0;
static int callbacks_run = 0;
static void callback(void *arg) { *(int *)arg += 1; }
static void *report_thread(void *subscribed) {
    emu_gate_wait(subscribed);
    while (!stop_reports) {
        aclError r = aclrtProcessReport(10);
        if (r != ACL_SUCCESS && r != ACL_ERROR_RT_REPORT_TIMEOUT) {
            fprintf(stderr, "aclrtProcessReport returned %d\n", (int)r);
            failures++;
            break;
        }
    }
    return NULL;
}

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    (void)aclGetRecentErrMsg();

    int32_t major = 0, minor = 0, patch = 0;
    EXPECT(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    CHECK(major == 1 && minor == 17 && patch == 0);
    const char *soc = aclrtGetSocName();
    CHECK(soc != NULL && strlen(soc) > 0);

    uint32_t count = 0;
    EXPECT(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    CHECK(count >= 1);
    EXPECT(aclrtSetDevice((int32_t)count), ACL_ERROR_RT_INVALID_DEVICEID);
    int32_t dev = -1;
    EXPECT(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    CHECK(aclGetRecentErrMsg() != NULL);
    CHECK(aclGetRecentErrMsg() == NULL);

    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT(aclrtGetDevice(&dev), ACL_SUCCESS);
    CHECK(dev == 0);

    aclrtStream stream = NULL;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);

    const size_t n = 1 << 20;
    void *d = NULL, *d2 = NULL, *h = NULL;
    EXPECT(aclrtMalloc(&d, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&d2, n, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    EXPECT(aclrtMallocHost(&h, n), ACL_SUCCESS);
    CHECK(((uintptr_t)d % 64) == 0);

    size_t free_b = 0, total_b = 0;
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b), ACL_SUCCESS);
    CHECK(total_b > 0 && free_b < total_b);

    unsigned char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 13);
    EXPECT(aclrtMemcpy(d, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT(aclrtMemcpy(d2, n, d, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT(aclrtMemcpy(dst, n, d2, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    CHECK(memcmp(src, dst, n) == 0);
    EXPECT(aclrtMemcpy(d, n, src, n + 1, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemcpy(NULL, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemcpy(d, n + 64, src, n + 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemcpy(d, n, src, n, (aclrtMemcpyKind)7), ACL_ERROR_INVALID_PARAM);

    /* Async: pinned -> device, then device -> pinned, with events around it. */
    aclrtEvent start = NULL, end = NULL;
    EXPECT(aclrtCreateEvent(&start), ACL_SUCCESS);
    EXPECT(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    EXPECT(aclrtCreateEventWithFlag(&end, 0), ACL_ERROR_RT_PARAM_INVALID);
    memset(h, 0x5a, n);
    EXPECT(aclrtRecordEvent(start, stream), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(d, n, 0, n, stream), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(h, n, d, n, ACL_MEMCPY_HOST_TO_HOST, stream), ACL_SUCCESS); /* forced D2H */
    int counter = 0;
    EXPECT(aclrtLaunchHostFunc(stream, host_func, &counter), ACL_SUCCESS);
    EXPECT(aclrtRecordEvent(end, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(counter == 1);
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT(aclrtQueryEventStatus(end, &st), ACL_SUCCESS);
    CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    float ms = -1.0f;
    EXPECT(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    CHECK(ms >= 0.0f);
    CHECK(((unsigned char *)h)[12345] == 0x5a);
    aclrtStreamStatus ss = ACL_STREAM_STATUS_NOT_READY;
    EXPECT(aclrtStreamQuery(stream, &ss), ACL_SUCCESS);
    CHECK(ss == ACL_STREAM_STATUS_COMPLETE);

    /* Callbacks through a subscribed report thread. */
    EXPECT(aclrtLaunchCallback(callback, &callbacks_run, ACL_CALLBACK_BLOCK, stream),
           ACL_ERROR_RT_STREAM_NO_CB_REG);
    EXPECT(aclrtProcessReport(1), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    pthread_t tid;
    emu_gate subscribed;
    emu_gate_init(&subscribed);
    CHECK(pthread_create(&tid, NULL, report_thread, &subscribed) == 0);
    EXPECT(aclrtSubscribeReport((uint64_t)tid, stream), ACL_SUCCESS);
    emu_gate_open(&subscribed);
    EXPECT(aclrtLaunchCallback(callback, &callbacks_run, ACL_CALLBACK_BLOCK, stream), ACL_SUCCESS);
    EXPECT(aclrtLaunchCallback(callback, &callbacks_run, ACL_CALLBACK_BLOCK, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK(callbacks_run == 2);
    stop_reports = 1;
    pthread_join(tid, NULL);
    emu_gate_destroy(&subscribed);
    EXPECT(aclrtUnSubscribeReport((uint64_t)tid, stream), ACL_SUCCESS);
    EXPECT(aclrtUnSubscribeReport((uint64_t)tid, stream), ACL_ERROR_RT_STREAM_NO_CB_REG);

    EXPECT(aclrtDestroyEvent(start), ACL_SUCCESS);
    EXPECT(aclrtDestroyEvent(end), ACL_SUCCESS);
    EXPECT(aclrtDestroyEvent(end), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(aclrtFree(d), ACL_SUCCESS);
    EXPECT(aclrtFree(d2), ACL_SUCCESS);
    EXPECT(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeDevice(), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    free(src);
    free(dst);

    return emu_report("emu_smoke");
}
