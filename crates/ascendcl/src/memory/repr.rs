//! [`DeviceRepr`]: the element types that device memory and copies accept.
//!
//! Implemented for the primitive integers and floats, arrays of them, `half::f16` and
//! `half::bf16` (feature `half`), and — through the `device_repr!` macro — for a user's
//! `#[repr(C)]` plain-data struct that implements `bytemuck::Pod` (feature `bytemuck`).

/// Plain data that may live in device memory and be copied bytewise between host and device.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, the type has no padding, and
/// it holds no pointers or references whose validity the device could break.
///
/// With the `bytemuck` feature, the `device_repr!` macro implements it without `unsafe` for
/// types that implement `bytemuck::Pod`, which promises exactly this.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr_primitives {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive integer or float: no padding, every bit pattern valid.
        unsafe impl DeviceRepr for $t {}
    )* };
}
device_repr_primitives!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);
// SAFETY: an array of DeviceRepr has no padding between elements and every bit pattern valid.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

// SAFETY: `f16` is a transparent `u16`; every bit pattern is a valid half-precision value (NaNs
// included).
#[cfg(feature = "half")]
unsafe impl DeviceRepr for half::f16 {}
// SAFETY: `bf16` is a transparent `u16`; every bit pattern is a valid bfloat16 value.
#[cfg(feature = "half")]
unsafe impl DeviceRepr for half::bf16 {}

/// Implements [`DeviceRepr`] for plain-data types that implement `bytemuck::Pod` (feature
/// `bytemuck`), without `unsafe` at the call site: the macro checks the `Pod` bound at compile
/// time, and `Pod` promises what `DeviceRepr` needs (no padding, every bit pattern valid, no
/// pointers).
///
/// ```
/// # #[cfg(feature = "bytemuck")] {
/// use ascendcl::bytemuck::{Pod, Zeroable};
///
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
/// ascendcl::device_repr!(Particle);
///
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let p = [Particle { position: [1.0, 2.0, 3.0], mass: 4.0 }; 8];
/// let on_device = device.clone_htod(&p)?;
/// assert_eq!(on_device.copy_to_vec()?, p);
/// # }
/// # Ok::<(), ascendcl::Error>(())
/// ```
///
/// A type that is not `Pod` (padding, a `bool`, a reference) is refused at compile time.
#[cfg(feature = "bytemuck")]
#[macro_export]
macro_rules! device_repr {
    ($($t:ty),+ $(,)?) => { $(
        const _: () = {
            fn device_repr_needs_pod<T: $crate::bytemuck::Pod + Send + Sync>() {}
            let _ = device_repr_needs_pod::<$t>;
        };
        // SAFETY: `$t: bytemuck::Pod` (checked just above): no padding, every bit pattern
        // valid, no pointers or references.
        unsafe impl $crate::DeviceRepr for $t {}
    )+ };
}
