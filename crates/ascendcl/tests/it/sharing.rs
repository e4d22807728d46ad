//! Sharing between processes through the safe types, with a real second process: this test
//! binary run again in a child role (`child`, selected by an environment variable), which talks
//! to the parent over its stdin and stdout. Each export path (physical memory by shareable
//! handle, IPC memory by key, notifies by key, IPC events by handle) is exchanged both ways,
//! with and without a pid whitelist; a process that is not whitelisted is refused with the
//! runtime's code. Every wait on the other process is bounded.
#![cfg(target_os = "linux")]

use crate::common::*;
use ascendcl::{
    DeviceBuffer, Error, EventFlags, HostBuffer, ImportedNotify, Importers, IpcEventHandle,
    IpcImportFlags, IpcMemExport, IpcMemImport, IpcMemKey, MallocPolicy, Notify, NotifyImportFlags,
    NotifyKey, PhysicalMemProp, PhysicalMemory, Pid, ShareableHandle, VirtualRange,
};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// The environment variable that puts this binary in a child role.
const ROLE: &str = "ASCENDCL_SHARING_TEST_ROLE";
/// How long either side waits for the other's next line.
const PATIENCE: Duration = Duration::from_secs(30);
const MIB2: usize = 2 << 20;

/// The child process, seen from the parent. Dropping it kills the child if it still runs.
struct Peer {
    child: Child,
    input: Option<ChildStdin>,
    lines: Receiver<String>,
    role: String,
}

