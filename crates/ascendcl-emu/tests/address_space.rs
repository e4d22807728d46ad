//! Device memory as its own address space, through the C functions: a host dereference of
//! device memory faults with a message naming the allocation (in a child process: this binary
//! run again in a role), `ASCENDCL_EMU_HOST_ACCESS=1` allows it, pinned, registered and managed
//! memory stay host-accessible; virtual memory mappings placed back to back are one range, and an
//! access where nothing is mapped is 107000, never a crash; `aclrtMemSetAccess` with a host
//! location opens a mapping to the host.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

/// The environment variable that puts this binary in a child role.
const ROLE: &str = "ASCENDCL_EMU_TEST_ROLE";

const MIB2: usize = 2 << 20;

/// Runs this binary's `child` test in `role` with the extra environment `env`: exit status,
/// stdout, stderr.
fn run_child(role: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(ROLE, role);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The address a child printed after `@ <what> `.
fn printed(out: &str, what: &str) -> String {
    let tag = format!("@ {what} ");
    out.lines()
        .find_map(|l| l.split(&tag).nth(1))
        .unwrap_or_else(|| panic!("the child did not print {what:?}: {out}"))
        .trim()
        .to_string()
}

fn physical_prop() -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: ACL_HBM_MEM_HUGE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    }
}

/// A reservation of `n` × 2 MiB with a physical allocation of 2 MiB mapped at each offset of
/// `mapped` (in units of 2 MiB); unmapped, freed and released on drop.
struct Reserved {
    va: *mut c_void,
    maps: Vec<(*mut c_void, aclrtDrvMemHandle)>,
}

impl Reserved {
    fn new(n: usize, mapped: &[usize]) -> Reserved {
        let mut va = null_mut();
        ok(unsafe { aclrtReserveMemAddress(&mut va, n * MIB2, 0, null_mut(), 0) });
        let mut maps = Vec::new();
        for &i in mapped {
            let mut h = null_mut();
            ok(unsafe { aclrtMallocPhysical(&mut h, MIB2, &physical_prop(), 0) });
            let at = va.wrapping_byte_add(i * MIB2);
            ok(unsafe { aclrtMapMem(at, MIB2, 0, h, 0) });
            maps.push((at, h));
        }
        Reserved { va, maps }
    }

    fn at(&self, off: usize) -> *mut c_void {
        self.va.wrapping_byte_add(off)
    }

    /// Unmaps the mapping at offset `i` × 2 MiB (kept for the drop to free its memory).
    fn unmap(&mut self, i: usize) {
        let at = self.at(i * MIB2);
        ok(unsafe { aclrtUnmapMem(at) });
        for m in &mut self.maps {
            if m.0 == at {
                m.0 = null_mut();
            }
        }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        for (at, h) in &self.maps {
            if !at.is_null() {
                ok(unsafe { aclrtUnmapMem(*at) });
            }
            ok(unsafe { aclrtFreePhysical(*h) });
        }
        ok(unsafe { aclrtReleaseMemAddress(self.va) });
    }
}

/// The roles of the child process (nothing to do outside one).
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let _d = Dev::new(0);
    match role.as_str() {
        "read-device" => {
            let p = malloc(1000);
            h2d(p, &[7u8; 1000]);
            println!("@ allocation {p:p}");
            let v = unsafe { p.cast::<u8>().add(10).read_volatile() };
            println!("@ read {v}");
        }
        "write-device" => {
            let p = malloc(64);
            println!("@ allocation {p:p}");
            unsafe { p.cast::<u32>().write_volatile(1) };
            println!("@ wrote");
        }
        "read-freed" => {
            let p = malloc(4096);
            free(p);
            println!("@ freed {p:p}");
            let v = unsafe { p.cast::<u8>().read_volatile() };
            println!("@ read {v}");
        }
        "read-mapping" => {
            let r = Reserved::new(1, &[0]);
            println!("@ mapping {:p}", r.va);
            let v = unsafe { r.va.cast::<u8>().read_volatile() };
            println!("@ read {v}");
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn a_host_read_of_device_memory_faults_naming_the_allocation() {
    let (status, out, err) = run_child("read-device", &[]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status}\n{out}\n{err}"
    );
    assert!(!out.contains("@ read"), "the read succeeded: {out}");
    let p = printed(&out, "allocation");
    assert!(
        err.contains(&format!(
            "host code touched device memory at {:#x}",
            usize::from_str_radix(p.trim_start_matches("0x"), 16).unwrap() + 10
        )) && err.contains(&format!(
            "the device allocation of 1000 bytes at {p} (device 0)"
        )),
        "{err}"
    );
}

#[test]
fn a_host_write_of_device_memory_faults_too() {
    let (status, out, err) = run_child("write-device", &[]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status}\n{out}\n{err}"
    );
    assert!(!out.contains("@ wrote"), "{out}");
    let p = printed(&out, "allocation");
    assert!(
        err.contains(&format!("the device allocation of 64 bytes at {p}")),
        "{err}"
    );
}

