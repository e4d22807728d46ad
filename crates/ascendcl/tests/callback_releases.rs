//! Releases requested on a runtime callback thread run elsewhere. The runtime forbids freeing
//! memory or destroying streams and events inside a host function, but handles are `Send +
//! 'static`, so a host function may capture one and drop it there. This binary installs the
//! emulator with its release functions wrapped to record the calling thread, and checks that
//! none of them ran on the callback thread. (Its own binary: the backend is chosen once per
//! process.)

use ascendcl::sys::{self, AclApi, aclError, aclrtEvent, aclrtStream};
use ascendcl::{HostBuffer, Runtime};
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static EMULATOR: OnceLock<AclApi> = OnceLock::new();
/// (function, name of the calling thread)
static CALLS: Mutex<Vec<(&'static str, String)>> = Mutex::new(Vec::new());

fn record(api: &'static str) {
    let name = std::thread::current().name().unwrap_or("").to_string();
    CALLS.lock().unwrap().push((api, name));
}

fn emulator() -> &'static AclApi {
    EMULATOR.get().expect("installed")
}

unsafe extern "C" fn free(p: *mut c_void) -> aclError {
    record("aclrtFree");
    // SAFETY: forwarded unchanged to the emulator's implementation.
    unsafe { (emulator().aclrtFree)(p) }
}

unsafe extern "C" fn free_host(p: *mut c_void) -> aclError {
    record("aclrtFreeHost");
    // SAFETY: as above.
    unsafe { (emulator().aclrtFreeHost)(p) }
}

unsafe extern "C" fn destroy_stream(s: aclrtStream) -> aclError {
    record("aclrtDestroyStream");
    // SAFETY: as above.
    unsafe { (emulator().aclrtDestroyStream)(s) }
}

unsafe extern "C" fn destroy_event(e: aclrtEvent) -> aclError {
    record("aclrtDestroyEvent");
    // SAFETY: as above.
    unsafe { (emulator().aclrtDestroyEvent)(e) }
}

unsafe extern "C" fn reset_device(id: i32) -> aclError {
    record("aclrtResetDevice");
    // SAFETY: as above.
    unsafe { (emulator().aclrtResetDevice)(id) }
}

/// The name the test gives the host function's thread (the emulator's callback thread has its
/// own name; the test records it from inside the host function).
fn callback_thread_name(stream: &ascendcl::Stream) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    stream
        .launch_host_fn(move || {
            let _ = tx.send(std::thread::current().name().unwrap_or("").to_string());
        })
        .unwrap();
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

#[test]
fn releases_never_run_on_the_callback_thread() {
    let mut backend = ascendcl_emu::backend();
    assert!(EMULATOR.set(backend.api).is_ok(), "set once");
    backend.api.aclrtFree = free;
    backend.api.aclrtFreeHost = free_host;
    backend.api.aclrtDestroyStream = destroy_stream;
    backend.api.aclrtDestroyEvent = destroy_event;
    backend.api.aclrtResetDevice = reset_device;
    if sys::install(backend).is_err() {
        panic!("another backend was installed first");
    }
    let rt = Runtime::new().unwrap();
    let dev = rt.device(1).unwrap();
    let stream = dev.create_stream().unwrap();
    let callback_thread = callback_thread_name(&stream);
    let captured = (
        stream.clone(),
        dev.alloc_zeros::<u8>(64).unwrap(),
        HostBuffer::<u8>::zeroed(&dev, 64).unwrap(),
        dev.create_event().unwrap(),
        dev.clone(),
    );
    drop(dev);
    // The host function drops what it captured only once this thread has dropped its own
    // stream handle, so that it holds the last handles on the stream, the device and everything
    // else whatever the order in which the two threads get there.
    let (go, wait_for_go) = std::sync::mpsc::channel::<()>();
    let h = stream
        .launch_host_fn(move || {
            let _ = wait_for_go.recv_timeout(Duration::from_secs(20));
            drop(captured)
        })
        .unwrap();
    drop(stream);
    go.send(()).unwrap();
    assert!(matches!(
        h.wait_timeout(Duration::from_secs(20)),
        Some(Ok(()))
    ));
    let wanted = [
        "aclrtFree",
        "aclrtFreeHost",
        "aclrtDestroyEvent",
        "aclrtDestroyStream",
        "aclrtResetDevice",
    ];
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let calls = CALLS.lock().unwrap().clone();
        if wanted.iter().all(|w| calls.iter().any(|(api, _)| api == w)) {
            for (api, thread) in &calls {
                assert_ne!(
                    thread, &callback_thread,
                    "{api} ran on the runtime's callback thread"
                );
                assert_eq!(thread, "ascendcl-release", "{api} ran on {thread:?}");
            }
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not every release ran: {calls:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(ascendcl_emu::device_refs(1), 0, "the device was reset");
    assert!(ascendcl::take_drop_errors().is_empty());
}