impl Peer {
    fn spawn(role: &str) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sharing::child",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                match l.strip_prefix("@ ") {
                    Some(rest) if tx.send(rest.to_string()).is_err() => break,
                    Some(_) => {}
                    // The child's own output, shown with the parent's when a test fails.
                    None if !l.is_empty() => println!("[child] {l}"),
                    None => {}
                }
            }
        });
        Peer {
            child,
            input,
            lines,
            role: role.to_string(),
        }
    }

    /// The child's next message; a child that ends or stays silent fails the test.
    fn hear(&mut self) -> String {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the {} child said nothing for {PATIENCE:?}", self.role)
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().unwrap();
                panic!(
                    "the {} child ended ({status}) without saying more",
                    self.role
                )
            }
        }
    }

    fn say(&mut self, s: impl std::fmt::Display) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{s}").unwrap();
        input.flush().unwrap();
    }

    /// Waits (bounded) for the child to end; it must succeed.
    fn finish(mut self) {
        drop(self.input.take());
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the {} child failed: {status}", self.role);
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the {} child does not end",
                self.role
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// In the child: a message for the parent.
fn tell(s: impl std::fmt::Display) {
    println!("\n@ {s}");
}

/// In the child: the parent's next line (a closed stdin, the parent gone, fails the child).
fn hear() -> String {
    let mut l = String::new();
    let n = std::io::stdin().read_line(&mut l).unwrap();
    assert!(n > 0, "the parent closed the pipe");
    l.trim_end().to_string()
}

/// In the child: the whitelist exchange. Importing is refused (with the runtime's code) before
/// the parent whitelists this process and while only another pid is whitelisted, and allowed
/// after.
fn when_whitelisted<T: std::fmt::Debug>(me: Pid, import: impl Fn() -> ascendcl::Result<T>) {
    assert_code(import(), AclError::PARAM_INVALID);
    tell(me);
    assert_eq!(hear(), "other allowed");
    assert_code(import(), AclError::PARAM_INVALID);
    tell("still refused");
    assert_eq!(hear(), "allowed");
}

/// In the parent: the other side of [`when_whitelisted`], with the export's `allow`.
fn whitelist(peer: &mut Peer, allow: impl Fn(&[Pid]) -> ascendcl::Result<()>) {
    let pid: Pid = peer.hear().parse().unwrap();
    assert_ne!(pid.as_raw(), std::process::id() as i32);
    let other = Pid::from_raw(pid.as_raw() + 100_000);
    allow(&[other]).unwrap();
    peer.say("other allowed");
    assert_eq!(peer.hear(), "still refused");
    allow(&[pid]).unwrap();
    peer.say("allowed");
}

/// The child roles. A no-op in an ordinary test run.
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let rt = rt();
    let device = rt.device(0).unwrap();
    let me = device.bare_tgid().unwrap();
    assert_eq!(me.as_raw(), std::process::id() as i32);
    match role.as_str() {
        // Imports physical memory by shareable handle (refused until whitelisted when the first
        // line says so), maps it, checks the parent's bytes and writes its own.
        "physical" => {
            let whitelisted = hear() == "whitelist";
            let handle: ShareableHandle = hear().parse().unwrap();
            let size: usize = hear().parse().unwrap();
            if whitelisted {
                when_whitelisted(me, || PhysicalMemory::import(&device, handle, size));
            }
            let phys = PhysicalMemory::import(&device, handle, size).unwrap();
            assert!(phys.is_imported());
            // One live import per handle in a process.
            let twice = PhysicalMemory::import(&device, handle, size).unwrap_err();
            assert!(matches!(twice, Error::Argument { .. }), "{twice}");
            // An import cannot be exported again.
            assert!(phys.export(Importers::Anyone).is_err());
            let range = VirtualRange::reserve(&device, size).unwrap();
            let mut mem = range.map::<u32>(0, phys).unwrap();
            assert!(
                mem.to_vec().unwrap().iter().all(|&x| x == 123),
                "the parent's values"
            );
            mem.copy_from_host(&vec![45; mem.len()]).unwrap();
            drop(mem);
            tell("rewritten");
        }
        // Imports IPC memory by key, checks and rewrites it, closes it; after the parent closes
        // the key, imports are refused.
        "ipc-memory" => {
            let whitelisted = hear() == "whitelist";
            let key: IpcMemKey = hear().parse().unwrap();
            if whitelisted {
                when_whitelisted(me, || {
                    IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty())
                });
            }
            let mut mem =
                IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty()).unwrap();
            assert_eq!(mem.len(), 1024, "the length the runtime reports");
            assert_eq!(mem.key(), &key);
            let values = mem.to_vec().unwrap();
            assert!(
                values.iter().enumerate().all(|(i, &x)| x == i as u32),
                "the parent's values"
            );
            // A second import of a key this process holds is refused; after closing, it opens.
            let twice =
                IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty()).unwrap_err();
            assert!(matches!(twice, Error::Argument { .. }), "{twice}");
            // Views and scopes use it like a buffer.
            assert_eq!(mem.slice(10..12).unwrap().to_vec().unwrap(), [10, 11]);
            let stream = device.create_stream().unwrap();
            let doubled: Vec<u32> = values.iter().map(|x| x * 2).collect();
            stream.scope(|s| s.copy(&mut mem, &doubled[..])).unwrap();
            mem.close().unwrap();
            // As bytes, a whole number of elements of another type.
            let bytes = IpcMemImport::<u8>::open(&device, &key, IpcImportFlags::empty()).unwrap();
            assert_eq!(bytes.len(), 4096);
            assert_eq!(
                bytes.slice(4..8).unwrap().to_vec().unwrap(),
                2u32.to_ne_bytes()
            );
            drop(bytes);
            tell("rewritten");
            assert_eq!(hear(), "closed");
            assert_code(
                IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty()),
                AclError::PARAM_INVALID,
            );
            tell("refused");
        }
        // Imports the parent's notify (refused until whitelisted when asked) and IPC memory
        // open to anyone, writes a value and records the notify after it.
        "notify" => {
            let whitelisted = hear() == "whitelist";
            let nkey: NotifyKey = hear().parse().unwrap();
            let mkey: IpcMemKey = hear().parse().unwrap();
            if whitelisted {
                when_whitelisted(me, || {
                    ImportedNotify::open(&device, &nkey, NotifyImportFlags::empty())
                });
            }
            let notify = ImportedNotify::open(&device, &nkey, NotifyImportFlags::empty()).unwrap();
            let mut mem =
                IpcMemImport::<u64>::open(&device, &mkey, IpcImportFlags::empty()).unwrap();
            let stream = device.create_stream().unwrap();
            stream
                .scope(|s| {
                    let m = s.claim(&mut mem);
                    s.copy(m.slice(0..1)?, &[123u64][..])?;
                    s.record_imported_notify(&notify)
                })
                .unwrap();
            tell("recorded");
        }
        // Opens the parent's IPC event while its record is held back, then synchronises.
        "ipc-event" => {
            let handle: IpcEventHandle = hear().parse().unwrap();
            let event = device.open_ipc_event(&handle).unwrap();
            assert!(
                !event.is_complete().unwrap(),
                "the parent's record is in flight"
            );
            tell("pending");
            event.synchronize_timeout(Some(PATIENCE)).unwrap();
            assert!(event.is_complete().unwrap());
            // A stream of this process waits for it too (complete: no wait).
            let stream = device.create_stream().unwrap();
            stream.wait_event(&event).unwrap();
            stream.synchronize().unwrap();
            tell("synced");
        }
        other => panic!("unknown role {other}"),
    }
}

