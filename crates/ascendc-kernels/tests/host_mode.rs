//! The kernels in host mode, launched on the emulator's streams.
//!
//! Skipped (with a note) when the build chose NPU mode: those kernels need CANN and a device.

use ascendc_kernels::{KernelError, Mode};
use ascendcl::{BackendChoice, BackendKind, DeviceBuffer, MallocPolicy, Runtime};

fn runtime() -> Option<Runtime> {
    if ascendc_kernels::mode() != Mode::Host {
        eprintln!("skipped: kernels were built in NPU mode");
        return None;
    }
    Some(Runtime::with_backend(BackendChoice::Emulator).expect("the emulator backend"))
}

#[test]
fn the_build_reports_host_mode() {
    let info = ascendc_kernels::build_info();
    assert_eq!(info.mode, ascendc_kernels::mode());
    if info.mode == Mode::Host {
        assert_eq!(info.soc_version, None);
        assert_eq!(info.ascendc_cmake_dir, None);
        assert_eq!(info.cann_root, None);
    } else {
        assert!(info.soc_version.is_some() && info.ascendc_cmake_dir.is_some());
    }
    // Host kernels are compiled by the C++ compiler; only NPU kernels need cmake. Only host
    // mode makes a kernel binary for the emulator.
    assert_eq!(info.cmake.is_some(), info.mode == Mode::Npu);
    assert_eq!(info.binary.is_some(), info.mode == Mode::Host);
}

#[test]
fn the_host_library_holds_the_kernels_and_no_npu_launchers() {
    if ascendc_kernels::mode() != Mode::Host {
        eprintln!("skipped: kernels were built in NPU mode");
        return;
    }
    // The kernel binary the emulator loads: the kernels, their table, no NPU launcher.
    let library = ascendc_kernels::build_info()
        .binary
        .expect("host mode builds a kernel binary");
    let bytes = std::fs::read(library).unwrap_or_else(|e| panic!("{library}: {e}"));
    let has = |symbol: &str| bytes.windows(symbol.len()).any(|w| w == symbol.as_bytes());
    for symbol in ["DeviceWrite", "DeviceRead", "ascendc_host_binary_v1"] {
        assert!(has(symbol), "{symbol} missing from {library}");
    }
    assert!(
        !has("__DeviceRead__npu"),
        "the host library contains the NPU launchers"
    );
}

/// The kernels' `printf` lines go through the test harness's capture: a test's output shows
/// them only when asked (`--nocapture`), and they are whole lines in launch order.
#[test]
fn kernel_output_is_captured_unless_asked() {
    if ascendc_kernels::mode() != Mode::Host
        || std::env::var_os("ASCENDC_KERNELS_INNER_TEST").is_some()
    {
        return;
    }
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "every_block_writes_its_own_element",
                "--test-threads=1",
            ])
            .args(extra)
            .env("ASCENDC_KERNELS_INNER_TEST", "1")
            .env_remove("ASCENDCL_EMU_FAULTS")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{stdout}");
        stdout
    };
    let quiet = run(&[]);
    assert!(quiet.contains("1 passed"), "{quiet}");
    assert!(!quiet.contains("data:"), "kernel output leaked:\n{quiet}");
    let shown = run(&["--nocapture"]);
    // The harness prints `test NAME ... ` before the test's first line of output.
    let lines: Vec<&str> = shown
        .lines()
        .filter_map(|l| {
            let at = l
                .find("Source data")
                .or_else(|| l.find("Destination data"))?;
            Some(&l[at..])
        })
        .collect();
    let mut expected = vec!["Source data: 42"; 5];
    expected.extend(["Destination data: 42"; 5]);
    expected.extend(["Destination data: -1"; 3]);
    assert_eq!(lines, expected, "{shown}");
}

#[test]
fn modes_run_on_their_backends() {
    assert!(Mode::Host.runs_on(BackendKind::Emulator));
    assert!(!Mode::Host.runs_on(BackendKind::Cann));
    assert!(Mode::Npu.runs_on(BackendKind::Cann));
    assert!(Mode::Npu.runs_on(BackendKind::Linked));
    assert!(!Mode::Npu.runs_on(BackendKind::Emulator));
}

#[test]
fn every_block_writes_its_own_element() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut buf = DeviceBuffer::from_slice(&device, &[-1i32; 8], MallocPolicy::HugeFirst).unwrap();
    ascendc_kernels::write_value(&stream, &mut buf, 42, 5).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [42, 42, 42, 42, 42, -1, -1, -1]);
    // Reading does not change anything.
    ascendc_kernels::read_value(&stream, &buf, 8).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [42, 42, 42, 42, 42, -1, -1, -1]);
}

#[test]
fn a_host_to_device_copy_is_what_the_kernel_writes_over() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut buf =
        DeviceBuffer::from_slice(&device, &[123i32, 5], MallocPolicy::NormalOnly).unwrap();
    ascendc_kernels::read_value(&stream, &buf, 2).unwrap();
    ascendc_kernels::write_value(&stream, &mut buf, -9, 1).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [-9, 5]);
}

