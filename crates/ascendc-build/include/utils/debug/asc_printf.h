// AscendC on the host: the device printf and assert of "utils/debug/asc_printf.h". In host mode
// ascendc-build makes the unqualified `printf` and `assert` calls of device code (the bodies of
// `__global__` and `__aicore__` functions) these; host code keeps the C library's.
#ifndef ASCENDC_HOST_UTILS_DEBUG_ASC_PRINTF_H
#define ASCENDC_HOST_UTILS_DEBUG_ASC_PRINTF_H

#include "../../kernel_operator.h"

#endif
