// AscendC host layer: the local memories of a core and the static memory model. Each core has
// the buffers of an A2/A3 AI Core — Unified Buffer (192 KiB) on a vector core; L1 (512 KiB),
// L0A, L0B (64 KiB each), L0C (128 KiB), the bias table and the fixpipe buffer on a cube core —
// created on first use and filled with all-ones bytes (the device's memory holds garbage). A
// local tensor is a position, a byte address in its buffer and a length, as on the device;
// `GetPhyAddr()` gives that address. `LocalMemAllocator<Hardware::X>` hands out a buffer
// linearly from address 0; `LocalTensor(pos, addr, len)` makes a tensor at an address.
// Documentation: docs/zh/api/SIMD-API/基础API/资源管理 (LocalMemAllocator),
// 数据结构/LocalTensor, 工具接口/系统初始化/InitSocState, 通用说明和约束 (TPosition).
#ifndef ASCENDC_HOST_MEMORY_H
#define ASCENDC_HOST_MEMORY_H

#include "core.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace AscendC {

// Logical memory positions. `QuePosition` is the older name.
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

// The physical buffers of a core.
enum class Hardware : uint8_t {
    GM,
    UB,
    L1,
    L0A,
    L0B,
    L0C,
    BIAS,
    FIXBUF,
    MAX,
};

using TTagType = int32_t;

constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t TOTAL_UB_SIZE = 192 * 1024;
constexpr uint32_t TOTAL_L1_SIZE = 512 * 1024;
constexpr uint32_t TOTAL_L0A_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0B_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0C_SIZE = 128 * 1024;
constexpr int32_t TOTAL_VEC_LOCAL_SIZE = 184 * 1024;

}  // namespace AscendC

// The sizes of the local memories, for `ASC_*_SIZE` users.
#define ASC_UB_SIZE (192u * 1024u)
#define ASC_L1_SIZE (512u * 1024u)
#define ASC_L0A_SIZE (64u * 1024u)
#define ASC_L0B_SIZE (64u * 1024u)
#define ASC_L0C_SIZE (128u * 1024u)
#define ASC_BT_SIZE (1024u)

// Bytes of Unified Buffer (192 KiB unless the build defines another size).
#ifndef ASCENDC_HOST_UB_BYTES
#define ASCENDC_HOST_UB_BYTES (192u * 1024u)
#endif

