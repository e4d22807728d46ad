//! On an Atlas A3 SoC (this binary emulates the Ascend910_9382) models are there but stream
//! activation and switching are not: the product documentation marks `aclrtActiveStream` and
//! `aclrtSwitchStream` unsupported, and the emulator answers 207000 naming the SoC.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

#[test]
fn a3_has_models_but_no_stream_switching() {
    ascendcl_emu::set_config(ascendcl_emu::Config {
        soc: "Ascend910_9382".to_string(),
        ..ascendcl_emu::config()
    });
    let _d = Dev::new(0);
    let mut p = [null_mut(); 2];
    for s in &mut p {
        ok(unsafe { aclrtCreateStreamWithConfig(s, 0, ACL_STREAM_PERSISTENT) });
    }
    let mut ri = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut ri, 0) });
    ok(unsafe { aclmdlRIBindStream(ri, p[0], 0) });
    ok(unsafe { aclmdlRIBindStream(ri, p[1], 0x7FFF_FFFF) });
    let e = unsafe { aclrtActiveStream(p[1], p[0]) };
    assert_eq!(e, AclError::FEATURE_NOT_SUPPORT.code());
    let msg = take_msg();
    assert!(msg.contains("Ascend910_9382"), "{msg}");
    let v = malloc(8);
    let e = unsafe {
        aclrtSwitchStream(
            v,
            ACL_RT_EQUAL,
            v,
            ACL_RT_SWITCH_INT32,
            p[1],
            null_mut(),
            p[0],
        )
    };
    assert_eq!(e, AclError::FEATURE_NOT_SUPPORT.code());
    take_msg();
    ok(unsafe { aclmdlRIEndTask(ri, p[0]) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    ok(unsafe { aclmdlRIExecute(ri, -1) });
    ok(unsafe { aclmdlRIDestroy(ri) });
    free(v);
    for s in p {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}
