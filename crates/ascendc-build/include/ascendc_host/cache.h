// AscendC host layer: the data cache of a core. The host's memory is coherent, so cleaning and
// invalidating cache lines changes no data; `DataCacheCleanAndInvalid` is where a kernel polls
// for what other cores write, so the thread goes to the launch's other cores there (fiber.h).
// `ReadGmByPassDCache`/`WriteGmByPassDCache` are single checked accesses of global memory, made
// atomically (acquire, release) as the uncached accesses other cores observe.
// Documentation: docs/zh/api/SIMD-API/基础API/缓存控制 (DataCacheCleanAndInvalid,
// DataCachePreload), 标量计算 (ReadGmByPassDCache, WriteGmByPassDCache).
#ifndef ASCENDC_HOST_CACHE_H
#define ASCENDC_HOST_CACHE_H

#include "core.h"
#include "fiber.h"
#include "tensor.h"

#include <cstdint>
#include <cstring>

namespace AscendC {

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst)
{
    dst.host_bytes("DataCacheCleanAndInvalid", 0, 0, false);
    ascendc_host::block_yield();
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&)
{
    ascendc_host::block_yield();
}

template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst)
{
    dst.host_bytes("DataCacheCleanAndInvalid", 0, 0, false);
    ascendc_host::block_yield();
}

template <typename T>
inline void DataCachePreload(const GlobalTensor<uint64_t>&, const T)
{
}

inline void ICachePreLoad(const int64_t) {}
inline int64_t GetICachePreloadStatus() { return 0; }

template <typename T>
inline T ReadGmByPassDCache(__gm__ T* addr)
{
    static_assert(sizeof(T) <= 8, "ReadGmByPassDCache reads one scalar");
    ascendc_host::check_gm("ReadGmByPassDCache", addr, sizeof(T), false);
    T v;
    if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
        __atomic_load(addr, &v, __ATOMIC_ACQUIRE);
    } else {
        std::memcpy(&v, addr, sizeof(T));
    }
    return v;
}

template <typename T>
inline void WriteGmByPassDCache(__gm__ T* addr, T value)
{
    static_assert(sizeof(T) <= 8, "WriteGmByPassDCache writes one scalar");
    ascendc_host::check_gm("WriteGmByPassDCache", addr, sizeof(T), true);
    __atomic_store(addr, &value, __ATOMIC_RELEASE);
}

}  // namespace AscendC

#endif
