//! Arguments refused in Rust, before any C call: this binary installs an HCCL table that counts
//! the calls each thread makes (then runs the emulator's function), and every refusal must leave
//! the count unchanged, while a well-formed call moves it. (Its own binary: the table is
//! installed once per process.)

mod common;

use hccl::{Blocks, Collectives, Comm, CountMatrix, ReduceOp, RootInfo, SendRecv};
use std::cell::Cell;
use std::sync::Once;

mod counting {
    use ascendcl::sys::{aclrtDrvMemHandle, aclrtStream};
    use hccl::sys::*;
    use std::sync::OnceLock;

    thread_local! {
        /// The HCCL calls this thread made.
        pub static CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn emulator() -> &'static HcclApi {
        static TABLE: OnceLock<HcclApi> = OnceLock::new();
        TABLE.get_or_init(hccl_emu::api)
    }

    macro_rules! counting {
        (unsafe extern "C" {
            $( pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
        }) => {
            $(
                #[allow(non_snake_case)]
                unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                    CALLS.with(|c| c.set(c.get() + 1));
                    // SAFETY: forwarded unchanged to the function of the same signature.
                    unsafe { (emulator().$name)($($arg),*) }
                }
            )*

            /// The emulator's table with every function counted.
            pub fn table() -> HcclApi {
                HcclApi { $($name,)* }
            }
        };
    }

    hccl::sys::hccl_function_list!(counting);
}

fn setup() {
    static INSTALL: Once = Once::new();
    let _ = common::rt();
    INSTALL.call_once(|| {
        let b = hccl::sys::Backend::in_process(
            hccl::sys::BackendKind::Custom,
            counting::table(),
            "the HCCL emulator, every call counted",
        );
        assert!(hccl::sys::install(b).is_ok(), "installed before any other");
    });
}

fn calls() -> usize {
    counting::CALLS.with(Cell::get)
}

/// `r` must be an argument error naming `what`, and no HCCL function may have been called.
#[track_caller]
fn refused<T: std::fmt::Debug>(what: &str, f: impl FnOnce() -> hccl::Result<T>) {
    let before = calls();
    let e = f().expect_err(what);
    assert!(e.is_argument(), "{what}: {e}");
    assert!(e.to_string().contains(what), "{what}: {e}");
    assert_eq!(calls(), before, "{what}: a C function was called: {e}");
}

/// Two ranks on devices 0 and 1; the tests use rank 0 alone (no collective is made).
fn two_ranks() -> Vec<Comm> {
    setup();
    Comm::init_all(&common::devices(2)).unwrap()
}

#[test]
fn the_count_moves_with_a_well_formed_call() {
    setup();
    let dev = common::rt().device(0).unwrap();
    let info = RootInfo::new(&dev).unwrap();
    let comm = Comm::init_root_info(&dev, 1, &info, 0, None).unwrap();
    let stream = dev.create_stream().unwrap();
    let send = dev.clone_htod(&[1i32, 2, 3]).unwrap();
    let mut recv = dev.alloc_zeros::<i32>(3).unwrap();
    let blocks = Blocks::packed(&[3]).unwrap();
    let before = calls();
    hccl::scope(&stream, |s| {
        s.all_gather_v(&comm, &send, &mut recv, &blocks)
    })
    .unwrap();
    assert_eq!(calls(), before + 1, "HcclAllGatherV");
    assert_eq!(recv.copy_to_vec().unwrap(), [1, 2, 3]);
}

