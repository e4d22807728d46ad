//! Rank tables: processes (here threads) given the same file meet; the table is checked and
//! servers that are not this machine are refused.

use crate::common::*;
use hccl_emu::{DType, RedOp};
use std::ffi::CString;

fn table(dir: &tempfile::TempDir, name: &str, body: &str) -> CString {
    let p = dir.path().join(name);
    std::fs::write(&p, body).unwrap();
    CString::new(p.to_str().unwrap()).unwrap()
}

const TWO_DEVICES: &str = r#"{
  "version": "1.0", "status": "completed", "server_count": "1",
  "server_list": [{ "server_id": "node-a", "device": [
    { "device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0" },
    { "device_id": "1", "device_ip": "192.168.100.102", "rank_id": "1" } ] }]
}"#;

const TWO_SERVERS_ON_LOOPBACK: &str = r#"{
  "version": "1.0", "status": "completed", "server_count": "2",
  "server_list": [
    { "server_id": "127.0.0.1", "device": [ { "device_id": "0", "device_ip": "10.0.0.1", "rank_id": "0" } ] },
    { "server_id": "127.0.0.2", "device": [ { "device_id": "0", "device_ip": "10.0.0.2", "rank_id": "1" } ] } ]
}"#;

fn init(path: &CString, dev: i32, rank: u32) -> Result<Rank, (HcclResult, String)> {
    use_device(dev);
    let mut c = null_mut();
    let r = unsafe { HcclCommInitClusterInfo(path.as_ptr(), rank, &mut c) };
    if r != HCCL_SUCCESS {
        let m = take_msg();
        release(dev);
        return Err((r, m));
    }
    let mut s = null_mut();
    acl(unsafe { aclrtCreateStream(&mut s) });
    Ok(Rank {
        dev,
        stream: s,
        comm: c,
    })
}

fn all_reduce_works(ranks: &Ranks) {
    let ins: Vec<Vec<u8>> = (0..ranks.n())
        .map(|r| data(DType::F32, 10, r as u64 + 3))
        .collect();
    let bufs: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    for (r, b) in ranks.0.iter().zip(&bufs) {
        ok(unsafe {
            HcclAllReduce(
                b.ptr,
                b.ptr,
                10,
                DType::F32.raw(),
                RedOp::Max.raw(),
                r.comm,
                r.stream,
            )
        });
    }
    ranks.sync_ok();
    let want = reference(DType::F32, RedOp::Max, &ins);
    for b in &bufs {
        assert_eq!(b.read(), want);
    }
}

#[test]
fn ranks_of_one_table_meet_and_are_named_hccl_world_group() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    for (body, devs) in [(TWO_DEVICES, [0, 1]), (TWO_SERVERS_ON_LOOPBACK, [2, 3])] {
        let path = table(&dir, &format!("t{}.json", devs[0]), body);
        // One thread initialises both ranks, one after the other: rank-table initialisation does
        // not wait for the other ranks (they link up at the first operation).
        let ranks = Ranks(vec![
            init(&path, devs[0], 0).expect("rank 0"),
            init(&path, devs[1], 1).expect("rank 1"),
        ]);
        let mut buf = [0 as std::ffi::c_char; 128];
        ok(unsafe { HcclGetCommName(ranks.0[1].comm, buf.as_mut_ptr()) });
        let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(name.to_str().unwrap(), "hccl_world_group");
        // A second rank-table communicator on a device that has one: E_UNAVAIL.
        let (code, m) = init(&path, devs[0], 1).err().expect("refused");
        assert_eq!(code, HCCL_E_UNAVAIL, "{m}");
        all_reduce_works(&ranks);
    }
}

#[test]
fn bad_tables_and_arguments_are_refused() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    use_device(4);
    let mut c = null_mut();
    err(
        unsafe { HcclCommInitClusterInfo(null(), 0, &mut c) },
        HCCL_E_PTR,
    );
    let good = table(&dir, "good.json", TWO_DEVICES);
    err(
        unsafe { HcclCommInitClusterInfo(good.as_ptr(), 0, null_mut()) },
        HCCL_E_PTR,
    );
    let m = err(
        unsafe { HcclCommInitClusterInfo(good.as_ptr(), 2, &mut c) },
        HCCL_E_PARA,
    );
    assert!(m.contains("rank 2 is not in the rank table"), "{m}");
    let missing = CString::new(dir.path().join("nope.json").to_str().unwrap()).unwrap();
    err(
        unsafe { HcclCommInitClusterInfo(missing.as_ptr(), 0, &mut c) },
        HCCL_E_INTERNAL,
    );
    let broken = table(&dir, "broken.json", "{ \"version\": \"1.0\", ");
    let m = err(
        unsafe { HcclCommInitClusterInfo(broken.as_ptr(), 0, &mut c) },
        HCCL_E_INTERNAL,
    );
    assert!(m.contains("not valid JSON"), "{m}");
    let unfinished = table(
        &dir,
        "unfinished.json",
        &TWO_DEVICES.replace("completed", "initializing"),
    );
    err(
        unsafe { HcclCommInitClusterInfo(unfinished.as_ptr(), 0, &mut c) },
        HCCL_E_INTERNAL,
    );
    let remote = table(
        &dir,
        "remote.json",
        &TWO_SERVERS_ON_LOOPBACK.replace("127.0.0.2", "198.51.100.20"),
    );
    let m = err(
        unsafe { HcclCommInitClusterInfo(remote.as_ptr(), 0, &mut c) },
        HCCL_E_NOT_SUPPORT,
    );
    assert!(
        m.contains("198.51.100.20") && m.contains("not an address of this machine"),
        "{m}"
    );
    let long = CString::new("x".repeat(5000)).unwrap();
    err(
        unsafe { HcclCommInitClusterInfo(long.as_ptr(), 0, &mut c) },
        HCCL_E_PARA,
    );
    let mut cfg = comm_config();
    cfg.hcclBufferSize = 0;
    err(
        unsafe { HcclCommInitClusterInfoConfig(good.as_ptr(), 0, &mut cfg, &mut c) },
        HCCL_E_PARA,
    );
    release(4);
}
