//! Memory and notifies shared between processes, for real: IPC memory by key, physical memory
//! by shareable handle, notifies by key, each exchanged with a child process (this test binary
//! run again in a child role) that sees and changes the same bytes; pid whitelists enforced; and
//! the codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::ffi::{CStr, CString, c_char};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The environment variable that puts this binary in a child role.
const ROLE: &str = "ASCENDCL_EMU_TEST_CHILD";
/// The environment variable that hands the child a key or handle.
const ARG: &str = "ASCENDCL_EMU_TEST_ARG";

/// A child process running this binary's `child` test in a role.
struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// The child's other output, for failure messages.
    seen: String,
}

impl Peer {
    fn spawn(role: &str, arg: &str) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
            .env(ROLE, role)
            .env(ARG, arg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Peer {
            child,
            input,
            output,
            seen: String::new(),
        }
    }

    /// The next line the child's role printed (`@ ...`), without the marker.
    fn line(&mut self) -> String {
        loop {
            let mut l = String::new();
            if self.output.read_line(&mut l).unwrap() == 0 {
                let mut e = String::new();
                if let Some(mut err) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = err.read_to_string(&mut e);
                }
                panic!("the child ended without saying more:\n{}{e}", self.seen);
            }
            if let Some(rest) = l.strip_prefix("@ ") {
                return rest.trim_end().to_string();
            }
            self.seen.push_str(&l);
        }
    }

    fn say(&mut self, s: &str) {
        writeln!(self.input, "{s}").unwrap();
    }

    /// Waits for the child; it must succeed.
    fn finish(self) {
        drop(self.input);
        let out = self.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the child failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// In the child: prints a line for the parent.
fn tell(s: &str) {
    println!("\n@ {s}");
}

/// In the child: waits for the parent's next line.
fn hear() -> String {
    let mut l = String::new();
    std::io::stdin().read_line(&mut l).unwrap();
    l.trim_end().to_string()
}

fn my_pid() -> i32 {
    let mut p = 0;
    ok(unsafe { aclrtDeviceGetBareTgid(&mut p) });
    p
}

fn key_of(buf: &[c_char; 65]) -> String {
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The child roles. A no-op in an ordinary test run.
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let arg = std::env::var(ARG).unwrap_or_default();
    let _d = Dev::new(0);
    match role.as_str() {
        // Imports IPC memory after the parent whitelisted it; checks and rewrites the bytes.
        "ipc-memory" => {
            let key = CString::new(arg).unwrap();
            let mut p = null_mut();
            // Not whitelisted yet.
            err(
                unsafe { aclrtIpcMemImportByKey(&mut p, key.as_ptr(), 0) },
                AclError::PARAM_INVALID,
            );
            tell(&my_pid().to_string());
            assert_eq!(hear(), "whitelisted");
            ok(unsafe { aclrtIpcMemImportByKey(&mut p, key.as_ptr(), 0) });
            // The import is one block of the exported size.
            let (mut base, mut size) = (null_mut(), 0usize);
            ok(unsafe { aclrtMemGetAddressRange(p, &mut base, &mut size) });
            assert_eq!((base, size), (p, 4096));
            let mut bytes = [0u8; 4096];
            d2h(&mut bytes, p);
            assert!(bytes.iter().all(|b| *b == 123), "the parent's bytes");
            h2d(p, &[45u8; 4096]);
            ok(unsafe { aclrtIpcMemClose(key.as_ptr()) });
            tell("rewritten");
            // After the exporter closed the key, imports fail.
            assert_eq!(hear(), "closed");
            err(
                unsafe { aclrtIpcMemImportByKey(&mut p, key.as_ptr(), 0) },
                AclError::PARAM_INVALID,
            );
            tell("refused");
        }
        // Imports a physical allocation by shareable handle, maps it, checks and rewrites it.
        "vmm" => {
            let sh: u64 = arg.parse().unwrap();
            let mut h = null_mut();
            err(
                unsafe { aclrtMemImportFromShareableHandle(sh, 0, &mut h) },
                AclError::PARAM_INVALID,
            );
            tell(&my_pid().to_string());
            assert_eq!(hear(), "whitelisted");
            ok(unsafe { aclrtMemImportFromShareableHandle(sh, 0, &mut h) });
            let mut va = null_mut();
            ok(unsafe { aclrtReserveMemAddress(&mut va, 2 << 20, 0, null_mut(), 0) });
            ok(unsafe { aclrtMapMem(va, 2 << 20, 0, h, 0) });
            let mut bytes = vec![0u8; 2 << 20];
            d2h(&mut bytes, va);
            assert!(bytes.iter().all(|b| *b == 0x5a), "the parent's bytes");
            ok(unsafe { aclrtMemset(va, 2 << 20, 0x3c, 2 << 20) });
            ok(unsafe { aclrtUnmapMem(va) });
            ok(unsafe { aclrtReleaseMemAddress(va) });
            ok(unsafe { aclrtFreePhysical(h) });
            tell("rewritten");
        }
        // Imports an exported notify (no whitelist needed) and records it after writing a
        // value into IPC memory the parent exported to everyone.
        "notify" => {
            let mut parts = arg.split(' ');
            let nkey = CString::new(parts.next().unwrap()).unwrap();
            let mkey = CString::new(parts.next().unwrap()).unwrap();
            let mut n = null_mut();
            ok(unsafe { aclrtNotifyImportByKey(&mut n, nkey.as_ptr(), 0) });
            let mut p = null_mut();
            ok(unsafe { aclrtIpcMemImportByKey(&mut p, mkey.as_ptr(), 0) });
            let s = stream();
            // An imported notify is recorded, never waited on here.
            err(
                unsafe { aclrtWaitAndResetNotify(n, s, 0) },
                AclError::PARAM_INVALID,
            );
            let value = 123u32.to_ne_bytes();
            ok(unsafe {
                aclrtMemcpyAsync(p, 4, value.as_ptr().cast(), 4, ACL_MEMCPY_HOST_TO_DEVICE, s)
            });
            ok(unsafe { aclrtRecordNotify(n, s) });
            ok(unsafe { aclrtSynchronizeStream(s) });
            ok(unsafe { aclrtIpcMemClose(mkey.as_ptr()) });
            ok(unsafe { aclrtDestroyNotify(n) });
            ok(unsafe { aclrtDestroyStream(s) });
            tell("recorded");
        }
        // Opens an IPC event whose record is held back in the parent, then synchronises on it.
        "ipc-event" => {
            let bytes: Vec<u8> = (0..arg.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&arg[i..i + 2], 16).unwrap())
                .collect();
            let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
            for (d, b) in h.reserved.iter_mut().zip(bytes) {
                *d = b as c_char;
            }
            let mut ev = null_mut();
            err(
                unsafe { aclrtIpcOpenEventHandle(h, null_mut()) },
                AclError::INVALID_PARAM,
            );
            ok(unsafe { aclrtIpcOpenEventHandle(h, &mut ev) });
            let mut st = 9;
            ok(unsafe { aclrtQueryEventStatus(ev, &mut st) });
            assert_eq!(
                st, ACL_EVENT_RECORDED_STATUS_NOT_READY,
                "the record is in flight"
            );
            tell("pending");
            ok(unsafe { aclrtSynchronizeEvent(ev) });
            ok(unsafe { aclrtQueryEventStatus(ev, &mut st) });
            assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
            ok(unsafe { aclrtDestroyEvent(ev) });
            tell("synced");
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn ipc_memory_is_shared_with_a_whitelisted_process() {
    let _d = Dev::new(0);
    let p = malloc(4096);
    h2d(p, &[123u8; 4096]);
    let mut key = [0 as c_char; 65];
    ok(unsafe { aclrtIpcMemGetExportKey(p, 4096, key.as_mut_ptr(), 65, 0) });
    let k = key_of(&key);
    assert!(k.len() <= 64);
    let mut peer = Peer::spawn("ipc-memory", &k);
    let pid: i32 = peer.line().parse().unwrap();
    let kc = CString::new(k.clone()).unwrap();
    let mut pids = [pid];
    ok(unsafe { aclrtIpcMemSetImportPid(kc.as_ptr(), pids.as_mut_ptr(), 1) });
    peer.say("whitelisted");
    assert_eq!(peer.line(), "rewritten");
    // The child wrote into the same bytes.
    let mut bytes = [0u8; 4096];
    d2h(&mut bytes, p);
    assert!(bytes.iter().all(|b| *b == 45));
    ok(unsafe { aclrtIpcMemClose(kc.as_ptr()) });
    peer.say("closed");
    assert_eq!(peer.line(), "refused");
    peer.finish();
    free(p);
}

#[test]
fn physical_memory_is_shared_by_shareable_handle() {
    let _d = Dev::new(0);
    let prop = aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: ACL_HBM_MEM_HUGE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    };
    let mut h = null_mut();
    ok(unsafe { aclrtMallocPhysical(&mut h, 2 << 20, &prop, 0) });
    let mut va = null_mut();
    ok(unsafe { aclrtReserveMemAddress(&mut va, 2 << 20, 0, null_mut(), 0) });
    ok(unsafe { aclrtMapMem(va, 2 << 20, 0, h, 0) });
    ok(unsafe { aclrtMemset(va, 2 << 20, 0x5a, 2 << 20) });
    let mut sh = 0u64;
    ok(unsafe { aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &mut sh) });
    // One shareable handle per allocation.
    let mut again = 0u64;
    err(
        unsafe { aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &mut again) },
        AclError::PARAM_INVALID,
    );
    let mut peer = Peer::spawn("vmm", &sh.to_string());
    let pid: i32 = peer.line().parse().unwrap();
    let mut pids = [pid];
    ok(unsafe { aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 1) });
    peer.say("whitelisted");
    assert_eq!(peer.line(), "rewritten");
    peer.finish();
    let mut bytes = vec![0u8; 2 << 20];
    d2h(&mut bytes, va);
    assert!(bytes.iter().all(|b| *b == 0x3c), "the child's memset");
    ok(unsafe { aclrtUnmapMem(va) });
    ok(unsafe { aclrtReleaseMemAddress(va) });
    ok(unsafe { aclrtFreePhysical(h) });
}

