//! `ipc_notify_withpid`: the CANN runtime's `notify/0_ipc_notify_withpid` sample in safe Rust.
//!
//! Process A (device 0) enables peer access to device 1, exports zeroed device memory to any
//! process (`aclrtIpcMemGetExportKey`) and a notify (`aclrtCreateNotify`,
//! `aclrtNotifyGetExportKey`) with pid validation on, starts process B (this binary again) and
//! whitelists its pid (`aclrtDeviceGetBareTgid`, `aclrtNotifySetImportPid`). A's stream then
//! waits on the notify (`aclrtWaitAndResetNotify`) before the `DeviceRead` kernel reads the
//! memory. B (device 1, peer access to device 0) imports the memory and the notify
//! (`aclrtIpcMemImportByKey`, `aclrtNotifyImportByKey`), writes 123 with the `DeviceWrite`
//! kernel and records the notify after it (`aclrtRecordNotify`): A's read, held by the wait,
//! sees B's value. With one device, both processes use device 0. `cargo xtask sample
//! ipc_notify_withpid` compares B's `Source data:` with A's `Destination data:`; A also checks the
//! value with a copy.

use sample_common::report;
use sample_common::two_process;

use ascendc_kernels::{launch_read, launch_write};
use ascendcl::{
    DeviceBuffer, ImportedNotify, Importers, IpcImportFlags, IpcMemExport, IpcMemImport, IpcMemKey,
    MallocPolicy, Notify, NotifyImportFlags, NotifyKey, Pid, Runtime,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use two_process::{PATIENCE, Parent, Peer};

/// The value process B writes and process A reads.
const VALUE: i32 = 123;
/// The shared memory, as in the reference (1 MiB), in `i32` elements.
const LEN: usize = (1 << 20) / 4;

fn process_a() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    // B works on device 1 when there is one, with peer access between the two.
    let b_device = if rt.device_count()? >= 2 { 1 } else { 0 };
    let peer = if b_device != 0 {
        let other = rt.device(b_device)?;
        if !device.can_access_peer(&other)? {
            return Err(format!("device 0 cannot access device {b_device}").into());
        }
        let access = device.enable_peer_access(&other)?; // aclrtDeviceEnablePeerAccess
        info!("Process A: enable data interaction between device 0 and device {b_device}");
        Some(access)
    } else {
        None
    };

    let buf = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?; // aclrtMalloc
    let memory = IpcMemExport::new(buf, Importers::Anyone)?; // aclrtIpcMemGetExportKey
    info!(
        "Process A: get a shareable identifier for IPC memory sharing successfully, shareable identifier = {}",
        memory.key()
    );
    let mut b = Peer::spawn()?;
    b.send(b_device)?;
    b.send(memory.key())?;

    let notify = Notify::new(&device)?; // aclrtCreateNotify
    let key = notify.export(Importers::Whitelisted)?; // aclrtNotifyGetExportKey
    info!(
        "Process A: get a shareable identifier for IPC notify sharing successfully, shareable identifier = {key}"
    );
    let pid: Pid = b.recv_parsed("its pid")?;
    info!("Process A: get Process B's pid successfully, Process B's pid = {pid}");
    notify.allow(&[pid])?; // aclrtNotifySetImportPid
    info!("Process A: add Process B to the whitelist successfully");

    let mut told = Ok(String::new());
    stream.scope(|s| {
        // aclrtWaitAndResetNotify: the stream holds here until B records the notify (at most
        // PATIENCE, then the wait fails with ACL_ERROR_RT_TASK_TIMEOUT).
        s.wait_notify(&notify, Some(PATIENCE))?;
        // DeviceRead<<<1, nullptr, stream>>> after the wait: prints "Destination data: 123".
        launch_read(s, &memory, 1)?;
        // Only now does B learn the notify's key: the read is queued before B can write.
        told = b.send(&key).and_then(|()| b.recv());
        if told.is_err() {
            // B is gone without recording: end the wait now rather than at its timeout.
            s.stream().abort()?; // aclrtStreamAbort
        }
        Ok(())
    })?;
    let recorded = told?;
    if recorded != "recorded" {
        return Err(format!("process B said {recorded:?} instead of recording the notify").into());
    }
    let seen = memory.buffer().slice(0..1)?.to_vec()?[0];
    b.finish()?;
    if seen != VALUE {
        return Err(format!("process A read {seen} after the wait, not {VALUE}").into());
    }

    notify.destroy()?; // aclrtDestroyNotify
    let buf = memory.close()?; // aclrtIpcMemClose
    buf.free()?; // aclrtFree
    if let Some(access) = peer {
        access.disable()?; // aclrtDeviceDisablePeerAccess
    }
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    Ok(())
}

fn process_b() -> Result<(), Box<dyn Error>> {
    let a = Parent::new();
    let rt = Runtime::new()?; // aclInit
    let id: i32 = a.recv_parsed("the device")?;
    let device = rt.device(id)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let peer = if id != 0 {
        let access = device.enable_peer_access(&rt.device(0)?)?; // aclrtDeviceEnablePeerAccess
        info!("Process B: enable data interaction between device {id} and device 0");
        Some(access)
    } else {
        None
    };

    let mkey: IpcMemKey = a.recv_parsed("the memory's key")?;
    info!(
        "Process B: get the shareable identifier for IPC memory sharing successfully, shareable identifier = {mkey}"
    );
    let mut memory = IpcMemImport::<i32>::open(&device, &mkey, IpcImportFlags::empty())?; // aclrtIpcMemImportByKey

    let pid = device.bare_tgid()?; // aclrtDeviceGetBareTgid
    info!("Process B: get Process B's pid successfully, pid = {pid}");
    a.send(pid);
    let nkey: NotifyKey = a.recv_parsed("the notify's key")?;
    info!(
        "Process B: get the shareable identifier for IPC notify sharing successfully, shareable identifier = {nkey}"
    );
    let notify = ImportedNotify::open(&device, &nkey, NotifyImportFlags::empty())?; // aclrtNotifyImportByKey

    stream.scope(|s| {
        // DeviceWrite<<<1, nullptr, stream>>>: prints "Source data: 123".
        launch_write(s, &mut memory, VALUE, 1)?;
        // aclrtRecordNotify after the write: releases A's wait.
        s.record_imported_notify(&notify)
    })?;
    info!(
        "Process B: write data {VALUE} to the device memory {:p}",
        memory.as_ptr()
    );
    a.send("recorded");

    notify.destroy()?; // aclrtDestroyNotify
    memory.close()?; // aclrtIpcMemClose
    if let Some(access) = peer {
        access.disable()?;
    }
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
            "IPC notify for task synchronization is successful. Values at source and destination are equal: {VALUE}"
        ),
        "IPC notify for task synchronization failed.",
    )
}
