/*
 * The part of the profiling API library (lib64/libprofapi.so) that programs call directly, for
 * programs built against an emulator root. Written for ascendcl-rs from the documented
 * declarations.
 */
#ifndef ASCENDCL_EMU_PROFILING_APROF_PUB_H
#define ASCENDCL_EMU_PROFILING_APROF_PUB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records that the model `geModelIdx` runs on `deviceId` (what a model load does), so that
 * aclprofModelSubscribe can subscribe to it. 0 on success. */
int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId);
/* Forgets that record. 0 on success. */
int32_t MsprofUnsetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_PROFILING_APROF_PUB_H */
