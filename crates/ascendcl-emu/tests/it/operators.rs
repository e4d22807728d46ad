//! The operator library's Add and Mul through the C functions (`aclCreateTensor`,
//! `aclnnAddGetWorkspaceSize`, `aclnnAdd`, ...): real arithmetic on device memory, queued on a
//! stream, with broadcasting, strided views and type promotion; replayed by a captured model;
//! the status codes of bad arguments.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use ascendcl_emu::capi::operators::*;

const NULLPTR: i32 = 161_001;
const INVALID: i32 = 161_002;

fn upload(values: &[f32]) -> *mut c_void {
    let d = malloc(values.len() * 4);
    h2d(d, bytemuck_bytes(values));
    d
}

fn bytemuck_bytes(v: &[f32]) -> &[u8] {
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len() * 4) }
}

fn download(d: *const c_void, n: usize) -> Vec<f32> {
    let mut b = vec![0u8; n * 4];
    d2h(&mut b, d);
    b.chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn tensor(shape: &[i64], dtype: aclDataType, data: *mut c_void) -> *mut c_void {
    let t = unsafe {
        aclCreateTensor(
            shape.as_ptr(),
            shape.len() as u64,
            dtype,
            null(),
            0,
            ACL_FORMAT_ND,
            shape.as_ptr(),
            shape.len() as u64,
            data,
        )
    };
    assert!(!t.is_null(), "{}", take_msg());
    t
}

fn scalar(v: f32) -> *mut c_void {
    let mut v = v;
    unsafe { aclCreateScalar((&raw mut v).cast(), ACL_FLOAT) }
}

#[test]
fn add_and_mul_compute_on_the_stream_with_broadcasting() {
    let _d = Dev::new(0);
    let s = stream();
    let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let b = [1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
    let (da, db, dout) = (upload(&a), upload(&b), malloc(32));
    let (ta, tb, tout) = (
        tensor(&[4, 2], ACL_FLOAT, da),
        tensor(&[4, 2], ACL_FLOAT, db),
        tensor(&[4, 2], ACL_FLOAT, dout),
    );
    let alpha = scalar(1.2);
    let (mut ws, mut ex) = (99u64, null_mut());
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(ta, tb, alpha, tout, &mut ws, &mut ex) },
        0
    );
    assert_eq!(ws, 0);
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, ex, s) }, 0);
    // An executor runs once.
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, ex, s) }, INVALID);
    take_msg();
    ok(unsafe { aclrtSynchronizeStream(s) });
    let got = download(dout, 8);
    for i in 0..8 {
        assert!((got[i] - (a[i] + 1.2 * b[i])).abs() < 1e-5, "{i}: {got:?}");
    }

    // Mul with a row broadcast: other is [2].
    let row = upload(&[10.0, 100.0]);
    let trow = tensor(&[2], ACL_FLOAT, row);
    let mut ex = null_mut();
    assert_eq!(
        unsafe { aclnnMulGetWorkspaceSize(ta, trow, tout, &mut ws, &mut ex) },
        0
    );
    assert_eq!(unsafe { aclnnMul(null_mut(), 0, ex, s) }, 0);
    ok(unsafe { aclrtSynchronizeStream(s) });
    let got = download(dout, 8);
    let want: Vec<f32> = (0..8)
        .map(|i| i as f32 * if i % 2 == 0 { 10.0 } else { 100.0 })
        .collect();
    assert_eq!(got, want);

    for t in [ta, tb, tout, trow] {
        assert_eq!(unsafe { aclDestroyTensor(t) }, 0);
    }
    assert_eq!(unsafe { aclDestroyScalar(alpha) }, 0);
    assert_eq!(unsafe { aclDestroyTensor(ta) }, INVALID);
    for p in [da, db, dout, row] {
        free(p);
    }
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn int_tensors_add_in_integers_and_promote_into_float() {
    let _d = Dev::new(0);
    let s = stream();
    let ints = [1i32, -2, 3, 400];
    let di = malloc(16);
    h2d(di, unsafe {
        std::slice::from_raw_parts(ints.as_ptr().cast(), 16)
    });
    let dout = malloc(16);
    let ti = tensor(&[4], ACL_INT32, di);
    let tf = tensor(&[4], ACL_FLOAT, dout);
    let mut two = 2i32;
    let alpha = unsafe { aclCreateScalar((&raw mut two).cast(), ACL_INT32) };
    let (mut ws, mut ex) = (0u64, null_mut());
    // int32 + 2 * int32 into float: computed in integers, stored as floats.
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(ti, ti, alpha, tf, &mut ws, &mut ex) },
        0
    );
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, ex, s) }, 0);
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(download(dout, 4), [3.0, -6.0, 9.0, 1200.0]);
    // A float result into an int tensor is refused.
    assert_eq!(
        unsafe { aclnnMulGetWorkspaceSize(tf, ti, ti, &mut ws, &mut ex) },
        INVALID
    );
    take_msg();
    for t in [ti, tf] {
        assert_eq!(unsafe { aclDestroyTensor(t) }, 0);
    }
    assert_eq!(unsafe { aclDestroyScalar(alpha) }, 0);
    free(di);
    free(dout);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn bad_arguments_get_the_operator_librarys_codes() {
    let _d = Dev::new(0);
    let s = stream();
    let d = malloc(32);
    let t = tensor(&[8], ACL_FLOAT, d);
    let t3 = tensor(&[3], ACL_FLOAT, d);
    let alpha = scalar(1.0);
    let (mut ws, mut ex) = (0u64, null_mut());
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(null(), t, alpha, t, &mut ws, &mut ex) },
        NULLPTR
    );
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(t, t, null(), t, &mut ws, &mut ex) },
        NULLPTR
    );
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(t, t, alpha, t, null_mut(), &mut ex) },
        NULLPTR
    );
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(t, t3, alpha, t, &mut ws, &mut ex) },
        INVALID
    );
    assert!(take_msg().contains("broadcast"));
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(t, alpha, alpha, t, &mut ws, &mut ex) },
        INVALID
    );
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, null_mut(), s) }, NULLPTR);
    // Host memory is not what a device operator reads.
    let mut host = [0f32; 8];
    let th = tensor(&[8], ACL_FLOAT, host.as_mut_ptr().cast());
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(th, t, alpha, t, &mut ws, &mut ex) },
        0
    );
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, ex, s) }, INVALID);
    assert!(take_msg().contains("not device memory"));
    // A view past its storage.
    let wide = unsafe {
        aclCreateTensor(
            [16i64].as_ptr(),
            1,
            ACL_FLOAT,
            null(),
            0,
            ACL_FORMAT_ND,
            [8i64].as_ptr(),
            1,
            d,
        )
    };
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(wide, wide, alpha, wide, &mut ws, &mut ex) },
        INVALID
    );
    assert!(
        unsafe { aclCreateTensor(null(), 1, ACL_FLOAT, null(), 0, ACL_FORMAT_ND, null(), 0, d) }
            .is_null()
    );
    assert!(unsafe { aclCreateScalar(null_mut(), ACL_FLOAT) }.is_null());
    take_msg();
    for x in [t, t3, th, wide] {
        assert_eq!(unsafe { aclDestroyTensor(x) }, 0);
    }
    assert_eq!(unsafe { aclDestroyScalar(alpha) }, 0);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn a_captured_add_runs_at_every_execution() {
    let _d = Dev::new(0);
    let s = stream();
    let (dacc, done) = (upload(&[0.0; 4]), upload(&[1.0; 4]));
    let (tacc, tone) = (tensor(&[4], ACL_FLOAT, dacc), tensor(&[4], ACL_FLOAT, done));
    let alpha = scalar(2.0);
    let (mut ws, mut ex) = (0u64, null_mut());
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    assert_eq!(
        unsafe { aclnnAddGetWorkspaceSize(tacc, tone, alpha, tacc, &mut ws, &mut ex) },
        0
    );
    assert_eq!(unsafe { aclnnAdd(null_mut(), 0, ex, s) }, 0);
    let mut model = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut model) });
    for _ in 0..3 {
        ok(unsafe { aclmdlRIExecuteAsync(model, s) });
    }
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(download(dacc, 4), [6.0; 4], "acc += 2 * one, three times");
    ok(unsafe { aclmdlRIDestroy(model) });
    for t in [tacc, tone] {
        assert_eq!(unsafe { aclDestroyTensor(t) }, 0);
    }
    assert_eq!(unsafe { aclDestroyScalar(alpha) }, 0);
    free(dacc);
    free(done);
    ok(unsafe { aclrtDestroyStream(s) });
}
