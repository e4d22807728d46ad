//! `ipc_memory_withoutpid`: the CANN runtime's `11_ipc_memory_withoutpid` sample in safe Rust.
//!
//! Process A allocates device memory (`aclrtMalloc`), writes 123 with the `DeviceWrite` kernel
//! and exports it under a key (`aclrtIpcMemGetExportKey`) with pid validation disabled, so that
//! any process may import it. It starts process B (this binary again) and sends it the key; B
//! imports the memory
//! (`aclrtIpcMemImportByKey`; its length from `aclrtMemGetAddressRange`), reads it with the
//! `DeviceRead` kernel and a copy, signals completion and closes its import
//! (`aclrtIpcMemClose`). A then closes the key and frees the memory, in the order the types
//! enforce. `cargo xtask sample ipc_memory_withoutpid` compares A's `Source data:` with B's
//! `Destination data:`; each process also checks the value.

use sample_common::report;
use sample_common::two_process;

use ascendc_kernels::{launch_read, launch_write};
use ascendcl::{
    DeviceBuffer, Importers, IpcImportFlags, IpcMemExport, IpcMemImport, IpcMemKey, MallocPolicy,
    Runtime,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use two_process::{Parent, Peer};

/// The value process A writes and process B reads.
const VALUE: i32 = 123;
/// The shared memory, as in the reference (1 MiB), in `i32` elements.
const LEN: usize = (1 << 20) / 4;

fn process_a() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    let mut buf = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?; // aclrtMalloc
    info!(
        "Allocate memory on the device {:p} successfully",
        buf.as_ptr()
    );
    // DeviceWrite<<<1, nullptr, stream>>>: prints "Source data: 123".
    stream.scope(|s| Ok(launch_write(s, &mut buf, VALUE, 1)?))?;
    info!(
        "Write data {VALUE} to the device address {:p}",
        buf.as_ptr()
    );

    // aclrtIpcMemGetExportKey with ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION; the export
    // owns the buffer.
    let export = IpcMemExport::new(buf, Importers::Anyone)?;
    info!(
        "Process A: get the shareable memory identifier {} successfully",
        export.key()
    );

    let mut b = Peer::spawn()?;
    b.send(export.key())?;

    b.completion(VALUE)?; // the completion signal and the value B read

    let buf = export.close()?; // aclrtIpcMemClose: later imports fail
    buf.free()?; // aclrtFree
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

    let key: IpcMemKey = a.recv_parsed("the key")?;
    info!(
        "Process B: get the shareable memory identifier successfully, shareable identifier = {key}"
    );

    // aclrtIpcMemImportByKey: the imported memory, closed when dropped.
    let import = IpcMemImport::<i32>::open(&device, &key, IpcImportFlags::empty())?;
    // DeviceRead<<<1, nullptr, stream>>>: prints "Destination data: 123".
    stream.scope(|s| Ok(launch_read(s, &import, 1)?))?;
    let seen = import.slice(0..1)?.to_vec()?[0]; // aclrtMemcpy, device to host
    if import.len() != LEN || seen != VALUE {
        return Err(format!(
            "process B imported {} elements holding {seen}, not {LEN} holding {VALUE}",
            import.len()
        )
        .into());
    }
    a.complete(seen);
    info!("Process B: complete ipc memory sharing");

    import.close()?; // aclrtIpcMemClose
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
            "IPC memory sharing successfully. Values at source and destination are equal: {VALUE}"
        ),
        "IPC memory sharing failed.",
    )
}
