/* Two processes share physical device memory through a shareable handle with a pid whitelist,
 * and an IPC event, through the emulator's libacl_rt.so, as the runtime's memory-sharing samples
 * do. The parent allocates and maps physical memory, fills it with 0x5a, exports it, and records
 * an IPC event on a stream that a gate holds back. The child (this program run again) fails to
 * import before the parent whitelists its pid, then imports and maps the memory, checks the
 * parent's bytes, rewrites them with 0x3c, opens the IPC event and queues on its own stream a wait
 * for it followed by a memset of the first 16 bytes to 0x77. Once the child reports the event
 * pending, the parent opens the gate; the child's wait ends and its memset runs; the parent
 * finally sees the child's bytes in its own mapping. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "acl/acl.h"
#include "emu_check.h"
#include "emu_gate.h"

#define SIZE ((size_t)2 << 20)

/* Whether `n` bytes of device memory at `dev` all equal `b`. */
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

static aclrtPhysicalMemProp device_memory(void) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

static void to_hex(const aclrtIpcEventHandle *h, char *out) {
    for (size_t i = 0; i < ACL_IPC_EVENT_HANDLE_SIZE; i++) {
        snprintf(out + 2 * i, 3, "%02x", (unsigned char)h->reserved[i]);
    }
}

static int from_hex(const char *in, aclrtIpcEventHandle *h) {
    if (strlen(in) != 2 * ACL_IPC_EVENT_HANDLE_SIZE) {
        return 0;
    }
    for (size_t i = 0; i < ACL_IPC_EVENT_HANDLE_SIZE; i++) {
        unsigned v = 0;
        if (sscanf(in + 2 * i, "%2x", &v) != 1) {
            return 0;
        }
        h->reserved[i] = (char)v;
    }
    return 1;
}

static int send_byte(int fd, char c) { return write(fd, &c, 1) == 1; }

static char receive_byte(int fd) {
    char c = 0;
    return read(fd, &c, 1) == 1 ? c : 0;
}

