/* The calls of CANN's memory samples, in their order, on the emulator: 1_h2d_sync_memory_copy,
 * 2_h2d_async_memory_copy and 6_d2d_async_memory_copy (the runtime's
 * example/1_basic_features/memory). Each sample writes 123, copies it, launches a read-back
 * kernel and destroys its stream with aclrtDestroyStreamForce right after; its README shows the
 * kernel's "Destination data: 123". Work handed to a stream runs through a forced destroy, so
 * every sample here must print that line.
 *
 * The samples' two AscendC kernels are replaced by stream tasks doing the same on the device:
 * WriteDo (writes one int) by aclrtMemsetD32Async of one word, ReadDo (prints the int) by a
 * queued copy of the int into pinned memory followed by a host function that prints it.
 *
 * 5_d2d_sync_memory_copy and the IPC samples (10 with a pid whitelist, 11 without) also rely
 * on the device finishing a kernel before the host's next synchronous call (5: aclrtMemcpy right
 * after WriteDo; 10/11: aclrtIpcMemClose right after ReadDo, in the importing process). The
 * emulator's synchronous memory calls first wait, bounded, for the work queued ahead of them on
 * the device's streams (never behind a wait), so they print the same line. The IPC samples'
 * importer is this program run again as a child process. */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include "acl/acl.h"
#include "emu_check.h"

