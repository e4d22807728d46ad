//! Fault injection (process-wide, so these tests run one at a time).
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use ascendcl_emu::{
    FaultSpec, clear_faults, inject_fault, inject_fault_with_code, set_faults_from_str,
};
use common::*;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn nth_call_fails_with_the_documented_code() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _d = Dev::new(0);
    inject_fault("aclrtMalloc", FaultSpec::Nth(3));
    let a = malloc(16);
    let b = malloc(16);
    let mut c = null_mut();
    assert_eq!(
        unsafe { aclrtMalloc(&mut c, 16, 0) },
        AclError::MEMORY_ALLOCATION
    );
    assert!(take_msg().contains("injected"));
    let d = malloc(16);
    clear_faults();
    for p in [a, b, d] {
        free(p);
    }
}

#[test]
fn every_call_fails_and_the_env_syntax_parses() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _d = Dev::new(0);
    set_faults_from_str("aclrtMemcpy:*, aclrtCreateStream:1, aclrtSynchronizeStream:1=507053")
        .unwrap();
    let a = [0u8; 4];
    let mut b = [0u8; 4];
    for _ in 0..3 {
        err(
            unsafe { aclrtMemcpy(b.as_mut_ptr().cast(), 4, a.as_ptr().cast(), 4, 0) },
            AclError::RT_INTERNAL_ERROR,
        );
    }
    let mut s = null_mut();
    err(
        unsafe { aclrtCreateStream(&mut s) },
        AclError::NO_STREAM_RESOURCE,
    );
    let s = stream();
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::DEVICE_MEM_ERROR,
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    clear_faults();
    ok(unsafe { aclrtMemcpy(b.as_mut_ptr().cast(), 4, a.as_ptr().cast(), 4, 0) });
    ok(unsafe { aclrtDestroyStream(s) });
    assert!(set_faults_from_str("aclrtMalloc").is_err());
    assert!(set_faults_from_str("aclrtMalloc:0").is_err());
    assert!(set_faults_from_str("x:1").is_err());
    assert!(set_faults_from_str("aclrtMalloc:1=abc").is_err());
    clear_faults();
}

#[test]
fn pointer_returning_functions_fail_with_null() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    inject_fault_with_code(
        "aclrtGetSocName",
        FaultSpec::Every,
        AclError::RT_INTERNAL_ERROR,
    );
    assert!(unsafe { aclrtGetSocName() }.is_null());
    clear_faults();
    assert!(!unsafe { aclrtGetSocName() }.is_null());
    take_msg();
}

#[test]
fn an_injected_failure_changes_nothing() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _d = Dev::new(0);
    // aclrtMallocHost: the documented 207001; nothing is allocated or charged to the budget.
    inject_fault("aclrtMallocHost", FaultSpec::Nth(1));
    let mut p = null_mut();
    err(
        unsafe { aclrtMallocHost(&mut p, 64) },
        AclError::MEMORY_ALLOCATION,
    );
    assert!(p.is_null());
    assert_eq!(ascendcl_emu::leak_report().host_allocations, 0);
    let h = malloc_host(64);
    free_host(h);
    // aclFinalizeReference(NULL): the fault keeps the reference; the retry drops it.
    let (mut before, mut after) = (0u64, 0u64);
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    ok(unsafe { aclFinalizeReference(&mut before) });
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    inject_fault("aclFinalizeReference", FaultSpec::Nth(1));
    err(
        unsafe { aclFinalizeReference(null_mut()) },
        AclError::RT_INTERNAL_ERROR,
    );
    clear_faults();
    ok(unsafe { aclFinalizeReference(null_mut()) });
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    ok(unsafe { aclFinalizeReference(&mut after) });
    assert!(before >= 1);
    assert_eq!(after, before, "one reference added and one dropped since");
}
