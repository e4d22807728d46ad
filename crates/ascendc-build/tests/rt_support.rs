//! The launch support that ascendc-build writes next to every generated module
//! (`rt/launch.rs`), tested on the emulator with a hand-written kernel descriptor whose host
//! entry and block runner are Rust functions (no C++ involved).

#[allow(dead_code)]
mod rt {
    include!("../rt/launch.rs");
}

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
use rt::{Elem, Imp, Kernel, KernelError, Param};
use std::cell::Cell;
use std::ffi::{CStr, c_char, c_void};

thread_local! {
    static BLOCK: Cell<u32> = const { Cell::new(0) };
}

/// `fill(__gm__ uint32_t* p, uint32_t v)`: block b stores v + b at p[b].
unsafe extern "C" fn fill_entry(args: *const *const c_void) {
    // SAFETY: the launch passes two arguments: the bytes of a device address (host memory on the
    // emulator) holding at least `blocks` u32s, and the bytes of a u32.
    unsafe {
        let p = (*args).cast::<usize>().read_unaligned() as *mut u32;
        let v = (*args.add(1)).cast::<u32>().read_unaligned();
        let b = BLOCK.get();
        p.add(b as usize).write(v + b);
    }
}

/// Runs every block in turn, like the C++ runner without its checks.
unsafe extern "C" fn serial_run(l: *const rt::HostLaunch, _msg: *mut c_char, _cap: usize) -> i32 {
    // SAFETY: the launch is live for the call.
    let l = unsafe { &*l };
    assert_eq!(l.region_count, 1);
    assert_eq!(l.check_regions, 1);
    // SAFETY: one region, as asserted.
    let region = unsafe { *l.regions };
    assert_eq!(region.writable, 1);
    for b in 0..l.block_dim {
        BLOCK.set(b);
        // SAFETY: the entry's contract is the launch's.
        unsafe { (l.entry)(l.args) };
    }
    0
}

/// Fails with a message naming the kernel.
unsafe extern "C" fn failing_run(l: *const rt::HostLaunch, msg: *mut c_char, cap: usize) -> i32 {
    // SAFETY: the launch and its NUL-terminated name are live for the call.
    let name = unsafe { CStr::from_ptr((*l).kernel) }
        .to_string_lossy()
        .into_owned();
    let text = format!("block 1 of 2: {name} went wrong\0");
    assert!(text.len() <= cap);
    // SAFETY: `msg` holds `cap` bytes.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), msg.cast::<u8>(), text.len()) };
    1
}

fn sizes() -> &'static [u32] {
    &[8, 4]
}

const PARAMS: &[(&str, Param)] = &[
    ("p", Param::Out(Some(Elem::of::<u32>("u32")))),
    ("v", Param::Scalar(Elem::of::<u32>("u32"))),
];

static FILL: Kernel = Kernel::new(
    "fill",
    "test.cpp:1",
    PARAMS,
    Imp::Host {
        call: fill_entry,
        run: serial_run,
        sizes,
    },
);

static BROKEN: Kernel = Kernel::new(
    "broken",
    "test.cpp:2",
    PARAMS,
    Imp::Host {
        call: fill_entry,
        run: failing_run,
        sizes,
    },
);

#[test]
fn launch_runs_every_block_on_the_stream_with_its_arguments() {
    let rt = Runtime::new().unwrap();
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let mut buf = DeviceBuffer::<u32>::zeroed(&dev, 8, MallocPolicy::HugeFirst).unwrap();
    let mut view = buf.slice_mut(2..6).unwrap();
    stream
        .scope(|s| {
            FILL.launch(s, 4).output(&mut view).scalar(100u32).run()?;
            Ok(())
        })
        .unwrap();
    let mut back = [0u32; 8];
    buf.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [0, 0, 100, 101, 102, 103, 0, 0]);
    assert_eq!(FILL.mode(), rt::Mode::Host);
    assert_eq!(FILL.name(), "fill");
    assert_eq!(FILL.location(), "test.cpp:1");
}

#[test]
fn kernel_failure_is_reported_when_the_scope_ends() {
    let rt = Runtime::new().unwrap();
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let mut buf = DeviceBuffer::<u32>::zeroed(&dev, 2, MallocPolicy::HugeFirst).unwrap();
    let err = stream
        .scope(|s| {
            BROKEN.launch(s, 2).output(&mut buf).scalar(1u32).run()?;
            Ok(())
        })
        .unwrap_err();
    assert!(
        matches!(err, ascendcl::Error::HostFnPanicked { .. }),
        "{err:?}"
    );
    assert_eq!(
        rt::kernel_failure(&err),
        Some("broken: block 1 of 2: broken went wrong")
    );
    // The stream works on.
    stream
        .scope(|s| {
            FILL.launch(s, 2).output(&mut buf).scalar(5u32).run()?;
            Ok(())
        })
        .unwrap();
    let mut back = [0u32; 2];
    buf.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [5, 6]);
    assert_eq!(
        rt::kernel_failure(&ascendcl::Error::HostFnPanicked {
            message: "something else".into()
        }),
        None
    );
}