#[test]
fn a_host_read_of_freed_device_memory_faults_as_device_address_space() {
    let (status, out, err) = run_child("read-freed", &[]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status}\n{out}\n{err}"
    );
    assert!(
        err.contains(&format!(
            "host code touched device memory at {}",
            printed(&out, "freed")
        )) && err.contains("in no live allocation"),
        "{err}"
    );
}

#[test]
fn a_host_read_of_a_virtual_memory_mapping_faults() {
    let (status, out, err) = run_child("read-mapping", &[]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status}\n{out}\n{err}"
    );
    let p = printed(&out, "mapping");
    assert!(
        err.contains(&format!(
            "the virtual memory mapping of 2097152 bytes at {p}"
        )),
        "{err}"
    );
}

#[test]
fn host_access_can_be_allowed_for_the_process() {
    let (status, out, err) = run_child("read-device", &[("ASCENDCL_EMU_HOST_ACCESS", "1")]);
    assert!(status.success(), "{status}\n{out}\n{err}");
    assert!(out.contains("@ read 7"), "{out}");
    let (status, out, err) = run_child("write-device", &[("ASCENDCL_EMU_HOST_ACCESS", "1")]);
    assert!(
        status.success() && out.contains("@ wrote"),
        "{status}\n{out}\n{err}"
    );
}

#[test]
fn pinned_registered_and_managed_memory_stay_host_accessible() {
    let _d = Dev::new(0);
    // Pinned: written by the host, copied to the device and back.
    let pinned = malloc_host(4096);
    unsafe { pinned.cast::<u8>().write_bytes(3, 4096) };
    let dev = malloc(4096);
    ok(unsafe { aclrtMemcpy(dev, 4096, pinned, 4096, ACL_MEMCPY_HOST_TO_DEVICE) });
    unsafe { pinned.cast::<u8>().write_bytes(0, 4096) };
    ok(unsafe { aclrtMemcpy(pinned, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST) });
    assert_eq!(unsafe { pinned.cast::<u8>().add(4095).read() }, 3);
    // Registered.
    let mut page = vec![0u8; 8192];
    let base = page
        .as_mut_ptr()
        .wrapping_add(page.as_ptr().align_offset(4096));
    let mut devp = null_mut();
    ok(unsafe { aclrtHostRegister(base.cast(), 4096, 0, &mut devp) });
    ok(unsafe { aclrtMemcpy(base.cast(), 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST) });
    assert_eq!(unsafe { base.add(17).read() }, 3);
    ok(unsafe { aclrtHostUnregister(base.cast()) });
    // Managed: the host and the device see one buffer.
    let mut m = null_mut();
    ok(unsafe { aclrtMemAllocManaged(&mut m, 4096, ACL_RT_MEM_ATTACH_GLOBAL) });
    unsafe { m.cast::<u8>().write_bytes(9, 4096) };
    ok(unsafe { aclrtMemcpy(dev, 4096, m, 4096, ACL_MEMCPY_DEFAULT) });
    ok(unsafe { aclrtMemset(m, 4096, 1, 16) });
    assert_eq!(unsafe { m.cast::<u8>().read() }, 1);
    let mut back = [0u8; 1];
    d2h(&mut back, dev);
    assert_eq!(back[0], 9);
    free(m);
    free(dev);
    free_host(pinned);
}