#[test]
fn a_notify_recorded_by_another_process_releases_the_wait() {
    let _d = Dev::new(0);
    let mut n = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut n, 0) });
    let mut nkey = [0 as c_char; 65];
    ok(unsafe {
        aclrtNotifyGetExportKey(
            n,
            nkey.as_mut_ptr(),
            65,
            ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION as u64,
        )
    });
    let p = malloc(4096);
    h2d(p, &[0u8; 4]);
    let mut mkey = [0 as c_char; 65];
    ok(unsafe {
        aclrtIpcMemGetExportKey(
            p,
            4096,
            mkey.as_mut_ptr(),
            65,
            ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION as u64,
        )
    });
    // The wait is queued before the other process exists; the copy after it reads the value.
    let s = stream();
    ok(unsafe { aclrtWaitAndResetNotify(n, s, 30) });
    let mut out = [0u8; 4];
    let h = malloc_host(4);
    ok(unsafe { aclrtMemcpyAsync(h, 4, p, 4, ACL_MEMCPY_DEVICE_TO_HOST, s) });
    let mut peer = Peer::spawn("notify", &format!("{} {}", key_of(&nkey), key_of(&mkey)));
    assert_eq!(peer.line(), "recorded");
    ok(unsafe { aclrtSynchronizeStream(s) });
    unsafe { std::ptr::copy_nonoverlapping(h.cast::<u8>(), out.as_mut_ptr(), 4) };
    assert_eq!(u32::from_ne_bytes(out), 123);
    peer.finish();
    free_host(h);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyNotify(n) });
    free(p);
}