#[test]
fn arguments_are_checked_before_anything_is_enqueued() {
    let rt = Runtime::new().unwrap();
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let mut buf = DeviceBuffer::<u32>::zeroed(&dev, 2, MallocPolicy::HugeFirst).unwrap();
    let mut wrong = DeviceBuffer::<i32>::zeroed(&dev, 2, MallocPolicy::HugeFirst).unwrap();
    let mut pinned = HostBuffer::<u32>::zeroed(&dev, 2).unwrap();
    stream
        .scope(|s| {
            let b = s.claim(&mut buf);
            let e = FILL.launch(s, 1).output(&mut wrong).scalar(1u32).run();
            assert!(
                matches!(
                    e,
                    Err(KernelError::ElementType {
                        param: "p",
                        expected: "u32",
                        ..
                    })
                ),
                "{e:?}"
            );
            let e = FILL.launch(s, 1).output(&mut pinned).scalar(1u32).run();
            assert!(
                matches!(e, Err(KernelError::NotDeviceMemory { param: "p", .. })),
                "{e:?}"
            );
            let e = FILL.launch(s, 1).output(b).scalar(1i32).run();
            assert!(
                matches!(e, Err(KernelError::ElementType { param: "v", .. })),
                "{e:?}"
            );
            let e = FILL.launch(s, 1).output(b).run();
            assert!(
                matches!(
                    e,
                    Err(KernelError::ArgumentCount {
                        expected: 2,
                        given: 1,
                        ..
                    })
                ),
                "{e:?}"
            );
            let e = FILL.launch(s, 1).output(b).scalar(1u32).scalar(2u32).run();
            assert!(
                matches!(
                    e,
                    Err(KernelError::ArgumentCount {
                        expected: 2,
                        given: 3,
                        ..
                    })
                ),
                "{e:?}"
            );
            let e = FILL.launch(s, 1).input(b).scalar(1u32).run();
            assert!(
                matches!(e, Err(KernelError::ArgumentKind { index: 0, .. })),
                "{e:?}"
            );
            // SAFETY: refused before use: `v` is a scalar parameter, not a value.
            let e = unsafe { FILL.launch(s, 1).output(b).value(&[0; 4]) }.run();
            assert!(
                matches!(e, Err(KernelError::ArgumentKind { index: 1, .. })),
                "{e:?}"
            );
            let e = FILL.launch(s, 0).output(b).scalar(1u32).run();
            assert!(
                matches!(e, Err(KernelError::ZeroBlocks { kernel: "fill" })),
                "{e:?}"
            );
            let e = FILL
                .launch(s, rt::MAX_BLOCKS + 1)
                .output(b)
                .scalar(1u32)
                .run();
            assert!(matches!(e, Err(KernelError::TooManyBlocks { .. })), "{e:?}");
            Ok(())
        })
        .unwrap();
    let mut back = [9u32; 2];
    buf.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [0, 0], "a refused launch ran");
}

#[test]
fn errors_convert_for_the_question_mark_in_a_scope() {
    let e: ascendcl::Error = KernelError::ZeroBlocks { kernel: "k" }.into();
    assert_eq!(
        e.to_string(),
        "kernel launch: invalid argument: cannot launch k with 0 blocks"
    );
    let inner = ascendcl::Error::HostFnDiscarded;
    let e: ascendcl::Error = KernelError::Runtime {
        kernel: "k",
        source: inner,
    }
    .into();
    assert!(matches!(e, ascendcl::Error::HostFnDiscarded));
}

#[test]
fn modes_run_on_their_backends() {
    use ascendcl::BackendKind;
    assert!(rt::Mode::Host.runs_on(BackendKind::Emulator));
    assert!(!rt::Mode::Host.runs_on(BackendKind::Cann));
    assert!(rt::Mode::Npu.runs_on(BackendKind::Cann));
    assert!(rt::Mode::Npu.runs_on(BackendKind::Linked));
    assert!(!rt::Mode::Npu.runs_on(BackendKind::Emulator));
    let e = KernelError::WrongBackend {
        kernel: "k",
        mode: rt::Mode::Npu,
        backend: Some(BackendKind::Emulator),
    };
    assert!(e.to_string().contains("ASCENDC_BUILD_MODE=host"), "{e}");
}
