/*
 * The operator library's Mul, for programs built against an emulator root: out = self * other,
 * element-wise with broadcasting, on a stream. Written for ascendcl-rs from the documented
 * declarations. Run by the emulator (lib64/libopapi.so).
 */
#ifndef ASCENDCL_EMU_ACLNNOP_ACLNN_MUL_H
#define ASCENDCL_EMU_ACLNNOP_ACLNN_MUL_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks the tensors, and gives the workspace the launch needs and its executor. */
aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor);
/* Queues the Mul the executor describes on `stream`. */
aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_EMU_ACLNNOP_ACLNN_MUL_H */
