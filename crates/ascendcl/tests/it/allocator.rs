//! User allocators: registration on a stream, the registration read back from the runtime, its
//! callbacks called as an executor calls them (from other threads too), panics kept at the FFI
//! boundary, and unregistration (explicit, on drop, and what a late callback finds).

use crate::common::*;
use ascendcl::{Allocator, DeviceBuffer, Error, MallocPolicy, raw, sys};
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Device buffers, with a log of the calls.
struct Logged {
    device: ascendcl::Device,
    log: Mutex<Vec<String>>,
    allocs: AtomicUsize,
    frees: AtomicUsize,
}

impl Logged {
    fn new(device: &ascendcl::Device) -> Logged {
        Logged {
            device: device.clone(),
            log: Mutex::new(Vec::new()),
            allocs: AtomicUsize::new(0),
            frees: AtomicUsize::new(0),
        }
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Allocator for Logged {
    type Block = DeviceBuffer<u8>;

    fn alloc(&self, size: usize) -> Option<DeviceBuffer<u8>> {
        self.allocs.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().push(format!("alloc {size}"));
        DeviceBuffer::zeroed(&self.device, size, MallocPolicy::HugeFirst).ok()
    }

    fn free(&self, block: DeviceBuffer<u8>) {
        self.frees.fetch_add(1, Ordering::SeqCst);
        self.log
            .lock()
            .unwrap()
            .push(format!("free {}", block.len()));
    }

    fn alloc_advise(&self, size: usize, hint: *mut c_void) -> Option<DeviceBuffer<u8>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("advise {size} {}", hint.is_null()));
        self.alloc(size)
    }

    fn address(block: &DeviceBuffer<u8>) -> *mut c_void {
        block.as_ptr().cast_mut().cast()
    }
}

#[test]
fn executor_calls_reach_the_allocator() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    assert_eq!(s.registered_allocator().unwrap(), None);
    let reg = s.register_allocator(Logged::new(&d)).unwrap();
    assert_eq!(
        s.registered_allocator().unwrap(),
        Some(reg.desc_addr()),
        "the runtime reports the registered descriptor"
    );
    let ex = reg.query().unwrap();
    assert_eq!(ex.desc_addr(), reg.desc_addr());
    assert!(ex.has_advise());
    let a = ex.alloc(256).expect("a block");
    let addr = a.address();
    assert!(!addr.is_null());
    // The address is device memory of the stream's device.
    let attrs = ascendcl::pointer_attributes(addr.cast_const()).unwrap();
    assert_eq!(attrs.location, ascendcl::PointerLocation::Device(0));
    let b = ex.alloc_advise(128, addr).expect("an advised block");
    assert_ne!(b.address(), addr);
    b.free();
    drop(a); // dropping a block frees it too
    assert_eq!(
        reg.allocator().log(),
        [
            "alloc 256",
            "advise 128 false",
            "alloc 128",
            "free 128",
            "free 256"
        ]
    );
    assert_eq!(reg.allocator().allocs.load(Ordering::SeqCst), 2);
    assert_eq!(reg.allocator().frees.load(Ordering::SeqCst), 2);
    assert!(reg.take_panic().is_none());

    reg.unregister().unwrap();
    assert_eq!(s.registered_allocator().unwrap(), None);
}

#[test]
fn executors_on_other_threads() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let reg = s.register_allocator(Logged::new(&d)).unwrap();
    std::thread::scope(|t| {
        for _ in 0..4 {
            t.spawn(|| {
                let ex = reg.query().unwrap();
                for size in [64, 128] {
                    ex.alloc(size).expect("a block").free();
                }
            });
        }
    });
    assert_eq!(reg.allocator().allocs.load(Ordering::SeqCst), 8);
    assert_eq!(reg.allocator().frees.load(Ordering::SeqCst), 8);
}

/// Fails every allocation.
struct Empty;

impl Allocator for Empty {
    type Block = ();
    fn alloc(&self, _: usize) -> Option<()> {
        None
    }
    fn free(&self, (): ()) {}
    fn address((): &()) -> *mut c_void {
        std::ptr::null_mut()
    }
}

#[test]
fn a_failed_allocation_is_none() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let reg = s.register_allocator(Empty).unwrap();
    let ex = reg.query().unwrap();
    assert!(ex.alloc(1).is_none());
    assert!(ex.alloc_advise(1, std::ptr::null_mut()).is_none());
}

/// Panics in `alloc` for sizes above 100, in `free` for blocks of 7, in `address` for 9.
struct Panicky;

