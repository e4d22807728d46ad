//! A kernel launch whose synchronisation fails must keep its buffer until the stream is idle.
//!
//! The scenario: the stream is held by a host function, a kernel is queued behind it, and the
//! wait for the kernel fails (an injected `aclrtSynchronizeStream` fault). If the launch gave the
//! buffer back at that point, safe code could free it and allocate again at the same address,
//! and the kernel — still queued — would later write into that new, live buffer.
//!
//! Its own test binary: the injected fault counts calls process-wide.

use ascendc_kernels::{KernelError, Mode};
use ascendcl::{BackendChoice, DeviceBuffer, MallocPolicy, Runtime, StreamStatus};
use ascendcl_emu::{FaultSpec, clear_faults, inject_fault};
use std::sync::mpsc;
use std::time::Duration;

/// Elements per buffer; the kernel writes element 0.
const LEN: usize = 1024;
/// What the kernel writes; the reallocated buffers are zeroed.
const VALUE: i32 = 0x5a5a_5a5a;
/// How many allocations are tried to land on the freed address.
const ATTEMPTS: usize = 8192;
/// How long the gate host function holds the stream when nobody opens it. Only the fixed
/// behaviour waits this long (its synchronisation waits for the stream); no assertion uses it.
const GATE: Duration = Duration::from_millis(500);

#[test]
fn a_failed_synchronisation_keeps_the_buffer_until_the_kernel_ran() {
    if ascendc_kernels::mode() != Mode::Host {
        eprintln!("skipped: kernels were built in NPU mode, which the emulator cannot run");
        return;
    }
    let rt = Runtime::with_backend(BackendChoice::Emulator).expect("the emulator backend");
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();

    // Hold the stream until the test opens the gate (or GATE passes).
    let (open, gate) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = gate.recv_timeout(GATE);
        })
        .unwrap();

    let mut buf = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::NormalOnly).unwrap();
    let old = buf.as_ptr() as usize;
    inject_fault("aclrtSynchronizeStream", FaultSpec::Nth(1));
    let e = ascendc_kernels::write_value(&stream, &mut buf, VALUE, 1).unwrap_err();
    clear_faults();
    assert!(
        matches!(&e, KernelError::Runtime { source, .. } if source.api() == Some("aclrtSynchronizeStream")),
        "{e:?}"
    );

    // The invariant itself: when the launch returns, the stream no longer runs the kernel.
    let status = stream.query().unwrap();

    // The caller gives up on the buffer and allocates until the address comes back. The
    // emulator keeps freed ranges mapped for a while (to report use after free) and reuses them
    // only once enough newer ones push them out, so buffers are allocated and freed until then.
    drop(buf);
    let mut reused = None;
    for _ in 0..ATTEMPTS {
        let b = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::NormalOnly).unwrap();
        if b.as_ptr() as usize == old {
            reused = Some(b);
            break;
        }
    }
    // Let whatever is still queued run, then look at the buffer that took the old address.
    let _ = open.send(());
    stream.synchronize().unwrap();
    match reused {
        Some(b) => assert!(
            b.to_vec().unwrap().iter().all(|&x| x == 0),
            "the kernel wrote into a buffer allocated after write_value returned"
        ),
        None => eprintln!(
            "note: no allocation reused the freed address in {ATTEMPTS} attempts; only the \
             stream's state is checked"
        ),
    }
    assert_eq!(
        status,
        StreamStatus::Complete,
        "write_value returned while its kernel was still queued"
    );
    assert!(ascendcl::take_drop_errors().is_empty());
}
