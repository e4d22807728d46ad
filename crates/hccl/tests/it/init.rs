//! Initialisation forms, queries, configuration, and the errors raised before any call.

use crate::common::{devices, rt};
use hccl::{Collectives, Comm, CommConfig, ReduceOp, ResultCode, RootInfo};
use std::time::Duration;

#[test]
fn root_info_across_threads_with_a_config() {
    let devs = devices(2);
    let info = RootInfo::new(&devs[0]).unwrap();
    // The bytes survive a round trip, as when shipped to another process.
    let shipped = RootInfo::from_bytes(info.as_bytes()).unwrap();
    assert_eq!(shipped.as_bytes(), info.as_bytes());
    let names = std::thread::scope(|t| {
        let hs: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(rank, dev)| {
                let info = &shipped;
                t.spawn(move || {
                    let config = CommConfig::builder()
                        .name("trainer")
                        .buffer_size_mb(8)
                        .deterministic(true)
                        .exec_timeout(Duration::from_secs(30))
                        .build()
                        .unwrap();
                    let comm =
                        Comm::init_root_info(dev, 2, info, rank as u32, Some(&config)).unwrap();
                    assert_eq!((comm.rank(), comm.size()), (rank as u32, 2));
                    assert_eq!(comm.async_error().unwrap(), None);
                    let name = comm.name().unwrap();
                    comm.destroy().unwrap();
                    name
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(names, ["trainer", "trainer"]);
}

#[test]
fn init_all_ranks_follow_the_device_order() {
    let devs = devices(3);
    let comms = Comm::init_all(&devs).unwrap();
    for (i, c) in comms.iter().enumerate() {
        assert_eq!((c.rank(), c.size()), (i as u32, 3));
        assert_eq!(c.device().id(), i as i32);
    }
}

#[test]
fn bad_arguments_are_typed_before_the_call() {
    let devs = devices(2);
    let e = Comm::init_all(&[]).unwrap_err();
    assert!(e.is_argument(), "{e}");
    let e = Comm::init_all(&[devs[0].clone(), devs[0].clone()]).unwrap_err();
    assert!(e.is_argument() && e.to_string().contains("twice"), "{e}");
    let info = RootInfo::new(&devs[0]).unwrap();
    let e = Comm::init_root_info(&devs[0], 2, &info, 2, None).unwrap_err();
    assert!(e.is_argument() && e.to_string().contains("rank 2"), "{e}");
    assert!(
        Comm::init_root_info(&devs[0], 0, &info, 0, None)
            .unwrap_err()
            .is_argument()
    );
    let e = RootInfo::from_bytes(&info.as_bytes()[1..]).unwrap_err();
    assert!(e.is_argument() && e.to_string().contains("4108"), "{e}");
    for bad in [
        CommConfig::builder().name(""),
        CommConfig::builder().name("x".repeat(128)),
        CommConfig::builder().name("a\0b"),
        CommConfig::builder().buffer_size_mb(0),
        CommConfig::builder().exec_timeout(Duration::from_millis(10)),
    ] {
        assert!(bad.build().unwrap_err().is_argument());
    }
    assert!(CommConfig::builder().name("x".repeat(127)).build().is_ok());
}

#[test]
fn collective_arguments_are_checked_on_a_single_rank() {
    let devs = devices(2);
    let info = RootInfo::new(&devs[0]).unwrap();
    let comm = Comm::init_root_info(&devs[0], 1, &info, 0, None).unwrap();
    let stream = devs[0].create_stream().unwrap();
    let other_stream = devs[1].create_stream().unwrap();
    let send = devs[0].clone_htod(&[1i32, 2, 3]).unwrap();
    let mut short = devs[0].alloc_zeros::<i32>(2).unwrap();
    let mut ok = devs[0].alloc_zeros::<i32>(3).unwrap();
    let mut elsewhere = devs[1].alloc_zeros::<i32>(3).unwrap();
    let host = vec![0i32; 3];
    let arg = |r: hccl::Result<()>, what: &str| {
        let e = r.unwrap_err();
        assert!(e.is_argument(), "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
    };
    arg(
        hccl::scope(&stream, |s| {
            s.all_reduce(&comm, &send, &mut short, ReduceOp::Sum)
        }),
        "must be equal",
    );
    arg(
        hccl::scope(&stream, |s| s.broadcast(&comm, &mut ok, 1)),
        "root 1",
    );
    arg(hccl::scope(&stream, |s| s.send(&comm, &send, 0)), "itself");
    arg(hccl::scope(&stream, |s| s.send(&comm, &send, 5)), "peer 5");
    arg(
        hccl::scope(&stream, |s| s.all_gather(&comm, &send, &mut short)),
        "times the size",
    );
    arg(
        hccl::scope(&stream, |s| {
            s.all_reduce(&comm, &host, &mut ok, ReduceOp::Sum)
        }),
        "device memory",
    );
    arg(
        hccl::scope(&stream, |s| {
            s.all_reduce(&comm, &send, &mut elsewhere, ReduceOp::Sum)
        }),
        "on device 1",
    );
    arg(
        hccl::scope(&other_stream, |s| s.barrier(&comm)),
        "the stream is on device 1",
    );
    arg(
        hccl::scope(&stream, |s| {
            s.scatter::<&ascendcl::DeviceBuffer<i32>, _>(&comm, None, &mut ok, 0)
        }),
        "root needs",
    );
    // A well-formed call on one rank works, and the buffers were not touched by the refusals.
    hccl::scope(&stream, |s| {
        s.all_reduce(&comm, &send, &mut ok, ReduceOp::Sum)
    })
    .unwrap();
    assert_eq!(ok.copy_to_vec().unwrap(), [1, 2, 3]);
}

#[test]
fn library_errors_keep_the_hccl_code_and_text() {
    let devs = devices(1);
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "not json").unwrap();
    let e = Comm::init_cluster_info(&devs[0], bad.path(), 0, None).unwrap_err();
    assert_eq!(e.code(), Some(ResultCode::Internal), "{e}");
    assert!(
        e.to_string()
            .starts_with("HcclCommInitClusterInfo failed: HCCL_E_INTERNAL (4)"),
        "{e}"
    );
    assert!(hccl::error_string(ResultCode::Para).is_some());
    assert_eq!(
        ResultCode::from_raw(hccl::sys::HcclResult(4000)),
        Some(ResultCode::Other(4000))
    );
    assert_eq!(ResultCode::Timeout.name(), Some("HCCL_E_TIMEOUT"));
    let _ = rt();
}

#[test]
fn the_backends_are_paired() {
    let _ = rt();
    let acl = ascendcl::sys::active().unwrap().kind;
    let b = hccl::install().unwrap();
    // The emulator's HCCL with the runtime emulator, CANN's libhccl.so with CANN.
    let emulated = |k| k == hccl::sys::BackendKind::Emulator;
    assert_eq!(
        emulated(b.kind),
        emulated(acl),
        "a {acl} runtime with the {} HCCL",
        b.kind
    );
}

#[test]
fn determinism_for_the_process_and_per_communicator() {
    use hccl::Determinism;
    let devs = devices(1);
    let info = RootInfo::new(&devs[0]).unwrap();
    let comm = Comm::init_root_info(&devs[0], 1, &info, 0, None).unwrap();
    // The process-wide value is only read and written here in this binary.
    let before = hccl::determinism().unwrap();
    hccl::set_determinism(Determinism::On).unwrap();
    assert_eq!(hccl::determinism().unwrap(), Determinism::On);
    hccl::set_determinism(before).unwrap();
    assert_eq!(hccl::determinism().unwrap(), before);
    comm.set_determinism(Determinism::Strict).unwrap();
    assert_eq!(comm.determinism().unwrap(), Determinism::Strict);
    comm.set_determinism(Determinism::Off).unwrap();
    assert_eq!(comm.determinism().unwrap(), Determinism::Off);
    // This header's configuration has 12 fields the library may read.
    assert_eq!(
        CommConfig::capability().unwrap(),
        hccl::sys::HCCL_COMM_CONFIG_RESERVED
    );
}
