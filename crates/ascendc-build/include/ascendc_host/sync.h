// AscendC host layer: synchronisation within a core and between cores. A core's pipelines run
// in program order on the host, so `PipeBarrier` orders nothing; `SetFlag`/`WaitFlag` are kept
// as the device keeps them, as a counter per event and id: a `WaitFlag` whose flag no earlier
// `SetFlag` set would wait forever on the device, and fails the block here. Between cores
// (`CrossCoreSetFlag`/`CrossCoreWaitFlag` in their modes 0, 1, 2 and 4, the hardware `SyncAll`)
// the cores of a launch share counters (`Launch`); a core that waits gives its thread to the
// others (fiber.h), and a wait nothing can satisfy is reported as the hang it would be.
// Documentation: docs/zh/api/SIMD-API/基础API/同步控制 of CANN's asc-devkit.
#ifndef ASCENDC_HOST_SYNC_H
#define ASCENDC_HOST_SYNC_H

#include "core.h"
#include "fiber.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

// The pipelines of a core.
enum pipe_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

// Event ids of SetFlag/WaitFlag.
enum event_t {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

inline void pipe_barrier(pipe_t) {}

namespace AscendC {

// Source and destination pipelines of a flag.
enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};

using TEventID = int8_t;

}  // namespace AscendC

namespace ascendc_host {

constexpr uint32_t kEventKinds = static_cast<uint32_t>(AscendC::HardEvent::MAX);
constexpr uint32_t kEventIds = 8;
// Flag ids of cross-core synchronisation (mode 4 maps the second AIV to 16..26).
constexpr uint32_t kCrossFlags = 32;

inline const char* event_name(AscendC::HardEvent e)
{
    static const char* const names[] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",    "M_MTE1",    "MTE2_V",    "V_MTE2",   "MTE3_V",
        "V_MTE3",    "M_V",       "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",
        "MTE2_M",    "M_MTE2",    "V_MTE1",    "M_FIX",     "FIX_M",     "MTE3_MTE2", "MTE2_MTE3",
        "S_V",       "V_S",       "S_MTE2",    "MTE2_S",    "S_MTE3",    "MTE3_S",    "MTE2_FIX",
        "FIX_MTE2",  "FIX_S",     "M_S",       "FIX_MTE3",  "MTE1_FIX",  "FIX_MTE1",  "FIX_FIX"};
    uint32_t i = static_cast<uint32_t>(e);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

// The event flags of one core (SetFlag/WaitFlag).
struct CoreSync {
    std::array<std::array<uint32_t, kEventIds>, kEventKinds> flags{};
};

inline CoreSync& core_sync(const char* op)
{
    BlockContext& c = here(op);
    if (c.sync == nullptr) {
        c.sync = new CoreSync();
    }
    return *c.sync;
}

inline void set_flag(AscendC::HardEvent e, int32_t id)
{
    const uint32_t k = static_cast<uint32_t>(e);
    if (k >= kEventKinds || id < 0 || static_cast<uint32_t>(id) >= kEventIds) {
        fault("SetFlag<HardEvent::%s>(%d): event id out of range [0, %u)", event_name(e), id,
              kEventIds);
    }
    ++core_sync("SetFlag").flags[k][static_cast<uint32_t>(id)];
}

inline void wait_flag(AscendC::HardEvent e, int32_t id)
{
    const uint32_t k = static_cast<uint32_t>(e);
    if (k >= kEventKinds || id < 0 || static_cast<uint32_t>(id) >= kEventIds) {
        fault("WaitFlag<HardEvent::%s>(%d): event id out of range [0, %u)", event_name(e), id,
              kEventIds);
    }
    uint32_t& flag = core_sync("WaitFlag").flags[k][static_cast<uint32_t>(id)];
    if (flag == 0) {
        fault("WaitFlag<HardEvent::%s>(%d): no SetFlag<HardEvent::%s>(%d) before it on this core: "
              "it waits forever (a hang on the device)",
              event_name(e), id, event_name(e), id);
    }
    --flag;
}

// What the cores of one launch share: the counters of cross-core flags and the state of the
// hardware all-core barrier.
struct Launch {
    Launch(uint32_t blocks_, uint32_t cube_, uint32_t vector_)
        : blocks(blocks_), cube(cube_), vector(vector_),
          aic(static_cast<size_t>(blocks_) * cube_), aiv(static_cast<size_t>(blocks_) * vector_)
    {
    }

