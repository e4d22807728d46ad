//! Tests of the address space: the two views, the guard, kernel access and the fault handler
//! (in a child process: this test binary run again in a role). Mappings are inspected through
//! `/proc/self/maps` instead of being touched.

use super::map::{self, Pair};
use super::regions::{self, What};
use super::{KernelAccess, Mode, mode};
use rustix::mm::MapFlags;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Command;

/// The mapping line of `/proc/self/maps` that holds `addr`: (start, permissions, file offset,
/// inode).
fn mapping(addr: usize) -> Option<(usize, String, u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (range, perms, offset, _dev, inode) =
            (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        let (s, e) = range.split_once('-')?;
        let (s, e) = (
            usize::from_str_radix(s, 16).ok()?,
            usize::from_str_radix(e, 16).ok()?,
        );
        (s <= addr && addr < e).then(|| {
            (
                s,
                perms.to_string(),
                u64::from_str_radix(offset, 16).unwrap_or(0),
                inode.parse().unwrap_or(0),
            )
        })
    })
}

/// The permissions of the page holding `addr` (`rw-s`, `---p`, ...).
pub(crate) fn perms(addr: usize) -> String {
    mapping(addr).map(|m| m.1).unwrap_or_default()
}

/// The file (inode) and the offset in it of the byte at `addr`.
pub(crate) fn backing(addr: usize) -> Option<(u64, u64)> {
    mapping(addr).map(|(s, _, off, inode)| (inode, off + (addr - s) as u64))
}

/// A device region of its own for a test: two pages of a memory file in both views, registered
/// as an allocation of `size` bytes.
struct TestRegion {
    pair: Pair,
    _fd: OwnedFd,
}

impl TestRegion {
    fn new(size: usize) -> TestRegion {
        let len = size.div_ceil(4096) * 4096;
        let fd = map::memory_file(c"test-region", len, map::Pages::Normal).unwrap();
        let pair = map::reserve(len, 4096, 0).unwrap();
        // SAFETY: the pair was just reserved for this region.
        unsafe { map::map_file(pair, fd.as_fd(), 0, mode(), MapFlags::empty()) }.unwrap();
        regions::add_space(pair.at, pair.len, "test device memory");
        regions::add(pair.at, pair.len, size, What::Allocation, 0);
        TestRegion { pair, _fd: fd }
    }

    fn alias(&self) -> *mut u64 {
        self.pair.alias as *mut u64
    }
}

impl Drop for TestRegion {
    fn drop(&mut self) {
        regions::remove(self.pair.at);
        regions::remove_space(self.pair.at);
        // SAFETY: the region's own pair, no longer registered.
        unsafe { map::release(self.pair) };
    }
}

#[test]
fn both_views_map_the_same_file_and_only_the_alias_is_accessible() {
    let r = TestRegion::new(8192);
    // SAFETY: the alias of the test's own region.
    unsafe { r.alias().write_volatile(7) };
    assert_eq!(backing(r.pair.at), backing(r.pair.alias));
    assert_eq!(perms(r.pair.alias), "rw-s");
    match mode() {
        Mode::Protect => assert_eq!(perms(r.pair.at), "---s"),
        // Keys guard readable and writable pages; without a guard they are simply open.
        Mode::Pkey(_) | Mode::Open => assert_eq!(perms(r.pair.at), "rw-s"),
    }
    // Unmapping keeps the reservation: inaccessible, unbacked.
    // SAFETY: the test's own pair.
    unsafe { map::unreserve(r.pair) }.unwrap();
    assert_eq!(perms(r.pair.at), "---p");
    assert_eq!(perms(r.pair.alias), "---p");
}

#[test]
fn a_kernel_block_reaches_device_memory_and_the_region_closes_after_the_launch() {
    let r = TestRegion::new(4096);
    // SAFETY: the alias of the test's own region.
    unsafe { r.alias().add(3).write_volatile(42) };
    let at = r.pair.at;
    // A block that dereferences the program address (as a host-compiled kernel does), on
    // another thread: the first touch opens the region (page protection) or the thread holds
    // the key.
    let got = std::thread::spawn(move || {
        let access = KernelAccess::default();
        // SAFETY: device memory of the test's region, reached as a kernel block.
        let v = access.run(|| unsafe { (at as *const u64).add(3).read_volatile() });
        let open_during = regions::opens(at);
        drop(access);
        (v, open_during)
    })
    .join()
    .unwrap();
    assert_eq!(got.0, 42);
    if mode() == Mode::Protect {
        assert_eq!(got.1, 1, "opened once for the launch");
        assert_eq!(regions::opens(at), 0);
        assert_eq!(perms(at), "---s", "closed when the launch ended");
    }
    // The runtime's lookup opens a region without a fault, once per launch.
    let access = KernelAccess::default();
    assert!(access.open(at + 100) && access.open(at + 200));
    if mode() == Mode::Protect {
        assert_eq!(regions::opens(at), 1);
        assert_eq!(perms(at), "rw-s");
    }
    assert!(!access.open(at + 4096 * 1000), "not device memory");
    drop(access);
    if mode() == Mode::Protect {
        assert_eq!(perms(at), "---s");
    }
}

