//! `HcclCommConfig` set to "nothing configured": what the header's inline `HcclCommConfigInit`
//! does, which the library does not export.

use crate::generated::*;

/// Sets `config` as `HcclCommConfigInit` of `hccl.h` does: the leading 24 bytes carry the
/// structure's size, [`HCCL_COMM_CONFIG_MAGIC_WORD`] and [`HCCL_COMM_CONFIG_VERSION`] (the
/// library reads them to know which fields exist); every field is set to its "not set" value or
/// default, and every string to empty. Fields are then changed one by one before the config is
/// passed to `HcclCommInitRootInfoConfig` and friends.
pub fn comm_config_init(config: &mut HcclCommConfig) {
    // `size_t size`: 8 bytes on the 64-bit targets CANN supports.
    let size = std::mem::size_of::<HcclCommConfig>() as u64;
    let mut info = [0u8; HCCL_COMM_CONFIG_INFO_BYTES as usize];
    info[0..8].copy_from_slice(&size.to_ne_bytes());
    info[8..12].copy_from_slice(&HCCL_COMM_CONFIG_MAGIC_WORD.to_ne_bytes());
    info[12..16].copy_from_slice(&HCCL_COMM_CONFIG_VERSION.to_ne_bytes());
    // Bytes 16..24 (a reserved u64) stay zero.
    for (dst, src) in config.reserved.iter_mut().zip(info) {
        *dst = src as std::os::raw::c_char;
    }
    config.hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config.hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config.hcclCommName[0] = 0;
    config.hcclUdi[0] = 0;
    config.hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config.hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config.hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config.hcclWorldRankID = 0;
    config.hcclJobID = 0;
    config.aclGraphZeroCopyEnable = 0;
    config.hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config.hcclAlgo[0] = 0;
    config.hcclRetryEnable[0] = 0;
    config.hcclRetryParams[0] = 0;
    config.hcclBufferName[0] = 0;
    config.hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config.hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
}

/// A zeroed `HcclCommConfig` passed through [`comm_config_init`].
pub fn comm_config() -> HcclCommConfig {
    let mut config = HcclCommConfig::default();
    comm_config_init(&mut config);
    config
}
