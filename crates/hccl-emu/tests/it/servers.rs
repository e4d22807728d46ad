//! Several emulated servers: each process is one server (its own emulated machine) holding two
//! ranks, one thread each; the servers' ranks reach each other over TCP on two loopback
//! addresses (127.0.0.1 and 127.0.0.2), the ranks of one server through shared memory. Every
//! collective and point-to-point form runs across them, from a rank table and from a root info.

use crate::common::*;
use crate::every::every_operation_as;
use crate::multiprocess::{read_root_info, spawn, wait_ok, write_root_info};
use std::ffi::CString;

/// The large count of the operations (several slots).
const BIG: usize = 3 * SLOT / 4 + 17;

/// A rank table of two servers of two devices each, on two loopback addresses.
fn two_server_table(dir: &std::path::Path) -> String {
    let p = dir.join("two-servers.json");
    std::fs::write(
        &p,
        r#"{"version": "1.0", "status": "completed", "server_count": "2", "server_list": [
             {"server_id": "server-a", "host_ip": "127.0.0.1", "device": [
               {"device_id": "0", "device_ip": "10.2.0.1", "rank_id": "0"},
               {"device_id": "1", "device_ip": "10.2.0.2", "rank_id": "1"}]},
             {"server_id": "server-b", "host_ip": "127.0.0.2", "device": [
               {"device_id": "0", "device_ip": "10.2.1.1", "rank_id": "2"},
               {"device_id": "1", "device_ip": "10.2.1.2", "rank_id": "3"}]}]}"#,
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs `rank` on `dev` in a thread of its own: joins with `init`, runs every operation, leaves.
fn rank_thread(
    dev: i32,
    rank: usize,
    init: impl FnOnce() -> HcclComm + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        use_device(dev);
        let comm = init();
        let mut stream = null_mut();
        acl(unsafe { aclrtCreateStream(&mut stream) });
        let r = Rank { dev, stream, comm };
        every_operation_as(rank, 4, &r, BIG);
        // Destroys the communicator and the stream, and releases the device this thread kept.
        drop(Ranks(vec![r]));
    })
}

/// The two ranks of a server from a rank table: `first` and `first + 1` on devices 0 and 1.
pub fn table_server(path: &str, first: usize) {
    let hs: Vec<_> = (0..2)
        .map(|k| {
            let path = CString::new(path).unwrap();
            let rank = first + k;
            rank_thread(k as i32, rank, move || {
                let mut c = null_mut();
                ok(unsafe { HcclCommInitClusterInfo(path.as_ptr(), rank as u32, &mut c) });
                c
            })
        })
        .collect();
    for h in hs {
        h.join().expect("a rank thread failed");
    }
}

/// The two ranks of a server from a root info.
pub fn root_info_server(ri: HcclRootInfo, first: usize) {
    let hs: Vec<_> = (0..2)
        .map(|k| {
            let rank = first + k;
            rank_thread(k as i32, rank, move || {
                let mut c = null_mut();
                ok(unsafe { HcclCommInitRootInfo(4, &ri, rank as u32, &mut c) });
                c
            })
        })
        .collect();
    for h in hs {
        h.join().expect("a rank thread failed");
    }
}

/// A child's part: one server, ranks `FIRST` and `FIRST + 1`.
pub fn child(role: &str) {
    let var = |k: &str| std::env::var(k).unwrap();
    let first = var("FIRST").parse().unwrap();
    match role {
        "server_table" => table_server(&var("TABLE"), first),
        "server_root" => root_info_server(read_root_info(&var("ROOT_INFO")), first),
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn two_servers_of_two_ranks_from_a_rank_table() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    let path = two_server_table(dir.path());
    // Both servers are processes of their own (one rank-table communicator per device and
    // process: the other tests of this one use devices 0 and 1 too).
    let servers = [0, 2].map(|first| {
        spawn(
            "server_table",
            &[("TABLE", path.clone()), ("FIRST", first.to_string())],
        )
    });
    wait_ok(servers.into());
}

#[test]
fn two_servers_of_two_ranks_from_a_root_info() {
    let dir = tempfile::tempdir().unwrap();
    let ri = root_info(0);
    let path = write_root_info(dir.path(), &ri);
    // The other server's address: its ranks are reached over TCP, this one's through memory.
    let b = spawn(
        "server_root",
        &[
            ("ROOT_INFO", path),
            ("FIRST", "2".to_string()),
            ("HCCL_IF_IP", "127.0.0.2".to_string()),
        ],
    );
    root_info_server(ri, 0);
    wait_ok(vec![b]);
}