namespace ascendc_host {

using AscendC::Hardware;
using AscendC::TPosition;

constexpr uint32_t kHardwareKinds = static_cast<uint32_t>(Hardware::MAX);

// Alignment of local tensors and of DataCopy lengths, in bytes.
inline constexpr uint32_t kBlockBytes = 32;

inline constexpr uint32_t hw_capacity(Hardware h)
{
    switch (h) {
        case Hardware::UB:
            return ASCENDC_HOST_UB_BYTES;
        case Hardware::L1:
            return 512u * 1024u;
        case Hardware::L0A:
        case Hardware::L0B:
            return 64u * 1024u;
        case Hardware::L0C:
            return 128u * 1024u;
        case Hardware::BIAS:
            return 1024u;
        case Hardware::FIXBUF:
            return 2048u;
        default:
            return 0;
    }
}

inline const char* hw_name(Hardware h)
{
    switch (h) {
        case Hardware::GM:
            return "GM";
        case Hardware::UB:
            return "UB";
        case Hardware::L1:
            return "L1";
        case Hardware::L0A:
            return "L0A";
        case Hardware::L0B:
            return "L0B";
        case Hardware::L0C:
            return "L0C";
        case Hardware::BIAS:
            return "BiasTable";
        case Hardware::FIXBUF:
            return "FixpipeBuffer";
        default:
            return "?";
    }
}

// The buffer a logical position lives in on A2/A3.
inline constexpr Hardware hw_of(TPosition p)
{
    switch (p) {
        case TPosition::GM:
            return Hardware::GM;
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::TSCM:
            return Hardware::L1;
        case TPosition::A2:
            return Hardware::L0A;
        case TPosition::B2:
            return Hardware::L0B;
        case TPosition::CO1:
            return Hardware::L0C;
        case TPosition::C2:
            return Hardware::BIAS;
        case TPosition::C2PIPE2GM:
            return Hardware::FIXBUF;
        default:
            return Hardware::UB;
    }
}

inline const char* pos_name(TPosition p)
{
    switch (p) {
        case TPosition::GM:
            return "GM";
        case TPosition::A1:
            return "A1";
        case TPosition::A2:
            return "A2";
        case TPosition::B1:
            return "B1";
        case TPosition::B2:
            return "B2";
        case TPosition::C1:
            return "C1";
        case TPosition::C2:
            return "C2";
        case TPosition::CO1:
            return "CO1";
        case TPosition::CO2:
            return "CO2";
        case TPosition::VECIN:
            return "VECIN";
        case TPosition::VECOUT:
            return "VECOUT";
        case TPosition::VECCALC:
            return "VECCALC";
        case TPosition::SPM:
            return "SPM";
        case TPosition::TSCM:
            return "TSCM";
        case TPosition::C2PIPE2GM:
            return "C2PIPE2GM";
        default:
            return "?";
    }
}

// The loop mode of DataCopyPad (SetLoopModePara): counts and byte strides.
struct LoopModeRegs {
    uint64_t loop1 = 1;
    uint64_t loop2 = 1;
    uint64_t loop1_src = 0;
    uint64_t loop1_dst = 0;
    uint64_t loop2_src = 0;
    uint64_t loop2_dst = 0;
};

// The mode registers of a core that instructions read (InitSocState resets them).
struct VectorRegs {
    bool counter_mode = false;  // SetMaskCount: masks count elements
    uint64_t mask[2] = {~0ull, ~0ull};
    int atomic = 0;  // 0 none, 1 add, 2 max, 3 min (SetAtomicAdd/Max/Min)
    int atomic_type = 0;
    uint64_t pad_value = 0;  // SetPadValue's bits
    bool pad_value_set = false;
    LoopModeRegs loop;
    uint8_t cmp_mask[16] = {};  // CMPMASK: Compare's register result, SetCmpMask's operand
    double sum_spr = 0;         // ReduceSum's result (GetReduceRepeatSumSpr)
    double max_min_spr = 0;     // ReduceRepeat/ReduceMax/ReduceMin's extreme value
    uint64_t max_min_index = 0; // and its index (GetReduceRepeatMaxMinSpr)
};

// The local memories of one core.
struct CoreMemory {
    uint8_t* base[kHardwareKinds] = {};
    VectorRegs regs;

    CoreMemory() = default;
    CoreMemory(const CoreMemory&) = delete;
    CoreMemory& operator=(const CoreMemory&) = delete;
    ~CoreMemory()
    {
        for (uint8_t*& b : base) {
            if (b != nullptr) {
                ::operator delete[](b, std::align_val_t(64));
                b = nullptr;
            }
        }
    }

    uint8_t* get(Hardware h)
    {
        const uint32_t i = static_cast<uint32_t>(h);
        if (base[i] == nullptr) {
            const uint32_t cap = hw_capacity(h);
            base[i] = static_cast<uint8_t*>(::operator new[](cap, std::align_val_t(64)));
            std::memset(base[i], 0xFF, cap);
        }
        return base[i];
    }
};

// A thread keeps the memories of the last core it ran, for the next (their content is the
// garbage the next core finds, as on the device).
inline thread_local CoreMemory* spare_memory = nullptr;

inline CoreMemory& core_memory(const char* op)
{
    BlockContext& c = here(op);
    if (c.memory == nullptr) {
        if (spare_memory != nullptr) {
            c.memory = spare_memory;
            spare_memory = nullptr;
            c.memory->regs = VectorRegs{};
        } else {
            c.memory = new CoreMemory();
        }
    }
    return *c.memory;
}

// The first byte of buffer `h` of the running core.
inline uint8_t* hw_base(Hardware h, const char* op)
{
    if (h == Hardware::GM || h == Hardware::MAX) {
        fault("%s: a local tensor in global memory", op);
    }
    return core_memory(op).get(h);
}

inline void release_core_state(BlockContext& c) noexcept
{
    if (c.memory != nullptr) {
        if (spare_memory == nullptr) {
            spare_memory = c.memory;
        } else {
            delete c.memory;
        }
        c.memory = nullptr;
    }
    delete c.sync;
    c.sync = nullptr;
}

}  // namespace ascendc_host

#endif
