// AscendC host layer: the static memory model. `InitSocState()` resets the core's mode registers
// (mask and mask mode, atomic mode) as kernels that do without TPipe do first;
// `LocalMemAllocator<Hardware::X>` hands out a buffer of the core linearly from address 0, each
// tensor 32-byte aligned, never freeing. Documentation: docs/zh/api/SIMD-API/基础API/资源管理/
// LocalMemAllocator, 工具接口/系统初始化/InitSocState.
#ifndef ASCENDC_HOST_STATIC_MEMORY_H
#define ASCENDC_HOST_STATIC_MEMORY_H

#include "memory.h"
#include "tensor.h"

namespace AscendC {

inline void InitSocState()
{
    if (ascendc_host::current != nullptr) {
        ascendc_host::core_memory("InitSocState").regs = ascendc_host::VectorRegs{};
    }
}

template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
public:
    static_assert(hard != Hardware::GM && hard != Hardware::MAX,
                  "LocalMemAllocator manages a local buffer: UB, L1, L0A, L0B, L0C, BIAS or FIXBUF");

    LocalMemAllocator() = default;

    uint32_t GetCurAddr() const { return cur_; }

    template <class DataType, uint32_t tileSize>
    LocalTensor<DataType> Alloc()
    {
        return alloc<DataType>(default_pos(), tileSize);
    }
    template <TPosition pos, class DataType, uint32_t tileSize>
    LocalTensor<DataType> Alloc()
    {
        return alloc<DataType>(pos, tileSize);
    }
    template <class DataType>
    LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        return alloc<DataType>(default_pos(), tileSize);
    }
    template <TPosition pos, class DataType>
    LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        return alloc<DataType>(pos, tileSize);
    }

private:
    static constexpr TPosition default_pos()
    {
        switch (hard) {
            case Hardware::L1:
                return TPosition::A1;
            case Hardware::L0A:
                return TPosition::A2;
            case Hardware::L0B:
                return TPosition::B2;
            case Hardware::L0C:
                return TPosition::CO1;
            case Hardware::BIAS:
                return TPosition::C2;
            case Hardware::FIXBUF:
                return TPosition::C2PIPE2GM;
            default:
                return TPosition::VECCALC;
        }
    }

    template <class DataType>
    LocalTensor<DataType> alloc(TPosition pos, uint32_t tileSize)
    {
        if (ascendc_host::hw_of(pos) != hard) {
            ascendc_host::fault("LocalMemAllocator<Hardware::%s>::Alloc<TPosition::%s>: the "
                                "position lives in %s",
                                ascendc_host::hw_name(hard), ascendc_host::pos_name(pos),
                                ascendc_host::hw_name(ascendc_host::hw_of(pos)));
        }
        const uint64_t bytes = static_cast<uint64_t>(tileSize) * sizeof(DataType);
        const uint32_t cap = ascendc_host::hw_capacity(hard);
        if (cur_ + bytes > cap) {
            ascendc_host::fault("LocalMemAllocator<Hardware::%s>::Alloc: %u elements (%llu bytes) "
                                "at byte %u run past the %u bytes of the buffer",
                                ascendc_host::hw_name(hard), tileSize,
                                static_cast<unsigned long long>(bytes), cur_, cap);
        }
        LocalTensor<DataType> t(pos, cur_, tileSize);
        cur_ += static_cast<uint32_t>((bytes + ascendc_host::kBlockBytes - 1) /
                                      ascendc_host::kBlockBytes * ascendc_host::kBlockBytes);
        return t;
    }

    uint32_t cur_ = 0;
};

}  // namespace AscendC

#endif