#[test]
fn a_copy_spans_mappings_placed_back_to_back() {
    let _d = Dev::new(0);
    let r = Reserved::new(2, &[0, 1]);
    // 1 MiB on each side of the boundary between the two mappings.
    let n = 2 << 20;
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let at = r.at(MIB2 / 2);
    ok(unsafe { aclrtMemcpy(at, n, data.as_ptr().cast(), n, ACL_MEMCPY_HOST_TO_DEVICE) });
    let mut back = vec![0u8; n];
    ok(unsafe {
        aclrtMemcpy(
            back.as_mut_ptr().cast(),
            n,
            at,
            n,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    assert!(back == data);
    // Device to device across the boundary, and a memset over it.
    let dev = malloc(n);
    ok(unsafe { aclrtMemcpy(dev, n, at, n, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    ok(unsafe { aclrtMemset(r.at(MIB2 - 8), 16, 0xee, 16) });
    let mut mid = [0u8; 16];
    d2h(&mut mid, r.at(MIB2 - 8));
    assert_eq!(mid, [0xee; 16]);
    // Queued copies too.
    let s = stream();
    ok(unsafe { aclrtMemcpyAsync(r.at(MIB2 - 4), 8, dev, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyStream(s) });
    let mut word = [0u8; 8];
    d2h(&mut word, r.at(MIB2 - 4));
    assert_eq!(word[..], data[..8]);
    // The whole reservation reads back as one range.
    let mut whole = vec![0u8; 2 * MIB2];
    d2h(&mut whole, r.at(0));
    assert!(whole[MIB2 / 2..MIB2 / 2 + 4] == data[..4]);
    free(dev);
}

/// One C call of a test case.
type Call = Box<dyn Fn() -> aclError>;

#[test]
fn an_access_where_nothing_is_mapped_is_refused_never_a_crash() {
    let _d = Dev::new(0);
    // Mapped at the first 2 MiB of three; the rest of the reservation holds nothing.
    let mut r = Reserved::new(3, &[0, 1]);
    r.unmap(1);
    let unmapped = r.at(MIB2 + 64);
    let host = [1u8; 256];
    let mut out = [0u8; 256];
    let dev = malloc(256);
    let pinned = malloc_host(256);
    let (out_p, host_p) = (
        out.as_mut_ptr().cast::<c_void>(),
        host.as_ptr().cast::<c_void>(),
    );
    let edge = r.at(MIB2 - 16);
    let s = stream();
    let cases: Vec<(&str, Call)> = vec![
        (
            "memcpy H2D into it",
            Box::new(move || unsafe {
                aclrtMemcpy(unmapped, 256, host_p, 256, ACL_MEMCPY_HOST_TO_DEVICE)
            }),
        ),
        (
            "memcpy D2H from it",
            Box::new(move || unsafe {
                aclrtMemcpy(out_p, 256, unmapped, 256, ACL_MEMCPY_DEVICE_TO_HOST)
            }),
        ),
        (
            "memcpy D2D into it",
            Box::new(move || unsafe {
                aclrtMemcpy(unmapped, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_DEVICE)
            }),
        ),
        (
            "memcpy D2D from it",
            Box::new(move || unsafe {
                aclrtMemcpy(dev, 256, unmapped, 256, ACL_MEMCPY_DEVICE_TO_DEVICE)
            }),
        ),
        (
            "memcpy H2H into it",
            Box::new(move || unsafe {
                aclrtMemcpy(unmapped, 256, host_p, 256, ACL_MEMCPY_HOST_TO_HOST)
            }),
        ),
        (
            "memcpy D2H into it",
            Box::new(move || unsafe {
                aclrtMemcpy(unmapped, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST)
            }),
        ),
        (
            "memset",
            Box::new(move || unsafe { aclrtMemset(unmapped, 256, 0, 256) }),
        ),
        (
            "memset across the end of a mapping",
            Box::new(move || unsafe { aclrtMemset(edge, 256, 0, 32) }),
        ),
        (
            "memcpy from a mapping into the hole",
            Box::new(move || unsafe {
                aclrtMemcpy(out_p, 256, edge, 32, ACL_MEMCPY_DEVICE_TO_HOST)
            }),
        ),
    ];
    let async_cases: Vec<(&str, Call)> = vec![
        (
            "memset async",
            Box::new(move || unsafe { aclrtMemsetAsync(unmapped, 256, 0, 256, s) }),
        ),
        (
            "memcpy async D2H into it (as pageable memory)",
            Box::new(move || unsafe {
                aclrtMemcpyAsync(unmapped, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST, s)
            }),
        ),
        (
            "memcpy async H2D from it (as pageable memory)",
            Box::new(move || unsafe {
                aclrtMemcpyAsync(dev, 256, unmapped, 256, ACL_MEMCPY_HOST_TO_DEVICE, s)
            }),
        ),
        (
            "memcpy async from pinned memory",
            Box::new(move || unsafe {
                aclrtMemcpyAsync(unmapped, 256, pinned, 256, ACL_MEMCPY_DEFAULT, s)
            }),
        ),
    ];
    for (what, call) in cases.into_iter().chain(async_cases) {
        assert_eq!(AclError(call()), AclError::PARAM_INVALID, "{what}");
        let m = take_msg();
        assert!(
            m.contains("where nothing is mapped") || m.contains("runs past the mapped part"),
            "{what}: {m}"
        );
    }
    // Registering it as host memory is refused as well.
    let mut devp = null_mut();
    err(
        unsafe { aclrtHostRegister(unmapped, 4096, 0, &mut devp) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtHostRegisterV2(r.at(2 * MIB2), 4096, ACL_HOST_REG_MAPPED) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyStream(s) });
    free_host(pinned);
    free(dev);
}

#[test]
fn set_access_with_a_host_location_opens_a_mapping_to_the_host() {
    let _d = Dev::new(0);
    let r = Reserved::new(1, &[0]);
    let mut desc = aclrtMemAccessDesc {
        flags: ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_HOST,
        },
        rsv: [0; 12],
    };
    ok(unsafe { aclrtMemSetAccess(r.va, MIB2, &mut desc, 1) });
    // Host code now reads and writes the mapping directly (a child shows the same read faults
    // without the grant: a_host_read_of_a_virtual_memory_mapping_faults).
    unsafe { r.va.cast::<u64>().add(5).write_volatile(0x5151) };
    let mut back = [0u8; 8];
    d2h(&mut back, r.at(40));
    assert_eq!(u64::from_ne_bytes(back), 0x5151);
    h2d(r.at(48), &7u64.to_ne_bytes());
    assert_eq!(unsafe { r.va.cast::<u64>().add(6).read_volatile() }, 7);
}

/// A word of device memory that stream tasks write (`aclrtValueWrite`: an atomic store on the
/// stream's worker) while host threads read and write it with synchronous copies, as
/// `ascendcl::DeviceWord::get` and `set` do: every copy of an aligned word is one atomic access,
/// so the words read are whole values (and ThreadSanitizer sees no race:
/// `cargo +nightly test -Zbuild-std --target x86_64-unknown-linux-gnu` with
/// `RUSTFLAGS=-Zsanitizer=thread`, this test).
#[test]
fn synchronous_copies_of_a_word_are_atomic_with_value_writes() {
    let _d = Dev::new(0);
    let word = malloc(8);
    let both = |i: u64| i | (i << 32);
    h2d(word, &both(1).to_ne_bytes());
    let s = stream();
    let word_addr = word as usize;
    let stream_addr = s as usize;
    let writer = std::thread::spawn(move || {
        let _d = Dev::new(0);
        for i in 1..2000u64 {
            ok(unsafe {
                aclrtValueWrite(
                    word_addr as *mut c_void,
                    both(i),
                    0,
                    stream_addr as aclrtStream,
                )
            });
        }
        ok(unsafe { aclrtSynchronizeStream(stream_addr as aclrtStream) });
    });
    let mut seen = 0;
    while !writer.is_finished() || seen < 100 {
        let mut b = [0u8; 8];
        d2h(&mut b, word);
        let v = u64::from_ne_bytes(b);
        assert_eq!(v >> 32, v & 0xffff_ffff, "a torn word: {v:#x}");
        h2d(word, &b);
        seen += 1;
    }
    writer.join().unwrap();
    ok(unsafe { aclrtDestroyStream(s) });
    free(word);
}
