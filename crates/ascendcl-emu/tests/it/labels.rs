//! Labels inside built models (`aclrtCreateLabel`, `aclrtCreateLabelList`, `aclrtSetLabel`,
//! `aclrtSwitchLabelByIndex`, `aclrtDestroyLabel[List]`): the code of every documented check,
//! and switches that read their index from device memory when the model runs.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

#[track_caller]
fn is(code: aclError, want: AclError) {
    err(code, want.code());
}

fn persistent() -> aclrtStream {
    let mut s = null_mut();
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_PERSISTENT) });
    s
}

fn build_bound(flag: u32, streams: &[aclrtStream]) -> aclmdlRI {
    let mut ri = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut ri, 0) });
    for s in streams {
        ok(unsafe { aclmdlRIBindStream(ri, *s, flag) });
    }
    ri
}

fn label() -> aclrtLabel {
    let mut l = null_mut();
    ok(unsafe { aclrtCreateLabel(&mut l) });
    l
}

fn list(labels: &mut [aclrtLabel]) -> aclrtLabelList {
    let mut l = null_mut();
    ok(unsafe { aclrtCreateLabelList(labels.as_mut_ptr(), labels.len(), &mut l) });
    l
}

fn read_u32(p: *mut c_void) -> u32 {
    let mut b = [0u8; 4];
    d2h(&mut b, p);
    u32::from_le_bytes(b)
}

fn write_u32(p: *mut c_void, v: u32) {
    h2d(p, &v.to_le_bytes());
}

fn fill(p: *mut c_void, byte: u8, s: aclrtStream) {
    ok(unsafe { aclrtMemsetAsync(p, 4, byte as i32, 4, s) });
}

