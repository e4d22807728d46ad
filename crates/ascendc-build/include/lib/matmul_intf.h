// AscendC on the host: the Matmul high-level API (ascendc_host/matmul.h).
#ifndef ASCENDC_HOST_LIB_MATMUL_INTF_H
#define ASCENDC_HOST_LIB_MATMUL_INTF_H

#include "../kernel_operator.h"
#include "../ascendc_host/matmul.h"

#endif
