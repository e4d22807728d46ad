//! Ranks in separate processes: the test binary runs itself again as child ranks
//! (`HCCL_EMU_TEST_ROLE` selects what a child does); they meet through the root info the parent
//! wrote to a file and exchange data through shared memory.

use crate::common::*;
use hccl_emu::{DType, RedOp};
use std::path::Path;
use std::process::{Child, Command};

const ROLE: &str = "HCCL_EMU_TEST_ROLE";

/// Starts this test binary as a child running `role`.
pub fn spawn(role: &str, envs: &[(&str, String)]) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "multiprocess::child_entry_point",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(ROLE, role)
    .stdout(std::process::Stdio::null());
    for (k, v) in envs {
        c.env(k, v);
    }
    c.spawn().expect("start a child process")
}

#[track_caller]
pub fn wait_ok(children: Vec<Child>) {
    for mut c in children {
        let st = c.wait().unwrap();
        assert!(st.success(), "a child rank failed: {st}");
    }
}

pub fn write_root_info(dir: &Path, ri: &HcclRootInfo) -> String {
    let p = dir.join("root_info.bin");
    let bytes: Vec<u8> = ri.internal.iter().map(|c| *c as u8).collect();
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

pub fn read_root_info(path: &str) -> HcclRootInfo {
    let bytes = std::fs::read(path).unwrap();
    let mut ri = HcclRootInfo {
        internal: [0; HCCL_ROOT_INFO_BYTES as usize],
    };
    for (d, s) in ri.internal.iter_mut().zip(bytes) {
        *d = s as std::ffi::c_char;
    }
    ri
}

/// What every rank of the cross-process test does: an all-reduce of 300 000 f32 (1.2 MB per
/// rank, which grows the shared segments) and of a short odd-sized int32 buffer, then an
/// all-gather; each result is checked against the host reference of every rank's input.
fn collectives_as(rank: usize, n: usize, r: &Rank) {
    for (t, count, op) in [
        (DType::F32, 300_000usize, RedOp::Sum),
        (DType::I32, 33, RedOp::Min),
    ] {
        let ins: Vec<Vec<u8>> = (0..n).map(|i| data(t, count, i as u64 + 100)).collect();
        let buf = DevBuf::from(r.dev, &ins[rank]);
        ok(unsafe {
            HcclAllReduce(
                buf.ptr,
                buf.ptr,
                count as u64,
                t.raw(),
                op.raw(),
                r.comm,
                r.stream,
            )
        });
        let parts: Vec<Vec<u8>> = (0..n).map(|i| data(DType::U16, 77, i as u64 + 7)).collect();
        let part = DevBuf::from(r.dev, &parts[rank]);
        let whole = DevBuf::new(r.dev, 77 * 2 * n);
        ok(unsafe { HcclAllGather(part.ptr, whole.ptr, 77, DType::U16.raw(), r.comm, r.stream) });
        use_device(r.dev);
        let e = unsafe { aclrtSynchronizeStream(r.stream) };
        release(r.dev);
        assert_eq!(e, 0, "rank {rank}: {}", take_msg());
        assert_eq!(
            buf.read(),
            reference(t, op, &ins),
            "rank {rank}: all-reduce of {}",
            t.name()
        );
        assert_eq!(whole.read(), parts.concat(), "rank {rank}: all-gather");
    }
}

/// The entry point of child processes; does nothing in the parent's own test run.
#[test]
fn child_entry_point() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    setup();
    let var = |k: &str| std::env::var(k).unwrap();
    match role.as_str() {
        "collectives" => {
            let (rank, n) = (var("RANK").parse().unwrap(), var("NRANKS").parse().unwrap());
            let ri = read_root_info(&var("ROOT_INFO"));
            let r = join(0, n as u32, &ri, rank as u32, None).expect("join");
            collectives_as(rank, n, &r);
            drop(Ranks(vec![r]));
        }
        "leave" => {
            // Join, then exit without destroying the communicator.
            let ri = read_root_info(&var("ROOT_INFO"));
            let _r = join(0, 2, &ri, 1, None).expect("join");
            std::process::exit(0);
        }
        "get_root_info" => {
            use_device(0);
            let mut ri = HcclRootInfo {
                internal: [0; HCCL_ROOT_INFO_BYTES as usize],
            };
            let code = unsafe { HcclGetRootInfo(&mut ri) };
            let want: u32 = var("WANT").parse().unwrap();
            let m = take_msg();
            assert_eq!(code, HcclResult(want), "{m}");
            assert!(m.contains(&var("WANT_TEXT")), "{m}");
            if code == HCCL_SUCCESS {
                // Nobody else comes: the rendezvous times out (HCCL_EMU_CONNECT_TIMEOUT_MS).
                let (code, m) = join(0, 2, &ri, 0, None).err().expect("a timeout");
                assert_eq!(code, HCCL_E_TIMEOUT, "{m}");
                assert!(m.contains("connect timeout"), "{m}");
            }
        }
        "ascend950" => ascend950(),
        "server_table" | "server_root" => crate::servers::child(&role),
        r if r.starts_with("failure_") => crate::failures::child(r),
        "rank_table" => {
            let path = std::ffi::CString::new(var("TABLE")).unwrap();
            use_device(0);
            let mut c = null_mut();
            ok(unsafe { HcclCommInitClusterInfo(path.as_ptr(), 1, &mut c) });
            let mut s = null_mut();
            acl(unsafe { aclrtCreateStream(&mut s) });
            collectives_as(
                1,
                2,
                &Rank {
                    dev: 0,
                    stream: s,
                    comm: c,
                },
            );
            drop(Ranks(vec![Rank {
                dev: 0,
                stream: s,
                comm: c,
            }]));
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn all_reduce_and_all_gather_across_two_and_four_processes() {
    for n in [2usize, 4] {
        let dir = tempfile::tempdir().unwrap();
        let ri = root_info(0);
        let path = write_root_info(dir.path(), &ri);
        let children: Vec<Child> = (1..n)
            .map(|rank| {
                spawn(
                    "collectives",
                    &[
                        ("RANK", rank.to_string()),
                        ("NRANKS", n.to_string()),
                        ("ROOT_INFO", path.clone()),
                    ],
                )
            })
            .collect();
        // This process is rank 0 (and serves the rendezvous).
        let r = join(0, n as u32, &ri, 0, None).expect("join");
        let mut ids = [0u32; 2];
        ok(unsafe { HcclGetRankSize(r.comm, &mut ids[0]) });
        assert_eq!(ids[0] as usize, n);
        collectives_as(0, n, &r);
        drop(Ranks(vec![r]));
        wait_ok(children);
    }
}

#[test]
fn a_peer_process_that_exits_breaks_the_communicator() {
    let dir = tempfile::tempdir().unwrap();
    let ri = root_info(1);
    let path = write_root_info(dir.path(), &ri);
    let child = spawn("leave", &[("ROOT_INFO", path)]);
    let mut cfg = comm_config();
    cfg.hcclExecTimeOut = 1;
    let r = join(1, 2, &ri, 0, Some(&cfg)).expect("join");
    wait_ok(vec![child]);
    let buf = DevBuf::new(r.dev, 64);
    ok(unsafe {
        HcclAllReduce(
            buf.ptr,
            buf.ptr,
            16,
            DType::F32.raw(),
            RedOp::Sum.raw(),
            r.comm,
            r.stream,
        )
    });
    use_device(r.dev);
    let e = unsafe { aclrtSynchronizeStream(r.stream) };
    let m = take_msg();
    release(r.dev);
    // As on hardware, the others wait for the execution timeout; the message says why.
    assert_eq!(e, ACL_ERROR_RT_AICPU_TIMEOUT as i32, "{m}");
    assert!(m.contains("execution timeout"), "{m}");
    assert!(m.contains("without destroying its communicator"), "{m}");
    let mut ae = HCCL_SUCCESS;
    ok(unsafe { HcclGetCommAsyncError(r.comm, &mut ae) });
    assert_eq!(ae, HCCL_E_TCP_TRANSFER);
    drop(Ranks(vec![r]));
}

#[test]
fn the_environment_sets_the_rendezvous_and_is_checked() {
    let keep = ("HCCL_EMU_TEST_KEEP_ENV", "1".to_string());
    let cases = [
        vec![
            ("HCCL_EMU_CONNECT_TIMEOUT_MS", "300".to_string()),
            ("WANT", "0".into()),
            ("WANT_TEXT", "".into()),
        ],
        vec![
            ("HCCL_CONNECT_TIMEOUT", "5".to_string()),
            ("WANT", "1".into()),
            ("WANT_TEXT", "HCCL_CONNECT_TIMEOUT".into()),
        ],
        vec![
            ("HCCL_IF_IP", "203.0.113.9".to_string()),
            ("WANT", "5".into()),
            ("WANT_TEXT", "not an address of this machine".into()),
        ],
    ];
    let children = cases
        .into_iter()
        .map(|mut env| {
            env.push(keep.clone());
            spawn("get_root_info", &env)
        })
        .collect();
    wait_ok(children);
}

/// As an Ascend 950: 64-bit unsigned and double reductions, FP8 data movement.
fn ascend950() {
    assert_eq!(
        hccl_emu::Personality::current(),
        hccl_emu::Personality::A950
    );
    let ranks = Ranks::new(0, 2);
    for (t, op) in [
        (DType::U64, RedOp::Sum),
        (DType::F64, RedOp::Prod),
        (DType::U64, RedOp::Max),
    ] {
        let ins: Vec<Vec<u8>> = (0..2).map(|r| data(t, 19, r + 1)).collect();
        let bufs: Vec<DevBuf> = ranks
            .0
            .iter()
            .zip(&ins)
            .map(|(r, i)| DevBuf::from(r.dev, i))
            .collect();
        for (r, b) in ranks.0.iter().zip(&bufs) {
            ok(unsafe { HcclAllReduce(b.ptr, b.ptr, 19, t.raw(), op.raw(), r.comm, r.stream) });
        }
        ranks.sync_ok();
        let want = reference(t, op, &ins);
        for b in &bufs {
            assert_eq!(b.read(), want, "{} {}", op.name(), t.name());
        }
    }
    let r = &ranks.0[0];
    let b = DevBuf::new(r.dev, 64);
    err(
        unsafe { HcclAllReduce(b.ptr, b.ptr, 4, DType::U8.raw(), 0, r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    err(
        unsafe { HcclAllGather(b.ptr, b.ptr, 4, DType::I128.raw(), r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    let ins: Vec<Vec<u8>> = (0..2).map(|r| data(DType::Fp8E4M3, 5, r + 1)).collect();
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    let recvs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 10)).collect();
    for ((r, s), d) in ranks.0.iter().zip(&sends).zip(&recvs) {
        ok(unsafe { HcclAllGather(s.ptr, d.ptr, 5, DType::Fp8E4M3.raw(), r.comm, r.stream) });
    }
    ranks.sync_ok();
    assert_eq!(recvs[1].read(), ins.concat());
}

#[test]
fn an_ascend_950_accepts_more_types() {
    wait_ok(vec![spawn(
        "ascend950",
        &[("ASCENDCL_EMU_SOC", "Ascend950PR_9599".to_string())],
    )]);
}

#[test]
fn processes_given_the_same_rank_table_meet() {
    setup();
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("cluster.json");
    std::fs::write(
        &table,
        r#"{"version": "1.0", "status": "completed", "server_count": "1", "server_list": [
             {"server_id": "this-host", "device": [
               {"device_id": "0", "device_ip": "10.1.0.1", "rank_id": "0"},
               {"device_id": "1", "device_ip": "10.1.0.2", "rank_id": "1"}]}]}"#,
    )
    .unwrap();
    let path = table.to_str().unwrap().to_string();
    let child = spawn("rank_table", &[("TABLE", path.clone())]);
    use_device(5);
    let mut c = null_mut();
    let cpath = std::ffi::CString::new(path).unwrap();
    ok(unsafe { HcclCommInitClusterInfo(cpath.as_ptr(), 0, &mut c) });
    let mut s = null_mut();
    acl(unsafe { aclrtCreateStream(&mut s) });
    let r = Rank {
        dev: 5,
        stream: s,
        comm: c,
    };
    collectives_as(0, 2, &r);
    drop(Ranks(vec![r]));
    wait_ok(vec![child]);
}
