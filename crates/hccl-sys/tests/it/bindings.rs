//! The generated bindings against facts of the HCCL headers: every function of `hccl.h` is in the
//! table, enum values and structure layouts are the ABI's, and `comm_config_init` writes what the
//! header's inline `HcclCommConfigInit` writes.

use hccl_sys as sys;
use std::mem::{align_of, offset_of, size_of};

/// Every function `hccl.h` (torch-npu 2.14.0) declares, sorted.
const HCCL_H: [&str; 47] = [
    "HcclAllGather",
    "HcclAllGatherV",
    "HcclAllReduce",
    "HcclAlltoAll",
    "HcclAlltoAllV",
    "HcclAlltoAllVC",
    "HcclBarrier",
    "HcclBatchSendRecv",
    "HcclBroadcast",
    "HcclCommActivateCommMemory",
    "HcclCommDeactivateCommMemory",
    "HcclCommDeregister",
    "HcclCommDestroy",
    "HcclCommExchangeMem",
    "HcclCommInitAll",
    "HcclCommInitClusterInfo",
    "HcclCommInitClusterInfoConfig",
    "HcclCommInitRootInfo",
    "HcclCommInitRootInfoConfig",
    "HcclCommInitRootInfoScalable",
    "HcclCommRegister",
    "HcclCommResume",
    "HcclCommSetMemoryRange",
    "HcclCommSuspend",
    "HcclCommUnsetMemoryRange",
    "HcclCommWorkingDevNicSet",
    "HcclCreateSubCommConfig",
    "HcclGetCommAsyncError",
    "HcclGetCommConfig",
    "HcclGetCommConfigCapability",
    "HcclGetCommName",
    "HcclGetConfig",
    "HcclGetErrorString",
    "HcclGetRankId",
    "HcclGetRankSize",
    "HcclGetRootInfo",
    "HcclGetRootInfoScalable",
    "HcclGroupEnd",
    "HcclGroupStart",
    "HcclRecv",
    "HcclReduce",
    "HcclReduceScatter",
    "HcclReduceScatterV",
    "HcclScatter",
    "HcclSend",
    "HcclSetCommConfig",
    "HcclSetConfig",
];

#[test]
fn the_table_holds_every_function_of_hccl_h() {
    let mut names = sys::HcclApi::NAMES.to_vec();
    names.sort_unstable();
    assert_eq!(names, HCCL_H);
    // `HcclCommConfigInit` is inline in the header, not a library symbol.
    assert!(!sys::HcclApi::NAMES.contains(&"HcclCommConfigInit"));
}

#[test]
fn result_codes_have_the_header_s_values() {
    let codes = [
        sys::HCCL_SUCCESS,
        sys::HCCL_E_PARA,
        sys::HCCL_E_PTR,
        sys::HCCL_E_MEMORY,
        sys::HCCL_E_INTERNAL,
        sys::HCCL_E_NOT_SUPPORT,
        sys::HCCL_E_NOT_FOUND,
        sys::HCCL_E_UNAVAIL,
        sys::HCCL_E_SYSCALL,
        sys::HCCL_E_TIMEOUT,
        sys::HCCL_E_OPEN_FILE_FAILURE,
        sys::HCCL_E_TCP_CONNECT,
        sys::HCCL_E_ROCE_CONNECT,
        sys::HCCL_E_TCP_TRANSFER,
        sys::HCCL_E_ROCE_TRANSFER,
        sys::HCCL_E_RUNTIME,
        sys::HCCL_E_DRV,
        sys::HCCL_E_PROFILING,
        sys::HCCL_E_CCE,
        sys::HCCL_E_NETWORK,
        sys::HCCL_E_AGAIN,
        sys::HCCL_E_REMOTE,
        sys::HCCL_E_SUSPENDING,
        sys::HCCL_E_OPRETRY_FAIL,
        sys::HCCL_E_OOM,
        sys::HCCL_E_RESERVED,
    ];
    for (value, code) in codes.iter().enumerate() {
        assert_eq!(code.0 as usize, value, "{code:?}");
    }
    // A C enum, 4 bytes; the newtype keeps any raw value (newer libraries add codes).
    assert_eq!(size_of::<sys::HcclResult>(), 4);
    let newer = sys::HcclResult(1041);
    assert_ne!(newer, sys::HCCL_E_RESERVED);
}

#[test]
fn data_types_and_reduce_ops_have_the_header_s_values() {
    assert_eq!(
        [
            sys::HCCL_DATA_TYPE_INT8,
            sys::HCCL_DATA_TYPE_INT16,
            sys::HCCL_DATA_TYPE_INT32,
            sys::HCCL_DATA_TYPE_FP16,
            sys::HCCL_DATA_TYPE_FP32,
            sys::HCCL_DATA_TYPE_INT64,
            sys::HCCL_DATA_TYPE_UINT64,
            sys::HCCL_DATA_TYPE_UINT8,
            sys::HCCL_DATA_TYPE_UINT16,
            sys::HCCL_DATA_TYPE_UINT32,
            sys::HCCL_DATA_TYPE_FP64,
            sys::HCCL_DATA_TYPE_BFP16,
            sys::HCCL_DATA_TYPE_INT128,
        ],
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    );
    assert_eq!(
        [
            sys::HCCL_DATA_TYPE_HIF8,
            sys::HCCL_DATA_TYPE_FP8E4M3,
            sys::HCCL_DATA_TYPE_FP8E5M2,
            sys::HCCL_DATA_TYPE_FP8E8M0,
            sys::HCCL_DATA_TYPE_RESERVED,
        ],
        [14, 15, 16, 17, 255]
    );
    assert_eq!(
        [
            sys::HCCL_REDUCE_SUM,
            sys::HCCL_REDUCE_PROD,
            sys::HCCL_REDUCE_MAX,
            sys::HCCL_REDUCE_MIN,
            sys::HCCL_REDUCE_RESERVED,
        ],
        [0, 1, 2, 3, 255]
    );
    assert_eq!((sys::HCCL_SEND, sys::HCCL_RECV), (0, 1));
    assert_eq!(sys::HCCL_DETERMINISTIC, 0);
    assert_eq!(sys::HCCL_COMM_CONFIG_RESERVED, 12);
}

