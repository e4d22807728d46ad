//! Built-in device tasks: `aclrtReduceAsync` (every kind and supported type against a host
//! reference) and `aclrtRandomNumAsync` (every distribution, seeded and reproducible), with the
//! codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use half::{bf16, f16};

const SUM: u32 = ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM;
const MAX: u32 = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX;
const MIN: u32 = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN;
const EQUAL: u32 = ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL;

fn upload(bytes: &[u8]) -> *mut c_void {
    let p = malloc(bytes.len());
    h2d(p, bytes);
    p
}

fn download(p: *mut c_void, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    d2h(&mut v, p);
    v
}

/// Runs one reduction on the device and compares it with `expect` (as f64 values).
fn check_reduce<T: Copy>(
    t: aclDataType,
    a: &[T],
    b: &[T],
    to_bytes: impl Fn(T) -> Vec<u8>,
    from_bytes: impl Fn(&[u8]) -> f64,
    kind: u32,
    expect: &[f64],
) {
    let ab: Vec<u8> = a.iter().flat_map(|v| to_bytes(*v)).collect();
    let bb: Vec<u8> = b.iter().flat_map(|v| to_bytes(*v)).collect();
    let (d, s) = (upload(&ab), upload(&bb));
    let st = stream();
    ok(unsafe { aclrtReduceAsync(d, s, ab.len() as u64, kind, t, st, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(st) });
    let n = ab.len() / a.len();
    let got: Vec<f64> = download(d, ab.len()).chunks(n).map(&from_bytes).collect();
    assert_eq!(got, expect, "type {t} kind {kind}");
    // The source is untouched.
    assert_eq!(download(s, bb.len()), bb);
    ok(unsafe { aclrtDestroyStream(st) });
    free(d);
    free(s);
}

#[test]
fn reductions_match_a_host_reference() {
    let _d = Dev::new(0);
    // The runtime's sample: {1,2,3,4} + {1,2,3,4} = {2,4,6,8}.
    let f = |v: f32| v.to_ne_bytes().to_vec();
    let ff = |b: &[u8]| f64::from(f32::from_ne_bytes(b.try_into().unwrap()));
    check_reduce(
        ACL_FLOAT,
        &[1.0f32, 2.0, 3.0, 4.0],
        &[1.0, 2.0, 3.0, 4.0],
        f,
        ff,
        SUM,
        &[2.0, 4.0, 6.0, 8.0],
    );
    let a = [1.5f32, -2.0, 3.0, 8.0];
    let b = [0.5f32, 5.0, 3.0, -1.0];
    check_reduce(ACL_FLOAT, &a, &b, f, ff, MAX, &[1.5, 5.0, 3.0, 8.0]);
    check_reduce(ACL_FLOAT, &a, &b, f, ff, MIN, &[0.5, -2.0, 3.0, -1.0]);
    check_reduce(ACL_FLOAT, &a, &b, f, ff, EQUAL, &[0.0, 0.0, 1.0, 0.0]);
    // fp16 and bf16, rounded as the types do.
    let h = |v: f32| f16::from_f32(v).to_ne_bytes().to_vec();
    let hf = |b: &[u8]| f64::from(f16::from_ne_bytes([b[0], b[1]]));
    check_reduce(ACL_FLOAT16, &a, &b, h, hf, SUM, &[2.0, 3.0, 6.0, 7.0]);
    check_reduce(ACL_FLOAT16, &a, &b, h, hf, MIN, &[0.5, -2.0, 3.0, -1.0]);
    let g = |v: f32| bf16::from_f32(v).to_ne_bytes().to_vec();
    let gf = |b: &[u8]| f64::from(bf16::from_ne_bytes([b[0], b[1]]));
    check_reduce(ACL_BF16, &a, &b, g, gf, MAX, &[1.5, 5.0, 3.0, 8.0]);
    check_reduce(ACL_BF16, &a, &b, g, gf, EQUAL, &[0.0, 0.0, 1.0, 0.0]);
    // Integers: SUM wraps around.
    let i8b = |v: i8| v.to_ne_bytes().to_vec();
    let i8f = |b: &[u8]| f64::from(b[0] as i8);
    check_reduce(
        ACL_INT8,
        &[100i8, -3, 7, 0],
        &[100, 3, -9, 0],
        i8b,
        i8f,
        SUM,
        &[-56.0, 0.0, -2.0, 0.0],
    );
    let i16b = |v: i16| v.to_ne_bytes().to_vec();
    let i16f = |b: &[u8]| f64::from(i16::from_ne_bytes([b[0], b[1]]));
    check_reduce(
        ACL_INT16,
        &[5i16, -7, 9, 1],
        &[6, -8, 9, 0],
        i16b,
        i16f,
        MAX,
        &[6.0, -7.0, 9.0, 1.0],
    );
    let i32b = |v: i32| v.to_ne_bytes().to_vec();
    let i32f = |b: &[u8]| f64::from(i32::from_ne_bytes(b.try_into().unwrap()));
    check_reduce(
        ACL_INT32,
        &[5i32, -7, 9, 1],
        &[6, -8, 9, 0],
        i32b,
        i32f,
        MIN,
        &[5.0, -8.0, 9.0, 0.0],
    );
    check_reduce(
        ACL_INT32,
        &[5i32, -7, 9, 1],
        &[6, -8, 9, 0],
        i32b,
        i32f,
        EQUAL,
        &[0.0, 0.0, 1.0, 0.0],
    );
}

#[test]
fn reduction_checks() {
    let _d = Dev::new(0);
    let (d, s) = (malloc(64), malloc(64));
    let st = stream();
    let mut host = [0u8; 64];
    let hp = host.as_mut_ptr().cast::<c_void>();
    let r =
        |dst: *mut c_void,
         src: *const c_void,
         count: u64,
         kind: u32,
         t: aclDataType,
         res: *mut c_void| unsafe { aclrtReduceAsync(dst, src, count, kind, t, st, res) };
    // The ACL layer: NULLs, reserve, data type.
    err(
        r(null_mut(), s, 64, SUM, ACL_FLOAT, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        r(d, null(), 64, SUM, ACL_FLOAT, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(r(d, s, 64, SUM, ACL_FLOAT, d), AclError::INVALID_PARAM);
    err(
        r(d, s, 64, SUM, ACL_DOUBLE, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        r(d, s, 64, SUM, ACL_INT64, null_mut()),
        AclError::INVALID_PARAM,
    );
    // The runtime: count, kind, SUM's 4 GiB limit.
    err(
        r(d, s, 0, SUM, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        r(d, s, 64, 9, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        r(d, s, 64, 14, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        r(d, s, (4 << 30) + 4, SUM, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    // Types these SoCs do not reduce: 207000.
    for t in [ACL_UINT8, ACL_UINT16, ACL_UINT32, ACL_INT4] {
        err(
            r(d, s, 64, SUM, t, null_mut()),
            AclError::FEATURE_NOT_SUPPORT,
        );
    }
    // Memory: device memory of the stream's device, whole elements.
    err(
        r(d, s, 63, SUM, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        r(hp, s, 64, SUM, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        r(d, s, 128, SUM, ACL_FLOAT, null_mut()),
        AclError::PARAM_INVALID,
    );
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(
        unsafe { aclrtReduceAsync(d, s, 64, SUM, ACL_FLOAT, dead, null_mut()) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtDestroyStream(st) });
    free(d);
    free(s);
}

fn para(v: &[u8]) -> aclrtRandomParaInfo {
    let mut p = aclrtRandomParaInfo::default();
    p.valueOrAddr[..v.len()].copy_from_slice(v);
    p.size = v.len() as u8;
    p
}

fn task(
    t: aclDataType,
    func: u32,
    a: &[u8],
    b: &[u8],
    seed: u64,
    num: u64,
    (result, counter): (*mut c_void, *mut c_void),
) -> aclrtRandomNumTaskInfo {
    let mut info: aclrtRandomNumTaskInfo = unsafe { std::mem::zeroed() };
    info.dataType = t;
    info.randomNumFuncParaInfo.funcType = func;
    match func {
        ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK => {
            info.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo = aclrtDropoutBitmaskInfo {
                dropoutRation: para(a),
            }
        }
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => {
            info.randomNumFuncParaInfo.paramInfo.uniformDisInfo = aclrtUniformDisInfo {
                min: para(a),
                max: para(b),
            }
        }
        _ => {
            info.randomNumFuncParaInfo.paramInfo.normalDisInfo = aclrtNormalDisInfo {
                mean: para(a),
                stddev: para(b),
            }
        }
    }
    info.randomResultAddr = result;
    info.randomCounterAddr = counter;
    info.randomSeed = para(&seed.to_le_bytes());
    info.randomNum = para(&num.to_le_bytes());
    info
}

fn run(info: &aclrtRandomNumTaskInfo, st: aclrtStream) {
    ok(unsafe { aclrtRandomNumAsync(info, st, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(st) });
}

fn floats(b: &[u8]) -> Vec<f64> {
    b.chunks(4)
        .map(|c| f64::from(f32::from_ne_bytes(c.try_into().unwrap())))
        .collect()
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    (m, var.sqrt())
}

#[test]
fn random_numbers_are_seeded_reproducible_and_distributed() {
    let _d = Dev::new(0);
    const N: usize = 20_000;
    let out = malloc(N * 4);
    let counter = upload(&[0u8; 16]);
    let st = stream();
    let f = |v: f32| v.to_ne_bytes();
    // Uniform fp32 in [-2, 3).
    let u = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &f(-2.0),
        &f(3.0),
        42,
        N as u64,
        (out, counter),
    );
    run(&u, st);
    let first = download(out, N * 4);
    let v = floats(&first);
    assert!(v.iter().all(|x| (-2.0..3.0).contains(x)));
    let (m, s) = mean_std(&v);
    assert!(
        (m - 0.5).abs() < 0.05 && (s - 5.0 / 12f64.sqrt()).abs() < 0.05,
        "{m} {s}"
    );
    // The offset moved on: the next draw differs; reset to 0 with the same seed: the same.
    run(&u, st);
    assert_ne!(download(out, N * 4), first);
    h2d(counter, &[0u8; 16]);
    run(&u, st);
    assert_eq!(
        download(out, N * 4),
        first,
        "same seed, same offset, same numbers"
    );
    let other = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &f(-2.0),
        &f(3.0),
        43,
        N as u64,
        (out, counter),
    );
    h2d(counter, &[0u8; 16]);
    run(&other, st);
    assert_ne!(download(out, N * 4), first, "another seed");
    // Normal and truncated normal, mean 1 and stddev 2.
    let n = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
        &f(1.0),
        &f(2.0),
        7,
        N as u64,
        (out, counter),
    );
    run(&n, st);
    let (m, s) = mean_std(&floats(&download(out, N * 4)));
    assert!((m - 1.0).abs() < 0.06 && (s - 2.0).abs() < 0.06, "{m} {s}");
    let t = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
        &f(1.0),
        &f(2.0),
        7,
        N as u64,
        (out, counter),
    );
    run(&t, st);
    let v = floats(&download(out, N * 4));
    assert!(
        v.iter().all(|x| (-3.0..=5.0).contains(x)),
        "within two stddevs"
    );
    // Uniform int32 in [10, 20).
    let i = task(
        ACL_INT32,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &10i32.to_ne_bytes(),
        &20i32.to_ne_bytes(),
        9,
        N as u64,
        (out, counter),
    );
    run(&i, st);
    let ints: Vec<i32> = download(out, N * 4)
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(ints.iter().all(|x| (10..20).contains(x)));
    assert!((10..20).all(|k| ints.contains(&k)), "every value drawn");
    // Uniform fp16 in [0, 1).
    let hf = task(
        ACL_FLOAT16,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &f16::ZERO.to_ne_bytes(),
        &f16::ONE.to_ne_bytes(),
        5,
        1000,
        (out, counter),
    );
    run(&hf, st);
    let hv: Vec<f32> = download(out, 2000)
        .chunks(2)
        .map(|c| f16::from_ne_bytes([c[0], c[1]]).to_f32())
        .collect();
    assert!(hv.iter().all(|x| (0.0..=1.0).contains(x)) && hv.iter().any(|x| *x > 0.5));
    // Dropout bitmask with ratio 0.25: about three bits in four are set.
    let dm = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
        &f(0.25),
        &[],
        11,
        N as u64,
        (out, counter),
    );
    run(&dm, st);
    let ones: u32 = download(out, N / 8).iter().map(|b| b.count_ones()).sum();
    let frac = f64::from(ones) / N as f64;
    assert!((frac - 0.75).abs() < 0.02, "{frac}");
    ok(unsafe { aclrtDestroyStream(st) });
    free(out);
    free(counter);
}

#[test]
fn random_checks() {
    let _d = Dev::new(0);
    let out = malloc(1024);
    let counter = malloc(16);
    let st = stream();
    let f = |v: f32| v.to_ne_bytes();
    let good = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &f(0.0),
        &f(1.0),
        1,
        16,
        (out, counter),
    );
    let call =
        |t: &aclrtRandomNumTaskInfo, res: *mut c_void| unsafe { aclrtRandomNumAsync(t, st, res) };
    err(
        unsafe { aclrtRandomNumAsync(null(), st, null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut t = good;
    t.dataType = ACL_INT8;
    err(call(&t, null_mut()), AclError::INVALID_PARAM);
    err(call(&good, out), AclError::PARAM_INVALID);
    let bad_func = task(
        ACL_INT32,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
        &[0; 4],
        &[1, 0, 0, 0],
        1,
        16,
        (out, counter),
    );
    err(call(&bad_func, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomNumFuncParaInfo.funcType = 4;
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomCounterAddr = null_mut();
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomResultAddr = null_mut();
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomSeed.size = 9;
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomNum.isAddr = 2;
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    let mut t = good;
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.size = 5;
    err(call(&t, null_mut()), AclError::PARAM_INVALID);
    // The result must fit in device memory.
    let big = task(
        ACL_FLOAT,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
        &f(0.0),
        &f(1.0),
        1,
        1024,
        (out, counter),
    );
    err(call(&big, null_mut()), AclError::PARAM_INVALID);
    // A parameter read from device memory when the task runs.
    let maxv = upload(&f(4.0));
    let mut t = good;
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = {
        let mut p = para(&(maxv as u64).to_le_bytes());
        p.isAddr = 1;
        p
    };
    h2d(counter, &[0u8; 16]);
    run(&t, st);
    let v = floats(&download(out, 64));
    assert!(v.iter().all(|x| (0.0..4.0).contains(x)) && v.iter().any(|x| *x > 1.0));
    ok(unsafe { aclrtDestroyStream(st) });
    free(maxv);
    free(out);
    free(counter);
}