#[test]
fn sharing_checks_in_one_process() {
    let _d = Dev::new(0);
    let p = malloc(4096);
    let mut key = [0 as c_char; 65];
    let kp = key.as_mut_ptr();
    // aclrtIpcMemGetExportKey: NULLs 100000, size/len 0 and flags 107000.
    err(
        unsafe { aclrtIpcMemGetExportKey(null_mut(), 4096, kp, 65, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 4096, null_mut(), 65, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 0, kp, 65, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 4096, kp, 0, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 4096, kp, 65, 2) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 8192, kp, 65, 0) },
        AclError::PARAM_INVALID,
    );
    let mut host = [0u8; 64];
    err(
        unsafe { aclrtIpcMemGetExportKey(host.as_mut_ptr().cast(), 64, kp, 65, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemGetExportKey(p, 4096, kp, 8, 0) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtIpcMemGetExportKey(p, 4096, kp, 65, 0) });
    let mut pids = [1i32];
    err(
        unsafe { aclrtIpcMemSetImportPid(kp, null_mut(), 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcMemSetImportPid(kp, pids.as_mut_ptr(), 0) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtIpcMemSetImportPid(kp, pids.as_mut_ptr(), 1) });
    // Importing in the exporting process is not supported; bad keys and flags are refused.
    let mut q = null_mut();
    err(
        unsafe { aclrtIpcMemImportByKey(null_mut(), kp, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcMemImportByKey(&mut q, kp, 2) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemImportByKey(&mut q, kp, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtIpcMemImportByKey(&mut q, c"not-a-key".as_ptr(), 0) },
        AclError::PARAM_INVALID,
    );
    // The bytes stay where they were after the export.
    h2d(p, &[9u8; 64]);
    let mut back = [0u8; 64];
    d2h(&mut back, p);
    assert_eq!(back, [9u8; 64]);
    err(unsafe { aclrtIpcMemClose(null()) }, AclError::INVALID_PARAM);
    ok(unsafe { aclrtIpcMemClose(kp) });
    err(unsafe { aclrtIpcMemClose(kp) }, AclError::PARAM_INVALID);
    free(p);
    err(
        unsafe { aclrtDeviceGetBareTgid(null_mut()) },
        AclError::INVALID_PARAM,
    );
    assert_eq!(my_pid(), std::process::id() as i32);
}

fn prop(attr: aclrtMemAttr, loc: aclrtMemLocationType, id: u32) -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: attr,
        location: aclrtMemLocation { id, type_: loc },
        reserve: 0,
    }
}

#[test]
fn virtual_memory_checks() {
    let _d = Dev::new(0);
    let dev = ACL_MEM_LOCATION_TYPE_DEVICE;
    let host = ACL_MEM_LOCATION_TYPE_HOST;
    let mut g = 0usize;
    let mut pr = prop(ACL_HBM_MEM_HUGE, dev, 0);
    err(
        unsafe { aclrtMemGetAllocationGranularity(null_mut(), 0, &mut g) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemGetAllocationGranularity(&mut pr, 0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    for (attr, loc, want) in [
        (ACL_HBM_MEM_HUGE, dev, 2usize << 20),
        (ACL_HBM_MEM_NORMAL, dev, 2 << 20),
        (ACL_HBM_MEM_HUGE1G, dev, 1 << 30),
        (ACL_MEM_NORMAL, host, 4096),
        (ACL_DDR_MEM_HUGE, host, 2 << 20),
    ] {
        let mut pr = prop(attr, loc, 0);
        ok(unsafe { aclrtMemGetAllocationGranularity(&mut pr, 1, &mut g) });
        assert_eq!(g, want, "attr {attr}");
    }
    let mut ddr_on_device = prop(ACL_DDR_MEM_NORMAL, dev, 0);
    err(
        unsafe { aclrtMemGetAllocationGranularity(&mut ddr_on_device, 0, &mut g) },
        AclError::INVALID_PARAM,
    );
    let mut bad_dev = prop(ACL_HBM_MEM_HUGE, dev, 99);
    err(
        unsafe { aclrtMemGetAllocationGranularity(&mut bad_dev, 0, &mut g) },
        AclError::INVALID_DEVICEID,
    );

    // aclrtMallocPhysical, in the runtime's order.
    let mut h = null_mut();
    let good = prop(ACL_HBM_MEM_HUGE, dev, 0);
    err(
        unsafe { aclrtMallocPhysical(null_mut(), 1, &good, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, null(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocPhysical(&mut h, 0, &good, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &good, 1) },
        AclError::INVALID_PARAM,
    );
    let mut t = good;
    t.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &t, 0) },
        AclError::INVALID_PARAM,
    );
    let mut t = good;
    t.allocationType = 1;
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &t, 0) },
        AclError::INVALID_PARAM,
    );
    for l in [ACL_MEM_LOCATION_TYPE_UNREGISTERED, 3] {
        let t = prop(ACL_HBM_MEM_HUGE, l, 0);
        err(
            unsafe { aclrtMallocPhysical(&mut h, 1, &t, 0) },
            AclError::INVALID_PARAM,
        );
    }
    for a in [
        ACL_DDR_MEM,
        ACL_HBM_MEM,
        ACL_HBM_MEM_P2P_HUGE,
        ACL_HBM_MEM_P2P_NORMAL,
        18,
    ] {
        let t = prop(a, dev, 0);
        err(
            unsafe { aclrtMallocPhysical(&mut h, 1, &t, 0) },
            AclError::INVALID_PARAM,
        );
    }
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &ddr_on_device, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &bad_dev, 0) },
        AclError::INVALID_DEVICEID,
    );
    let one_g_host = prop(ACL_MEM_HUGE1G, host, 0);
    err(
        unsafe { aclrtMallocPhysical(&mut h, 1, &one_g_host, 0) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Beyond the device's capacity: 207001.
    let cap = ascendcl_emu::config().memory as usize;
    err(
        unsafe { aclrtMallocPhysical(&mut h, cap + 1, &good, 0) },
        AclError::MEMORY_ALLOCATION,
    );
    // A small size is rounded up to the granularity.
    ok(unsafe { aclrtMallocPhysical(&mut h, 1, &good, 0) });

    // Reservations.
    let mut va = null_mut();
    err(
        unsafe { aclrtReserveMemAddress(null_mut(), 1, 0, null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtReserveMemAddress(&mut va, 0, 0, null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtReserveMemAddress(&mut va, 1, 0, null_mut(), 2) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtReserveMemAddress(&mut va, 8 << 20, 0, null_mut(), 0) });
    assert_eq!(va as usize % (2 << 20), 0);
    // Mapping: NULLs, size 0 and flags 100000; offset, size and place 107000.
    err(
        unsafe { aclrtMapMem(null_mut(), 2 << 20, 0, h, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMapMem(va, 2 << 20, 0, null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMapMem(va, 0, 0, h, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMapMem(va, 2 << 20, 0, h, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMapMem(va, 2 << 20, 4096, h, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMapMem(va, 4 << 20, 0, h, 0) },
        AclError::PARAM_INVALID,
    );
    let outside = (va as usize + (7 << 20)) as *mut c_void;
    err(
        unsafe { aclrtMapMem(outside, 2 << 20, 0, h, 0) },
        AclError::PARAM_INVALID,
    );
    // At an address that is not a multiple of the allocation's granularity (2 MiB): 107000.
    for off in [1usize, 4096, 1 << 20] {
        let at = (va as usize + off) as *mut c_void;
        err(
            unsafe { aclrtMapMem(at, 2 << 20, 0, h, 0) },
            AclError::PARAM_INVALID,
        );
    }
    // Normal host pages have the page size as granularity: a page boundary will do.
    let mut small = null_mut();
    ok(unsafe { aclrtMallocPhysical(&mut small, 4096, &prop(ACL_MEM_NORMAL, host, 0), 0) });
    let page = (va as usize + 4096) as *mut c_void;
    err(
        unsafe { aclrtMapMem(page.cast::<u8>().add(8).cast(), 4096, 0, small, 0) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMapMem(page, 4096, 0, small, 0) });
    ok(unsafe { aclrtUnmapMem(page) });
    ok(unsafe { aclrtFreePhysical(small) });
    let second = (va as usize + (2 << 20)) as *mut c_void;
    ok(unsafe { aclrtMapMem(second, 2 << 20, 0, h, 0) });
    err(
        unsafe { aclrtMapMem(second, 2 << 20, 0, h, 0) },
        AclError::PARAM_INVALID,
    );
    // A mapping is device memory: copies and attributes see it.
    h2d(second, &[7u8; 256]);
    let mut attr = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(second, &mut attr) });
    assert_eq!(
        (attr.location.type_, attr.location.id),
        (ACL_MEM_LOCATION_TYPE_DEVICE, 0)
    );
    // aclrtFree refuses it.
    err(unsafe { aclrtFree(second) }, AclError::PARAM_INVALID);
    let (mut loc, mut flag) = (aclrtMemLocation { id: 9, type_: 9 }, 0u64);
    ok(unsafe { aclrtMemGetAccess(second, &mut loc, &mut flag) });
    assert_eq!((loc.type_, flag), (ACL_MEM_LOCATION_TYPE_DEVICE, 3));
    err(
        unsafe { aclrtMemGetAccess(va, &mut loc, &mut flag) },
        AclError::PARAM_INVALID,
    );
    let mut desc = aclrtMemAccessDesc {
        flags: ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        rsv: [0; 12],
    };
    err(
        unsafe { aclrtMemSetAccess(null_mut(), 2 << 20, &mut desc, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemSetAccess(second, 4096, &mut desc, 1) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemSetAccess(second, 2 << 20, &mut desc, 1) });
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    err(
        unsafe { aclrtMemSetAccess(second, 2 << 20, &mut desc, 1) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Release needs the mappings gone; free is deferred while mapped.
    err(
        unsafe { aclrtReleaseMemAddress(va) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtFreePhysical(h) });
    err(unsafe { aclrtFreePhysical(h) }, AclError::INVALID_HANDLE);
    let mut back = [0u8; 256];
    d2h(&mut back, second);
    assert_eq!(back, [7u8; 256], "still mapped after the deferred free");
    err(unsafe { aclrtUnmapMem(va) }, AclError::PARAM_INVALID);
    ok(unsafe { aclrtUnmapMem(second) });
    err(unsafe { aclrtUnmapMem(second) }, AclError::PARAM_INVALID);
    ok(unsafe { aclrtReleaseMemAddress(va) });
    err(
        unsafe { aclrtReleaseMemAddress(va) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtReleaseMemAddress(null_mut()) },
        AclError::INVALID_PARAM,
    );

    // Shareable handles.
    ok(unsafe { aclrtMallocPhysical(&mut h, 1, &good, 0) });
    let mut sh = 0u64;
    err(
        unsafe { aclrtMemExportToShareableHandle(null_mut(), 0, 0, &mut sh) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemExportToShareableHandle(h, 2, 0, &mut sh) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemExportToShareableHandle(h, 0, 0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemExportToShareableHandle(h, 0, 2, &mut sh) },
        AclError::PARAM_INVALID,
    );
    let shp = (&mut sh as *mut u64).cast::<c_void>();
    err(
        unsafe { aclrtMemExportToShareableHandleV2(h, 0, 3, shp) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemExportToShareableHandleV2(h, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, shp) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtMemExportToShareableHandleV2(h, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, shp) });
    let mut pids = [1i32];
    err(
        unsafe { aclrtMemSetPidToShareableHandle(sh, null_mut(), 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 0) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 1) });
    ok(unsafe {
        aclrtMemSetPidToShareableHandleV2(
            shp,
            ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
            pids.as_mut_ptr(),
            1,
        )
    });
    let mut imported = null_mut();
    err(
        unsafe { aclrtMemImportFromShareableHandle(sh, 0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemImportFromShareableHandle(sh, 99, &mut imported) },
        AclError::INVALID_DEVICEID,
    );
    err(
        unsafe { aclrtMemImportFromShareableHandle(sh, 0, &mut imported) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe {
            aclrtMemImportFromShareableHandleV2(
                shp,
                ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                1,
                &mut imported,
            )
        },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtFreePhysical(h) });
    // Freed: the handle is gone.
    err(
        unsafe { aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 1) },
        AclError::PARAM_INVALID,
    );
}

static RELEASE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn hold(_: *mut c_void) {
    while !RELEASE.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn an_ipc_event_record_is_seen_by_another_process() {
    let _d = Dev::new(0);
    let mut plain = null_mut();
    ok(unsafe { aclrtCreateEvent(&mut plain) });
    let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
    err(
        unsafe { aclrtIpcGetEventHandle(null_mut(), &mut h) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcGetEventHandle(plain, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtIpcGetEventHandle(plain, &mut h) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtDestroyEvent(plain) });
    let mut ev = null_mut();
    ok(unsafe { aclrtCreateEventExWithFlag(&mut ev, ACL_EVENT_IPC) });
    // Nothing in flight: complete.
    let mut st = 9;
    ok(unsafe { aclrtQueryEventStatus(ev, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    let s = stream();
    RELEASE.store(false, std::sync::atomic::Ordering::SeqCst);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(hold), null_mut()) });
    ok(unsafe { aclrtRecordEvent(ev, s) });
    ok(unsafe { aclrtIpcGetEventHandle(ev, &mut h) });
    let hex: String = h
        .reserved
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| format!("{:02x}", *c as u8))
        .collect();
    let mut peer = Peer::spawn("ipc-event", &hex);
    assert_eq!(peer.line(), "pending");
    RELEASE.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(peer.line(), "synced");
    peer.finish();
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    ok(unsafe { aclrtDestroyStream(s) });
}