#[test]
fn v_collectives_check_their_layouts() {
    let comms = two_ranks();
    let comm = &comms[0];
    let dev = comm.device().clone();
    let stream = dev.create_stream().unwrap();
    let send = dev.alloc_zeros::<f32>(10).unwrap();
    let mut recv = dev.alloc_zeros::<f32>(10).unwrap();
    let mut small = dev.alloc_zeros::<f32>(3).unwrap();
    let three = Blocks::packed(&[1, 1, 1]).unwrap();
    let packed = Blocks::packed(&[3, 4]).unwrap(); // rank 0's block holds 3
    let far = Blocks::new(&[3, 4], &[0, 7]).unwrap(); // reaches element 11
    let crossing = Blocks::new(&[3, 4], &[0, 2]).unwrap(); // blocks 0 and 1 share element 2
    let op = ReduceOp::Sum;
    // ReduceScatterV: one block per rank, within the send buffer, recv == own block.
    refused("one per rank (2)", || {
        hccl::scope(&stream, |s| {
            s.reduce_scatter_v(comm, &send, &three, &mut small, op)
        })
    });
    refused("reach element 11", || {
        hccl::scope(&stream, |s| {
            s.reduce_scatter_v(comm, &send, &far, &mut small, op)
        })
    });
    refused("this rank's send block", || {
        hccl::scope(&stream, |s| {
            s.reduce_scatter_v(comm, &send, &packed, &mut recv, op)
        })
    });
    let mut whole = dev.alloc_zeros::<f32>(10).unwrap();
    refused("overlap; HcclReduceScatterV does not run in place", || {
        hccl::scope(&stream, |s| {
            let c = s.claim(&mut whole);
            s.reduce_scatter_v(comm, c, &packed, c.slice(7..10)?, op)
        })
    });
    // AllGatherV: the receive blocks are written, so they must not overlap.
    let own = dev.alloc_zeros::<f32>(3).unwrap();
    refused("blocks 0 and 1 overlap", || {
        hccl::scope(&stream, |s| {
            s.all_gather_v(comm, &own, &mut recv, &crossing)
        })
    });
    refused("this rank's receive block", || {
        hccl::scope(&stream, |s| s.all_gather_v(comm, &send, &mut recv, &packed))
    });
    refused("but the receive buffer has 3", || {
        hccl::scope(&stream, |s| s.all_gather_v(comm, &own, &mut small, &packed))
    });
    // AlltoAllV: both layouts, the receive one disjoint, the buffers apart.
    refused("the send blocks are 3", || {
        hccl::scope(&stream, |s| {
            s.all_to_all_v(comm, &send, &three, &mut recv, &packed)
        })
    });
    refused("receive blocks 0 and 1 overlap", || {
        hccl::scope(&stream, |s| {
            s.all_to_all_v(comm, &send, &packed, &mut recv, &crossing)
        })
    });
    refused("the receive blocks reach element 7", || {
        hccl::scope(&stream, |s| {
            s.all_to_all_v(comm, &send, &packed, &mut small, &packed)
        })
    });
    refused("overlap; HcclAlltoAllV", || {
        hccl::scope(&stream, |s| {
            let c = s.claim(&mut whole);
            s.all_to_all_v(comm, c.slice(0..7)?, &packed, c.slice(3..10)?, &packed)
        })
    });
    // AlltoAllVC: a size × size matrix; the buffers hold this rank's row and column.
    let m3 = CountMatrix::new(3, &[0; 9]).unwrap();
    let m = CountMatrix::new(2, &[2, 2, 3, 1]).unwrap(); // rank 0 sends 4, receives 5
    refused("for 3 ranks", || {
        hccl::scope(&stream, |s| s.all_to_all_vc(comm, &send, &mut recv, &m3))
    });
    refused("the send buffer has 3 elements; rank 0 needs 4", || {
        hccl::scope(&stream, |s| s.all_to_all_vc(comm, &small, &mut recv, &m))
    });
    refused("the receive buffer has 3 elements; rank 0 needs 5", || {
        hccl::scope(&stream, |s| s.all_to_all_vc(comm, &send, &mut small, &m))
    });
    refused("overlap; HcclAlltoAllVC", || {
        hccl::scope(&stream, |s| {
            let c = s.claim(&mut whole);
            s.all_to_all_vc(comm, c.slice(0..4)?, c.slice(2..10)?, &m)
        })
    });
    // Buffers on another device, or on the host.
    let host = [0f32; 10];
    refused("must be device memory", || {
        hccl::scope(&stream, |s| {
            s.all_gather_v(comm, &host[..3], &mut recv, &packed)
        })
    });
}

