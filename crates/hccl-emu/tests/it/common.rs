//! Helpers: an emulated machine of 8 devices, communicators over several devices of this
//! process, device buffers, deterministic pseudo-random data and host references.
#![allow(dead_code)]

pub use ascendcl_emu::capi::*;
use ascendcl_sys::AclError;
pub use ascendcl_sys::*;
pub use hccl_emu::capi::*;
pub use hccl_sys::*;
pub use std::ffi::c_void;
pub use std::ptr::{null, null_mut};
use std::sync::Once;
use std::time::Duration;

/// Devices of the emulated machine in these tests.
pub const DEVICES: u32 = 8;

/// The bytes of a channel slot in these tests.
pub const SLOT: usize = 4096;

/// Configures the emulators once: 8 devices with 1 GiB each, rendezvous and execution timeouts
/// short enough that a bug fails a test instead of hanging it.
pub fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The rest (the SoC) as the environment says.
        ascendcl_emu::set_config(ascendcl_emu::Config {
            devices: DEVICES,
            memory: 1 << 30,
            ..ascendcl_emu::config()
        });
        // Small channel slots: operations of a few kilobytes already move in several chunks.
        hccl_emu::set_slot_bytes(Some(SLOT));
        // A child process that tests the environment's timeouts keeps them.
        if std::env::var_os("HCCL_EMU_TEST_KEEP_ENV").is_none() {
            hccl_emu::set_config(hccl_emu::Config {
                connect_timeout: Some(Duration::from_secs(30)),
                exec_timeout: Some(Duration::from_secs(30)),
            });
        }
        let r = unsafe { aclInit(null()) };
        assert!(
            r == AclError::SUCCESS || r == AclError::REPEAT_INITIALIZE,
            "aclInit: {r}"
        );
        unsafe { aclGetRecentErrMsg() };
    });
}