impl Allocator for Panicky {
    type Block = usize;
    fn alloc(&self, size: usize) -> Option<usize> {
        assert!(size <= 100, "too big: {size}");
        Some(size)
    }
    fn free(&self, block: usize) {
        assert_ne!(block, 7, "cannot free 7");
    }
    fn address(block: &usize) -> *mut c_void {
        assert_ne!(*block, 9, "no address for 9");
        std::ptr::without_provenance_mut(0x1000 + *block)
    }
}

#[test]
fn panics_stay_on_the_rust_side() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let reg = s.register_allocator(Panicky).unwrap();
    let ex = reg.query().unwrap();
    assert!(ex.alloc(1000).is_none(), "a panicking alloc answers NULL");
    let e = reg.take_panic().expect("the panic is kept");
    assert!(
        matches!(&e, Error::CallbackPanicked { what: "user allocator", message } if message.contains("too big: 1000")),
        "{e:?}"
    );
    assert!(reg.take_panic().is_none(), "taken once");
    let nine = ex.alloc(9).unwrap();
    assert!(nine.address().is_null(), "a panicking address answers NULL");
    nine.free();
    let b = ex.alloc(7).unwrap();
    assert_eq!(b.address() as usize, 0x1007);
    b.free();

    let e = reg.unregister().unwrap_err();
    assert!(
        matches!(&e, Error::CallbackPanicked { message, .. } if message.contains("cannot free 7")),
        "{e:?}"
    );
    assert_eq!(
        s.registered_allocator().unwrap(),
        None,
        "unregistered all the same"
    );
}

#[test]
fn one_registration_per_stream() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let first = s.register_allocator(Empty).unwrap();
    assert_argument(s.register_allocator(Empty).map(drop));
    // Another stream takes its own.
    let s2 = d.create_stream().unwrap();
    let second = s2.register_allocator(Empty).unwrap();
    assert_ne!(first.desc_addr(), second.desc_addr());
    drop(first);
    assert_eq!(
        s.registered_allocator().unwrap(),
        None,
        "unregistered on drop"
    );
    assert_eq!(s2.registered_allocator().unwrap(), Some(second.desc_addr()));
    let again = s.register_allocator(Empty).unwrap();
    assert!(again.query().is_ok());
}

#[test]
fn a_replaced_registration_is_not_queried() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let reg = s.register_allocator(Empty).unwrap();
    // Foreign code replaces the registration behind the crate's back.
    let desc = raw::aclrtAllocatorCreateDesc();
    unsafe extern "C" fn alloc(_: sys::aclrtAllocator, _: usize) -> sys::aclrtAllocatorBlock {
        std::ptr::null_mut()
    }
    unsafe extern "C" fn free(_: sys::aclrtAllocator, _: sys::aclrtAllocatorBlock) {}
    unsafe extern "C" fn addr(_: sys::aclrtAllocatorBlock) -> sys::aclrtAllocatorAddr {
        std::ptr::null_mut()
    }
    let mut obj = 5u8;
    // SAFETY: a live descriptor and stream; the functions ignore their arguments.
    unsafe {
        raw::aclrtAllocatorSetObjToDesc(desc, (&raw mut obj).cast()).unwrap();
        raw::aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc)).unwrap();
        raw::aclrtAllocatorSetFreeFuncToDesc(desc, Some(free)).unwrap();
        raw::aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(addr)).unwrap();
        raw::aclrtAllocatorRegister(s.as_raw(), desc).unwrap();
    }
    assert_argument(reg.query().map(drop));
    drop(reg);
    // SAFETY: the descriptor created above.
    unsafe { raw::aclrtAllocatorDestroyDesc(desc) }.unwrap();
}

#[test]
fn late_callbacks_find_no_allocator() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let reg = s.register_allocator(Logged::new(&d)).unwrap();
    // What an executor that read the registration earlier still holds.
    let (mut desc, mut obj) = (std::ptr::null_mut(), std::ptr::null_mut());
    let mut alloc: sys::aclrtAllocatorAllocFunc = None;
    let mut free: sys::aclrtAllocatorFreeFunc = None;
    // SAFETY: a live stream, valid out-pointers (NULL ones are skipped).
    unsafe {
        raw::aclrtAllocatorGetByStream(
            s.as_raw(),
            &mut desc,
            &mut obj,
            &mut alloc,
            &mut free,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .unwrap();
    let (alloc, free) = (alloc.unwrap(), free.unwrap());
    // SAFETY: the registered functions and object.
    let block = unsafe { alloc(obj, 64) };
    assert!(!block.is_null());
    reg.unregister().unwrap();
    // SAFETY: the object stays valid for the life of the process; the block is freed once.
    unsafe {
        assert!(
            alloc(obj, 64).is_null(),
            "no allocator behind the object any more"
        );
        free(obj, block);
    }
}

#[test]
fn registrations_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<ascendcl::AllocatorRegistration<Logged>>();
}