#[test]
fn create_and_destroy_checks() {
    let _d = Dev::new(0);
    is(
        unsafe { aclrtCreateLabel(null_mut()) },
        AclError::INVALID_PARAM,
    );
    std::thread::spawn(|| {
        let mut l = null_mut();
        is(unsafe { aclrtCreateLabel(&mut l) }, AclError::CONTEXT_NULL);
    })
    .join()
    .unwrap();
    let mut ls = [label(), label()];
    let mut out = null_mut();
    is(
        unsafe { aclrtCreateLabelList(null_mut(), 2, &mut out) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclrtCreateLabelList(ls.as_mut_ptr(), 2, null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclrtCreateLabelList(ls.as_mut_ptr(), 0, &mut out) },
        AclError::PARAM_INVALID,
    );
    is(
        unsafe { aclrtCreateLabelList(ls.as_mut_ptr(), 65536, &mut out) },
        AclError::PARAM_INVALID,
    );
    let dead = label();
    ok(unsafe { aclrtDestroyLabel(dead) });
    let mut with_dead = [ls[0], dead];
    is(
        unsafe { aclrtCreateLabelList(with_dead.as_mut_ptr(), 2, &mut out) },
        AclError::INVALID_HANDLE,
    );
    let l = list(&mut ls);
    is(
        unsafe { aclrtDestroyLabel(null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(unsafe { aclrtDestroyLabel(dead) }, AclError::INVALID_HANDLE);
    // A label of another context.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx2 = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx2, 0) });
    is(unsafe { aclrtDestroyLabel(ls[0]) }, AclError::LABEL_CONTEXT);
    ok(unsafe { aclrtDestroyContext(ctx2) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    is(
        unsafe { aclrtDestroyLabelList(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtDestroyLabelList(l) });
    is(
        unsafe { aclrtDestroyLabelList(l) },
        AclError::INVALID_HANDLE,
    );
    for x in ls {
        ok(unsafe { aclrtDestroyLabel(x) });
    }
}

#[test]
fn set_label_checks() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let p = persistent();
    let ri = build_bound(0, &[p]);
    let mut ls = [label(), label()];
    let lonely = label();
    is(
        unsafe { aclrtSetLabel(null_mut(), p) },
        AclError::INVALID_PARAM,
    );
    let dead = label();
    ok(unsafe { aclrtDestroyLabel(dead) });
    is(unsafe { aclrtSetLabel(dead, p) }, AclError::INVALID_HANDLE);
    // A stream bound to no model.
    let plain = stream();
    is(
        unsafe { aclrtSetLabel(ls[0], plain) },
        AclError::STREAM_MODEL,
    );
    // A label in no list yet.
    is(
        unsafe { aclrtSetLabel(lonely, p) },
        AclError::RT_INTERNAL_ERROR,
    );
    let l = list(&mut ls);
    ok(unsafe { aclrtSetLabel(ls[0], p) });
    // Set once.
    is(
        unsafe { aclrtSetLabel(ls[0], p) },
        AclError::RT_INTERNAL_ERROR,
    );
    // Another context: its label (507031) and the current context's stream on the other side
    // (107003).
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx2 = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx2, 0) });
    let foreign_label = label();
    let foreign_stream = persistent();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    is(
        unsafe { aclrtSetLabel(foreign_label, p) },
        AclError::LABEL_CONTEXT,
    );
    is(
        unsafe { aclrtSetLabel(ls[1], foreign_stream) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtSetCurrentContext(ctx2) });
    ok(unsafe { aclrtDestroyLabel(foreign_label) });
    ok(unsafe { aclrtDestroyStream(foreign_stream) });
    ok(unsafe { aclrtDestroyContext(ctx2) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    // After the build the stream takes no labels.
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    is(unsafe { aclrtSetLabel(ls[1], p) }, AclError::STREAM_MODEL);
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyLabelList(l) });
    for x in [ls[0], ls[1], lonely] {
        ok(unsafe { aclrtDestroyLabel(x) });
    }
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyStream(plain) });
}

#[test]
fn switch_label_by_index_checks() {
    let _d = Dev::new(0);
    let p = persistent();
    let ri = build_bound(0, &[p]);
    let mut ls = [label(), label()];
    let l = list(&mut ls);
    let idx = malloc(4);
    let host = malloc_host(4);
    let plain = stream();
    let sw = |ptr, max, list, s| unsafe { aclrtSwitchLabelByIndex(ptr, max, list, s) };
    is(sw(null_mut(), 2, l, p), AclError::INVALID_PARAM);
    is(sw(idx, 2, null_mut(), p), AclError::INVALID_PARAM);
    is(sw(idx, 2, l, null_mut()), AclError::INVALID_PARAM);
    let mut dead = [label()];
    let dead_list = list(&mut dead);
    ok(unsafe { aclrtDestroyLabelList(dead_list) });
    is(sw(idx, 2, dead_list, p), AclError::INVALID_HANDLE);
    is(sw(idx, 2, l, plain), AclError::STREAM_MODEL);
    is(sw(idx, 0, l, p), AclError::PARAM_INVALID);
    is(sw(idx, 3, l, p), AclError::PARAM_INVALID);
    is(sw(host, 2, l, p), AclError::PARAM_INVALID);
    // Another context: its label list (507031), and the current context's list on a stream of
    // the other context (107003).
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx2 = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx2, 0) });
    let mut other_labels = [label()];
    let other_list = list(&mut other_labels);
    let other_stream = persistent();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    is(sw(idx, 1, other_list, p), AclError::LABEL_CONTEXT);
    is(sw(idx, 2, l, other_stream), AclError::STREAM_CONTEXT);
    ok(unsafe { aclrtSetCurrentContext(ctx2) });
    ok(unsafe { aclrtDestroyLabelList(other_list) });
    ok(unsafe { aclrtDestroyLabel(other_labels[0]) });
    ok(unsafe { aclrtDestroyStream(other_stream) });
    ok(unsafe { aclrtDestroyContext(ctx2) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    ok(sw(idx, 2, l, p));
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyLabelList(l) });
    for x in [ls[0], ls[1], dead[0]] {
        ok(unsafe { aclrtDestroyLabel(x) });
    }
    free(idx);
    free_host(host);
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyStream(plain) });
}

