// AscendC on the host: tiling data classes of host code (`BEGIN_TILING_DATA_DEF` ...
// `END_TILING_DATA_DEF`): a class with one public member per field, in order, its `set_x` and
// `get_x`, `GetDataSize()` and `SaveToBuffer(buf, size)` (the fields' bytes: the layout of a
// kernel-side struct with the same fields), and the registration of a class for an operator
// (`REGISTER_TILING_DATA_CLASS`), which `GET_TILING_DATA` in kernels reads.
// Documentation: docs/zh/api/Utils-API/Tiling数据结构注册.
#ifndef ASCENDC_HOST_REGISTER_TILINGDATA_BASE_H
#define ASCENDC_HOST_REGISTER_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#define BEGIN_TILING_DATA_DEF(class_name) \
    class class_name {                    \
    public:                               \
        using ascendc_host_self = class_name;

#define TILING_DATA_FIELD_DEF(data_type, field_name)                           \
    data_type field_name = data_type();                                         \
    void set_##field_name(data_type ascendc_host_v) { field_name = ascendc_host_v; } \
    data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                  \
    arr_type field_name[arr_size] = {};                                             \
    void set_##field_name(const arr_type* ascendc_host_v)                           \
    {                                                                               \
        std::memcpy(field_name, ascendc_host_v, sizeof(field_name));                \
    }                                                                               \
    const arr_type* get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) struct_type field_name;

#define END_TILING_DATA_DEF                                                         \
    size_t GetDataSize() const { return sizeof(ascendc_host_self); }                \
    void SaveToBuffer(void* ascendc_host_buf, size_t ascendc_host_cap) const        \
    {                                                                               \
        std::memcpy(ascendc_host_buf, static_cast<const void*>(this),               \
                    ascendc_host_cap < sizeof(ascendc_host_self) ? ascendc_host_cap \
                                                                 : sizeof(ascendc_host_self)); \
    }                                                                               \
    }

// The class of an operator's tiling data: kernels of the same source read it with
// GET_TILING_DATA.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
    using ascendc_host_tiling_of_##op_type = class_name;

#endif
