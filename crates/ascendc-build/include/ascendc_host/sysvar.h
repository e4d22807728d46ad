// AscendC host layer: the core's identity and system variables. Block and core indices
// (`GetBlockIdx`, `GetBlockNum`, `GetSubBlockIdx`, `GetSubBlockNum`, `GetTaskRation`), the core
// type (`ASCEND_IS_AIV`, `ASCEND_IS_AIC`, `g_coreType`), the system workspace, buffer sizes and
// the system counter. Documentation: docs/zh/api/SIMD-API/基础API/工具接口/系统资源与变量.
#ifndef ASCENDC_HOST_SYSVAR_H
#define ASCENDC_HOST_SYSVAR_H

#include "core.h"
#include "memory.h"

#include <chrono>
#include <cstdint>

namespace AscendC {

enum CoreTypeId : int32_t { AIV = 0, AIC = 1, MIX = 2 };

inline int64_t GetBlockIdx() { return ascendc_host::current != nullptr ? ascendc_host::current->idx : 0; }
inline int64_t GetBlockNum() { return ascendc_host::current != nullptr ? ascendc_host::current->num : 1; }
inline int64_t GetSubBlockIdx()
{
    return ascendc_host::current != nullptr ? ascendc_host::current->sub_idx : 0;
}
inline int64_t GetSubBlockNum()
{
    return ascendc_host::current != nullptr ? ascendc_host::current->sub_num : 1;
}
inline int64_t GetTaskRatio()
{
    return ascendc_host::current != nullptr ? ascendc_host::current->ratio : 1;
}
inline int64_t GetTaskRation() { return GetTaskRatio(); }

// The system workspace: the kernel's `__kfc_workspace__` parameter, or what SetSysWorkspace set.
inline __gm__ uint8_t* GetSysWorkSpacePtr()
{
    return ascendc_host::current != nullptr ? ascendc_host::current->sys_workspace : nullptr;
}
inline void SetSysWorkspace(__gm__ uint8_t* workspace)
{
    if (ascendc_host::current != nullptr) {
        ascendc_host::current->sys_workspace = workspace;
    }
}
// The user's part of a workspace: on the host the library reserves nothing in front of it.
inline __gm__ uint8_t* GetUserWorkspace(__gm__ uint8_t* workspace) { return workspace; }

inline constexpr uint32_t GetUBSizeInBytes() { return ASCENDC_HOST_UB_BYTES; }
inline constexpr uint32_t GetRuntimeUBSize() { return ASCENDC_HOST_UB_BYTES; }
inline constexpr uint32_t GetVecLen() { return 256; }
inline constexpr int16_t GetDataBlockSizeInBytes() { return 32; }

// The core's cycle counter: a steady host clock in nanoseconds.
inline int64_t GetSystemCycle()
{
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count());
}

}  // namespace AscendC

// The library declares the system workspace's accessor at global scope too.
using AscendC::GetSysWorkSpacePtr;

namespace ascendc_host {
inline bool core_is_aiv() { return current == nullptr || current->type == CoreType::AIV; }
inline bool core_is_aic() { return current != nullptr && current->type == CoreType::AIC; }
}  // namespace ascendc_host

// `if ASCEND_IS_AIV { ... }`: code for one core type of a mixed kernel.
#define ASCEND_IS_AIV (::ascendc_host::core_is_aiv())
#define ASCEND_IS_AIC (::ascendc_host::core_is_aic())
#define ASCEND_IS_NOT_AIV (!::ascendc_host::core_is_aiv())
#define ASCEND_IS_NOT_AIC (!::ascendc_host::core_is_aic())
#define g_coreType (::ascendc_host::core_is_aic() ? ::AscendC::AIC : ::AscendC::AIV)

#endif
