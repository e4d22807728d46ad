//! `aclmdlRIDebugJsonPrint`: the JSON description of a captured and of a built model (parsed
//! back and checked task by task), and the codes of its bad inputs.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use serde_json::Value;
use std::ffi::CString;

extern "C" fn nothing(_: *mut c_void) {}

/// Prints `ri` to a new file of `dir` and parses it back.
fn print(ri: aclmdlRI, dir: &tempfile::TempDir, flags: u32) -> Vec<Value> {
    let path = dir.path().join("model.json");
    let c = CString::new(path.to_str().unwrap()).unwrap();
    ok(unsafe { aclmdlRIDebugJsonPrint(ri, c.as_ptr(), flags) });
    let text = std::fs::read_to_string(&path).unwrap();
    match serde_json::from_str::<Value>(&text).unwrap() {
        Value::Array(v) => v,
        other => panic!("not an array: {other}"),
    }
}

fn stream_id(s: aclrtStream) -> i64 {
    let mut id = -1;
    ok(unsafe { aclrtStreamGetId(s, &mut id) });
    i64::from(id)
}

#[test]
fn a_captured_model_prints_its_tasks_in_order() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let (src, dst) = (malloc_host(64), malloc(64));
    let ev = event();
    let mut ev_id = 0;
    ok(unsafe { aclrtGetEventId(ev, &mut ev_id) });
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    ok(unsafe { aclrtMemcpyAsync(dst, 64, src, 32, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtMemsetAsync(dst, 64, 0, 16, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(nothing), null_mut()) });
    ok(unsafe { aclrtRecordEvent(ev, s) });
    // Printing during the capture shows the tasks recorded so far.
    let dir = tempfile::tempdir().unwrap();
    let mut during = null_mut();
    ok(unsafe { aclmdlRICaptureGetInfo(s, null_mut(), &mut during) });
    assert_eq!(print(during, &dir, 0).len(), 4);
    ok(unsafe { aclrtStreamWaitEvent(s, ev) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });

    let tasks = print(ri, &dir, ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY);
    let sid = stream_id(s);
    let types: Vec<&str> = tasks
        .iter()
        .map(|t| t["args"]["taskType"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["copy", "memset", "host", "event_record", "event_wait"]
    );
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(t["ph"], "X");
        assert_eq!(t["tid"], format!("stream{sid}"));
        assert_eq!(t["args"]["streamId"], sid);
        assert_eq!(t["args"]["taskId"], i as u64);
        assert_eq!(t["args"]["modelId"], format!("{:#x}", ri as usize));
    }
    assert_eq!(tasks[0]["name"], "memcpy H2D");
    assert_eq!(tasks[0]["args"]["bytes"], 32);
    assert_eq!(tasks[1]["args"]["bytes"], 16);
    assert_eq!(tasks[3]["args"]["eventId"], ev_id);
    assert_eq!(tasks[4]["args"]["eventId"], ev_id);
    // VERBOSE writes the same tasks.
    assert_eq!(print(ri, &dir, ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE).len(), 5);

    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    free_host(src);
    free(dst);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn a_built_model_prints_each_bound_stream() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let mut a = null_mut();
    let mut b = null_mut();
    ok(unsafe { aclrtCreateStreamWithConfig(&mut a, 0, ACL_STREAM_PERSISTENT) });
    ok(unsafe { aclrtCreateStreamWithConfig(&mut b, 0, ACL_STREAM_PERSISTENT) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut ri, 0) });
    ok(unsafe { aclmdlRIBindStream(ri, a, 0) });
    ok(unsafe { aclmdlRIBindStream(ri, b, 0x7FFF_FFFF) });
    ok(unsafe { aclrtActiveStream(b, a) });
    ok(unsafe { aclmdlRIEndTask(ri, a) });
    ok(unsafe { aclrtLaunchHostFunc(b, Some(nothing), null_mut()) });
    ok(unsafe { aclmdlRIEndTask(ri, b) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });

    let dir = tempfile::tempdir().unwrap();
    let tasks = print(ri, &dir, 0);
    let rows: Vec<(i64, u64, &str)> = tasks
        .iter()
        .map(|t| {
            (
                t["args"]["streamId"].as_i64().unwrap(),
                t["args"]["taskId"].as_u64().unwrap(),
                t["args"]["taskType"].as_str().unwrap(),
            )
        })
        .collect();
    let (ia, ib) = (stream_id(a), stream_id(b));
    assert_eq!(
        rows,
        [
            (ia, 0, "stream_active"),
            (ia, 1, "model_end"),
            (ib, 0, "host"),
            (ib, 1, "model_end"),
        ]
    );
    assert_eq!(
        tasks[0]["args"]["activeStream"],
        format!("{:#x}", b as usize)
    );

    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyStream(a) });
    ok(unsafe { aclrtDestroyStream(b) });
}

#[test]
fn bad_inputs_have_the_documented_codes() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(nothing), null_mut()) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    let dir = tempfile::tempdir().unwrap();
    let good = CString::new(dir.path().join("m.json").to_str().unwrap()).unwrap();
    // NULL model or path: 100000.
    err(
        unsafe { aclmdlRIDebugJsonPrint(null_mut(), good.as_ptr(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclmdlRIDebugJsonPrint(ri, std::ptr::null(), 0) },
        AclError::INVALID_PARAM,
    );
    // A directory that does not exist, and a directory where the file should be: 107000,
    // nothing written.
    let missing = CString::new(dir.path().join("no/such/m.json").to_str().unwrap()).unwrap();
    err(
        unsafe { aclmdlRIDebugJsonPrint(ri, missing.as_ptr(), 0) },
        AclError::PARAM_INVALID,
    );
    let is_dir = CString::new(dir.path().to_str().unwrap()).unwrap();
    err(
        unsafe { aclmdlRIDebugJsonPrint(ri, is_dir.as_ptr(), 0) },
        AclError::PARAM_INVALID,
    );
    assert!(!dir.path().join("m.json").exists());
    // A destroyed model: 107017.
    ok(unsafe { aclmdlRIDestroy(ri) });
    err(
        unsafe { aclmdlRIDebugJsonPrint(ri, good.as_ptr(), 0) },
        AclError::INVALID_HANDLE,
    );
    assert!(!dir.path().join("m.json").exists());
    ok(unsafe { aclrtDestroyStream(s) });
}
