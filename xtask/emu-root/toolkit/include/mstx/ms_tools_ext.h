/*
 * mstx, the marks and ranges of CANN's profiling tools, for programs built against an emulator
 * root. Written for ascendcl-rs from the documented declarations. The functions are the
 * emulator's profiler's (lib64/libmsprofiler.so): with profiling on (aclprofStart with
 * ACL_PROF_MSPROFTX, or ASCENDCL_EMU_PROFILE) marks and ranges go into the trace; without it
 * every call does nothing and a range start returns MSTX_INVALID_RANGE_ID, as with no tool
 * attached.
 */
#ifndef ASCENDCL_EMU_MSTX_MS_TOOLS_EXT_H
#define ASCENDCL_EMU_MSTX_MS_TOOLS_EXT_H

#include <stdint.h>

#include "acl/acl_base.h"

#define MSTX_SUCCESS 0
#define MSTX_FAIL 1
#define MSTX_INVALID_RANGE_ID 0

/* A range's id; 0 is no range. */
typedef uint64_t mstxRangeId;
/* A domain: a named group of marks and ranges. */
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

#ifdef __cplusplus
extern "C" {
#endif

/* A mark of the default domain; a non-NULL stream also puts a marker task on it. */
void mstxMarkA(const char *message, aclrtStream stream);
/* Starts a range of the default domain; 0 when nothing records it. */
mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);
/* Ends a range. */
void mstxRangeEnd(mstxRangeId id);
/* Creates a domain named `name` (NULL on failure). */
mstxDomainHandle_t mstxDomainCreateA(const char *name);
/* Destroys a domain. */
void mstxDomainDestroy(mstxDomainHandle_t domain);
/* A mark of `domain`. */
void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
/* Starts a range of `domain`; 0 when nothing records it or the domain is not valid. */
mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
/* Ends a range of `domain`. */
void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_MSTX_MS_TOOLS_EXT_H */
