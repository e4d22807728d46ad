/*
 * What every operator of the operator library (aclnn) shares, for programs built against an
 * emulator root. Written for ascendcl-rs.
 */
#ifndef ASCENDCL_EMU_ACLNN_ACLNN_BASE_H
#define ASCENDCL_EMU_ACLNN_ACLNN_BASE_H

#include "aclnn/acl_meta.h"

#endif /* ASCENDCL_EMU_ACLNN_ACLNN_BASE_H */
