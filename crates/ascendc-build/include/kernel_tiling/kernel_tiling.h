// AscendC on the host: the kernel side of the APIs' tiling structures (TCubeTiling for the
// Matmul API, SoftMaxTiling, LayerNormTiling, ... for the advanced APIs), in AscendC::tiling and
// at global scope, as CANN's generated kernel_tiling.h declares them. Plain structs of the
// fields ascendc_host/tiling_fields.h lists, the layout tiling/tiling_api.h's host classes share.
#ifndef ASCENDC_HOST_KERNEL_TILING_H
#define ASCENDC_HOST_KERNEL_TILING_H

#include "../ascendc_host/tiling_fields.h"

#include <cstdint>

namespace AscendC {
namespace tiling {
#define ASCENDC_HOST_KERNEL_FIELD(type, name) type name = 0;
#define ASCENDC_HOST_KERNEL_STRUCT(name) \
    struct name {                        \
        ASCENDC_HOST_FIELDS_##name(ASCENDC_HOST_KERNEL_FIELD)    \
    };
ASCENDC_HOST_TILING_STRUCTS(ASCENDC_HOST_KERNEL_STRUCT)
#undef ASCENDC_HOST_KERNEL_STRUCT
#undef ASCENDC_HOST_KERNEL_FIELD
}  // namespace tiling
}  // namespace AscendC

#define ASCENDC_HOST_KERNEL_USING(name) using AscendC::tiling::name;
ASCENDC_HOST_TILING_STRUCTS(ASCENDC_HOST_KERNEL_USING)
#undef ASCENDC_HOST_KERNEL_USING

#endif
