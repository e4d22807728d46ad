//! Ranks that die or never come: the others' operations end with HCCL's timeout codes after the
//! (scaled down) timeouts instead of hanging, and every communicator can be destroyed afterwards
//! without leaving threads, shared memory or registry entries behind. Each case runs in a
//! child process of its own, with timeouts of a fraction of a second, where nothing else runs,
//! so the leak checks see only the case's own resources.

use crate::common::*;
use crate::multiprocess::{read_root_info, spawn, wait_ok, write_root_info};
use hccl_emu::{DType, RedOp};
use std::ffi::CString;
use std::time::{Duration, Instant};

const KEEP: (&str, &str) = ("HCCL_EMU_TEST_KEEP_ENV", "1");
/// The scaled timeouts: a failure needs this long to show, a healthy rank never comes near it.
const EXEC_MS: &str = "300";
const CONNECT_MS: &str = "1500";

fn run_case(role: &str, extra: &[(&str, String)]) {
    let mut env = vec![
        (KEEP.0, KEEP.1.to_string()),
        ("HCCL_EMU_EXEC_TIMEOUT_MS", EXEC_MS.to_string()),
        ("HCCL_EMU_CONNECT_TIMEOUT_MS", CONNECT_MS.to_string()),
    ];
    env.extend(extra.iter().cloned());
    wait_ok(vec![spawn(role, &env)]);
}

/// The threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// The shared regions of process `pid` still named in /dev/shm.
fn regions_of(pid: u32) -> Vec<String> {
    let prefix = format!("hccl-emu-{pid}-");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// The threads of a process that used `devices` (their runtime threads started), before any
/// communicator.
fn baseline(devices: &[i32]) -> usize {
    for &d in devices {
        use_device(d);
        let mut s = null_mut();
        acl(unsafe { aclrtCreateStream(&mut s) });
        acl(unsafe { aclrtDestroyStream(s) });
        release(d);
    }
    threads()
}

/// Nothing of the emulator's is left: no communicator, no region name, no thread beyond
/// `before` (threads that end on their own get a moment).
fn no_leaks(before: usize) {
    assert_eq!(hccl_emu::live_count(), 0, "communicators left");
    assert_eq!(
        regions_of(std::process::id()),
        Vec::<String>::new(),
        "regions left"
    );
    let until = Instant::now() + Duration::from_secs(10);
    while threads() > before && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        threads() <= before,
        "{} threads, {before} before",
        threads()
    );
}

/// Issues an all-reduce on `r`.
fn issue(r: &Rank, buf: &DevBuf) {
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
}

/// Waits for `r`'s stream: its error and the messages.
fn wait(r: &Rank) -> (aclError, String) {
    use_device(r.dev);
    let e = unsafe { aclrtSynchronizeStream(r.stream) };
    let m = take_msg();
    release(r.dev);
    (e, m)
}

fn async_error(c: HcclComm) -> HcclResult {
    let mut e = HCCL_SUCCESS;
    ok(unsafe { HcclGetCommAsyncError(c, &mut e) });
    e
}

/// Destroys every rank (streams too) and checks the handles are gone.
fn destroy_all(ranks: Vec<Rank>) {
    for r in &ranks {
        use_device(r.dev);
        ok(unsafe { HcclCommDestroy(r.comm) });
        acl(unsafe { aclrtDestroyStream(r.stream) });
        release(r.dev);
        // The reference the rank's join took.
        release(r.dev);
        let mut id = 0;
        err(unsafe { HcclGetRankId(r.comm, &mut id) }, HCCL_E_PARA);
    }
}

/// What rank 2's thread panics with.
const DIES: &str = "rank 2's thread dies before the all-reduce";

