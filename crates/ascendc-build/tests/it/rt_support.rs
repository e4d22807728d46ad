//! The launch support that ascendc-build writes next to every generated module
//! (`rt/launch.rs`), tested on the emulator with hand-written kernel descriptors whose library is
//! a kernel binary written directly against the binary ABI (tests/cpp/abi_kernels.cpp, compiled
//! here with `$CXX`, else `c++`), without the host layer.

#[allow(dead_code)]
mod rt {
    include!("../../rt/launch.rs");
}

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
use rt::{Elem, Imp, Kernel, KernelError, Library, Param};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The bytes of the test binary, compiled once.
fn binary() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let so = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ascendc_build_abi_kernels.so");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
        let out = Command::new(&cxx)
            .args([
                "-std=c++17",
                "-shared",
                "-fPIC",
                "-fvisibility=hidden",
                "-O1",
                "-I",
            ])
            .arg(manifest.join("include"))
            .arg(manifest.join("tests/cpp/abi_kernels.cpp"))
            .arg("-o")
            .arg(&so)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C++ compiler {cxx}: {e}"));
        assert!(
            out.status.success(),
            "abi_kernels.cpp does not compile:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&so).unwrap()
    })
}

fn sizes() -> &'static [u32] {
    &[8, 4]
}

const PARAMS: &[(&str, Param)] = &[
    ("p", Param::Out(Some(Elem::of::<u32>("u32")))),
    ("v", Param::Scalar(Elem::of::<u32>("u32"))),
];

static LIBRARY: Library = Library::new("abi", binary, &[&FILL, &BROKEN]);

static FILL: Kernel = Kernel::new(
    "fill",
    "test.cpp:1",
    PARAMS,
    Imp::Host {
        library: &LIBRARY,
        sizes,
    },
);

static BROKEN: Kernel = Kernel::new(
    "broken",
    "test.cpp:2",
    PARAMS,
    Imp::Host {
        library: &LIBRARY,
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
    assert_eq!(
        err.code(),
        Some(ascendcl::AclError::VECTOR_CORE_EXCEPTION),
        "{err:?}"
    );
    assert_eq!(err.api(), Some("aclrtSynchronizeStream"), "{err:?}");
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
    assert_eq!(e.to_string(), "cannot launch k with 0 blocks");
    // The refusal travels whole: the typed error comes back out of the runtime's error type.
    assert!(matches!(
        e.downcast_ref::<KernelError>(),
        Some(KernelError::ZeroBlocks { kernel: "k" })
    ));
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
