// AscendC host layer: synchronisation of blocks through global memory. `IBSet`/`IBWait` hand a
// flag over in a 32-byte slot of a workspace (slot `blockNum * eventID + blockIdx`; twice the
// blocks in a mixed kernel): IBSet waits until the slot is 0 and writes 1, IBWait waits until it
// is 1 and writes 0. `InitDetermineComputeWorkspace`, `WaitPreBlock` and `NotifyNextBlock` make
// the blocks take turns in index order, round after round: each block has a 32-byte slot in the
// workspace and keeps its round in the 32 bytes after `blockNum` slots of its local workspace;
// block i's turn of round k comes when the slots of blocks 0..i-1 hold k and the others 0, and
// the last block of a round clears every slot. Every workspace access is checked as a
// GlobalTensor's; a wait gives the thread to the launch's other cores (fiber.h) and one that no
// core can end is reported as a hang. Only the vector cores take part (a cube core returns).
// Documentation: docs/zh/api/SIMD-API/基础API/同步控制/核间同步 (IBSet, IBWait,
// InitDetermineComputeWorkspace, WaitPreBlock, NotifyNextBlock).
#ifndef ASCENDC_HOST_BLOCK_SYNC_H
#define ASCENDC_HOST_BLOCK_SYNC_H

#include "fiber.h"
#include "sysvar.h"
#include "tensor.h"

#include <cstdint>
#include <string>

namespace ascendc_host {

constexpr uint32_t kSlotInts = 8;  // int32 values in a 32-byte slot

inline int32_t load_word(const int32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void store_word(int32_t* p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

// The first int32 of slot `slot` of a workspace, checked for `write`.
inline int32_t* workspace_word(const char* op, const AscendC::GlobalTensor<int32_t>& gm,
                               uint64_t slot, bool write)
{
    return reinterpret_cast<int32_t*>(
        gm.host_bytes(op, slot * kSlotInts * sizeof(int32_t), sizeof(int32_t), write));
}

inline void ib_handover(const char* op, const AscendC::GlobalTensor<int32_t>& gm,
                        const AscendC::LocalTensor<int32_t>& ub, int32_t block, int32_t event,
                        bool aiv_only, int32_t from, int32_t to)
{
    if (!core_is_aiv()) {
        return;
    }
    const int64_t blocks = AscendC::GetBlockNum() * (aiv_only ? 1 : 2);
    if (block < 0 || block >= blocks || event < 0) {
        fault("%s: block %d, event %d of a launch of %lld cores", op, block, event,
              static_cast<long long>(blocks));
    }
    const uint64_t slot = static_cast<uint64_t>(blocks) * static_cast<uint64_t>(event) +
                          static_cast<uint64_t>(block);
    int32_t* w = workspace_word(op, gm, slot, true);
    block_wait([w, from] { return load_word(w) == from; },
               "AIV " + std::to_string(AscendC::GetBlockIdx()) + " in " + op + "(block " +
                   std::to_string(block) + ", event " + std::to_string(event) +
                   ") for its workspace slot to hold " + std::to_string(from));
    store_word(w, to);
    ub.SetValue(0, to);
}

}  // namespace ascendc_host

namespace AscendC {

template <bool isAIVOnly = true>
inline void IBSet(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                  int32_t blockIdx, int32_t eventID)
{
    ascendc_host::ib_handover("IBSet", gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, 0, 1);
}

template <bool isAIVOnly = true>
inline void IBWait(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                   int32_t blockIdx, int32_t eventID)
{
    ascendc_host::ib_handover("IBWait", gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, 1, 0);
}

inline void InitDetermineComputeWorkspace(GlobalTensor<int32_t>& gmWorkspace,
                                          LocalTensor<int32_t>& ubWorkspace)
{
    using namespace ascendc_host;
    if (!core_is_aiv()) {
        return;
    }
    const char* op = "InitDetermineComputeWorkspace";
    const uint64_t blocks = static_cast<uint64_t>(GetBlockNum());
    if (GetBlockIdx() == 0) {
        for (uint64_t b = 0; b < blocks; ++b) {
            store_word(workspace_word(op, gmWorkspace, b, true), 0);
        }
    }
    ubWorkspace.SetValue(static_cast<uint32_t>(blocks * kSlotInts), 1);
}

inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace)
{
    using namespace ascendc_host;
    if (!core_is_aiv()) {
        return;
    }
    const char* op = "WaitPreBlock";
    const uint64_t blocks = static_cast<uint64_t>(GetBlockNum());
    const uint64_t me = static_cast<uint64_t>(GetBlockIdx());
    const int32_t round = ubWorkspace.GetValue(static_cast<uint32_t>(blocks * kSlotInts));
    std::vector<const int32_t*> words(blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        words[b] = workspace_word(op, gmWorkspace, b, false);
    }
    block_wait(
        [&] {
            for (uint64_t b = 0; b < blocks; ++b) {
                if (load_word(words[b]) != (b < me ? round : 0)) {
                    return false;
                }
            }
            return true;
        },
        "AIV " + std::to_string(me) + " in WaitPreBlock for its turn of round " +
            std::to_string(round));
}

inline void NotifyNextBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace)
{
    using namespace ascendc_host;
    if (!core_is_aiv()) {
        return;
    }
    const char* op = "NotifyNextBlock";
    const uint64_t blocks = static_cast<uint64_t>(GetBlockNum());
    const uint64_t me = static_cast<uint64_t>(GetBlockIdx());
    const uint32_t at = static_cast<uint32_t>(blocks * kSlotInts);
    const int32_t round = ubWorkspace.GetValue(at);
    if (me + 1 == blocks) {
        for (uint64_t b = 0; b < blocks; ++b) {
            store_word(workspace_word(op, gmWorkspace, b, true), 0);
        }
    } else {
        store_word(workspace_word(op, gmWorkspace, me, true), round);
    }
    ubWorkspace.SetValue(at, round + 1);
}

}  // namespace AscendC

#endif
