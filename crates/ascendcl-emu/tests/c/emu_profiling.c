/* A C program compiled against the real acl_prof.h and run on the emulator's shared library:
 * the calls of CANN's profiling samples 0_create_config and 1_msproftx (a configuration and a
 * setting; a step, stamps, a mark, push/pop and start/stop ranges), with stream work inside the
 * session, and the codes of the misuses. The trace the session writes is then read back and
 * checked for the ranges, the marks and the stream's copies. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "emu_check.h"

static void *stamp(const char *msg) {
    void *s = aclprofCreateStamp();
    CHECK(s != NULL);
    EXPECT(aclprofSetStampTraceMessage(s, msg, (uint32_t)strlen(msg)), ACL_SUCCESS);
    return s;
}

/* The whole trace file the session wrote into `dir`, or NULL. */
static char *read_trace(const char *dir) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "ascendcl_emu_trace_%d_", (int)getpid());
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char path[4096] = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    if (!path[0]) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    size_t got = fread(text, 1, (size_t)n, f);
    text[got] = 0;
    fclose(f);
    unlink(path);
    return text;
}

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream stream = NULL;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);

    emu_section("misuse before a session");
    EXPECT(aclprofStop(NULL), ACL_ERROR_PROF_NOT_RUN);
    EXPECT(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    void *early = stamp("early");
    EXPECT(aclprofMark(early), ACL_ERROR_PROF_NOT_RUN);
    aclprofDestroyStamp(early);

    emu_section("0_create_config: init, config, setting, start, stop, finalize");
    char dir[] = "/tmp/emu_profiling_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    EXPECT(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
    EXPECT(aclprofInit(dir, strlen(dir)), ACL_ERROR_REPEAT_INITIALIZE);
    uint32_t devices[1] = {0};
    uint64_t flags = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS |
                     ACL_PROF_AICPU | ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX |
                     ACL_PROF_RUNTIME_API;
    aclprofConfig *config =
        aclprofCreateConfig(devices, 1, ACL_AICORE_ARITHMETIC_UTILIZATION, NULL, flags);
    CHECK(config != NULL);
    uint32_t missing[1] = {4096};
    CHECK(aclprofCreateConfig(missing, 1, ACL_AICORE_NONE, NULL, flags) == NULL);
    (void)aclGetRecentErrMsg();
    EXPECT(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15", 2), ACL_SUCCESS);
    EXPECT(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "150", 3), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclprofStart(config), ACL_SUCCESS);
    EXPECT(aclprofStart(config), ACL_ERROR_PROF_ALREADY_RUN);

    emu_section("1_msproftx: a step, stamps, marks, push/pop and ranges around stream work");
    aclprofStepInfo *step = aclprofCreateStepInfo();
    CHECK(step != NULL);
    EXPECT(aclprofGetStepTimestamp(step, ACL_STEP_START, stream), ACL_SUCCESS);
    void *mark = stamp("emu mark");
    void *outer = stamp("emu outer push");
    void *range = stamp("emu preprocess range");
    void *inner = stamp("emu inner push");
    EXPECT(aclprofMark(mark), ACL_SUCCESS);
    EXPECT(aclprofPush(outer), ACL_SUCCESS);
    uint32_t id = 0;
    EXPECT(aclprofRangeStart(range, &id), ACL_SUCCESS);
    void *host = NULL, *dev = NULL;
    EXPECT(aclrtMallocHost(&host, 4096), ACL_SUCCESS);
    EXPECT(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    memset(host, 7, 4096);
    EXPECT(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT(aclprofRangeStop(id), ACL_SUCCESS);
    EXPECT(aclprofRangeStop(id), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclprofPush(inner), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
    EXPECT(aclprofMarkEx("emu stream mark", 15, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT(aclprofPop(), ACL_SUCCESS);
    EXPECT(aclprofMark(mark), ACL_SUCCESS);
    EXPECT(aclprofPop(), ACL_SUCCESS);
    EXPECT(aclprofPop(), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclprofGetStepTimestamp(step, ACL_STEP_END, stream), ACL_SUCCESS);
    aclprofDestroyStepInfo(step);
    aclprofDestroyStamp(mark);
    aclprofDestroyStamp(outer);
    aclprofDestroyStamp(range);
    aclprofDestroyStamp(inner);
    CHECK(aclprofStr2Id("emu") == aclprofStr2Id("emu"));
    EXPECT(aclprofStop(config), ACL_SUCCESS);
    EXPECT(aclprofDestroyConfig(config), ACL_SUCCESS);
    EXPECT(aclprofFinalize(), ACL_SUCCESS);

    emu_section("the trace written by aclprofStop");
    char *trace = read_trace(dir);
    CHECK(trace != NULL);
    if (trace) {
        const char *want[] = {"\"traceEvents\"", "\"emu outer push\"", "\"emu preprocess range\"",
                              "\"emu inner push\"", "\"emu mark\"", "\"emu stream mark\"",
                              "\"memcpy H2D\"", "\"memcpy D2H\"", "\"step start\"", "\"step end\"",
                              "\"bytes\":4096"};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            if (!strstr(trace, want[i])) {
                fprintf(stderr, "the trace lacks %s\n", want[i]);
                failures++;
            }
        }
        free(trace);
    }
    rmdir(dir);

    EXPECT(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT(aclrtFree(dev), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_profiling");
}
