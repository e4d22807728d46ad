//! Communicators: root info, the initialisation forms, destroy, queries, configuration, errors.

use super::*;
use crate::comm;
use crate::config::{self, CommOptions};
use crate::group;
use crate::init;
use std::ffi::{CStr, c_char};

/// `HcclCommInitRootInfo[Config]`'s checks and work, for a direct call and for a group's end.
///
/// # Safety
/// `info`, `config` and `out` are NULL or valid (C contract).
pub(crate) unsafe fn init_root_info(
    n: u32,
    info: *const HcclRootInfo,
    rank: u32,
    config: Option<*const HcclCommConfig>,
    out: *mut HcclComm,
) -> R {
    let device = init::current_device()?;
    if n == 0 {
        return fail(HCCL_E_PARA, "nRanks is 0");
    }
    if rank >= n {
        return fail(HCCL_E_PARA, format!("rank {rank} is not below nRanks {n}"));
    }
    // SAFETY: C contract.
    let out = unsafe { Out::new(out, "comm") }?;
    non_null(info, "rootInfo")?;
    let opts = match config {
        // SAFETY: C contract: NULL or a whole HcclCommConfig.
        Some(c) => unsafe { config::comm_options(c) }?,
        None => CommOptions::default(),
    };
    // SAFETY: non-NULL (checked) and valid for reading (C contract).
    let info = unsafe { &*info };
    let h = init::init_root_info(device, n, info, rank, &opts)?;
    out.set(h as HcclComm);
    Ok(())
}

/// `HcclCommInitClusterInfo[Config]`'s checks and work.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `config` and `out` are NULL or valid.
pub(crate) unsafe fn init_cluster_info(
    path: *const c_char,
    rank: u32,
    config: Option<*const HcclCommConfig>,
    out: *mut HcclComm,
) -> R {
    let device = init::current_device()?;
    non_null(path, "clusterInfo")?;
    // SAFETY: C contract.
    let out = unsafe { Out::new(out, "comm") }?;
    let opts = match config {
        // SAFETY: C contract.
        Some(c) => unsafe { config::comm_options(c) }?,
        None => CommOptions::default(),
    };
    // SAFETY: non-NULL and NUL-terminated (C contract).
    let path = unsafe { CStr::from_ptr(path) };
    let path = path.to_str().map_err(|_| Fail {
        code: HCCL_E_PARA,
        msg: "clusterInfo is not valid UTF-8".to_string(),
    })?;
    let h = init::init_cluster_info(device, path, rank, &opts)?;
    out.set(h as HcclComm);
    Ok(())
}

/// `HcclCommDestroy`'s checks and work.
pub(crate) fn destroy(c: HcclComm) -> R {
    if c.is_null() {
        return Ok(());
    }
    init::current_device()?;
    comm::destroy(c as usize)
}

hccl! {
    /// `HcclGetRootInfo`: starts a rendezvous in this process and describes it in the 4108
    /// bytes to pass, unchanged, to every rank.
    fn HcclGetRootInfo(rootInfo: *mut HcclRootInfo) {
        let device = init::current_device()?;
        // SAFETY: C contract.
        let out = unsafe { Out::new(rootInfo, "rootInfo") }?;
        out.set(init::root_info(device)?);
        Ok(())
    }
}

hccl! {
    /// `HcclCommInitRootInfo`: joins the rendezvous as `rank` of `nRanks`; returns when every
    /// rank has joined (E_TIMEOUT after `HCCL_CONNECT_TIMEOUT`).
    fn HcclCommInitRootInfo(nRanks: u32, rootInfo: *const HcclRootInfo, rank: u32, comm: *mut HcclComm) {
        if group::capturing() {
            let (ri, out) = (rootInfo as usize, comm as usize);
            return group::capture_init(move || {
                // SAFETY: the pointers were valid when captured and the caller keeps them valid
                // until HcclGroupEnd (C contract of grouped initialisation).
                unsafe { init_root_info(nRanks, ri as *const HcclRootInfo, rank, None, out as *mut HcclComm) }
            });
        }
        // SAFETY: C contract.
        unsafe { init_root_info(nRanks, rootInfo, rank, None, comm) }
    }
}

