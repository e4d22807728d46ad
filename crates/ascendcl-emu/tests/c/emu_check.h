/* Checks shared by the emulator's C test programs: each mismatch is printed with the recent
 * error message and counted; a program ends with `return emu_report("name");`. */
#ifndef EMU_CHECK_H
#define EMU_CHECK_H

#include <stdio.h>
#include "acl/acl.h"

static int failures = 0;

#define EXPECT(call, want)                                                                   \
    do {                                                                                     \
        aclError got_ = (call);                                                              \
        if (got_ != (aclError)(want)) {                                                      \
            const char *msg_ = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__, \
                    #call, (int)got_, (int)(want), msg_ ? msg_ : "no message");            \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

/* Announces the group of checks that follows. */
static inline void emu_section(const char *what) {
    printf("-- %s\n", what);
    fflush(stdout);
}

/* Prints the verdict of program `name`; its exit code. */
static inline int emu_report(const char *name) {
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
