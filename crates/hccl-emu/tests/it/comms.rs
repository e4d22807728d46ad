//! Communicators: the initialisation forms, their argument checks, identity, destroy.

use crate::common::*;
use std::ffi::CStr;

fn name(c: HcclComm) -> String {
    let mut buf = [0 as std::ffi::c_char; 128];
    ok(unsafe { HcclGetCommName(c, buf.as_mut_ptr()) });
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string()
}

fn rank_size(c: HcclComm) -> (u32, u32) {
    let (mut r, mut n) = (9, 9);
    ok(unsafe { HcclGetRankId(c, &mut r) });
    ok(unsafe { HcclGetRankSize(c, &mut n) });
    (r, n)
}

#[test]
fn root_info_ranks_in_threads_know_who_they_are() {
    let ranks = root_ranks(&[4, 5, 6], None);
    let first = name(ranks.0[0].comm);
    // The default name is the root info's identifier: <ip>_<port>_<device>_<timestamp>.
    let parts: Vec<&str> = first.split('_').collect();
    assert_eq!(parts.len(), 4, "{first}");
    assert_eq!(parts[0], "127.0.0.1");
    // The port the rendezvous listens on: base port 60000 + device 4 when free, else the next
    // free one (other tests of this binary make root infos for device 4 too).
    let port: u16 = parts[1].parse().expect("a port");
    assert!(port >= 60004, "{first}");
    assert_eq!(parts[2], "4");
    for (i, r) in ranks.0.iter().enumerate() {
        assert_eq!(rank_size(r.comm), (i as u32, 3));
        assert_eq!(name(r.comm), first);
        let mut e = HCCL_E_PARA;
        ok(unsafe { HcclGetCommAsyncError(r.comm, &mut e) });
        assert_eq!(e, HCCL_SUCCESS);
    }
}

#[test]
fn init_all_binds_rank_i_to_device_i() {
    let ranks = Ranks::new(3, 4);
    for (i, r) in ranks.0.iter().enumerate() {
        assert_eq!(rank_size(r.comm), (i as u32, 4));
    }
    // One name for the four.
    let n0 = name(ranks.0[0].comm);
    assert!(ranks.0.iter().all(|r| name(r.comm) == n0));
}

#[test]
fn init_all_checks_its_arguments() {
    setup();
    let mut comms = [null_mut(); 2];
    // No current device on a fresh thread: E_RUNTIME (HCCL's HcclCommInitAll starts with
    // hrtGetDeviceRefresh, aclrtGetDevice, and fails with E_RUNTIME without one; its documented
    // example sets every device before the call).
    let r = std::thread::spawn(|| {
        let mut comms = [null_mut(); 2];
        let devs = [0i32, 1];
        let r = unsafe { HcclCommInitAll(2, devs.as_ptr().cast_mut(), comms.as_mut_ptr()) };
        (r, take_msg())
    })
    .join()
    .unwrap();
    assert_eq!(r.0, HCCL_E_RUNTIME, "{}", r.1);
    use_device(0);
    err(
        unsafe { HcclCommInitAll(0, [0i32].as_ptr().cast_mut(), comms.as_mut_ptr()) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclCommInitAll(2, null_mut(), comms.as_mut_ptr()) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclCommInitAll(2, [0i32, 1].as_ptr().cast_mut(), null_mut()) },
        HCCL_E_PTR,
    );
    let m = err(
        unsafe { HcclCommInitAll(2, [1i32, 1].as_ptr().cast_mut(), comms.as_mut_ptr()) },
        HCCL_E_PARA,
    );
    assert!(m.contains("twice"), "{m}");
    err(
        unsafe { HcclCommInitAll(2, [0i32, 8].as_ptr().cast_mut(), comms.as_mut_ptr()) },
        HCCL_E_PARA,
    );
    release(0);
}

