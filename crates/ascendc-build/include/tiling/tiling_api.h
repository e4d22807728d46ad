// AscendC on the host, host side: the tiling APIs (`tiling/tiling_api.h`): the host classes of
// the tiling structures (optiling::TCubeTiling, optiling::SoftMaxTiling, ...: the layout of the
// kernel-side structs), the Matmul tiling (matmul_tiling::MultiCoreMatmulTiling and its
// relatives) and the advanced APIs' temporary-space and tiling functions.
#ifndef ASCENDC_HOST_TILING_TILING_API_H
#define ASCENDC_HOST_TILING_TILING_API_H

#include "../ascendc_host/tiling_fields.h"
#include "../kernel_tiling/kernel_tiling.h"
#include "../register/tilingdata_base.h"
#include "platform/platform_ascendc.h"

#include <iostream>

namespace optiling {
#define ASCENDC_HOST_HOST_FIELD(type, name) TILING_DATA_FIELD_DEF(type, name)
#define ASCENDC_HOST_HOST_STRUCT(name)                   \
    BEGIN_TILING_DATA_DEF(name)                          \
    ASCENDC_HOST_FIELDS_##name(ASCENDC_HOST_HOST_FIELD) \
    END_TILING_DATA_DEF;
ASCENDC_HOST_TILING_STRUCTS(ASCENDC_HOST_HOST_STRUCT)
#undef ASCENDC_HOST_HOST_STRUCT
#undef ASCENDC_HOST_HOST_FIELD
}  // namespace optiling

#include "../ascendc_host/tiling/matmul.h"

#endif
