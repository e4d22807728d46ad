//! Configuration from the environment (read once, at first use: this binary sets it first).
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

#[test]
fn environment_configures_the_emulator() {
    // SAFETY (set_var): this is the only test of the binary and runs before any other thread
    // reads the environment.
    unsafe {
        std::env::set_var("ASCENDCL_EMU_DEVICES", "3");
        std::env::set_var("ASCENDCL_EMU_MEMORY", "64M");
        std::env::set_var("ASCENDCL_EMU_SOC", "Ascend310P3");
        std::env::set_var("ASCENDCL_EMU_HOST_MEMORY", "1M");
        std::env::set_var("ASCENDCL_EMU_HUGEPAGES", "off");
        std::env::set_var("ASCENDCL_EMU_FAULTS", "aclrtMallocHost:2");
        std::env::set_var("ASCENDCL_EMU_LEAK_REPORT", "1");
    }
    let c = ascendcl_emu::config();
    assert_eq!(c.devices, 3);
    assert_eq!(c.memory, 64 << 20);
    assert_eq!(c.host_memory, 1 << 20);
    assert_eq!(c.hugepages, ascendcl_emu::HugePages::Off);
    assert!(c.leak_report);
    let soc = unsafe { std::ffi::CStr::from_ptr(aclrtGetSocName()) };
    assert_eq!(soc.to_str().unwrap(), "Ascend310P3");
    let mut n = 0;
    ok(unsafe { aclrtGetDeviceCount(&mut n) });
    assert_eq!(n, 3);
    let _d = Dev::new(2);
    let (mut f, mut t) = (0usize, 0usize);
    ok(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut f, &mut t) });
    assert_eq!((f, t), (64 << 20, 64 << 20));
    // Capacity enforced.
    let a = malloc(40 << 20);
    let mut b = null_mut();
    err(
        unsafe { aclrtMalloc(&mut b, 40 << 20, 0) },
        AclError::MEMORY_ALLOCATION,
    );
    // Huge pages off: HUGE_ONLY fails, HUGE_FIRST uses normal pages.
    err(
        unsafe { aclrtMalloc(&mut b, 4 << 20, ACL_MEM_MALLOC_HUGE_ONLY) },
        AclError::MEMORY_ALLOCATION,
    );
    let h = malloc_policy(4 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    let mut attr = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 0, type_: 0 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(h, &mut attr) });
    assert_eq!(attr.pageSize, 4096);
    assert_eq!(attr.location.id, 2);
    // The fault from the environment: the second aclrtMallocHost fails.
    let p = malloc_host(16);
    let mut q = null_mut();
    err(
        unsafe { aclrtMallocHost(&mut q, 16) },
        AclError::MEMORY_ALLOCATION,
    );
    let r = malloc_host(16);
    // The pinned budget from the environment: 1 MiB.
    err(
        unsafe { aclrtMallocHost(&mut q, 1 << 20) },
        AclError::MEMORY_ALLOCATION,
    );
    free_host(p);
    free_host(r);
    free(h);
    free(a);
    // Programmatic replacement.
    ascendcl_emu::set_config(ascendcl_emu::Config {
        devices: 4,
        ..ascendcl_emu::config()
    });
    ok(unsafe { aclrtGetDeviceCount(&mut n) });
    assert_eq!(n, 4);
    assert_eq!(ascendcl_emu::config::parse_bytes("2k").unwrap(), 2048);
    assert_eq!(ascendcl_emu::config::parse_bytes("1GiB").unwrap(), 1 << 30);
    assert!(ascendcl_emu::config::parse_bytes("lots").is_err());
}