/// Three ranks in threads; rank 2's thread panics after joining (`destroying`: its
/// communicator is destroyed as the thread unwinds, as the safe crate's drop does). The other
/// two fail with the timeout code after the execution timeout.
fn a_thread_panics(destroying: bool) {
    // The planned panic says nothing on stderr; any other still does.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&DIES) {
            default(info);
        }
    }));
    let ri = root_info(0);
    let (tx, rx) = std::sync::mpsc::channel();
    let hs: Vec<_> = (0..3u32)
        .map(|rank| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                // The device reference join takes stays until `destroy_all`.
                let r = join(rank as i32, 3, &ri, rank, None).expect("join");
                if rank == 2 {
                    struct Leave(Option<Rank>);
                    impl Drop for Leave {
                        fn drop(&mut self) {
                            if let Some(r) = self.0.take() {
                                use_device(r.dev);
                                assert_eq!(unsafe { HcclCommDestroy(r.comm) }, HCCL_SUCCESS);
                                acl(unsafe { aclrtDestroyStream(r.stream) });
                                release(r.dev);
                                release(r.dev);
                            }
                        }
                    }
                    let keep = (r.dev, r.stream as usize, r.comm as usize);
                    let _leave = Leave(destroying.then_some(r));
                    if !destroying {
                        tx.send(keep).unwrap();
                    }
                    std::panic::panic_any(DIES);
                }
                tx.send((r.dev, r.stream as usize, r.comm as usize))
                    .unwrap();
            })
        })
        .collect();
    let mut joined: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
    assert!(joined.pop().unwrap().is_err(), "rank 2's thread panicked");
    assert!(joined.iter().all(|j| j.is_ok()));
    drop(tx);
    let mut ranks: Vec<Rank> = rx
        .iter()
        .map(|(dev, s, c)| Rank {
            dev,
            stream: s as aclrtStream,
            comm: c as HcclComm,
        })
        .collect();
    ranks.sort_by_key(|r| r.dev);
    let live: Vec<&Rank> = ranks.iter().filter(|r| r.dev < 2).collect();
    let bufs: Vec<DevBuf> = live.iter().map(|r| DevBuf::new(r.dev, 64)).collect();
    let started = Instant::now();
    for (r, b) in live.iter().zip(&bufs) {
        issue(r, b);
    }
    for r in &live {
        let (e, m) = wait(r);
        assert_eq!(e, ACL_ERROR_RT_AICPU_TIMEOUT as i32, "{m}");
        assert!(m.contains("execution timeout"), "{m}");
        if destroying {
            assert!(m.contains("rank 2 destroyed its communicator"), "{m}");
        }
    }
    assert!(started.elapsed() >= Duration::from_millis(EXEC_MS.parse().unwrap()));
    for r in &live {
        assert_eq!(async_error(r.comm), HCCL_E_TIMEOUT);
    }
    drop(bufs);
    destroy_all(ranks);
}

/// Rank 1 is a process that joins and is then killed: rank 0's operation fails with the timeout
/// code after the execution timeout, the asynchronous error says the link broke at once, and the
/// killed process leaves no region behind.
fn a_process_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let ri = root_info(0);
    let path = write_root_info(dir.path(), &ri);
    let mut child = spawn(
        "failure_join_and_wait",
        &[(KEEP.0, KEEP.1.to_string()), ("ROOT_INFO", path)],
    );
    let r = join(0, 2, &ri, 0, None).expect("join");
    child.kill().unwrap();
    child.wait().unwrap();
    let buf = DevBuf::new(r.dev, 64);
    issue(&r, &buf);
    let (e, m) = wait(&r);
    assert_eq!(e, ACL_ERROR_RT_AICPU_TIMEOUT as i32, "{m}");
    assert!(
        m.contains("execution timeout") && m.contains("went away"),
        "{m}"
    );
    assert_eq!(async_error(r.comm), HCCL_E_TCP_TRANSFER);
    assert_eq!(
        regions_of(child.id()),
        Vec::<String>::new(),
        "the killed rank's regions"
    );
    drop(buf);
    destroy_all(vec![r]);
}

/// Three ranks, two of them threads that join; the third never comes: both fail with
/// HCCL_E_TIMEOUT after the connect timeout.
fn a_thread_never_joins() {
    let ri = root_info(0);
    let started = Instant::now();
    let hs: Vec<_> = (0..2u32)
        .map(|rank| std::thread::spawn(move || join(rank as i32, 3, &ri, rank, None).err()))
        .collect();
    for h in hs {
        let (code, m) = h
            .join()
            .unwrap()
            .expect("no communicator without the third rank");
        assert_eq!(code, HCCL_E_TIMEOUT, "{m}");
        assert!(m.contains("connect timeout"), "{m}");
    }
    assert!(started.elapsed() >= Duration::from_millis(CONNECT_MS.parse().unwrap()));
}

