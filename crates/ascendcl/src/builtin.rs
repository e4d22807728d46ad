//! Built-in device tasks as [`Scope`] operations: element-wise reductions between two device
//! buffers (`aclrtReduceAsync`, [`Scope::reduce`]) and random numbers (`aclrtRandomNumAsync`,
//! [`Scope::random`], [`Scope::dropout_bitmask`]) drawn from a seeded [`RandomState`].

use crate::RawRegion;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceRepr, MallocPolicy};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::scope::{AsyncDest, AsyncSource, Scope};
use ascendcl_sys as sys;

mod sealed {
    pub trait Sealed {}
}

/// An element type the runtime reduces ([`Scope::reduce`]): `f32`, `i8`, `i16`, `i32`, and
/// `half::f16` / `half::bf16` with the `half` feature. Sealed.
pub trait ReduceElem: DeviceRepr + sealed::Sealed {
    /// The runtime's name for the type.
    const DATA_TYPE: sys::aclDataType;
}

/// An element type the runtime draws random numbers of ([`Scope::random`]): `f32`, `i32`,
/// `i64`, `u32`, `u64`, and `half::f16` / `half::bf16` with the `half` feature. Sealed.
pub trait RandomElem: DeviceRepr + sealed::Sealed {
    /// The runtime's name for the type.
    const DATA_TYPE: sys::aclDataType;
    /// The value's bytes, as a task parameter holds them.
    fn param_bytes(self) -> Vec<u8>;
}

/// The floating-point [`RandomElem`]s, the only ones normal distributions are defined for.
pub trait RandomFloat: RandomElem {}

macro_rules! elems {
    ($($t:ty => $dt:path, reduce: $r:tt;)*) => {$(
        impl sealed::Sealed for $t {}
        elems!(@reduce $r $t, $dt);
        elems!(@random $t, $dt);
    )*};
    (@reduce yes $t:ty, $dt:path) => {
        impl ReduceElem for $t { const DATA_TYPE: sys::aclDataType = $dt; }
    };
    (@reduce no $t:ty, $dt:path) => {};
    (@random $t:ty, $dt:path) => {
        impl RandomElem for $t {
            const DATA_TYPE: sys::aclDataType = $dt;
            fn param_bytes(self) -> Vec<u8> { self.to_ne_bytes().to_vec() }
        }
    };
}

elems! {
    f32 => sys::ACL_FLOAT, reduce: yes;
    i32 => sys::ACL_INT32, reduce: yes;
    i64 => sys::ACL_INT64, reduce: no;
    u32 => sys::ACL_UINT32, reduce: no;
    u64 => sys::ACL_UINT64, reduce: no;
}

#[cfg(feature = "half")]
elems! {
    half::f16 => sys::ACL_FLOAT16, reduce: yes;
    half::bf16 => sys::ACL_BF16, reduce: yes;
}

impl RandomFloat for f32 {}
#[cfg(feature = "half")]
impl RandomFloat for half::f16 {}
#[cfg(feature = "half")]
impl RandomFloat for half::bf16 {}

impl sealed::Sealed for i8 {}
impl ReduceElem for i8 {
    const DATA_TYPE: sys::aclDataType = sys::ACL_INT8;
}
impl sealed::Sealed for i16 {}
impl ReduceElem for i16 {
    const DATA_TYPE: sys::aclDataType = sys::ACL_INT16;
}

raw_enum! {
    /// How [`Scope::reduce`] combines `dst[i]` with `src[i]` into `dst[i]` (`aclrtReduceKind`).
    pub enum ReduceKind: sys::aclrtReduceKind {
        /// `ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM`: the sum (integers wrap around).
        Sum = sys::ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
        /// `ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX`: the larger.
        Max = sys::ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
        /// `ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN`: the smaller.
        Min = sys::ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN,
        /// `ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL`: 1 where equal, else 0.
        Equal = sys::ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL,
    }
}

/// A distribution of [`Scope::random`]: uniform for every [`RandomElem`], normal and truncated
/// normal (within two standard deviations) for the [`RandomFloat`]s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution<T> {
    func: sys::aclrtRandomNumFuncType,
    a: T,
    b: T,
}