#[test]
fn batch_items_are_checked() {
    let comms = two_ranks();
    let comm = &comms[0];
    let dev = comm.device().clone();
    let stream = dev.create_stream().unwrap();
    let send = dev.alloc_zeros::<i32>(4).unwrap();
    let mut recv = dev.alloc_zeros::<u16>(4).unwrap();
    let mut other = common::rt()
        .device(1)
        .unwrap()
        .alloc_zeros::<i32>(4)
        .unwrap();
    let mut whole = dev.alloc_zeros::<i32>(8).unwrap();
    refused("rank 0 cannot send to or receive from itself", || {
        hccl::scope(&stream, |s| {
            s.batch_send_recv(comm, [SendRecv::send(&send, 0)])
        })
    });
    refused("peer 2 is not a rank", || {
        hccl::scope(&stream, |s| {
            s.batch_send_recv(comm, [SendRecv::recv(&mut recv, 2)])
        })
    });
    refused("item 1's buffer is on device 1", || {
        hccl::scope(&stream, |s| {
            s.batch_send_recv(
                comm,
                [SendRecv::send(&send, 1), SendRecv::recv(&mut other, 1)],
            )
        })
    });
    let host = [0i32; 4];
    refused("item 0's buffer must be device memory", || {
        hccl::scope(&stream, |s| {
            s.batch_send_recv(comm, [SendRecv::send(&host[..], 1)])
        })
    });
    refused("items 0 and 1 overlap", || {
        hccl::scope(&stream, |s| {
            let c = s.claim(&mut whole);
            s.batch_send_recv(
                comm,
                [
                    SendRecv::recv(c.slice(0..5)?, 1),
                    SendRecv::send(c.slice(4..8)?, 1),
                ],
            )
        })
    });
    // Two sends of one region are fine (both read), and an empty batch calls nothing.
    let before = calls();
    hccl::scope(&stream, |s| s.batch_send_recv(comm, Vec::new())).unwrap();
    assert_eq!(calls(), before);
}

#[test]
fn layouts_refuse_inconsistent_input() {
    setup();
    let before = calls();
    let e = Blocks::new(&[1, 2], &[0]).unwrap_err();
    assert!(
        e.is_argument() && e.to_string().contains("2 counts and 1 displacements"),
        "{e}"
    );
    let e = Blocks::new(&[usize::MAX], &[1]).unwrap_err();
    assert!(e.to_string().contains("overflows"), "{e}");
    let e = Blocks::packed(&[usize::MAX, 1]).unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
    let e = CountMatrix::new(2, &[1, 2, 3]).unwrap_err();
    assert!(e.to_string().contains("3 counts for 2 ranks"), "{e}");
    let e = CountMatrix::new(2, &[usize::MAX, 1, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("rank 0 overflow"), "{e}");
    assert_eq!(calls(), before);
    // What a layout reports.
    let b = Blocks::new(&[2, 0, 3], &[5, 100, 0]).unwrap();
    assert_eq!(
        (b.ranks(), b.extent(), b.total(), b.overlap()),
        (3, 7, 5, None)
    );
    assert_eq!(
        Blocks::new(&[4, 2], &[0, 3]).unwrap().overlap(),
        Some((0, 1))
    );
    let m = CountMatrix::from_fn(3, |i, j| i * 3 + j).unwrap();
    assert_eq!(
        (m.get(1, 2), m.get(3, 0), m.sent_by(1), m.received_by(2)),
        (Some(5), None, 12, 15)
    );
}

#[test]
fn groups_refuse_what_they_cannot_capture() {
    let comms = two_ranks();
    let comm = &comms[0];
    let dev = comm.device().clone();
    let stream = dev.create_stream().unwrap();
    let mut buf = dev.alloc_zeros::<f32>(4).unwrap();
    let send = dev.alloc_zeros::<f32>(4).unwrap();
    let info = RootInfo::new(&dev).unwrap();
    let spare = Comm::init_root_info(&dev, 1, &info, 0, None).unwrap();
    let info2 = RootInfo::new(&dev).unwrap();
    let outcome = hccl::group(|g| {
        let before = calls();
        // An ordinary scope's collective would be captured and outlive its scope.
        let e = hccl::scope(&stream, |s| {
            s.all_reduce_in_place(comm, &mut buf, ReduceOp::Sum)
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("this thread has an hccl::group open"),
            "{e}"
        );
        let e = hccl::group(|_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("groups do not nest"), "{e}");
        let e = Comm::init_root_info(&dev, 1, &info2, 0, None).unwrap_err();
        assert!(e.to_string().contains("hccl::group open"), "{e}");
        let e = g
            .on(&stream)
            .batch_send_recv(comm, [SendRecv::send(&send, 1)])
            .unwrap_err();
        assert!(e.to_string().contains("not allowed inside a group"), "{e}");
        assert_eq!(calls(), before, "nothing was called");
        // The communicator comes back from a refused destroy.
        let e = spare.destroy().unwrap_err();
        assert!(e.error().to_string().contains("after it ends"), "{e}");
        Ok(e.into_comm())
    });
    // Outside the group, all of it works again.
    let spare = outcome.unwrap();
    let before = calls();
    hccl::scope(&stream, |s| {
        s.all_reduce_in_place(&spare, &mut buf, ReduceOp::Sum)
    })
    .unwrap();
    spare.destroy().unwrap();
    assert_eq!(calls(), before + 2);
}