#[test]
fn init_root_info_checks_its_arguments_in_order() {
    let ri = root_info(0);
    let mut c = null_mut();
    let r = std::thread::spawn(move || {
        let mut c = null_mut();
        (
            unsafe { HcclCommInitRootInfo(1, &ri, 0, &mut c) },
            take_msg(),
        )
    })
    .join()
    .unwrap();
    assert_eq!(r.0, HCCL_E_RUNTIME, "{}", r.1);
    use_device(0);
    // n == 0 and rank >= n before the NULL pointers.
    err(
        unsafe { HcclCommInitRootInfo(0, null(), 0, null_mut()) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclCommInitRootInfo(2, null(), 2, null_mut()) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclCommInitRootInfo(2, &ri, 0, null_mut()) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclCommInitRootInfo(2, null(), 0, &mut c) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclCommInitRootInfoConfig(2, &ri, 0, null(), &mut c) },
        HCCL_E_PARA,
    );
    let mut cfg = comm_config();
    cfg.reserved[8] = 0; // breaks the magic word
    let m = err(
        unsafe { HcclCommInitRootInfoConfig(2, &ri, 0, &cfg, &mut c) },
        HCCL_E_PARA,
    );
    assert!(m.contains("magic"), "{m}");
    let mut cfg = comm_config();
    cfg.hcclBufferSize = 0;
    err(
        unsafe { HcclCommInitRootInfoConfig(2, &ri, 0, &cfg, &mut c) },
        HCCL_E_PARA,
    );
    let mut cfg = comm_config();
    cfg.hcclDeterministic = 3;
    err(
        unsafe { HcclCommInitRootInfoConfig(2, &ri, 0, &cfg, &mut c) },
        HCCL_E_PARA,
    );
    // Bytes that HcclGetRootInfo did not write.
    let zero = HcclRootInfo {
        internal: [0; HCCL_ROOT_INFO_BYTES as usize],
    };
    err(
        unsafe { HcclCommInitRootInfo(2, &zero, 0, &mut c) },
        HCCL_E_PARA,
    );
    release(0);
}

#[test]
fn a_root_info_naming_another_host_is_refused_clearly() {
    let mut ri = root_info(1);
    let other = b"203.0.113.7\0";
    for (d, s) in ri.internal.iter_mut().zip(other) {
        *d = *s as std::ffi::c_char;
    }
    use_device(1);
    let mut c = null_mut();
    let m = err(
        unsafe { HcclCommInitRootInfo(2, &ri, 0, &mut c) },
        HCCL_E_NOT_SUPPORT,
    );
    release(1);
    assert!(
        m.contains("203.0.113.7") && m.contains("never connects to other hosts"),
        "{m}"
    );
}

#[test]
fn the_config_name_replaces_the_identifier_and_names_clash_per_device() {
    let mut cfg = comm_config();
    let wanted = b"tensor-parallel\0";
    for (d, s) in cfg.hcclCommName.iter_mut().zip(wanted) {
        *d = *s as std::ffi::c_char;
    }
    let ri = root_info(2);
    let one = join(2, 1, &ri, 0, Some(&cfg)).expect("init");
    assert_eq!(name(one.comm), "tensor-parallel");
    // The same name again on the same device: E_PARA, at once.
    let ri2 = root_info(2);
    let again = join(2, 1, &ri2, 0, Some(&cfg));
    let (code, m) = again.err().expect("a name clash");
    assert_eq!(code, HCCL_E_PARA, "{m}");
    assert!(m.contains("tensor-parallel"), "{m}");
    // The same root info twice on one device: its identifier is the name.
    let plain = join(3, 1, &ri2, 0, None).expect("init");
    let (code, _) = join(3, 1, &ri2, 0, None).err().expect("a name clash");
    assert_eq!(code, HCCL_E_PARA);
    Ranks(vec![one, plain]);
}

#[test]
fn inconsistent_ranks_are_refused_by_the_rendezvous() {
    let ri = root_info(5);
    std::thread::scope(|s| {
        let first =
            s.spawn(|| join(5, 2, &ri, 0, None).map(|r| (r.comm as usize, r.stream as usize)));
        // Another rank 0, and a rank with another size: both refused while rank 0 waits.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let dup = s.spawn(|| join(6, 2, &ri, 0, None).err()).join().unwrap();
        let other = s.spawn(|| join(6, 3, &ri, 1, None).err()).join().unwrap();
        let second =
            s.spawn(|| join(6, 2, &ri, 1, None).map(|r| (r.comm as usize, r.stream as usize)));
        let (a, b) = (
            first.join().unwrap().expect("rank 0"),
            second.join().unwrap().expect("rank 1"),
        );
        let mk = |dev, (c, st): (usize, usize)| Rank {
            dev,
            stream: st as aclrtStream,
            comm: c as HcclComm,
        };
        let (dup, other) = (
            dup.expect("a duplicate rank is refused"),
            other.expect("another size is refused"),
        );
        assert_eq!(dup.0, HCCL_E_PARA, "{}", dup.1);
        assert!(dup.1.contains("already joined"), "{}", dup.1);
        assert_eq!(other.0, HCCL_E_PARA, "{}", other.1);
        assert!(other.1.contains("nRanks 3"), "{}", other.1);
        drop(Ranks(vec![mk(5, a), mk(6, b)]));
    });
}

