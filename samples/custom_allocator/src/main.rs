//! `custom_allocator`: the CANN runtime's `allocator/0_custom_allocator` sample in safe Rust.
//!
//! A user allocator (the [`Allocator`] trait: device buffers, counted) is registered on a stream
//! of a new context (`aclrtAllocatorCreateDesc`, `aclrtAllocatorSet*ToDesc`,
//! `aclrtAllocatorRegister`). The runtime itself never calls it: the operator executors read the
//! stream's registration and call it. The sample plays the executor: it reads the registration
//! back (`aclrtAllocatorGetByStream`), allocates 256 bytes, takes the block's device address,
//! allocates 128 bytes with an address hint (alloc-advise), frees both, and checks the counts.
//! The allocator is unregistered (`aclrtAllocatorUnregister`) and its descriptor destroyed when
//! the registration goes.

use sample_common::report;

use ascendcl::{Allocator, DeviceBuffer, MallocPolicy, PointerLocation, Runtime};
use report::info;
use std::error::Error;
use std::ffi::c_void;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};

const OK: &str = "Run the custom_allocator sample successfully.";
const FAIL: &str = "Run the custom_allocator sample failed.";

/// Device memory for the executors, with the counts the reference keeps in its state object.
struct CustomAllocator {
    device: ascendcl::Device,
    alloc_count: AtomicU32,
    free_count: AtomicU32,
}

impl Allocator for CustomAllocator {
    type Block = DeviceBuffer<u8>;

    fn alloc(&self, size: usize) -> Option<DeviceBuffer<u8>> {
        let block = DeviceBuffer::zeroed(&self.device, size, MallocPolicy::HugeFirst).ok()?;
        self.alloc_count.fetch_add(1, Ordering::SeqCst);
        info!("CustomAlloc size={size}");
        Some(block)
    }

    fn free(&self, block: DeviceBuffer<u8>) {
        drop(block);
        self.free_count.fetch_add(1, Ordering::SeqCst);
        info!("CustomFree invoked");
    }

    fn alloc_advise(&self, size: usize, _hint: *mut c_void) -> Option<DeviceBuffer<u8>> {
        info!("CustomAllocAdvise size={size}");
        self.alloc(size)
    }

    fn address(block: &DeviceBuffer<u8>) -> *mut c_void {
        block.as_ptr().cast_mut().cast()
    }
}

/// Checks that `addr` is device memory of device 0.
fn on_device(addr: *mut c_void) -> Result<(), Box<dyn Error>> {
    if addr.is_null() {
        return Err("the block has no address".into());
    }
    match ascendcl::pointer_attributes(addr.cast_const())?.location {
        PointerLocation::Device(0) => Ok(()),
        other => {
            Err(format!("the block's address {addr:p} is {other:?}, not device memory").into())
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let context = device.create_context()?; // aclrtCreateContext
    let stream = context.create_stream()?; // aclrtCreateStream
    let registration = stream.register_allocator(CustomAllocator {
        device: device.clone(),
        alloc_count: AtomicU32::new(0),
        free_count: AtomicU32::new(0),
    })?;
    {
        // What an executor does: read the stream's registration back and call it.
        let executor = registration.query()?; // aclrtAllocatorGetByStream
        let block = executor.alloc(256).ok_or("Custom block is NULL")?;
        let addr = block.address();
        on_device(addr)?;
        if executor.has_advise() {
            let advised = executor
                .alloc_advise(128, std::ptr::null_mut())
                .ok_or("the advised block is NULL")?;
            on_device(advised.address())?;
            advised.free();
        }
        block.free();
        let a = registration.allocator();
        let (allocs, frees) = (
            a.alloc_count.load(Ordering::SeqCst),
            a.free_count.load(Ordering::SeqCst),
        );
        info!(
            "Allocator desc queried: descOut={:#x}, allocCount={allocs}, freeCount={frees}",
            executor.desc_addr()
        );
        if (allocs, frees) != (2, 2) {
            return Err(
                format!("expected 2 allocations and 2 frees, got {allocs} and {frees}").into(),
            );
        }
    }
    registration.unregister()?; // aclrtAllocatorUnregister, aclrtAllocatorDestroyDesc
    stream.destroy()?; // aclrtDestroyStream
    context.destroy()?; // aclrtDestroyContext
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
