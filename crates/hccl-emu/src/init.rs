//! Creating communicators: `HcclGetRootInfo` and the root-info rendezvous,
//! `HcclCommInitAll` (one thread per device over a root info), and rank tables.

use crate::comm::{self, NewComm, Origin};
use crate::config::{self, CommOptions};
use crate::error::*;
use crate::hub;
use crate::link::Link;
use crate::net;
use crate::ranktable;
use crate::rootinfo::{RootInfo, hex, random_id};
use ascendcl_emu::extension;
use hccl_sys::*;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The calling thread's current device (E_RUNTIME without one).
pub(crate) fn current_device() -> R<i32> {
    extension::current_device().map_err(runtime)
}

/// A new communicator's determinism: its configuration's, else the process-wide setting.
fn deterministic(opts: &CommOptions) -> R<i32> {
    match opts.deterministic {
        Some(v) => Ok(v as i32),
        None => config::get_global(HCCL_DETERMINISTIC),
    }
}

/// A timestamp in microseconds, strictly increasing within the process (so that two root infos
/// of one device never share an identifier).
fn timestamp() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(v) => last = v,
        }
    }
}

/// `HcclGetRootInfo` for `device`: starts the rendezvous hub and describes it.
pub(crate) fn root_info(device: i32) -> R<HcclRootInfo> {
    let env = config::env()?;
    let host = env.if_ip.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if !net::is_local(host) {
        return fail(
            HCCL_E_NOT_SUPPORT,
            net::not_local("HCCL_IF_IP", &host.to_string()),
        );
    }
    let port = env.base_port + device.max(0) as u32;
    let id = random_id();
    let info = RootInfo {
        host,
        port,
        identifier: format!("{host}_{port}_{device}_{}", timestamp()),
        pid: std::process::id(),
        device,
        id,
    };
    let listener = hub::bind(&info.socket_name()).map_err(|e| Fail {
        code: HCCL_E_SYSCALL,
        msg: format!(
            "cannot listen on the rendezvous socket {}: {e}",
            info.socket_name()
        ),
    })?;
    hub::spawn(listener, None, Instant::now() + env.connect_timeout).map_err(|e| Fail {
        code: HCCL_E_SYSCALL,
        msg: format!("cannot start the rendezvous thread: {e}"),
    })?;
    Ok(info.encode())
}

/// `HcclCommInitRootInfo[Config]` after the argument checks: joins the rendezvous named by the
/// root info as `rank` of `n` on `device` and waits for every rank.
pub(crate) fn init_root_info(
    device: i32,
    n: u32,
    info: &HcclRootInfo,
    rank: u32,
    opts: &CommOptions,
) -> R<usize> {
    let env = config::env()?;
    let ri = RootInfo::decode(info)?;
    let name = opts.name.clone().unwrap_or_else(|| ri.identifier.clone());
    let res = comm::reserve(device, &name, false)?;
    let deadline = Instant::now() + env.connect_timeout;
    let mut link = Link::join(&ri.socket_name(), deadline, n, rank, device)?;
    link.await_welcome(deadline)?;
    Ok(comm::register(
        res,
        NewComm {
            rank,
            n,
            device,
            origin: Origin::RootInfo,
            exec_timeout: env.exec_timeout_for(opts),
            connect_timeout: env.connect_timeout,
            deterministic: deterministic(opts)?,
            link,
        },
    ))
}

/// `HcclCommInitAll` after the argument checks: one thread per device, each with its device
/// set, joins a rendezvous as the device's index. Any failure destroys what was created and is
/// E_INTERNAL.
pub(crate) fn init_all(devices: &[i32]) -> R<Vec<usize>> {
    let n = devices.len() as u32;
    let info = root_info(devices[0])?;
    let results: Vec<R<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(i, &dev)| {
                let info = &info;
                s.spawn(move || {
                    // SAFETY: plain runtime calls with a device id.
                    let r = unsafe { ascendcl_emu::capi::aclrtSetDevice(dev) };
                    if r != 0 {
                        return fail(
                            HCCL_E_RUNTIME,
                            format!("aclrtSetDevice({dev}) failed with {r}"),
                        );
                    }
                    let c = init_root_info(dev, n, info, i as u32, &CommOptions::default());
                    // SAFETY: releases the reference taken above.
                    unsafe { ascendcl_emu::capi::aclrtResetDevice(dev) };
                    c
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    fail(HCCL_E_INTERNAL, "a rank's initialisation thread panicked")
                })
            })
            .collect()
    });
    if let Some(pos) = results.iter().position(|r| r.is_err()) {
        for h in results.iter().flatten() {
            let _ = comm::destroy(*h);
        }
        let e = results[pos].clone().unwrap_err();
        return fail(
            HCCL_E_INTERNAL,
            format!(
                "rank {pos} (device {}) failed to initialise: {} ({})",
                devices[pos],
                e.msg,
                code_name(e.code)
            ),
        );
    }
    Ok(results.into_iter().flatten().collect())
}

/// `HcclCommInitClusterInfo[Config]` after the argument checks.
pub(crate) fn init_cluster_info(
    device: i32,
    path: &str,
    rank: u32,
    opts: &CommOptions,
) -> R<usize> {
    let env = config::env()?;
    let table = ranktable::load(path)?;
    if rank >= table.ranks {
        return fail(
            HCCL_E_PARA,
            format!(
                "rank {rank} is not in the rank table {path} (rank_id 0 to {})",
                table.ranks - 1
            ),
        );
    }
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| "hccl_world_group".to_string());
    let res = comm::reserve(device, &name, true)?;
    let socket = format!("hccl-emu-rt-{}", hex(&table.key));
    let deadline = Instant::now() + env.connect_timeout;
    connect_or_host(&socket, table.ranks, deadline, env.connect_timeout)?;
    let link = Link::join(&socket, deadline, table.ranks, rank, device)?;
    Ok(comm::register(
        res,
        NewComm {
            rank,
            n: table.ranks,
            device,
            origin: Origin::ClusterInfo,
            exec_timeout: env.exec_timeout_for(opts),
            connect_timeout: env.connect_timeout,
            deterministic: deterministic(opts)?,
            link,
        },
    ))
}

/// Makes sure a hub listens on `socket`: the first process to bind it hosts it.
fn connect_or_host(socket: &str, n: u32, deadline: Instant, window: Duration) -> R {
    loop {
        match hub::bind(socket) {
            Ok(l) => {
                return hub::spawn(l, Some(n), Instant::now() + window).map_err(|e| Fail {
                    code: HCCL_E_SYSCALL,
                    msg: format!("cannot start the rendezvous thread: {e}"),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                // Another process hosts it; Link::join connects (and retries while it starts).
                if hub::connect(socket).is_ok() || Instant::now() >= deadline {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                return fail(
                    HCCL_E_SYSCALL,
                    format!("cannot listen on the rendezvous socket {socket}: {e}"),
                );
            }
        }
    }
}