/// The environment variable that puts this binary in a child role.
const ROLE: &str = "ASCENDCL_EMU_SPACE_TEST_ROLE";

/// Runs this binary's `child_role` test in `role`; its exit status, stdout and stderr.
fn run_child(role: &str) -> (std::process::ExitStatus, String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "memory::space::tests::child_role",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(ROLE, role)
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A handler installed before the guard's: it records the fault and makes the page accessible,
/// so the faulting access succeeds when retried.
extern "C" fn earlier_handler(_: i32, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel's siginfo; the protection of the faulting page (a page the child owns)
    // changes, with the default key (a page of a protection key stays guarded by a plain
    // mprotect).
    unsafe {
        let addr = (*info).si_addr() as usize & !4095;
        EARLIER.store(addr, std::sync::atomic::Ordering::SeqCst);
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        #[cfg(target_os = "linux")]
        if libc::syscall(libc::SYS_pkey_mprotect, addr, 4096usize, rw, 0) == 0 {
            return;
        }
        libc::mprotect(addr as *mut libc::c_void, 4096, rw);
    }
}

static EARLIER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The roles of the child process (nothing to do outside one).
#[test]
fn child_role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    match role.as_str() {
        "host-touch" => {
            let r = TestRegion::new(5000);
            println!("@ touching {:#x}", r.pair.at + 8);
            // SAFETY: none: this dereference of device memory must fault.
            let v = unsafe { ((r.pair.at + 8) as *const u64).read_volatile() };
            println!("@ read {v} without a fault");
        }
        "chain" => {
            // SAFETY: installs a handler of the SA_SIGINFO signature before the guard's.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = earlier_handler as *const () as libc::sighandler_t;
                sa.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut sa.sa_mask);
                assert_eq!(libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut()), 0);
            }
            // The guard's handler is installed with the first device region.
            let r = TestRegion::new(4096);
            // A fault outside device memory goes to the earlier handler.
            let page = map::reserve(4096, 4096, 0).unwrap().at;
            // SAFETY: an inaccessible page of the child's; the earlier handler opens it.
            let v = unsafe { (page as *const u64).read_volatile() };
            let seen = EARLIER.load(std::sync::atomic::Ordering::SeqCst);
            println!("@ outside {v} {}", seen == page);
            // A host touch of device memory is reported, then passed on too.
            // SAFETY: device memory: the guard reports it, the earlier handler opens it.
            let v = unsafe { (r.pair.at as *const u64).read_volatile() };
            let seen = EARLIER.load(std::sync::atomic::Ordering::SeqCst);
            println!("@ device {v} {}", seen == r.pair.at);
        }
        "overflow" => {
            let _r = TestRegion::new(4096);
            #[allow(unconditional_recursion)]
            fn deep(n: u64) -> u64 {
                let pad = std::hint::black_box([n; 64]);
                deep(pad[3] + 1) + pad[7]
            }
            let _ = std::thread::spawn(|| deep(0)).join();
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn a_host_touch_of_device_memory_faults_naming_the_allocation() {
    if mode() == Mode::Open {
        return;
    }
    let (status, out, err) = run_child("host-touch");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status}\n{out}\n{err}"
    );
    assert!(!out.contains("without a fault"), "{out}");
    let at = out
        .lines()
        .find_map(|l| l.split("@ touching ").nth(1))
        .expect("the child's address");
    assert!(
        err.contains(&format!("host code touched device memory at {at}"))
            && err.contains("the device allocation of 5000 bytes")
            && err.contains("ASCENDCL_EMU_HOST_ACCESS=1"),
        "{err}"
    );
}

#[test]
fn the_handler_passes_other_faults_to_the_handler_installed_before_it() {
    if mode() == Mode::Open {
        return;
    }
    let (status, out, err) = run_child("chain");
    assert!(status.success(), "{status}\n{out}\n{err}");
    assert!(out.contains("@ outside 0 true"), "{out}\n{err}");
    assert!(out.contains("@ device 0 true"), "{out}\n{err}");
    assert!(err.contains("host code touched device memory"), "{err}");
    assert_eq!(
        err.matches("touched device memory").count(),
        1,
        "the fault outside device memory is not reported: {err}"
    );
}

#[test]
fn a_stack_overflow_is_still_reported_by_the_runtime_handler() {
    if mode() == Mode::Open {
        return;
    }
    let (status, out, err) = run_child("overflow");
    assert!(!status.success(), "{out}\n{err}");
    assert!(err.contains("has overflowed its stack"), "{status}\n{err}");
    assert!(!err.contains("touched device memory"), "{err}");
}