#[test]
fn destroy_waits_for_nothing_and_refuses_while_busy() {
    let ranks = Ranks::new(0, 2);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    let bufs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 16)).collect();
    ok(unsafe {
        HcclAllReduce(
            bufs[0].ptr,
            bufs[0].ptr,
            4,
            HCCL_DATA_TYPE_FP32,
            0,
            a.comm,
            a.stream,
        )
    });
    use_device(a.dev);
    let m = err(unsafe { HcclCommDestroy(a.comm) }, HCCL_E_AGAIN);
    assert!(m.contains("in flight"), "{m}");
    ok(unsafe { HcclCommDestroy(null_mut()) });
    release(a.dev);
    ok(unsafe {
        HcclAllReduce(
            bufs[1].ptr,
            bufs[1].ptr,
            4,
            HCCL_DATA_TYPE_FP32,
            0,
            b.comm,
            b.stream,
        )
    });
    ranks.sync_ok();
    // Destroyed twice: the second is E_PARA (Ranks' drop destroys it once more).
    let devs: Vec<i32> = ranks.0.iter().map(|r| r.dev).collect();
    let comms: Vec<usize> = ranks.0.iter().map(|r| r.comm as usize).collect();
    drop(ranks);
    use_device(devs[0]);
    err(
        unsafe { HcclCommDestroy(comms[0] as HcclComm) },
        HCCL_E_PARA,
    );
    let mut v = 0;
    err(
        unsafe { HcclGetRankId(comms[0] as HcclComm, &mut v) },
        HCCL_E_PARA,
    );
    release(devs[0]);
}

#[test]
fn the_deterministic_setting_is_process_wide() {
    setup();
    let set = |v: i32| unsafe { HcclSetConfig(HCCL_DETERMINISTIC, HcclConfigValue { value: v }) };
    let get = || {
        let mut v = HcclConfigValue { value: -1 };
        ok(unsafe { HcclGetConfig(HCCL_DETERMINISTIC, &mut v) });
        unsafe { v.value }
    };
    ok(set(1));
    assert_eq!(get(), 1);
    err(set(3), HCCL_E_PARA);
    ok(set(2)); // strict: the default SoC is an Atlas A2 (Ascend910B2)
    assert_eq!(get(), 2);
    ok(set(0));
    assert_eq!(get(), 0);
    err(
        unsafe { HcclGetConfig(HCCL_DETERMINISTIC, null_mut()) },
        HCCL_E_PTR,
    );
}

#[test]
fn grouped_root_info_initialisation_from_one_thread() {
    let ri = root_info(6);
    let mut comms = [null_mut(); 2];
    ok(unsafe { HcclGroupStart() });
    for (i, d) in [6, 7].iter().enumerate() {
        use_device(*d);
        ok(unsafe { HcclCommInitRootInfo(2, &ri, i as u32, &mut comms[i]) });
        // Captured, not run: the output is written at the end of the group.
        assert!(comms[i].is_null());
    }
    ok(unsafe { HcclGroupEnd() });
    let ranks: Vec<Rank> = [6, 7]
        .iter()
        .zip(comms)
        .map(|(d, c)| {
            assert!(!c.is_null(), "the group created the communicator");
            use_device(*d);
            let mut s = null_mut();
            acl(unsafe { aclrtCreateStream(&mut s) });
            Rank {
                dev: *d,
                stream: s,
                comm: c,
            }
        })
        .collect();
    assert_eq!(rank_size(ranks[1].comm), (1, 2));
    drop(Ranks(ranks));
    release(6);
    release(7);
}

#[test]
fn per_communicator_determinism_comes_from_the_config_and_can_be_changed() {
    let mut cfg = comm_config();
    cfg.hcclDeterministic = 1;
    let ranks = root_ranks(&[1, 2], Some(cfg));
    let get = |c: HcclComm| {
        let mut v = HcclConfigValue { value: -1 };
        ok(unsafe { HcclGetCommConfig(c, HCCL_DETERMINISTIC, &mut v) });
        unsafe { v.value }
    };
    assert_eq!(get(ranks.0[0].comm), 1);
    ok(unsafe {
        HcclSetCommConfig(
            ranks.0[0].comm,
            HCCL_DETERMINISTIC,
            HcclConfigValue { value: 0 },
        )
    });
    assert_eq!(get(ranks.0[0].comm), 0);
    assert_eq!(get(ranks.0[1].comm), 1);
    err(
        unsafe {
            HcclSetCommConfig(
                ranks.0[0].comm,
                HCCL_DETERMINISTIC,
                HcclConfigValue { value: 5 },
            )
        },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclGetCommConfig(ranks.0[0].comm, HCCL_DETERMINISTIC, null_mut()) },
        HCCL_E_PTR,
    );
}