    struct Core {
        std::array<uint32_t, kCrossFlags> counter{};  // cross-core flag counters
        std::array<uint32_t, kCrossFlags> sets{};     // CrossCoreSetFlag calls per flag id
    };

    uint32_t blocks;
    uint32_t cube;
    uint32_t vector;
    std::vector<Core> aic;
    std::vector<Core> aiv;
    // Rounds of mode-0 (all cores of a type) and mode-1/2 (the AIVs of a block) already
    // completed, per flag id.
    std::array<uint32_t, kCrossFlags> all_aic_rounds{};
    std::array<uint32_t, kCrossFlags> all_aiv_rounds{};
    std::vector<std::array<uint32_t, kCrossFlags>> block_aiv_rounds =
        std::vector<std::array<uint32_t, kCrossFlags>>(blocks);
    std::vector<std::array<uint32_t, kCrossFlags>> block_aic_rounds =
        std::vector<std::array<uint32_t, kCrossFlags>>(blocks);
    // The all-core barrier: arrivals in the current generation.
    uint32_t barrier_arrived = 0;
    uint64_t barrier_generation = 0;

    std::vector<Core>& of(CoreType t) { return t == CoreType::AIC ? aic : aiv; }
};

inline Launch& launch_of(const char* op)
{
    BlockContext& c = here(op);
    if (c.launch == nullptr) {
        fault("%s: this launch has no cross-core state (run by the stand-alone runner)", op);
    }
    return *c.launch;
}

inline std::string core_name(const BlockContext& c)
{
    return std::string(c.type == CoreType::AIC ? "AIC " : "AIV ") + std::to_string(c.idx);
}

// Rounds complete when every member has set the flag that many times: raise each target's
// counter by the rounds newly completed.
template <typename Members, typename Targets>
inline void complete_rounds(Launch& l, CoreType members_type, const Members& members,
                            uint32_t flag, uint32_t& rounds, CoreType targets_type,
                            const Targets& targets)
{
    uint32_t least = UINT32_MAX;
    for (uint32_t m : members) {
        least = std::min(least, l.of(members_type)[m].sets[flag]);
    }
    if (least == UINT32_MAX || least <= rounds) {
        return;
    }
    const uint32_t add = least - rounds;
    rounds = least;
    for (uint32_t t : targets) {
        l.of(targets_type)[t].counter[flag] += add;
    }
}

inline std::vector<uint32_t> index_range(uint32_t from, uint32_t count)
{
    std::vector<uint32_t> v(count);
    for (uint32_t i = 0; i < count; ++i) {
        v[i] = from + i;
    }
    return v;
}

inline void cross_core_set(uint8_t mode, uint16_t flag)
{
    const char* op = "CrossCoreSetFlag";
    BlockContext& c = here(op);
    Launch& l = launch_of(op);
    if (flag >= 16 && !(mode == 4 && c.type == CoreType::AIC && flag >= 16 && flag <= 26)) {
        fault("%s<%u>(%u): flag id out of range [0, 16)", op, mode, flag);
    }
    const CoreType t = c.type;
    std::vector<Launch::Core>& own = l.of(t);
    if (c.idx >= own.size()) {
        fault("%s: core %u of a launch with %zu cores of its type", op, c.idx, own.size());
    }
    ++own[c.idx].sets[flag];
    switch (mode) {
        case 0: {
            // Every core of this type in the launch.
            auto all = index_range(0, static_cast<uint32_t>(own.size()));
            complete_rounds(l, t, all, flag,
                            t == CoreType::AIC ? l.all_aic_rounds[flag] : l.all_aiv_rounds[flag], t,
                            all);
            break;
        }
        case 1: {
            // The AIVs of this block.
            if (t != CoreType::AIV) {
                fault("%s<1>: mode 1 synchronises the vector cores of a block; called on a cube "
                      "core",
                      op);
            }
            auto mine = index_range(c.block * l.vector, l.vector);
            complete_rounds(l, t, mine, flag, l.block_aiv_rounds[c.block][flag], t, mine);
            break;
        }
        case 2: {
            if (l.cube == 0 || l.vector == 0) {
                fault("%s<2>: mode 2 synchronises the cube and vector cores of a block; the "
                      "kernel has %u cube and %u vector core(s) per block",
                      op, l.cube, l.vector);
            }
            auto aivs = index_range(c.block * l.vector, l.vector);
            auto aics = index_range(c.block * l.cube, l.cube);
            if (t == CoreType::AIC) {
                // The AIC's set releases every AIV of the block.
                for (uint32_t v : aivs) {
                    ++l.aiv[v].counter[flag];
                }
            } else {
                complete_rounds(l, t, aivs, flag, l.block_aic_rounds[c.block][flag],
                                CoreType::AIC, aics);
            }
            break;
        }
        case 4: {
            if (l.cube == 0 || l.vector < 2) {
                fault("%s<4>: mode 4 pairs the cube core with one of two vector cores", op);
            }
            if (t == CoreType::AIC) {
                const uint32_t v = c.block * l.vector + (flag >= 16 ? 1 : 0);
                ++l.aiv[v].counter[flag >= 16 ? flag - 16 : flag];
            } else {
                ++l.aic[c.block * l.cube].counter[flag + 16 * c.sub_idx];
            }
            break;
        }
        default:
            fault("%s<%u>: mode %u is not a mode of A2/A3 (0, 1, 2) nor of Ascend 950 (4)", op,
                  mode, mode);
    }
}

inline void cross_core_wait(uint16_t flag)
{
    const char* op = "CrossCoreWaitFlag";
    BlockContext& c = here(op);
    Launch& l = launch_of(op);
    if (flag >= kCrossFlags) {
        fault("%s(%u): flag id out of range", op, flag);
    }
    std::vector<Launch::Core>& own = l.of(c.type);
    if (c.idx >= own.size()) {
        fault("%s: core %u of a launch with %zu cores of its type", op, c.idx, own.size());
    }
    uint32_t& counter = own[c.idx].counter[flag];
    block_wait([&] { return counter > 0; },
               core_name(c) + " in CrossCoreWaitFlag(" + std::to_string(flag) + ")");
    --counter;
}

// The hardware all-core barrier: every AIV core of the launch (`aiv_only`), or every core.
inline void sync_all(bool aiv_only)
{
    const char* op = "SyncAll";
    BlockContext& c = here(op);
    Launch& l = launch_of(op);
    if (aiv_only && c.type == CoreType::AIC) {
        return;  // the AIC cores take no part in a vector-only barrier
    }
    const uint32_t total =
        aiv_only ? static_cast<uint32_t>(l.aiv.size()) : static_cast<uint32_t>(l.aiv.size() + l.aic.size());
    const uint64_t gen = l.barrier_generation;
    if (++l.barrier_arrived >= total) {
        l.barrier_arrived = 0;
        ++l.barrier_generation;
        return;
    }
    block_wait([&l, gen] { return l.barrier_generation != gen; },
               core_name(c) + " in SyncAll (" + std::to_string(l.barrier_arrived) + " of " +
                   std::to_string(total) + " cores arrived)");
}

}  // namespace ascendc_host