impl<T: RandomElem> Distribution<T> {
    /// Uniform in `[min, max)`.
    pub fn uniform(min: T, max: T) -> Self {
        Distribution {
            func: sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
            a: min,
            b: max,
        }
    }
}

impl<T: RandomFloat> Distribution<T> {
    /// Normal with `mean` and standard deviation `stddev`.
    pub fn normal(mean: T, stddev: T) -> Self {
        Distribution {
            func: sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
            a: mean,
            b: stddev,
        }
    }

    /// Normal, redrawn outside two standard deviations of the mean.
    pub fn truncated_normal(mean: T, stddev: T) -> Self {
        Distribution {
            func: sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
            a: mean,
            b: stddev,
        }
    }
}

/// A seed and the device-side counter that random tasks advance
/// ([`Scope::random`]): the same seed from the same counter gives the same numbers.
///
/// A task writes the counter when it runs, so a scope borrows the state exclusively.
#[derive(Debug)]
pub struct RandomState {
    seed: u64,
    counter: DeviceBuffer<u64>,
}

impl RandomState {
    /// A state with `seed` and its counter at zero, on `device`.
    pub fn new(device: &Device, seed: u64) -> Result<RandomState> {
        Ok(RandomState {
            seed,
            counter: DeviceBuffer::zeroed(device, 2, MallocPolicy::NormalOnly)?,
        })
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Puts the counter back to zero (`aclrtMemset`): the next draws repeat the first ones.
    pub fn reset(&mut self) -> Result<()> {
        self.counter.fill_bytes(0)
    }

    /// The counter as the device left it (two words, synchronous copy).
    pub fn counter(&self) -> Result<[u64; 2]> {
        let mut c = [0u64; 2];
        self.counter.copy_to_host(&mut c)?;
        Ok(c)
    }
}

fn param(bytes: &[u8]) -> sys::aclrtRandomParaInfo {
    let mut p = sys::aclrtRandomParaInfo::default();
    let n = bytes.len().min(p.valueOrAddr.len());
    p.valueOrAddr[..n].copy_from_slice(&bytes[..n]);
    // At most 8: fits.
    p.size = n as u8;
    p
}

fn device_region<T>(api: &'static str, what: &str, r: &RawRegion<T>, device: i32) -> Result<()> {
    match r.location().device() {
        Some(d) if d == device => Ok(()),
        Some(_) => Err(Error::argument(
            api,
            format!("the {what} is memory of another device than the stream's"),
        )),
        None => Err(Error::argument(
            api,
            format!("the {what} must be device memory"),
        )),
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues `dst[i] = kind(dst[i], src[i])` over both buffers (`aclrtReduceAsync`). Both are
    /// device memory of the stream's device, of equal length; an empty pair is a no-op.
    pub fn reduce<T, D, S>(&self, mut dst: D, src: S, kind: ReduceKind) -> Result<()>
    where
        T: ReduceElem,
        D: AsyncDest<'scope, Elem = T>,
        S: AsyncSource<'scope, Elem = T>,
    {
        const API: &str = "aclrtReduceAsync";
        let (d, s) = (dst.region(), src.region());
        let dev = self.device_id();
        device_region(API, "destination", &d, dev)?;
        device_region(API, "source", &s, dev)?;
        if d.len() != s.len() {
            return Err(Error::argument(
                API,
                format!("lengths differ: {} and {}", d.len(), s.len()),
            ));
        }
        if d.is_empty() {
            return Ok(());
        }
        self.enqueue_as(API, &[d.write(), s.read()], |st| {
            // SAFETY: both regions are device memory borrowed for 'scope (the destination
            // exclusively), `bytes` is their common size, and the scope waits for the stream
            // before 'scope ends.
            unsafe {
                raw::aclrtReduceAsync(
                    d.ptr().cast(),
                    s.ptr().cast_const().cast(),
                    d.bytes() as u64,
                    kind.into(),
                    T::DATA_TYPE,
                    st.as_raw(),
                    std::ptr::null_mut(),
                )
            }
        })
    }

    fn random_task(
        &self,
        data_type: sys::aclDataType,
        func: sys::aclrtRandomNumFuncParaInfo,
        result: crate::copy::Access,
        result_ptr: *mut std::ffi::c_void,
        count: u64,
        state: &RandomState,
    ) -> Result<()> {
        let task = sys::aclrtRandomNumTaskInfo {
            dataType: data_type,
            randomNumFuncParaInfo: func,
            randomParaAddr: std::ptr::null_mut(),
            randomResultAddr: result_ptr,
            randomCounterAddr: state.counter.as_ptr().cast_mut().cast(),
            randomSeed: param(&state.seed.to_le_bytes()),
            randomNum: param(&count.to_le_bytes()),
            rsv: [0; 8],
        };
        self.enqueue_as("aclrtRandomNumAsync", &[result], |st| {
            // SAFETY: the task description is read during the call; the result and the counter
            // are device memory borrowed for 'scope (exclusively), and the scope waits for the
            // stream before 'scope ends.
            unsafe { raw::aclrtRandomNumAsync(&task, st.as_raw(), std::ptr::null_mut()) }
        })
    }

    /// Enqueues filling `dst` with random numbers of `dist` (`aclrtRandomNumAsync`), drawn from
    /// `state`, whose counter the task advances. `dst` and the state are device memory of the
    /// stream's device.
    pub fn random<T, D>(
        &self,
        mut dst: D,
        dist: Distribution<T>,
        state: &'scope mut RandomState,
    ) -> Result<()>
    where
        T: RandomElem,
        D: AsyncDest<'scope, Elem = T>,
    {
        const API: &str = "aclrtRandomNumAsync";
        let d = dst.region();
        device_region(API, "destination", &d, self.device_id())?;
        if state.counter.device_id() != self.device_id() {
            return Err(Error::argument(
                API,
                "the random state is on another device",
            ));
        }
        if d.is_empty() {
            return Ok(());
        }
        let (a, b) = (param(&dist.a.param_bytes()), param(&dist.b.param_bytes()));
        let mut func = sys::aclrtRandomNumFuncParaInfo {
            funcType: dist.func,
            paramInfo: sys::aclrtRandomNumFuncParaInfo__bindgen_ty_1 {
                uniformDisInfo: sys::aclrtUniformDisInfo { min: a, max: b },
            },
        };
        if dist.func != sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS {
            func.paramInfo.normalDisInfo = sys::aclrtNormalDisInfo { mean: a, stddev: b };
        }
        self.random_task(
            T::DATA_TYPE,
            func,
            d.write(),
            d.ptr().cast(),
            d.len() as u64,
            state,
        )
    }

    /// Enqueues a dropout bitmask into `dst` (`aclrtRandomNumAsync`): `8 * dst.len()` bits,
    /// each clear with probability `ratio` (in `[0, 1]`), drawn from `state`.
    pub fn dropout_bitmask<D>(
        &self,
        mut dst: D,
        ratio: f32,
        state: &'scope mut RandomState,
    ) -> Result<()>
    where
        D: AsyncDest<'scope, Elem = u8>,
    {
        const API: &str = "aclrtRandomNumAsync";
        if !(0.0..=1.0).contains(&ratio) {
            return Err(Error::argument(
                API,
                format!("the ratio {ratio} is not in [0, 1]"),
            ));
        }
        let d = dst.region();
        device_region(API, "destination", &d, self.device_id())?;
        if state.counter.device_id() != self.device_id() {
            return Err(Error::argument(
                API,
                "the random state is on another device",
            ));
        }
        if d.is_empty() {
            return Ok(());
        }
        let func = sys::aclrtRandomNumFuncParaInfo {
            funcType: sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
            paramInfo: sys::aclrtRandomNumFuncParaInfo__bindgen_ty_1 {
                dropoutBitmaskInfo: sys::aclrtDropoutBitmaskInfo {
                    dropoutRation: param(&ratio.to_ne_bytes()),
                },
            },
        };
        let bits = (d.len() as u64).saturating_mul(8);
        self.random_task(sys::ACL_FLOAT, func, d.write(), d.ptr().cast(), bits, state)
    }
}