#[test]
fn launches_run_in_stream_order() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut buf = DeviceBuffer::from_slice(&device, &[0i32; 4], MallocPolicy::HugeFirst).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let first = tx.clone();
    // A slow host function first: the kernels queued behind it must wait for it.
    stream
        .launch_host_fn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            first.send("host fn").unwrap();
        })
        .unwrap();
    let ptr = buf.as_mut_ptr();
    for value in 1..=3 {
        // SAFETY: `buf` holds 4 elements, outlives the synchronisation below and is not touched
        // by anything else until then.
        unsafe { ascendc_kernels::launch_device_write(&stream, ptr, value, 4) }.unwrap();
    }
    stream
        .launch_host_fn(move || tx.send("after kernels").unwrap())
        .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        rx.try_iter().collect::<Vec<_>>(),
        ["host fn", "after kernels"]
    );
    // The last write, queued last, wins.
    assert_eq!(buf.to_vec().unwrap(), [3, 3, 3, 3]);
}

#[test]
fn bad_launches_are_rejected_before_reaching_the_stream() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut buf = DeviceBuffer::from_slice(&device, &[7i32; 2], MallocPolicy::HugeFirst).unwrap();
    let e = ascendc_kernels::write_value(&stream, &mut buf, 1, 0).unwrap_err();
    assert!(
        matches!(
            e,
            KernelError::ZeroBlockDim {
                kernel: "DeviceWrite"
            }
        ),
        "{e:?}"
    );
    let e = ascendc_kernels::read_value(&stream, &buf, 3).unwrap_err();
    assert!(
        matches!(
            e,
            KernelError::BufferTooSmall {
                kernel: "DeviceRead",
                len: 2,
                block_dim: 3
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "cannot launch DeviceRead with blockDim 3 on a buffer of 2 element(s): block i uses element i"
    );
    // SAFETY: rejected before anything is enqueued.
    let e = unsafe { ascendc_kernels::launch_device_read(&stream, buf.as_ptr(), 0) }.unwrap_err();
    assert!(matches!(e, KernelError::ZeroBlockDim { .. }));
    assert_eq!(buf.to_vec().unwrap(), [7, 7]);
}

#[test]
fn a_buffer_of_another_device_is_rejected() {
    let Some(rt) = runtime() else { return };
    if rt.device_count().unwrap() < 2 {
        eprintln!("skipped: the emulator has one device");
        return;
    }
    let d0 = rt.device(0).unwrap();
    let d1 = rt.device(1).unwrap();
    let stream = d0.create_stream().unwrap();
    let buf = DeviceBuffer::from_slice(&d1, &[1i32], MallocPolicy::HugeFirst).unwrap();
    let e = ascendc_kernels::read_value(&stream, &buf, 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot launch DeviceRead on a stream of device 0 with a buffer of device 1"
    );
}

#[test]
fn wrong_backend_errors_explain_the_way_out() {
    let e = KernelError::WrongBackend {
        kernel: "DeviceRead",
        mode: Mode::Host,
        backend: Some(BackendKind::Cann),
    };
    let text = e.to_string();
    assert!(text.contains("built in host"), "{text}");
    assert!(text.contains("CANN backend"), "{text}");
    assert!(text.contains("ASCENDCL_BACKEND=emulator"), "{text}");
}

#[test]
fn launches_in_a_scope_share_a_claimed_buffer_with_copies() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut buf = DeviceBuffer::from_slice(&device, &[0i32; 4], MallocPolicy::HugeFirst).unwrap();
    let mut host = vec![0i32; 4];
    stream
        .scope(|s| {
            let b = s.claim(&mut buf);
            ascendc_kernels::launch_write(s, b, 3, 2)?;
            ascendc_kernels::launch_read(s, b.slice(1..)?, 1)?;
            s.copy(&mut host, b)?;
            ascendc_kernels::launch_write(s, b.slice(2..)?, 8, 2)?;
            Ok(())
        })
        .unwrap();
    // The copy ran between the two launches, in stream order.
    assert_eq!(host, [3, 3, 0, 0]);
    assert_eq!(buf.to_vec().unwrap(), [3, 3, 8, 8]);
}

#[test]
fn host_memory_is_refused_and_refusals_convert_for_scopes() {
    let Some(rt) = runtime() else { return };
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let mut pinned = ascendcl::HostBuffer::<i32>::zeroed(&device, 2).unwrap();
    let mut pageable = vec![0i32; 2];
    let other = vec![0i32; 2];
    let e = stream
        .scope(|s| {
            let e = ascendc_kernels::launch_write(s, &mut pinned, 1, 1).unwrap_err();
            assert!(
                matches!(
                    e,
                    KernelError::NotDeviceMemory {
                        kernel: "DeviceWrite",
                        ..
                    }
                ),
                "{e:?}"
            );
            assert_eq!(
                e.to_string(),
                "cannot launch DeviceWrite on pinned host memory: kernels use device memory"
            );
            let e = ascendc_kernels::launch_read(s, &other, 1).unwrap_err();
            assert!(e.to_string().contains("pageable host memory"), "{e}");
            // Inside a scope closure, `?` carries the refusal whole in the crate's error.
            ascendc_kernels::launch_write(s, &mut pageable, 1, 1)?;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(e, ascendcl::Error::Layered(_)), "{e:?}");
    assert!(
        matches!(
            e.downcast_ref::<KernelError>(),
            Some(KernelError::NotDeviceMemory {
                kernel: "DeviceWrite",
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(&pinned[..], &[0, 0]);
    assert_eq!(pageable, [0, 0]);
}