#[test]
fn the_switch_reads_its_index_when_the_model_runs() {
    let _device = failing_tasks();
    // One stream: switch; label 0: write 10, end; label 1: write 11, end; label 2: write 12.
    let _d = Dev::new(0);
    let p = persistent();
    let ri = build_bound(0, &[p]);
    let mut ls = [label(), label(), label()];
    let l = list(&mut ls);
    let (idx, out, before) = (malloc(4), malloc(4), malloc(4));
    fill(before, 9, p);
    ok(unsafe { aclrtSwitchLabelByIndex(idx, 3, l, p) });
    for (i, x) in ls.iter().enumerate() {
        ok(unsafe { aclrtSetLabel(*x, p) });
        fill(out, 10 + i as u8, p);
        ok(unsafe { aclmdlRIEndTask(ri, p) });
    }
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    let exec = stream();
    // The index is read at execution time; beyond the count the last label is taken.
    for (i, want) in [(1u32, 11u8), (0, 10), (2, 12), (7, 12), (u32::MAX, 12)] {
        write_u32(idx, i);
        write_u32(out, 0);
        write_u32(before, 0);
        ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
        ok(unsafe { aclrtSynchronizeStream(exec) });
        assert_eq!(read_u32(out), u32::from_ne_bytes([want; 4]), "index {i}");
        assert_eq!(
            read_u32(before),
            0x0909_0909,
            "the tasks before the switch ran"
        );
    }
    // A freed index: the execution fails when it runs (507000), nothing past the switch runs.
    free(idx);
    write_u32(out, 0);
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    is(
        unsafe { aclrtSynchronizeStream(exec) },
        AclError::RT_INTERNAL_ERROR,
    );
    assert_eq!(read_u32(out), 0);
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyLabelList(l) });
    for x in ls {
        ok(unsafe { aclrtDestroyLabel(x) });
    }
    free(out);
    free(before);
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyStream(exec) });
}

#[test]
fn a_label_on_another_stream_continues_there() {
    let _device = failing_tasks();
    // head: switch to label 0 (on branch A) or label 1 (on branch B); the head stream stops.
    let _d = Dev::new(0);
    let (head, a, b) = (persistent(), persistent(), persistent());
    let mut ri = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut ri, 0) });
    ok(unsafe { aclmdlRIBindStream(ri, head, 0) });
    ok(unsafe { aclmdlRIBindStream(ri, a, 0x7FFF_FFFF) });
    ok(unsafe { aclmdlRIBindStream(ri, b, 0x7FFF_FFFF) });
    let mut ls = [label(), label()];
    let l = list(&mut ls);
    let (idx, out, after) = (malloc(4), malloc(4), malloc(4));
    ok(unsafe { aclrtSwitchLabelByIndex(idx, 2, l, head) });
    fill(after, 1, head);
    // A few tasks before the label on stream A are skipped: execution starts at the label.
    fill(out, 0x55, a);
    ok(unsafe { aclrtSetLabel(ls[0], a) });
    fill(out, 0xA0, a);
    ok(unsafe { aclrtSetLabel(ls[1], b) });
    fill(out, 0xB0, b);
    for s in [head, a, b] {
        ok(unsafe { aclmdlRIEndTask(ri, s) });
    }
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    for (i, want) in [(0u32, 0xA0u8), (1, 0xB0)] {
        write_u32(idx, i);
        write_u32(out, 0);
        write_u32(after, 0);
        ok(unsafe { aclmdlRIExecute(ri, -1) });
        assert_eq!(read_u32(out), u32::from_ne_bytes([want; 4]), "index {i}");
        assert_eq!(read_u32(after), 0, "the switching stream stopped");
    }
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyLabelList(l) });
    for x in ls {
        ok(unsafe { aclrtDestroyLabel(x) });
    }
    for p in [idx, out, after] {
        free(p);
    }
    for s in [head, a, b] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}