hccl! {
    /// `HcclCommInitRootInfoConfig`: as `HcclCommInitRootInfo`, with a configuration (its name
    /// replaces the root info's identifier as the communicator's name).
    fn HcclCommInitRootInfoConfig(nRanks: u32, rootInfo: *const HcclRootInfo, rank: u32, config: *const HcclCommConfig, comm: *mut HcclComm) {
        if group::capturing() {
            let (ri, cf, out) = (rootInfo as usize, config as usize, comm as usize);
            return group::capture_init(move || {
                // SAFETY: as for HcclCommInitRootInfo.
                unsafe {
                    init_root_info(nRanks, ri as *const HcclRootInfo, rank, Some(cf as *const HcclCommConfig), out as *mut HcclComm)
                }
            });
        }
        // SAFETY: C contract.
        unsafe { init_root_info(nRanks, rootInfo, rank, Some(config), comm) }
    }
}

hccl! {
    /// `HcclCommInitAll`: one communicator per device of `devices`, rank i on `devices[i]`,
    /// created by one thread per device; on any failure none is left (E_INTERNAL).
    fn HcclCommInitAll(ndev: u32, devices: *mut i32, comms: *mut HcclComm) {
        init::current_device()?;
        if ndev == 0 {
            return fail(HCCL_E_PARA, "ndev is 0");
        }
        non_null(devices, "devices")?;
        non_null(comms, "comms")?;
        // SAFETY: C contract: `devices` holds ndev ids.
        let ids = unsafe { std::slice::from_raw_parts(devices, ndev as usize) }.to_vec();
        let count = ascendcl_emu::extension::device_count();
        for (i, d) in ids.iter().enumerate() {
            if *d < 0 || *d as u32 >= count {
                return fail(HCCL_E_PARA, format!("devices[{i}] = {d} is not a device (0 to {})", count as i64 - 1));
            }
            if ids[..i].contains(d) {
                return fail(HCCL_E_PARA, format!("device {d} appears twice in devices"));
            }
        }
        let handles = init::init_all(&ids)?;
        for (i, h) in handles.into_iter().enumerate() {
            // SAFETY: C contract: `comms` holds ndev slots.
            unsafe { comms.add(i).write(h as HcclComm) };
        }
        Ok(())
    }
}

hccl! {
    /// `HcclCommInitClusterInfo`: rank `rank` of the rank table at `clusterInfo`, named
    /// "hccl_world_group"; one per device. The ranks link up at the first operation.
    fn HcclCommInitClusterInfo(clusterInfo: *const c_char, rank: u32, comm: *mut HcclComm) {
        if group::capturing() {
            let (p, out) = (clusterInfo as usize, comm as usize);
            return group::capture_init(move || {
                // SAFETY: as for HcclCommInitRootInfo.
                unsafe { init_cluster_info(p as *const c_char, rank, None, out as *mut HcclComm) }
            });
        }
        // SAFETY: C contract.
        unsafe { init_cluster_info(clusterInfo, rank, None, comm) }
    }
}

hccl! {
    /// `HcclCommInitClusterInfoConfig`: as `HcclCommInitClusterInfo`, with a configuration.
    fn HcclCommInitClusterInfoConfig(clusterInfo: *const c_char, rank: u32, config: *mut HcclCommConfig, comm: *mut HcclComm) {
        if group::capturing() {
            let (p, cf, out) = (clusterInfo as usize, config as usize, comm as usize);
            return group::capture_init(move || {
                // SAFETY: as for HcclCommInitRootInfo.
                unsafe {
                    init_cluster_info(p as *const c_char, rank, Some(cf as *const HcclCommConfig), out as *mut HcclComm)
                }
            });
        }
        // SAFETY: C contract.
        unsafe { init_cluster_info(clusterInfo, rank, Some(config.cast_const()), comm) }
    }
}

hccl! {
    /// `HcclCommDestroy`: NULL is a success; E_AGAIN while operations are in flight.
    fn HcclCommDestroy(comm: HcclComm) {
        if group::capturing() {
            let c = comm as usize;
            group::capture_destroy(move || destroy(c as HcclComm));
            return Ok(());
        }
        destroy(comm)
    }
}

hccl! {
    /// `HcclGetRankId`: the communicator's rank.
    fn HcclGetRankId(comm: HcclComm, rank: *mut u32) {
        let c = comm::get(comm as usize)?;
        // SAFETY: C contract.
        unsafe { Out::new(rank, "rank") }?.set(c.rank);
        Ok(())
    }
}

