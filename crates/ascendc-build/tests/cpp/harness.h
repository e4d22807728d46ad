// The checks and the kernel runner the C++ tests of the host layer share: CHECK macros that
// count failures, `launch` (a kernel body run as `blocks` blocks, its failure message returned)
// and `finish` (the exit code, with the line tests/it/host_layer.rs looks for).
#ifndef ASCENDC_HOST_TEST_HARNESS_H
#define ASCENDC_HOST_TEST_HARNESS_H

#include "kernel_operator.h"

#include <cstdio>
#include <string>
#include <vector>

inline int failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                 \
    do {                                                                                   \
        std::string x_ = (a), y_ = (b);                                                    \
        if (x_ != y_) {                                                                    \
            std::fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, x_.c_str(), \
                         y_.c_str());                                                      \
            ++failures;                                                                    \
        }                                                                                  \
    } while (0)

// Runs `body` as a kernel of `blocks` blocks with the given buffer arguments; returns "" or
// the failure message.
template <typename F>
inline std::string launch(uint32_t blocks, F body, std::vector<ascendc_host_region> regions = {},
                          bool check = true)
{
    char message[1024] = {0};
    int rc = ascendc_host::run_blocks("test", blocks, body, regions.data(),
                                      static_cast<uint32_t>(regions.size()), check, message,
                                      sizeof(message));
    return rc == 0 ? std::string() : std::string(message);
}

inline ascendc_host_region region(const void* p, size_t bytes, bool writable)
{
    return ascendc_host_region{p, bytes, writable ? 1u : 0u};
}

inline bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The program's exit code: 1 when a check failed.
inline int finish()
{
    if (failures != 0) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::fprintf(stderr, "all checks passed\n");
    return 0;
}

#endif