static int child(uint64_t sh, const char *event_hex, int from_parent, int to_parent) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    emu_section("child: import before and after the whitelist");
    aclrtDrvMemHandle h = NULL;
    EXPECT(aclrtMemImportFromShareableHandle(sh, 0, &h), ACL_ERROR_RT_PARAM_INVALID);
    (void)aclGetRecentErrMsg();
    EXPECT(aclrtMemImportFromShareableHandle(sh, 0, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemImportFromShareableHandle(sh, 99, &h), ACL_ERROR_RT_INVALID_DEVICEID);
    int32_t pid = -1;
    EXPECT(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);
    CHECK(pid == (int32_t)getpid());
    if (write(to_parent, &pid, sizeof pid) != (ssize_t)sizeof pid || receive_byte(from_parent) != 'w') {
        fprintf(stderr, "child: no answer from the parent\n");
        return 1;
    }
    EXPECT(aclrtMemImportFromShareableHandle(sh, 0, &h), ACL_SUCCESS);

    emu_section("child: map the parent's memory, read it and write it");
    void *va = NULL;
    EXPECT(aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0), ACL_SUCCESS);
    EXPECT(aclrtMapMem(va, SIZE, 0, h, 0), ACL_SUCCESS);
    CHECK(device_bytes_are(va, SIZE, 0x5a));
    EXPECT(aclrtMemset(va, SIZE, 0x3c, SIZE), ACL_SUCCESS);

    emu_section("child: open the IPC event and wait for the parent's record");
    aclrtIpcEventHandle eh;
    CHECK(from_hex(event_hex, &eh));
    aclrtEvent ev = NULL;
    EXPECT(aclrtIpcOpenEventHandle(eh, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtIpcOpenEventHandle(eh, &ev), ACL_SUCCESS);
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    EXPECT(aclrtQueryEventStatus(ev, &st), ACL_SUCCESS);
    CHECK(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    aclrtStream s = NULL;
    EXPECT(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT(aclrtStreamWaitEvent(s, ev), ACL_SUCCESS);
    EXPECT(aclrtMemsetAsync(va, 16, 0x77, 16, s), ACL_SUCCESS);
    aclrtStreamStatus ss = ACL_STREAM_STATUS_COMPLETE;
    EXPECT(aclrtStreamQuery(s, &ss), ACL_SUCCESS);
    CHECK(ss == ACL_STREAM_STATUS_NOT_READY);
    CHECK(device_bytes_are(va, 16, 0x3c));
    CHECK(send_byte(to_parent, 'p'));
    /* The parent releases its record. */
    EXPECT(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(aclrtQueryEventStatus(ev, &st), ACL_SUCCESS);
    CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK(device_bytes_are(va, 16, 0x77));

    EXPECT(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT(aclrtDestroyEvent(ev), ACL_SUCCESS);
    EXPECT(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_share (child)");
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "child") == 0) {
        return child(strtoull(argv[2], NULL, 10), argv[3], atoi(argv[4]), atoi(argv[5]));
    }
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);

    emu_section("parent: physical memory, mapped and filled, exported by shareable handle");
    aclrtPhysicalMemProp prop = device_memory();
    aclrtDrvMemHandle h = NULL;
    EXPECT(aclrtMallocPhysical(&h, SIZE, &prop, 0), ACL_SUCCESS);
    void *va = NULL;
    EXPECT(aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0), ACL_SUCCESS);
    EXPECT(aclrtMapMem(va, SIZE, 0, h, 0), ACL_SUCCESS);
    EXPECT(aclrtMemset(va, SIZE, 0x5a, SIZE), ACL_SUCCESS);
    uint64_t sh = 0;
    EXPECT(aclrtMemExportToShareableHandle(NULL, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &sh),
           ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, NULL),
           ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 2, &sh), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &sh),
           ACL_SUCCESS);
    /* One shareable handle per allocation. */
    uint64_t again = 0;
    EXPECT(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &again),
           ACL_ERROR_RT_PARAM_INVALID);
    /* The exporting process cannot import its own memory. */
    aclrtDrvMemHandle own = NULL;
    EXPECT(aclrtMemImportFromShareableHandle(sh, 0, &own), ACL_ERROR_RT_PARAM_INVALID);
    int32_t pids[1] = {0};
    EXPECT(aclrtMemSetPidToShareableHandle(sh, NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtMemSetPidToShareableHandle(sh, pids, 0), ACL_ERROR_INVALID_PARAM);
    (void)aclGetRecentErrMsg();

    emu_section("parent: an IPC event recorded behind a gate");
    aclrtEvent plain = NULL;
    aclrtIpcEventHandle eh;
    memset(&eh, 0, sizeof eh);
    EXPECT(aclrtCreateEvent(&plain), ACL_SUCCESS);
    EXPECT(aclrtIpcGetEventHandle(plain, &eh), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtIpcGetEventHandle(plain, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtDestroyEvent(plain), ACL_SUCCESS);
    aclrtEvent ev = NULL;
    EXPECT(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC), ACL_SUCCESS);
    /* No record in flight: complete. */
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT(aclrtQueryEventStatus(ev, &st), ACL_SUCCESS);
    CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    aclrtStream s = NULL;
    EXPECT(aclrtCreateStream(&s), ACL_SUCCESS);
    emu_gate gate;
    emu_gate_init(&gate);
    EXPECT(aclrtLaunchHostFunc(s, emu_gate_wait, &gate), ACL_SUCCESS);
    EXPECT(aclrtRecordEvent(ev, s), ACL_SUCCESS);
    EXPECT(aclrtIpcGetEventHandle(ev, &eh), ACL_SUCCESS);
    char hex[2 * ACL_IPC_EVENT_HANDLE_SIZE + 1];
    to_hex(&eh, hex);

    emu_section("parent: the child process");
    int down[2], up[2];
    CHECK(pipe(down) == 0 && pipe(up) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        char shs[24], rfd[16], wfd[16];
        snprintf(shs, sizeof shs, "%llu", (unsigned long long)sh);
        snprintf(rfd, sizeof rfd, "%d", down[0]);
        snprintf(wfd, sizeof wfd, "%d", up[1]);
        execl("/proc/self/exe", argv[0], "child", shs, hex, rfd, wfd, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    CHECK(pid > 0);
    int32_t child_pid = -1;
    CHECK(read(up[0], &child_pid, sizeof child_pid) == (ssize_t)sizeof child_pid);
    /* The child's bare tgid is its process id. */
    CHECK(child_pid == (int32_t)pid);
    pids[0] = child_pid;
    EXPECT(aclrtMemSetPidToShareableHandle(sh, pids, 1), ACL_SUCCESS);
    CHECK(send_byte(down[1], 'w'));
    /* The child waits on the record; let it through. */
    CHECK(receive_byte(up[0]) == 'p');
    emu_gate_open(&gate);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(down[1]);
    close(up[0]);

    emu_section("parent: the child's bytes, then unmap, free and release");
    CHECK(device_bytes_are(va, 16, 0x77));
    CHECK(device_bytes_are((char *)va + 16, SIZE - 16, 0x3c));
    EXPECT(aclrtSynchronizeStream(s), ACL_SUCCESS);
    emu_gate_destroy(&gate);
    EXPECT(aclrtDestroyEvent(ev), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    /* Freed: the shareable handle is gone. */
    EXPECT(aclrtMemSetPidToShareableHandle(sh, pids, 1), ACL_ERROR_RT_PARAM_INVALID);
    (void)aclGetRecentErrMsg();
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_share");
}
