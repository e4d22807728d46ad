// What the test programs share: a check that counts failures, and runtime calls that must work.
#ifndef HOST_MODE_PROGRAMS_COMMON_H
#define HOST_MODE_PROGRAMS_COMMON_H

#include <cstdio>

static int failures = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                                \
        }                                                                              \
    } while (0)

#define ACL_OK(call) CHECK((call) == 0)

#endif
