//! Creating communicators: `HcclGetRootInfo` and the root-info rendezvous,
//! `HcclCommInitAll` (one thread per device over a root info), and rank tables.

use crate::comm::{self, Net, NewComm, Origin, Pending};
use crate::config::{self, CommOptions};
use crate::error::*;
use crate::fabric::{Fabric, Setup};
use crate::net;
use crate::ranktable;
use crate::rendezvous::hub;
use crate::rendezvous::member::Join;
use crate::rootinfo::{RootInfo, random_id};
use crate::transport::Shared;
use ascendcl_emu::extension;
use hccl_sys::*;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
    // HCCL_IF_BASE_PORT + the device when it is free, else the next free one of the 32 ports
    // from it, else one the kernel picks.
    let first = env.base_port + device.max(0) as u32;
    let listener = (first..first + 32)
        .filter(|p| *p <= u16::MAX as u32)
        .find_map(|p| net::listen(host, p as u16).ok())
        .map_or_else(|| net::listen(host, 0), Ok)
        .map_err(|e| Fail {
            code: HCCL_E_SYSCALL,
            msg: format!("cannot listen on {host} for the rendezvous: {e}"),
        })?;
    let port = listener.local_addr().map_or(0, |a| a.port() as u32);
    let id = random_id();
    let info = RootInfo {
        host,
        port,
        identifier: format!("{host}_{port}_{device}_{}", timestamp()),
        pid: std::process::id(),
        device,
        id,
    };
    hub::spawn(
        listener,
        id.to_vec(),
        None,
        Instant::now() + env.connect_timeout,
    )
    .map_err(|e| Fail {
        code: HCCL_E_SYSCALL,
        msg: format!("cannot start the rendezvous thread: {e}"),
    })?;
    Ok(info.encode())
}

/// The address this process's ranks use as their server's: `HCCL_IF_IP`, else loopback.
fn server_ip(env: &config::Env) -> R<IpAddr> {
    let ip = env.if_ip.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if !net::is_local(ip) {
        return fail(
            HCCL_E_NOT_SUPPORT,
            net::not_local("HCCL_IF_IP", &ip.to_string()),
        );
    }
    Ok(ip)
}

/// `HcclCommInitRootInfo[Config]` after the argument checks: joins the rendezvous named by the
/// root info as `rank` of `n` on `device`, waits for every rank and connects to them. The
/// rank's server is its `HCCL_IF_IP`: ranks with the same one share memory, the others are
/// reached over TCP.
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
    let ip = server_ip(&env)?;
    let setup = Setup::new(rank, n, device, ip.to_string(), ip, env.slot)?;
    let hub = SocketAddr::new(ri.host, ri.port as u16);
    let mut join = Join::start(hub, deadline, n, ri.id.to_vec(), setup.me.clone())?;
    let welcome = join.welcome(deadline)?;
    let shared = Arc::new(Shared::default());
    let fabric = Fabric::connect(setup, join, welcome, Arc::clone(&shared), deadline)?;
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
            pref: env.algo_for(opts),
            net: Net::Ready(Box::new(fabric)),
            shared,
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

/// `HcclCommInitClusterInfo[Config]` after the argument checks: reads the table and joins its
/// rendezvous (at rank 0's server; the first process of that server to get there hosts it);
/// the ranks link up at the first operation. Each of the table's servers is an emulated server:
/// its ranks share memory, and reach the other servers' over TCP at the servers' addresses.
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
    let deadline = Instant::now() + env.connect_timeout;
    let server = table.server_of[rank as usize];
    let (server_id, addr) = table.servers[server].clone();
    let setup = Setup::new(rank, table.ranks, device, server_id, addr, env.slot)?;
    let at = table.rendezvous();
    if server == table.server_of[0] {
        // This process may host the rendezvous; if another already does, it joins it.
        if let Ok(l) = net::listen(at.ip(), at.port()) {
            hub::spawn(l, table.key.to_vec(), Some(table.ranks), deadline).map_err(|e| Fail {
                code: HCCL_E_SYSCALL,
                msg: format!("cannot start the rendezvous thread: {e}"),
            })?;
        }
    }
    let join = Join::start(
        at,
        deadline,
        table.ranks,
        table.key.to_vec(),
        setup.me.clone(),
    )?;
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
            pref: env.algo_for(opts),
            net: Net::Pending(Box::new(Pending { setup, join })),
            shared: Arc::new(Shared::default()),
        },
    ))
}
