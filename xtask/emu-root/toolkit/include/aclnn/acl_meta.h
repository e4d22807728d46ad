/*
 * The operator library's tensors and scalars (aclnn), for programs built against an emulator
 * root: no more of the library than CANN's runtime samples call. Written for ascendcl-rs from
 * the documented declarations. Run by the emulator (lib64/libnnopbase.so).
 */
#ifndef ASCENDCL_EMU_ACLNN_ACL_META_H
#define ASCENDCL_EMU_ACLNN_ACL_META_H

#include <stdint.h>

#include "acl/acl_base.h"

typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef int32_t aclnnStatus;

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor over device memory at `tensorData`: its view (shape, strides in elements, offset
 * in elements) and its storage shape; NULL on a bad argument. */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);
/* A scalar holding a copy of the value at `value`, of `dataType`; NULL on a bad argument. */
aclScalar *aclCreateScalar(void *value, aclDataType dataType);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_ACLNN_ACL_META_H */