#[test]
fn structures_have_the_abi_s_layout() {
    assert_eq!(size_of::<sys::HcclRootInfo>(), 4108);
    assert_eq!(sys::HCCL_ROOT_INFO_BYTES, 4108);

    assert_eq!(size_of::<sys::HcclSendRecvItem>(), 32);
    assert_eq!(align_of::<sys::HcclSendRecvItem>(), 8);
    assert_eq!(offset_of!(sys::HcclSendRecvItem, sendRecvType), 0);
    assert_eq!(offset_of!(sys::HcclSendRecvItem, buf), 8);
    assert_eq!(offset_of!(sys::HcclSendRecvItem, count), 16);
    assert_eq!(offset_of!(sys::HcclSendRecvItem, dataType), 24);
    assert_eq!(offset_of!(sys::HcclSendRecvItem, remoteRank), 28);

    type C = sys::HcclCommConfig;
    assert_eq!(size_of::<C>(), 2240);
    assert_eq!(align_of::<C>(), 8);
    let offsets = [
        (offset_of!(C, hcclBufferSize), 24),
        (offset_of!(C, hcclDeterministic), 28),
        (offset_of!(C, hcclCommName), 32),
        (offset_of!(C, hcclUdi), 160),
        (offset_of!(C, hcclOpExpansionMode), 288),
        (offset_of!(C, hcclRdmaTrafficClass), 292),
        (offset_of!(C, hcclRdmaServiceLevel), 296),
        (offset_of!(C, hcclWorldRankID), 300),
        (offset_of!(C, hcclJobID), 304),
        (offset_of!(C, aclGraphZeroCopyEnable), 312),
        (offset_of!(C, hcclExecTimeOut), 316),
        (offset_of!(C, hcclAlgo), 320),
        (offset_of!(C, hcclRetryEnable), 1920),
        (offset_of!(C, hcclRetryParams), 1970),
        (offset_of!(C, hcclBufferName), 2098),
        (offset_of!(C, hcclQos), 2228),
        (offset_of!(C, hcclSymWinMaxMemSizePerRank), 2232),
    ];
    for (actual, expected) in offsets {
        assert_eq!(actual, expected);
    }
    assert_eq!(size_of::<sys::HcclConfigValue>(), 4);
}

#[test]
fn comm_config_init_writes_what_the_header_s_inline_function_writes() {
    // Start from garbage so that every byte the function must write is seen to be written.
    let mut config = sys::HcclCommConfig::default();
    for b in config.hcclCommName.iter_mut() {
        *b = b'x' as _;
    }
    config.hcclBufferSize = 7;
    config.hcclExecTimeOut = 9;
    config.hcclSymWinMaxMemSizePerRank = 1;
    config.reserved = [0x55u8 as _; 24];
    sys::comm_config_init(&mut config);

    let info: Vec<u8> = config.reserved.iter().map(|&b| b as u8).collect();
    assert_eq!(u64::from_ne_bytes(info[0..8].try_into().unwrap()), 2240);
    assert_eq!(
        u32::from_ne_bytes(info[8..12].try_into().unwrap()),
        0xF0F0_F0F0
    );
    assert_eq!(u32::from_ne_bytes(info[12..16].try_into().unwrap()), 10);
    assert_eq!(u64::from_ne_bytes(info[16..24].try_into().unwrap()), 0);
    assert_eq!(config.hcclBufferSize, u32::MAX, "unset");
    assert_eq!(config.hcclDeterministic, u32::MAX, "unset");
    assert_eq!(config.hcclCommName[0], 0, "empty name");
    assert_eq!(
        config.hcclCommName[1], b'x' as _,
        "only the terminator is written"
    );
    assert_eq!(config.hcclUdi[0], 0);
    assert_eq!(config.hcclOpExpansionMode, 0);
    assert_eq!(config.hcclRdmaTrafficClass, u32::MAX);
    assert_eq!(config.hcclRdmaServiceLevel, u32::MAX);
    assert_eq!((config.hcclWorldRankID, config.hcclJobID), (0, 0));
    assert_eq!(config.aclGraphZeroCopyEnable, 0);
    assert_eq!(config.hcclExecTimeOut, -1);
    assert_eq!(config.hcclAlgo[0], 0);
    assert_eq!(config.hcclRetryEnable[0], 0);
    assert_eq!(config.hcclRetryParams[0], 0);
    assert_eq!(config.hcclBufferName[0], 0);
    assert_eq!(config.hcclQos, u32::MAX);
    assert_eq!(config.hcclSymWinMaxMemSizePerRank, 16);

    let fresh = sys::comm_config();
    assert_eq!(fresh.reserved, config.reserved);
    assert_eq!(fresh.hcclCommName[1], 0, "comm_config starts from zeroes");
}
