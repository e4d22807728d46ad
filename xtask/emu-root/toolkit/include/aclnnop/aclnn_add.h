/*
 * The operator library's Add, for programs built against an emulator root: out = self + alpha *
 * other, element-wise with broadcasting, on a stream. Written for ascendcl-rs from the
 * documented declarations. Run by the emulator (lib64/libopapi.so).
 */
#ifndef ASCENDCL_EMU_ACLNNOP_ACLNN_ADD_H
#define ASCENDCL_EMU_ACLNNOP_ACLNN_ADD_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks the tensors, and gives the workspace the launch needs and its executor. */
aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
/* Queues the Add the executor describes on `stream`. */
aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_ACLNNOP_ACLNN_ADD_H */
