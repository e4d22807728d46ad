// AscendC host layer: the launch glue of a C++ program built in host mode. Each source compiled
// by ascendc-build's program path (`ascendc-host-cc`, the ASC language's compiler in the
// emulator root) embeds its own kernel binary; this header, included at the end of the
// source's unit, defines the unit's launch hook: on the first launch it loads the embedded binary
// through the runtime (aclrtBinaryLoadFromData), takes the kernel's function by name
// (aclrtBinaryGetFunction, cached), appends each argument (aclrtKernelArgsInit/Append/Finalize)
// and launches on the stream (aclrtLaunchKernelWithConfig), so a program's `<<<...>>>` launch is
// an ordinary kernel task of the emulator's streams. After aclFinalize the runtime forgets its
// binaries: a launch whose handles are no longer valid loads the binary again.
//
// The unit defines ASCENDC_HOST_GLUE_LAUNCH (its hook), ASCENDC_HOST_BLOB_BEGIN and
// ASCENDC_HOST_BLOB_END (the embedded binary's first byte and the byte after its last).
#ifndef ASCENDC_HOST_ACL_LAUNCH_H
#define ASCENDC_HOST_ACL_LAUNCH_H

#include "acl/acl.h"
#include "entry.h"

#include <map>
#include <mutex>
#include <string>

namespace ascendc_host {
namespace glue {

// ACL_ERROR_RT_INVALID_HANDLE: a handle the runtime no longer knows (after aclFinalize).
constexpr int kInvalidHandle = 107017;

// The runtime's handles for one unit's binary.
struct Binary {
    std::mutex m;
    aclrtBinHandle bin = nullptr;
    std::map<std::string, aclrtFuncHandle> functions;

    // The function of kernel `name`, loading the binary first when needed.
    int function(const void* data, size_t size, const char* name, bool reload,
                 aclrtFuncHandle* out)
    {
        std::lock_guard<std::mutex> lk(m);
        if (reload) {
            bin = nullptr;
            functions.clear();
        }
        auto it = functions.find(name);
        if (it != functions.end()) {
            *out = it->second;
            return 0;
        }
        if (bin == nullptr) {
            aclrtBinHandle h = nullptr;
            int rc = aclrtBinaryLoadFromData(data, size, nullptr, &h);
            if (rc != 0) {
                return rc;
            }
            bin = h;
        }
        aclrtFuncHandle f = nullptr;
        int rc = aclrtBinaryGetFunction(bin, name, &f);
        if (rc != 0) {
            return rc;
        }
        functions[name] = f;
        *out = f;
        return 0;
    }
};

inline int launch_once(Binary& b, const void* data, size_t size, void* stream, const char* name,
                       uint32_t blocks, const void* args, const uint32_t* sizes, uint32_t count,
                       bool reload)
{
    aclrtFuncHandle f = nullptr;
    int rc = b.function(data, size, name, reload, &f);
    if (rc != 0) {
        return rc;
    }
    aclrtArgsHandle a = nullptr;
    rc = aclrtKernelArgsInit(f, &a);
    if (rc != 0) {
        return rc;
    }
    uint64_t offset = 0;
    const uint8_t* bytes = static_cast<const uint8_t*>(args);
    for (uint32_t i = 0; i < count; ++i) {
        offset = next_slot(offset);
        aclrtParamHandle p = nullptr;
        rc = aclrtKernelArgsAppend(a, const_cast<uint8_t*>(bytes + offset), sizes[i], &p);
        if (rc != 0) {
            return rc;
        }
        offset += sizes[i];
    }
    rc = aclrtKernelArgsFinalize(a);
    if (rc != 0) {
        return rc;
    }
    return aclrtLaunchKernelWithConfig(f, blocks, static_cast<aclrtStream>(stream), nullptr, a,
                                       nullptr);
}

inline int launch(Binary& b, const void* data, size_t size, void* stream, const char* name,
                  uint32_t blocks, const void* args, const uint32_t* sizes, uint32_t count)
{
    int rc = launch_once(b, data, size, stream, name, blocks, args, sizes, count, false);
    if (rc == kInvalidHandle) {
        rc = launch_once(b, data, size, stream, name, blocks, args, sizes, count, true);
    }
    return rc;
}

}  // namespace glue
}  // namespace ascendc_host

extern "C" {
extern const unsigned char ASCENDC_HOST_BLOB_BEGIN[] __attribute__((visibility("hidden")));
extern const unsigned char ASCENDC_HOST_BLOB_END[] __attribute__((visibility("hidden")));

__attribute__((visibility("hidden"))) int ASCENDC_HOST_GLUE_LAUNCH(
    void* stream, const char* name, uint32_t blocks, const void* args, size_t bytes,
    const uint32_t* sizes, uint32_t count)
{
    (void)bytes;
    static ::ascendc_host::glue::Binary binary;
    return ::ascendc_host::glue::launch(
        binary, ASCENDC_HOST_BLOB_BEGIN,
        static_cast<size_t>(ASCENDC_HOST_BLOB_END - ASCENDC_HOST_BLOB_BEGIN), stream, name, blocks,
        args, sizes, count);
}
}

#endif