namespace {

constexpr uint64_t kSize = 1 * 1024 * 1024;
constexpr int kValue = 123;

/* What the read-back "kernel" printed, per sample: the value and how often it ran. */
struct ReadBack {
    int *pinned = nullptr;
    int value = -1;
    int runs = 0;
};

void print_destination(void *arg) {
    ReadBack *r = static_cast<ReadBack *>(arg);
    r->value = *r->pinned;
    r->runs++;
    printf("Destination data: %d\n", r->value);
    fflush(stdout);
}

/* The sample's WriteDo kernel: one int of device memory set to `value`, on the stream. */
void write_do(aclrtStream stream, int *dev, int value) {
    EXPECT(aclrtMemsetD32Async(dev, sizeof(int), static_cast<uint32_t>(value), 1, stream), ACL_SUCCESS);
}

/* The sample's ReadDo kernel: the int at `dev` printed from the device, on the stream. */
void read_do(aclrtStream stream, int *dev, ReadBack *r) {
    EXPECT(aclrtMallocHost(reinterpret_cast<void **>(&r->pinned), sizeof(int)), ACL_SUCCESS);
    *r->pinned = -1;
    EXPECT(aclrtMemcpyAsync(r->pinned, sizeof(int), dev, sizeof(int), ACL_MEMCPY_DEVICE_TO_HOST, stream),
           ACL_SUCCESS);
    EXPECT(aclrtLaunchHostFunc(stream, print_destination, r), ACL_SUCCESS);
}

/* After the forced destroy: the read-back ran once and saw 123. */
void check_read_back(const char *sample, ReadBack *r) {
    if (r->runs != 1 || r->value != kValue) {
        fprintf(stderr, "%s: the read-back ran %d time(s) and saw %d, expected once and %d\n", sample,
                r->runs, r->value, kValue);
        failures++;
    }
    EXPECT(aclrtFreeHost(r->pinned), ACL_SUCCESS);
}

void h2d(bool async) {
    const char *name = async ? "2_h2d_async_memory_copy" : "1_h2d_sync_memory_copy";
    emu_section(name);
    EXPECT(aclInit(nullptr), ACL_SUCCESS);
    int32_t deviceId = 0;
    EXPECT(aclrtSetDevice(deviceId), ACL_SUCCESS);
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    int *hostPtrA = nullptr;
    int *devPtrB = nullptr;
    EXPECT(aclrtMallocHost(reinterpret_cast<void **>(&hostPtrA), kSize), ACL_SUCCESS);
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtrB), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    *hostPtrA = kValue;
    if (async) {
        EXPECT(aclrtMemcpyAsync(devPtrB, kSize, hostPtrA, kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
        EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    } else {
        EXPECT(aclrtMemcpy(devPtrB, kSize, hostPtrA, kSize, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    }
    ReadBack r;
    read_do(stream, devPtrB, &r);
    EXPECT(aclrtDestroyStreamForce(stream), ACL_SUCCESS);
    check_read_back(name, &r);
    EXPECT(aclrtFreeHost(hostPtrA), ACL_SUCCESS);
    EXPECT(aclrtFree(devPtrB), ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(deviceId), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
}

void d2d_async() {
    const char *name = "6_d2d_async_memory_copy";
    emu_section(name);
    EXPECT(aclInit(nullptr), ACL_SUCCESS);
    int32_t deviceId = 0;
    EXPECT(aclrtSetDevice(deviceId), ACL_SUCCESS);
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    int *devPtrA = nullptr;
    int *devPtrB = nullptr;
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtrA), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtrB), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    write_do(stream, devPtrA, kValue);
    EXPECT(aclrtMemcpyAsync(devPtrB, kSize, devPtrA, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, stream), ACL_SUCCESS);
    EXPECT(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    ReadBack r;
    read_do(stream, devPtrB, &r);
    EXPECT(aclrtDestroyStreamForce(stream), ACL_SUCCESS);
    check_read_back(name, &r);
    EXPECT(aclrtFree(devPtrA), ACL_SUCCESS);
    EXPECT(aclrtFree(devPtrB), ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(deviceId), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
}

void d2d_sync() {
    const char *name = "5_d2d_sync_memory_copy";
    emu_section(name);
    EXPECT(aclInit(nullptr), ACL_SUCCESS);
    int32_t deviceId = 0;
    EXPECT(aclrtSetDevice(deviceId), ACL_SUCCESS);
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    int *devPtrA = nullptr;
    int *devPtrB = nullptr;
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtrA), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtrB), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    write_do(stream, devPtrA, kValue);
    /* Synchronous, right after the queued write. */
    EXPECT(aclrtMemcpy(devPtrB, kSize, devPtrA, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    ReadBack r;
    read_do(stream, devPtrB, &r);
    EXPECT(aclrtDestroyStreamForce(stream), ACL_SUCCESS);
    check_read_back(name, &r);
    EXPECT(aclrtFree(devPtrA), ACL_SUCCESS);
    EXPECT(aclrtFree(devPtrB), ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(deviceId), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
}

/* The IPC samples' proc_b: imports the key, reads it with ReadDo, closes the import at once,
 * destroys its stream by force, frees its own memory. */
int ipc_importer(const char *sample, const char *key, int from_parent) {
    char go = 0;
    if (read(from_parent, &go, 1) != 1 || go != 'g') {
        fprintf(stderr, "%s: no word from the exporter\n", sample);
        return 1;
    }
    EXPECT(aclInit(nullptr), ACL_SUCCESS);
    int32_t deviceId = 0;
    EXPECT(aclrtSetDevice(deviceId), ACL_SUCCESS);
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream), ACL_SUCCESS);
    int *devPtr = nullptr;
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtr), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    void *imported = nullptr;
    EXPECT(aclrtIpcMemImportByKey(&imported, key, 0), ACL_SUCCESS);
    ReadBack r;
    read_do(stream, static_cast<int *>(imported), &r);
    EXPECT(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT(aclrtDestroyStreamForce(stream), ACL_SUCCESS);
    check_read_back(sample, &r);
    EXPECT(aclrtFree(devPtr), ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(deviceId), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return failures == 0 ? 0 : 1;
}

/* The IPC samples' proc_a: writes 123, exports it (whitelisting the importer, or for any
 * process), and keeps it until the importer is done. */
void ipc(const char *self, bool with_pid) {
    const char *name = with_pid ? "10_ipc_memory_with_pid" : "11_ipc_memory_without_pid";
    emu_section(name);
    EXPECT(aclInit(nullptr), ACL_SUCCESS);
    int32_t deviceId = 0;
    EXPECT(aclrtSetDevice(deviceId), ACL_SUCCESS);
    int *devPtr = nullptr;
    EXPECT(aclrtMalloc(reinterpret_cast<void **>(&devPtr), kSize, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(aclrtMemsetD32(devPtr, kSize, static_cast<uint32_t>(kValue), kSize / 4), ACL_SUCCESS);
    char key[65] = {0};
    EXPECT(aclrtIpcMemGetExportKey(devPtr, kSize, key, sizeof key, with_pid ? 0 : 1), ACL_SUCCESS);
    int down[2];
    CHECK(pipe(down) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(down[1]);
        char rfd[16];
        snprintf(rfd, sizeof rfd, "%d", down[0]);
        execl("/proc/self/exe", self, "importer", name, key, rfd, static_cast<char *>(nullptr));
        _exit(127);
    }
    close(down[0]);
    CHECK(pid > 0);
    if (with_pid) {
        int32_t pids[1] = {static_cast<int32_t>(pid)};
        EXPECT(aclrtIpcMemSetImportPid(key, pids, 1), ACL_SUCCESS);
    }
    char go = 'g';
    CHECK(write(down[1], &go, 1) == 1);
    close(down[1]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: the importer ended with status %#x\n", name, status);
        failures++;
    }
    EXPECT(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT(aclrtFree(devPtr), ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(deviceId), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "importer") == 0) {
        return ipc_importer(argv[2], argv[3], atoi(argv[4]));
    }
    h2d(false);
    h2d(true);
    d2d_sync();
    d2d_async();
    ipc(argv[0], true);
    ipc(argv[0], false);
    return emu_report("emu_memory_samples");
}
