//! `physical_memory_sharing_withoutpid`: the CANN runtime's `8_physical_memory_sharing_withoutpid`
//! sample in safe Rust.
//!
//! Process A allocates physical device memory (`aclrtMallocPhysical`, sized by
//! `aclrtMemGetAllocationGranularity`), maps it into a reserved range (`aclrtReserveMemAddress`,
//! `aclrtMapMem`), writes 123 with the `DeviceWrite` kernel and exports the memory
//! (`aclrtMemExportToShareableHandle`) with pid validation disabled, so that any process may import
//! it. It starts process B (this binary again) and sends it the shareable handle; B imports the
//! memory (`aclrtMemImportFromShareableHandle`), maps it into a range of its own, copies it to the
//! host and reads the value there, and signals completion. Each process sets the mapping's access
//! rights (`aclrtMemSetAccess`). Both release their mapping, range and physical memory in the
//! runtime's order, which the types enforce.
//! `cargo xtask sample physical_memory_sharing_withoutpid` compares A's `Source data:` with B's
//! `Destination data:`; each process also checks the value.

use sample_common::report;
use sample_common::two_process;

use ascendc_kernels::launch_write;
use ascendcl::{
    GranularityOption, HostBuffer, Importers, MemAccess, MemAttr, PhysicalMemProp, PhysicalMemory,
    Runtime, ShareableHandle, VirtualRange, copy,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use two_process::{Parent, Peer};

/// The value process A writes and process B reads.
const VALUE: i32 = 123;
/// The bytes the reference shares (1024 floats), before rounding up to the granularity.
const DATA_SIZE: usize = 1024 * 4;

/// Normal-page device memory, as in the reference.
fn prop() -> PhysicalMemProp {
    PhysicalMemProp::device(MemAttr::HbmNormal)
}

fn process_a() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    let granularity = device.allocation_granularity(&prop(), GranularityOption::Minimum)?;
    info!("Process A: get memory allocation granularity successfully, granularity = {granularity}");
    let size = DATA_SIZE.div_ceil(granularity) * granularity;
    info!("Process A: aligned size = {size}");
    let phys = PhysicalMemory::new(&device, size, prop())?; // aclrtMallocPhysical
    info!("Process A: allocate physical memory successfully");
    let range = VirtualRange::reserve(&device, size)?; // aclrtReserveMemAddress
    info!("Process A: reserve virtual memory successfully");
    let mut mem = range.map::<i32>(0, phys)?; // aclrtMapMem
    info!("Process A: map virtual memory address to physical memory handle");
    mem.set_access(&[MemAccess::read_write(device.id())])?; // aclrtMemSetAccess
    info!("Process A: set memory access permissions successfully");

    // DeviceWrite<<<1, nullptr, stream>>> into the mapped memory: prints "Source data: 123".
    stream.scope(|s| Ok(launch_write(s, &mut mem, VALUE, 1)?))?;
    info!(
        "Write data {VALUE} to the virtual address {:p}",
        mem.as_ptr()
    );
    let written = mem.slice(0..1)?.to_vec()?[0];
    if written != VALUE {
        return Err(format!("the mapped memory holds {written}, not {VALUE}").into());
    }

    // aclrtMemExportToShareableHandle with ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION.
    let handle = mem.physical().export(Importers::Anyone)?;
    info!("Process A: export a shareable handle successfully, shareable handle = {handle}");

    let mut b = Peer::spawn()?;
    b.send(handle)?;
    b.send(size)?;

    b.completion(VALUE)?; // the completion signal and the value B read

    let phys = mem.unmap()?; // aclrtUnmapMem
    info!("Process A: unmap virtual memory from physical memory");
    range.release()?; // aclrtReleaseMemAddress
    phys.free()?; // aclrtFreePhysical
    info!("Process A: release the virtual and physical memory successfully");
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    Ok(())
}

fn process_b() -> Result<(), Box<dyn Error>> {
    let a = Parent::new();
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    let handle: ShareableHandle = a.recv_parsed("the shareable handle")?;
    let size: usize = a.recv_parsed("the size")?;
    info!("Process B: get a shareable handle successfully, shareable handle = {handle}");
    let phys = PhysicalMemory::import(&device, handle, size)?; // aclrtMemImportFromShareableHandle

    let granularity = device.allocation_granularity(&prop(), GranularityOption::Minimum)?;
    info!("Process B: get memory allocation granularity successfully, granularity = {granularity}");
    let range = VirtualRange::reserve(&device, size)?; // aclrtReserveMemAddress
    info!("Process B: reserve virtual memory successfully");
    let mut mem = range.map::<i32>(0, phys)?; // aclrtMapMem
    info!("Process B: map virtual memory address to physical memory handle");
    mem.set_access(&[MemAccess::read_write(device.id())])?; // aclrtMemSetAccess
    info!("Process B: set memory access permissions successfully");

    let mut host = HostBuffer::<i32>::zeroed(&device, mem.len())?; // aclrtMallocHost
    copy(&mut host, &mem)?; // aclrtMemcpy, device to host
    info!(
        "Process B: copy memory from device address {:p} to host address {:p}",
        mem.as_ptr(),
        host.as_ptr()
    );
    let seen = host[0];
    info!("Destination data: {seen}");
    if seen != VALUE {
        return Err(format!("process B read {seen}, not {VALUE}").into());
    }

    let phys = mem.unmap()?; // aclrtUnmapMem
    info!("Process B: unmap virtual memory from physical memory");
    a.complete(seen);
    info!("Process B: complete physical memory sharing");
    range.release()?; // aclrtReleaseMemAddress
    phys.free()?; // aclrtFreePhysical
    info!("Process B: release the virtual and physical memory successfully");
    host.free()?;
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    Ok(())
}

fn main() -> ExitCode {
    two_process::main(
        process_a,
        process_b,
        &format!(
            "Physical memory sharing successfully. Values at source and destination are equal: {VALUE}"
        ),
        "Physical memory sharing failed.",
    )
}
