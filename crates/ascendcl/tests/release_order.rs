//! The runtime's release order for virtual memory and IPC exports, as ownership makes it: a
//! mapping is unmapped before its physical memory is freed and before its range is released;
//! an exported buffer's key is closed before the buffer is freed — also when the last handle
//! goes on a runtime callback thread. This binary installs the emulator with those functions
//! wrapped to record each call and its address. (Its own binary: the backend is chosen once per
//! process.)

use ascendcl::sys::{self, AclApi, aclError, aclrtDrvMemHandle};
use ascendcl::{
    DeviceBuffer, Importers, IpcMemExport, MallocPolicy, PhysicalMemProp, PhysicalMemory, Runtime,
    VirtualRange,
};
use std::ffi::{c_char, c_void};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static EMULATOR: OnceLock<AclApi> = OnceLock::new();
/// (function, address or handle)
static CALLS: Mutex<Vec<(&'static str, usize)>> = Mutex::new(Vec::new());

fn record(api: &'static str, at: usize) {
    CALLS.lock().unwrap().push((api, at));
}

fn emulator() -> &'static AclApi {
    EMULATOR.get().expect("installed")
}

unsafe extern "C" fn unmap(p: *mut c_void) -> aclError {
    record("aclrtUnmapMem", p as usize);
    // SAFETY: forwarded unchanged to the emulator's implementation.
    unsafe { (emulator().aclrtUnmapMem)(p) }
}

unsafe extern "C" fn free_physical(h: aclrtDrvMemHandle) -> aclError {
    record("aclrtFreePhysical", h as usize);
    // SAFETY: as above.
    unsafe { (emulator().aclrtFreePhysical)(h) }
}

unsafe extern "C" fn release_range(p: *mut c_void) -> aclError {
    record("aclrtReleaseMemAddress", p as usize);
    // SAFETY: as above.
    unsafe { (emulator().aclrtReleaseMemAddress)(p) }
}

unsafe extern "C" fn ipc_close(key: *const c_char) -> aclError {
    record("aclrtIpcMemClose", 0);
    // SAFETY: as above.
    unsafe { (emulator().aclrtIpcMemClose)(key) }
}

unsafe extern "C" fn free(p: *mut c_void) -> aclError {
    record("aclrtFree", p as usize);
    // SAFETY: as above.
    unsafe { (emulator().aclrtFree)(p) }
}

fn take() -> Vec<(&'static str, usize)> {
    std::mem::take(&mut *CALLS.lock().unwrap())
}

#[test]
fn releases_follow_the_runtime_order() {
    let mut backend = ascendcl_emu::backend();
    assert!(EMULATOR.set(backend.api).is_ok(), "set once");
    backend.api.aclrtUnmapMem = unmap;
    backend.api.aclrtFreePhysical = free_physical;
    backend.api.aclrtReleaseMemAddress = release_range;
    backend.api.aclrtIpcMemClose = ipc_close;
    backend.api.aclrtFree = free;
    if sys::install(backend).is_err() {
        panic!("another backend was installed first");
    }
    let rt = Runtime::new().unwrap();
    let device = rt.device(0).unwrap();
    const MIB2: usize = 2 << 20;

    // The range's handle goes first, then the mapping: unmap, free, release.
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let (va, h) = (range.as_ptr() as usize, phys.as_raw() as usize);
    let mem = range.map::<u8>(0, phys).unwrap();
    range.release().unwrap();
    assert!(take().is_empty(), "the mapping holds the range");
    drop(mem);
    assert_eq!(
        take(),
        [
            ("aclrtUnmapMem", va),
            ("aclrtFreePhysical", h),
            ("aclrtReleaseMemAddress", va)
        ]
    );

    // Explicit unmap: the physical memory comes back unfreed; the range goes with its handle.
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let (va, h) = (range.as_ptr() as usize, phys.as_raw() as usize);
    let mem = range.map::<u8>(0, phys).unwrap();
    let phys = mem.unmap().unwrap();
    assert_eq!(take(), [("aclrtUnmapMem", va)]);
    drop(range);
    phys.free().unwrap();
    assert_eq!(
        take(),
        [("aclrtReleaseMemAddress", va), ("aclrtFreePhysical", h)]
    );

    // An exported buffer: the key is closed, then the buffer freed.
    let buf = DeviceBuffer::<u8>::zeroed(&device, 4096, MallocPolicy::HugeFirst).unwrap();
    let p = buf.as_ptr() as usize;
    let export = IpcMemExport::new(buf, Importers::Anyone).unwrap();
    drop(export);
    assert_eq!(take(), [("aclrtIpcMemClose", 0), ("aclrtFree", p)]);
    let buf = DeviceBuffer::<u8>::zeroed(&device, 4096, MallocPolicy::HugeFirst).unwrap();
    let p = buf.as_ptr() as usize;
    let buf = IpcMemExport::new(buf, Importers::Anyone)
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(take(), [("aclrtIpcMemClose", 0)]);
    buf.free().unwrap();
    assert_eq!(take(), [("aclrtFree", p)]);

    // The last handles dropped by a host function, on the runtime's callback thread: the
    // releases move to the release thread and keep their order.
    let stream = device.create_stream().unwrap();
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let (va, h) = (range.as_ptr() as usize, phys.as_raw() as usize);
    let mem = range.map::<u8>(0, phys).unwrap();
    drop(range);
    let buf = DeviceBuffer::<u8>::zeroed(&device, 4096, MallocPolicy::HugeFirst).unwrap();
    let p = buf.as_ptr() as usize;
    let export = IpcMemExport::new(buf, Importers::Anyone).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    stream
        .launch_host_fn(move || {
            drop(mem);
            drop(export);
            let _ = tx.send(());
        })
        .unwrap();
    stream.synchronize().unwrap();
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut calls = Vec::new();
    while calls.len() < 5 && std::time::Instant::now() < deadline {
        calls.extend(take());
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        calls,
        [
            ("aclrtUnmapMem", va),
            ("aclrtFreePhysical", h),
            ("aclrtReleaseMemAddress", va),
            ("aclrtIpcMemClose", 0),
            ("aclrtFree", p)
        ]
    );
    assert!(ascendcl::take_drop_errors().is_empty());
}
