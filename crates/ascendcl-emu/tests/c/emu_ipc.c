/* Two processes exchange device memory and a notify through the emulator's libacl_rt.so, as the
 * runtime's IPC samples do: the parent exports memory and a notify and whitelists the child's
 * pid; the child (this program run again) imports both, writes 123 into the shared memory and
 * records the notify; the parent's stream, waiting on the notify, then copies the value back. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "acl/acl.h"
#include "emu_check.h"

static int child(const char *mem_key, const char *notify_key, int go_fd) {
    char go = 0;
    /* Wait until the parent whitelisted this process. */
    if (read(go_fd, &go, 1) != 1) {
        fprintf(stderr, "child: no signal from the parent\n");
        return 1;
    }
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    void *shared = NULL;
    EXPECT(aclrtIpcMemImportByKey(&shared, mem_key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT), ACL_SUCCESS);
    aclrtNotify notify = NULL;
    EXPECT(aclrtNotifyImportByKey(&notify, notify_key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT), ACL_SUCCESS);
    aclrtStream stream = NULL;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    uint32_t value = 123;
    EXPECT(aclrtMemcpy(shared, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT(aclrtRecordNotify(notify, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT(aclrtDestroyNotify(notify), ACL_SUCCESS);
    EXPECT(aclrtIpcMemClose(mem_key), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_ipc (child)");
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "child") == 0) {
        return child(argv[2], argv[3], atoi(argv[4]));
    }
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);
    void *dev = NULL;
    EXPECT(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    EXPECT(aclrtMemset(dev, 4096, 0, 4096), ACL_SUCCESS);
    char mem_key[65] = {0};
    EXPECT(aclrtIpcMemGetExportKey(dev, 4096, mem_key, sizeof mem_key, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT), ACL_SUCCESS);
    aclrtNotify notify = NULL;
    EXPECT(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT), ACL_SUCCESS);
    char notify_key[65] = {0};
    EXPECT(aclrtNotifyGetExportKey(notify, notify_key, sizeof notify_key, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT), ACL_SUCCESS);

    /* The wait and the copy back are queued before the child exists. */
    aclrtStream stream = NULL;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    void *host = NULL;
    EXPECT(aclrtMallocHost(&host, 4), ACL_SUCCESS);
    memset(host, 0, 4);
    EXPECT(aclrtWaitAndResetNotify(notify, stream, 30), ACL_SUCCESS);
    EXPECT(aclrtMemcpyAsync(host, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);

    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", go[0]);
        execl("/proc/self/exe", argv[0], "child", mem_key, notify_key, fd, (char *)NULL);
        _exit(127);
    }
    close(go[0]);
    CHECK(pid > 0);
    int32_t child_pid = (int32_t)pid;
    EXPECT(aclrtIpcMemSetImportPid(mem_key, &child_pid, 1), ACL_SUCCESS);
    EXPECT(aclrtNotifySetImportPid(notify, &child_pid, 1), ACL_SUCCESS);
    CHECK(write(go[1], "g", 1) == 1);
    close(go[1]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    uint32_t got = 0;
    memcpy(&got, host, sizeof got);
    CHECK(got == 123);
    printf("Destination data: %u\n", got);

    EXPECT(aclrtIpcMemClose(mem_key), ACL_SUCCESS);
    EXPECT(aclrtDestroyNotify(notify), ACL_SUCCESS);
    EXPECT(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT(aclrtFree(dev), ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_ipc");
}