/// The calling thread's recent messages, cleared.
pub fn take_msg() -> String {
    let p = unsafe { aclGetRecentErrMsg() };
    if p.is_null() {
        String::new()
    } else {
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Asserts success, showing the messages otherwise.
#[track_caller]
pub fn ok(code: HcclResult) {
    assert_eq!(code, HCCL_SUCCESS, "messages: {}", take_msg());
}

/// Asserts a code; returns (and clears) the messages.
#[track_caller]
pub fn err(code: HcclResult, want: HcclResult) -> String {
    let m = take_msg();
    assert_eq!(code, want, "messages: {m}");
    m
}

#[track_caller]
pub fn acl(code: aclError) {
    assert_eq!(code, 0, "ACL call failed; messages: {}", take_msg());
}

/// One rank of a communicator of this process: its device, a stream of it, the communicator.
pub struct Rank {
    pub dev: i32,
    pub stream: aclrtStream,
    pub comm: HcclComm,
}

/// Makes `dev` current on the calling thread (taking a reference, released by `release`).
pub fn use_device(dev: i32) {
    acl(unsafe { aclrtSetDevice(dev) });
}

pub fn release(dev: i32) {
    acl(unsafe { aclrtResetDevice(dev) });
}

/// `n` ranks on devices `first..first+n` created with `HcclCommInitAll`; the calling thread
/// keeps a reference to each device until `Ranks` is dropped.
pub struct Ranks(pub Vec<Rank>);

impl Ranks {
    pub fn new(first: i32, n: usize) -> Ranks {
        setup();
        let devs: Vec<i32> = (first..first + n as i32).collect();
        for d in &devs {
            use_device(*d);
        }
        let mut comms = vec![null_mut(); n];
        ok(unsafe { HcclCommInitAll(n as u32, devs.as_ptr().cast_mut(), comms.as_mut_ptr()) });
        let ranks = devs
            .iter()
            .zip(comms)
            .map(|(d, c)| {
                use_device(*d);
                let mut s = null_mut();
                acl(unsafe { aclrtCreateStream(&mut s) });
                release(*d);
                Rank {
                    dev: *d,
                    stream: s,
                    comm: c,
                }
            })
            .collect();
        Ranks(ranks)
    }

    /// `n` ranks on devices `first..first+n`: with `HcclCommInitAll` when `algo` is `None`,
    /// else joined through a root info with `algo` as the configuration's `hcclAlgo`.
    pub fn with(first: i32, n: usize, algo: Algo) -> Ranks {
        let Some(a) = algo else {
            return Ranks::new(first, n);
        };
        let devs: Vec<i32> = (first..first + n as i32).collect();
        root_ranks(&devs, Some(algo_config(a)))
    }

    pub fn n(&self) -> usize {
        self.0.len()
    }

    /// Synchronises every rank's stream, returning each result.
    pub fn sync(&self) -> Vec<aclError> {
        self.0
            .iter()
            .map(|r| {
                use_device(r.dev);
                let e = unsafe { aclrtSynchronizeStream(r.stream) };
                release(r.dev);
                e
            })
            .collect()
    }

    #[track_caller]
    pub fn sync_ok(&self) {
        for (i, e) in self.sync().into_iter().enumerate() {
            assert_eq!(e, 0, "rank {i}'s stream failed: {}", take_msg());
        }
    }
}

impl Drop for Ranks {
    fn drop(&mut self) {
        let _ = self.sync();
        for r in &self.0 {
            use_device(r.dev);
            let d = unsafe { HcclCommDestroy(r.comm) };
            let s = unsafe { aclrtDestroyStream(r.stream) };
            release(r.dev);
            if !std::thread::panicking() {
                assert_eq!(d, HCCL_SUCCESS, "destroy: {}", take_msg());
                assert_eq!(s, 0);
            }
        }
        for r in &self.0 {
            release(r.dev);
        }
    }
}

/// An algorithm forced through `hcclAlgo` (`HCCL_ALGO`'s syntax), or `None` for the emulator's
/// choice.
pub type Algo = Option<&'static str>;

/// A configuration whose `hcclAlgo` is `algo`.
pub fn algo_config(algo: &str) -> HcclCommConfig {
    let mut cfg = comm_config();
    for (d, s) in cfg.hcclAlgo.iter_mut().zip(algo.bytes()) {
        *d = s as std::ffi::c_char;
    }
    cfg
}

/// Device memory of `len` bytes on `dev` (freed on drop).
pub struct DevBuf {
    pub dev: i32,
    pub ptr: *mut c_void,
    pub len: usize,
}

impl DevBuf {
    pub fn new(dev: i32, len: usize) -> DevBuf {
        use_device(dev);
        let mut p = null_mut();
        acl(unsafe { aclrtMalloc(&mut p, len.max(1), 0) });
        release(dev);
        DevBuf { dev, ptr: p, len }
    }

    pub fn from(dev: i32, data: &[u8]) -> DevBuf {
        let b = DevBuf::new(dev, data.len());
        b.write(data);
        b
    }

    pub fn write(&self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        use_device(self.dev);
        acl(unsafe { aclrtMemcpy(self.ptr, self.len, data.as_ptr().cast(), data.len(), 1) });
        release(self.dev);
    }

    pub fn read(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len];
        if self.len > 0 {
            use_device(self.dev);
            acl(unsafe { aclrtMemcpy(v.as_mut_ptr().cast(), self.len, self.ptr, self.len, 2) });
            release(self.dev);
        }
        v
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        use_device(self.dev);
        unsafe { aclrtFree(self.ptr) };
        release(self.dev);
    }
}

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// `count` elements of `t` with small values (|v| <= 4.75 for signed and float types, in quarters
/// for the floats), as bytes.
pub fn data(t: hccl_emu::DType, count: usize, seed: u64) -> Vec<u8> {
    use hccl_emu::DType::*;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut out = Vec::with_capacity(count * t.size());
    for _ in 0..count {
        let r = rng.next();
        let small = (r % 9) as i64 - 4; // -4..=4
        let frac = ((r >> 8) % 4) as f64 * 0.25;
        match t {
            I8 => out.extend_from_slice(&(small as i8).to_ne_bytes()),
            I16 => out.extend_from_slice(&(small as i16 * 1000).to_ne_bytes()),
            I32 => out.extend_from_slice(&(r as i32).to_ne_bytes()),
            I64 => out.extend_from_slice(&(r as i64).to_ne_bytes()),
            U8 => out.extend_from_slice(&(r as u8).to_ne_bytes()),
            U16 => out.extend_from_slice(&(r as u16).to_ne_bytes()),
            U32 => out.extend_from_slice(&(r as u32).to_ne_bytes()),
            U64 => out.extend_from_slice(&r.to_ne_bytes()),
            I128 => out.extend_from_slice(&((r as i128) << 40).to_ne_bytes()),
            F16 => out.extend_from_slice(&half::f16::from_f64(small as f64 + frac).to_ne_bytes()),
            BF16 => out.extend_from_slice(&half::bf16::from_f64(small as f64 + frac).to_ne_bytes()),
            // Quarters: exact in every float type, so sums over the ranks are exact whatever
            // order an algorithm adds them in.
            F32 => out.extend_from_slice(&((small as f64 + frac) as f32).to_ne_bytes()),
            F64 => out.extend_from_slice(&(small as f64 + frac).to_ne_bytes()),
            Hif8 | Fp8E4M3 | Fp8E5M2 | Fp8E8M0 => out.push(r as u8),
        }
    }
    out
}

/// The host reference of a reduction: element-wise, in rank order, with the element type's own
/// arithmetic (16-bit floats through the `half` crate's operators, which round each result).
pub fn reference(t: hccl_emu::DType, op: hccl_emu::RedOp, inputs: &[Vec<u8>]) -> Vec<u8> {
    use hccl_emu::DType::*;
    use hccl_emu::RedOp::*;
    macro_rules! fold {
        ($ty:ty, $sum:expr, $prod:expr, $max:expr, $min:expr) => {{
            let sz = std::mem::size_of::<$ty>();
            let n = inputs[0].len() / sz;
            let get = |v: &Vec<u8>, i: usize| {
                <$ty>::from_ne_bytes(v[i * sz..(i + 1) * sz].try_into().unwrap())
            };
            let mut out = Vec::with_capacity(inputs[0].len());
            for i in 0..n {
                let mut acc = get(&inputs[0], i);
                for v in &inputs[1..] {
                    let x = get(v, i);
                    acc = match op {
                        Sum => $sum(acc, x),
                        Prod => $prod(acc, x),
                        Max => $max(acc, x),
                        Min => $min(acc, x),
                    };
                }
                out.extend_from_slice(&acc.to_ne_bytes());
            }
            out
        }};
    }
    macro_rules! int {
        ($ty:ty) => {
            fold!(
                $ty,
                |a: $ty, b| a.wrapping_add(b),
                |a: $ty, b| a.wrapping_mul(b),
                |a: $ty, b| a.max(b),
                |a: $ty, b| a.min(b)
            )
        };
    }
    macro_rules! float {
        ($ty:ty) => {
            fold!(
                $ty,
                |a: $ty, b| a + b,
                |a: $ty, b| a * b,
                |a: $ty, b: $ty| if b > a { b } else { a },
                |a: $ty, b: $ty| if b < a { b } else { a }
            )
        };
    }
    match t {
        I8 => int!(i8),
        I16 => int!(i16),
        I32 => int!(i32),
        I64 => int!(i64),
        U8 => int!(u8),
        U16 => int!(u16),
        U32 => int!(u32),
        U64 => int!(u64),
        I128 => int!(i128),
        F16 => float!(half::f16),
        BF16 => float!(half::bf16),
        F32 => float!(f32),
        F64 => float!(f64),
        _ => panic!("not reducible"),
    }
}

/// Whether `got` is the reduction `want`: bit for bit, except that 16-bit float products may
/// differ by the rounding of each step in another order than the ranks' (the ring and
/// halving-doubling reduce in their own orders); every value is exact otherwise.
pub fn same_reduction(t: hccl_emu::DType, op: hccl_emu::RedOp, got: &[u8], want: &[u8]) -> bool {
    use hccl_emu::DType::*;
    if got == want {
        return true;
    }
    if op != hccl_emu::RedOp::Prod || !matches!(t, F16 | BF16) || got.len() != want.len() {
        return false;
    }
    let val = |b: &[u8]| {
        let bits = u16::from_ne_bytes([b[0], b[1]]);
        if t == F16 {
            half::f16::from_bits(bits).to_f64()
        } else {
            half::bf16::from_bits(bits).to_f64()
        }
    };
    got.chunks_exact(2)
        .zip(want.chunks_exact(2))
        .all(|(g, w)| (val(g) - val(w)).abs() <= val(w).abs() / 256.0)
}

/// The types an A2/A3 library reduces, with the operations it accepts for each.
pub fn reducible() -> Vec<(hccl_emu::DType, hccl_emu::RedOp)> {
    let p = hccl_emu::Personality::current();
    let mut v = Vec::new();
    for t in hccl_emu::DType::ALL {
        if !p.reduces(t) {
            continue;
        }
        for o in hccl_emu::RedOp::ALL {
            if p.reduces_with(t, o) {
                v.push((t, o));
            }
        }
    }
    v
}

/// The types an A2/A3 library moves.
pub fn movable() -> Vec<hccl_emu::DType> {
    let p = hccl_emu::Personality::current();
    hccl_emu::DType::ALL
        .into_iter()
        .filter(|t| p.moves(*t))
        .collect()
}

/// A root info made on `dev`.
pub fn root_info(dev: i32) -> HcclRootInfo {
    setup();
    use_device(dev);
    let mut ri = HcclRootInfo {
        internal: [0; HCCL_ROOT_INFO_BYTES as usize],
    };
    ok(unsafe { HcclGetRootInfo(&mut ri) });
    release(dev);
    ri
}

/// `HcclCommInitRootInfo[Config]` of `rank` of `n` on `dev`, on the calling thread, and a
/// stream; on success the device reference taken stays with the caller.
pub fn join(
    dev: i32,
    n: u32,
    ri: &HcclRootInfo,
    rank: u32,
    cfg: Option<&HcclCommConfig>,
) -> Result<Rank, (HcclResult, String)> {
    use_device(dev);
    let mut c = null_mut();
    let r = match cfg {
        None => unsafe { HcclCommInitRootInfo(n, ri, rank, &mut c) },
        Some(cfg) => unsafe { HcclCommInitRootInfoConfig(n, ri, rank, cfg, &mut c) },
    };
    if r != HCCL_SUCCESS {
        let m = take_msg();
        release(dev);
        return Err((r, m));
    }
    let mut s = null_mut();
    acl(unsafe { aclrtCreateStream(&mut s) });
    Ok(Rank {
        dev,
        stream: s,
        comm: c,
    })
}

/// Ranks on `devs` (rank i on devs[i]) joined through one root info, one thread each.
pub fn root_ranks(devs: &[i32], cfg: Option<HcclCommConfig>) -> Ranks {
    let ri = root_info(devs[0]);
    // References held for the Ranks (released by its drop).
    for d in devs {
        use_device(*d);
    }
    let n = devs.len() as u32;
    let ranks: Vec<Rank> = std::thread::scope(|s| {
        let hs: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let (ri, cfg) = (&ri, cfg.as_ref());
                s.spawn(move || {
                    let r = join(*d, n, ri, i as u32, cfg)
                        .map(|r| (r.dev, r.stream as usize, r.comm as usize));
                    if r.is_ok() {
                        release(*d);
                    }
                    r
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                let (dev, s, c) = h.join().unwrap().expect("join");
                Rank {
                    dev,
                    stream: s as aclrtStream,
                    comm: c as HcclComm,
                }
            })
            .collect()
    });
    Ranks(ranks)
}