fn physical_exchange(importers: Importers) {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    // Whitelisting needs an export first.
    assert_argument(phys.allow(&[Pid::from_raw(1)]));
    let mut mem = range.map::<u32>(0, phys).unwrap();
    mem.copy_from_host(&vec![123; mem.len()]).unwrap();
    let handle = mem.physical().export(importers).unwrap();
    // One shareable handle per allocation.
    assert_code(mem.physical().export(importers), AclError::PARAM_INVALID);
    // Importing in the exporting process is not supported.
    assert_code(
        PhysicalMemory::import(&device, handle, MIB2),
        AclError::PARAM_INVALID,
    );
    let mut peer = Peer::spawn("physical");
    let whitelisted = importers == Importers::Whitelisted;
    peer.say(if whitelisted { "whitelist" } else { "open" });
    peer.say(handle);
    peer.say(MIB2);
    if whitelisted {
        whitelist(&mut peer, |pids| mem.physical().allow(pids));
    }
    assert_eq!(peer.hear(), "rewritten");
    peer.finish();
    assert!(
        mem.to_vec().unwrap().iter().all(|&x| x == 45),
        "the child's values"
    );
}

#[test]
fn physical_memory_is_shared_with_a_whitelisted_process() {
    physical_exchange(Importers::Whitelisted);
}

#[test]
fn physical_memory_is_shared_with_any_process() {
    physical_exchange(Importers::Anyone);
}

fn ipc_memory_exchange(importers: Importers) {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let values: Vec<u32> = (0..1024).collect();
    let buf = DeviceBuffer::from_slice(&device, &values, MallocPolicy::HugeFirst).unwrap();
    let mut export = IpcMemExport::new(buf, importers).unwrap();
    assert!(export.key().as_bytes().len() <= 64);
    assert_code(
        IpcMemImport::<u32>::open(&device, export.key(), IpcImportFlags::empty()),
        AclError::PARAM_INVALID,
    );
    let mut peer = Peer::spawn("ipc-memory");
    let whitelisted = importers == Importers::Whitelisted;
    peer.say(if whitelisted { "whitelist" } else { "open" });
    peer.say(export.key());
    if whitelisted {
        whitelist(&mut peer, |pids| export.allow(pids));
    }
    assert_eq!(peer.hear(), "rewritten");
    let back = export.buffer().copy_to_vec().unwrap();
    assert!(
        back.iter().enumerate().all(|(i, &x)| x == 2 * i as u32),
        "the child's values"
    );
    // Still the exporter's memory.
    export.fill_bytes(0).unwrap();
    export
        .as_view_mut()
        .into_slice_mut(0..1)
        .unwrap()
        .copy_from_host(&[7])
        .unwrap();
    export.copy_from_host(&vec![0; 1024]).unwrap();
    let buf = export.close().unwrap();
    peer.say("closed");
    assert_eq!(peer.hear(), "refused");
    peer.finish();
    assert_eq!(buf.copy_to_vec().unwrap()[5], 0);
}

#[test]
fn ipc_memory_is_shared_with_a_whitelisted_process() {
    ipc_memory_exchange(Importers::Whitelisted);
}

#[test]
fn ipc_memory_is_shared_with_any_process() {
    ipc_memory_exchange(Importers::Anyone);
}

