// AscendC on the host: the platform a kernel's host-side tiling asks about
// (`platform_ascendc::PlatformAscendCManager::GetInstance()`): the emulated Atlas A2 SoC
// (Ascend910B1): 24 cube and 48 vector cores, the A2 AI Core's buffers, the 16 MiB system
// workspace the Matmul and collective APIs need. Documentation: docs/zh/api/Utils-API/平台信息获取.
#ifndef ASCENDC_HOST_TILING_PLATFORM_ASCENDC_H
#define ASCENDC_HOST_TILING_PLATFORM_ASCENDC_H

#include <cstdint>
#include <cstring>

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND310P,
    ASCEND310B,
    ASCEND610,
    ASCEND950,
    ASCEND350,
    RESERVED_VERSION = 99999,
};

class PlatformAscendC {
public:
    PlatformAscendC() = default;
    explicit PlatformAscendC(const char* soc) : soc_(soc != nullptr && std::strstr(soc, "950") ? SocVersion::ASCEND950 : SocVersion::ASCEND910B) {}

    uint32_t GetCoreNum() const { return GetCoreNumAiv(); }
    uint32_t GetCoreNumAic() const { return 24; }
    uint32_t GetCoreNumAiv() const { return 48; }
    uint32_t GetCoreNumVector() const { return 0; }
    SocVersion GetSocVersion() const { return soc_; }
    void GetCoreMemSize(const CoreMemType memType, uint64_t& size) const
    {
        switch (memType) {
            case CoreMemType::L0_A:
            case CoreMemType::L0_B:
                size = 64 * 1024;
                break;
            case CoreMemType::L0_C:
                size = 128 * 1024;
                break;
            case CoreMemType::L1:
                size = 512 * 1024;
                break;
            case CoreMemType::L2:
                size = 192ull * 1024 * 1024;
                break;
            case CoreMemType::UB:
                size = 192 * 1024;
                break;
            case CoreMemType::FB:
                size = 2 * 1024;
                break;
            case CoreMemType::BT:
                size = 1024;
                break;
            default:
                size = 0;
                break;
        }
    }
    void GetCoreMemBw(const CoreMemType, uint64_t& bwSize) const { bwSize = 0; }
    uint32_t GetLibApiWorkSpaceSize() const { return 16u * 1024u * 1024u; }
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) {
            return sliceNum;
        }
        const uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }

private:
    SocVersion soc_ = SocVersion::ASCEND910B;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance()
    {
        static PlatformAscendC p;
        return &p;
    }
    static PlatformAscendC* GetInstance(const char* soc)
    {
        static PlatformAscendC p(soc);
        return &p;
    }
};

}  // namespace platform_ascendc

#endif