/// A rank table of three ranks: this process and a child take ranks 0 and 1, rank 2's process
/// never starts. The communicators are created (a rank table links up at the first operation),
/// and the first operation fails with the timeout code after the connect timeout.
fn a_process_never_joins(table: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let path = match table {
        Some(p) => p.to_string(),
        None => {
            let p = dir.path().join("three.json");
            std::fs::write(
                &p,
                r#"{"version": "1.0", "status": "completed", "server_count": "1", "server_list": [
                     {"server_id": "this-host", "device": [
                       {"device_id": "0", "rank_id": "0"}, {"device_id": "1", "rank_id": "1"},
                       {"device_id": "2", "rank_id": "2"}]}]}"#,
            )
            .unwrap();
            p.to_str().unwrap().to_string()
        }
    };
    let (rank, other) = if table.is_some() {
        (1, None)
    } else {
        (0, Some(()))
    };
    let child = other.map(|()| {
        spawn(
            "failure_table_rank",
            &[
                (KEEP.0, KEEP.1.to_string()),
                ("HCCL_EMU_CONNECT_TIMEOUT_MS", CONNECT_MS.to_string()),
                ("TABLE", path.clone()),
            ],
        )
    });
    let cpath = CString::new(path.clone()).unwrap();
    use_device(rank);
    let mut c = null_mut();
    ok(unsafe { HcclCommInitClusterInfo(cpath.as_ptr(), rank as u32, &mut c) });
    let mut s = null_mut();
    acl(unsafe { aclrtCreateStream(&mut s) });
    let r = Rank {
        dev: rank,
        stream: s,
        comm: c,
    };
    let buf = DevBuf::new(r.dev, 64);
    issue(&r, &buf);
    let (e, m) = wait(&r);
    assert_eq!(e, ACL_ERROR_RT_AICPU_TIMEOUT as i32, "{m}");
    assert!(
        m.contains("could not link up") && m.contains("connect timeout"),
        "{m}"
    );
    assert_eq!(async_error(r.comm), HCCL_E_TIMEOUT);
    drop(buf);
    destroy_all(vec![r]);
    if let Some(c) = child {
        wait_ok(vec![c]);
    }
}

/// The child processes' parts.
pub fn child(role: &str) {
    match role {
        "failure_thread_panics" => {
            let before = baseline(&[0, 1, 2]);
            a_thread_panics(false);
            a_thread_panics(true);
            no_leaks(before);
        }
        "failure_process_killed" => {
            let before = baseline(&[0]);
            a_process_is_killed();
            no_leaks(before);
        }
        "failure_join_and_wait" => {
            let ri = read_root_info(&std::env::var("ROOT_INFO").unwrap());
            let _r = join(1, 2, &ri, 1, None).expect("join");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        "failure_thread_never_joins" => {
            let before = baseline(&[0, 1]);
            a_thread_never_joins();
            no_leaks(before);
        }
        "failure_process_never_joins" => {
            let before = baseline(&[0]);
            a_process_never_joins(None);
            no_leaks(before);
        }
        "failure_table_rank" => {
            let before = baseline(&[1]);
            a_process_never_joins(Some(&std::env::var("TABLE").unwrap()));
            no_leaks(before);
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn a_rank_thread_that_panics_fails_the_others_after_the_execution_timeout() {
    run_case("failure_thread_panics", &[]);
}

#[test]
fn a_rank_process_that_is_killed_fails_the_others_after_the_execution_timeout() {
    run_case("failure_process_killed", &[]);
}

#[test]
fn a_rank_thread_that_never_joins_fails_the_others_after_the_connect_timeout() {
    run_case("failure_thread_never_joins", &[]);
}

#[test]
fn a_rank_process_that_never_joins_fails_the_others_first_operation_after_the_connect_timeout() {
    run_case("failure_process_never_joins", &[]);
}
