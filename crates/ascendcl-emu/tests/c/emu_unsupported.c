/* A declared-but-unimplemented function links against the emulator's libacl_rt.so (which exports
 * every function of the headers) and fails at run time with ACL_ERROR_RT_FEATURE_NOT_SUPPORT
 * (207000; NULL for a function that returns a pointer), leaving a message that names it. */
#include <string.h>
#include "acl/acl.h"
#include "emu_check.h"

/* Whether the calling thread's recent error message names `function`. */
static int message_names(const char *function) {
    const char *msg = aclGetRecentErrMsg();
    if (msg == NULL) {
        fprintf(stderr, "no recent error message after %s\n", function);
        return 0;
    }
    if (strstr(msg, function) == NULL || strstr(msg, "207000") == NULL) {
        fprintf(stderr, "the message does not name %s and 207000: %s\n", function, msg);
        return 0;
    }
    return 1;
}

int main(void) {
    EXPECT(aclInit(NULL), ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0), ACL_SUCCESS);

    EXPECT(aclmdlInitDump(), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(message_names("aclmdlInitDump"));
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);

    EXPECT(aclrtSnapShotProcessLock(0, NULL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(message_names("aclrtSnapShotProcessLock"));

    /* A function that returns a pointer: NULL. */
    CHECK(aclrtCreateGroupInfo() == NULL);
    CHECK(message_names("aclrtCreateGroupInfo"));

    /* The implemented functions are unaffected. */
    EXPECT(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(aclFinalize(), ACL_SUCCESS);
    return emu_report("emu_unsupported");
}