namespace AscendC {

template <pipe_t PIPE>
inline void PipeBarrier()
{
}

template <HardEvent EVENT>
inline void SetFlag(int32_t id)
{
    ascendc_host::set_flag(EVENT, id);
}

template <HardEvent EVENT>
inline void WaitFlag(int32_t id)
{
    ascendc_host::wait_flag(EVENT, id);
}

template <HardEvent EVENT>
inline void SetFlag(event_t id)
{
    ascendc_host::set_flag(EVENT, static_cast<int32_t>(id));
}

template <HardEvent EVENT>
inline void WaitFlag(event_t id)
{
    ascendc_host::wait_flag(EVENT, static_cast<int32_t>(id));
}

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId)
{
    ascendc_host::cross_core_set(modeId, flagId);
}

// The wait's template arguments are ignored on A2/A3 (it blocks every pipeline).
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId)
{
    ascendc_host::cross_core_wait(flagId);
}

struct SyncAllConfig {
    pipe_t triggerPipe;
    pipe_t waitPipe;
};
constexpr SyncAllConfig DEFAULT_SYNC_ALL_CONFIG = {PIPE_ALL, PIPE_ALL};

template <bool isAIVOnly = true, const SyncAllConfig& config = DEFAULT_SYNC_ALL_CONFIG>
inline void SyncAll()
{
    ascendc_host::sync_all(isAIVOnly);
}

// Memory barriers and task-level ordering: the host's memory is coherent, and a launch's tasks
// run in stream order.
enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };
template <MemDsbT arg>
inline void DataSyncBarrier()
{
}
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX>
inline void SetNextTaskStart()
{
}
inline void WaitPreTaskEnd() {}

}  // namespace AscendC

#endif