fn notify_exchange(importers: Importers) {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let notify = Notify::new(&device).unwrap();
    let nkey = notify.export(importers).unwrap();
    let export = IpcMemExport::new(
        DeviceBuffer::<u64>::zeroed(&device, 512, MallocPolicy::HugeFirst).unwrap(),
        Importers::Anyone,
    )
    .unwrap();
    // The wait is queued before the other process knows the keys; the copy after it (into
    // pinned memory: a copy into pageable memory would complete before the enqueue returns)
    // reads the value.
    let stream = device.create_stream().unwrap();
    let mut out = HostBuffer::<u64>::zeroed(&device, 512).unwrap();
    let mut peer = Peer::spawn("notify");
    let whitelisted = importers == Importers::Whitelisted;
    stream
        .scope(|s| {
            s.wait_notify(&notify, Some(PATIENCE))?;
            s.copy(&mut out, &export)?;
            peer.say(if whitelisted { "whitelist" } else { "open" });
            peer.say(&nkey);
            peer.say(export.key());
            if whitelisted {
                whitelist(&mut peer, |pids| notify.allow(pids));
            }
            assert_eq!(peer.hear(), "recorded");
            Ok(())
        })
        .unwrap();
    assert_eq!(out[..2], [123, 0]);
    peer.finish();
}

#[test]
fn a_notify_is_recorded_by_a_whitelisted_process() {
    notify_exchange(Importers::Whitelisted);
}

#[test]
fn a_notify_is_recorded_by_any_process() {
    notify_exchange(Importers::Anyone);
}

#[test]
fn an_ipc_event_is_opened_by_another_process() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    // Only events created with the IPC flag have a handle.
    assert_code(
        device.create_event().unwrap().ipc_handle(),
        AclError::PARAM_INVALID,
    );
    let event = device.create_event_with_flags(EventFlags::IPC).unwrap();
    let handle = event.ipc_handle().unwrap();
    assert_eq!(IpcEventHandle::from_bytes(handle.to_bytes()), handle);
    let stream = device.create_stream().unwrap();
    let (release, held) = channel::<()>();
    let mut peer = Peer::spawn("ipc-event");
    stream
        .launch_host_fn(move || {
            let _ = held.recv_timeout(PATIENCE);
        })
        .unwrap();
    event.record(&stream).unwrap();
    peer.say(handle);
    assert_eq!(peer.hear(), "pending");
    release.send(()).unwrap();
    assert_eq!(peer.hear(), "synced");
    peer.finish();
    stream.synchronize().unwrap();
    assert!(event.is_complete().unwrap());
}

#[test]
fn keys_and_handles_are_checked_values() {
    let e = "".parse::<IpcMemKey>().unwrap_err();
    assert!(matches!(e, Error::Argument { .. }));
    assert!(IpcMemKey::new(vec![b'a'; 65]).is_err());
    assert!(IpcMemKey::new(vec![b'a'; 64]).is_ok());
    assert!(NotifyKey::new(*b"a\0b").is_err());
    assert!("xyz".parse::<IpcEventHandle>().is_err());
    assert!("zz".repeat(64).parse::<IpcEventHandle>().is_err());
    assert_eq!("42".parse::<ShareableHandle>().unwrap().as_raw(), 42);
    assert_eq!(" 7 ".parse::<Pid>().unwrap(), Pid::from_raw(7));
    // A key nobody exported is refused by the runtime.
    let rt = rt();
    let device = rt.device(0).unwrap();
    let bogus: IpcMemKey = "not-a-key".parse().unwrap();
    assert_code(
        IpcMemImport::<u8>::open(&device, &bogus, IpcImportFlags::empty()),
        AclError::PARAM_INVALID,
    );
    let bogus: NotifyKey = "not-a-key".parse().unwrap();
    assert_code(
        ImportedNotify::open(&device, &bogus, NotifyImportFlags::empty()),
        AclError::PARAM_INVALID,
    );
    // An empty buffer cannot be exported; it comes back.
    let empty = DeviceBuffer::<u8>::zeroed(&device, 0, MallocPolicy::HugeFirst).unwrap();
    let e = IpcMemExport::new(empty, Importers::Anyone).unwrap_err();
    assert!(matches!(e.error(), Error::Argument { .. }));
    assert!(e.into_handle().is_empty());
}