hccl! {
    /// `HcclGetRankSize`: the number of ranks.
    fn HcclGetRankSize(comm: HcclComm, rankSize: *mut u32) {
        let c = comm::get(comm as usize)?;
        // SAFETY: C contract.
        unsafe { Out::new(rankSize, "rankSize") }?.set(c.n);
        Ok(())
    }
}

hccl! {
    /// `HcclGetCommName`: copies the name, NUL-terminated, into the caller's 128 bytes.
    fn HcclGetCommName(comm: HcclComm, commName: *mut c_char) {
        let c = comm::get(comm as usize)?;
        non_null(commName, "commName")?;
        let bytes = c.name.as_bytes();
        let n = bytes.len().min(COMM_NAME_MAX_LENGTH as usize - 1);
        // SAFETY: C contract: commName holds COMM_NAME_MAX_LENGTH bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), commName, n);
            commName.add(n).write(0);
        }
        Ok(())
    }
}

hccl! {
    /// `HcclGetCommAsyncError`: the first link failure a collective of this communicator met
    /// (HCCL_E_TIMEOUT for peers that never came, HCCL_E_TCP_TRANSFER for a peer that went
    /// away), or success.
    fn HcclGetCommAsyncError(comm: HcclComm, asyncError: *mut HcclResult) {
        let c = comm::get(comm as usize)?;
        // SAFETY: C contract.
        unsafe { Out::new(asyncError, "asyncError") }?.set(c.async_error());
        Ok(())
    }
}

/// `HcclGetErrorString`: a static string per code.
///
/// # Safety
/// None: any value is accepted.
pub unsafe extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    error_string(code).as_ptr()
}

/// `HcclGetCommConfigCapability`: every configuration field of this header is understood.
///
/// # Safety
/// None.
pub unsafe extern "C" fn HcclGetCommConfigCapability() -> u32 {
    HCCL_COMM_CONFIG_RESERVED
}

hccl! {
    /// `HcclSetConfig`: process-wide settings (`HCCL_DETERMINISTIC`; other keys are ignored).
    fn HcclSetConfig(config: HcclConfig, configValue: HcclConfigValue) {
        // SAFETY: the union's one field is an i32.
        config::set_global(config, unsafe { configValue.value })
    }
}

hccl! {
    /// `HcclGetConfig`: the value `HcclSetConfig` (or `HCCL_DETERMINISTIC`) set.
    fn HcclGetConfig(config: HcclConfig, configValue: *mut HcclConfigValue) {
        // SAFETY: C contract.
        let out = unsafe { Out::new(configValue, "configValue") }?;
        out.set(HcclConfigValue { value: config::get_global(config)? });
        Ok(())
    }
}

hccl! {
    /// `HcclCommSuspend`: operations issued on a suspended communicator fail with
    /// E_SUSPENDING until it is resumed.
    fn HcclCommSuspend(comm: HcclComm) {
        let c = comm::get(comm as usize)?;
        c.suspended.store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

hccl! {
    /// `HcclCommResume`: ends a suspension.
    fn HcclCommResume(comm: HcclComm) {
        let c = comm::get(comm as usize)?;
        c.suspended.store(false, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

hccl! {
    /// `HcclSetCommConfig`: `HCCL_DETERMINISTIC` (0, 1 or 2) for one communicator; other keys
    /// are accepted and ignored.
    fn HcclSetCommConfig(comm: HcclComm, config: HcclConfig, configValue: HcclConfigValue) {
        let c = comm::get(comm as usize)?;
        if config != HCCL_DETERMINISTIC {
            return Ok(());
        }
        // SAFETY: the union's one field is an i32.
        let v = unsafe { configValue.value };
        if !(0..=2).contains(&v) {
            return fail(HCCL_E_PARA, format!("HCCL_DETERMINISTIC value {v} is not 0, 1 or 2"));
        }
        c.deterministic.store(v, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

hccl! {
    /// `HcclGetCommConfig`: the communicator's `HCCL_DETERMINISTIC` (0 for other keys).
    fn HcclGetCommConfig(comm: HcclComm, config: HcclConfig, configValue: *mut HcclConfigValue) {
        let c = comm::get(comm as usize)?;
        // SAFETY: C contract.
        let out = unsafe { Out::new(configValue, "configValue") }?;
        let value = if config == HCCL_DETERMINISTIC {
            c.deterministic.load(std::sync::atomic::Ordering::Relaxed)
        } else {
            0
        };
        out.set(HcclConfigValue { value });
        Ok(())
    }
}
