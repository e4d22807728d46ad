//! Kernel arguments (`aclrtKernelArgs*`): [`KernelArgs`], an argument list in memory of its own
//! (`aclrtKernelArgsInitByUserMem`), filled in parameter order from typed [`KernelArg`]s —
//! device buffers borrowed for the scope, claimed regions, scalars, plain-data values — and
//! placeholders whose data the launch copies to the device.
//!
//! A list belongs to one scope: it is made by [`Scope::kernel_args`](crate::Scope::kernel_args)
//! for a function borrowed for the scope, and every buffer in it is borrowed (shared, or
//! exclusively for `&mut`) until the scope has waited for its stream. Its lifetime is invariant,
//! like a [`Claimed`]'s, so a list of one scope is no list of another.

use crate::copy::{Access, CopyDest, CopySource};
use crate::error::{Error, Result};
use crate::memory::DeviceRepr;
use crate::module::KernelFunction;
use crate::raw;
use crate::scope::{AsyncDest, AsyncSource, Claimed};
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;

/// Bytes of parameters a list made by [`Scope::kernel_args`](crate::Scope::kernel_args) holds:
/// the runtime's most parameters (128) of 8 bytes each.
pub const DEFAULT_ARGS_BYTES: usize = 1024;

/// The bytes of plain data.
pub(crate) fn bytes_of<T: DeviceRepr>(data: &[T]) -> &[u8] {
    // SAFETY: `DeviceRepr` types have no padding: every byte of the values is initialised, and
    // the slice covers exactly their memory.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

pub(crate) mod sealed {
    use crate::copy::{Access, MemoryLocation, RawRegion};

    pub trait Sealed {}

    /// What one argument contributes: its bytes and, for memory, where the memory is and how
    /// the kernel may use it (the scope orders the launch after conflicting uses).
    #[derive(Debug, Clone, Copy)]
    pub struct ArgBytes {
        pub(super) bytes: [u8; 8],
        pub(super) len: usize,
        pub(super) memory: Option<(MemoryLocation, Access)>,
    }

    impl ArgBytes {
        pub(super) fn memory<T>(r: RawRegion<T>, access: Access) -> ArgBytes {
            ArgBytes {
                bytes: (r.ptr() as usize as u64).to_ne_bytes(),
                len: 8,
                memory: Some((r.location(), access)),
            }
        }

        pub(super) fn scalar(bytes: &[u8]) -> ArgBytes {
            let mut b = [0u8; 8];
            b[..bytes.len()].copy_from_slice(bytes);
            ArgBytes {
                bytes: b,
                len: bytes.len(),
                memory: None,
            }
        }
    }
}

/// A value a kernel parameter can take, for [`KernelArgs::arg`] and
/// [`LaunchBuilder::arg`](crate::LaunchBuilder::arg): global memory borrowed for the scope
/// (`&DeviceBuffer<T>`, `&DeviceSlice<T>` for memory the kernel reads; `&mut DeviceBuffer<T>`,
/// `&mut DeviceSliceMut<T>` for memory it writes; a [`Claimed`] region of the scope for either),
/// passed as its device address; or a scalar (`i8` … `u64`, `f32`, `f64`, `bool`, and
/// `half::f16`/`bf16` with the `half` feature), passed as its bytes. Sealed: these are the
/// arguments whose borrows the scope can vouch for.
pub trait KernelArg<'scope>: sealed::Sealed {
    /// The argument's bytes.
    #[doc(hidden)]
    fn arg_bytes(self) -> sealed::ArgBytes;
}

impl<S: CopySource + ?Sized> sealed::Sealed for &S {}
impl<'scope, S: CopySource + ?Sized> KernelArg<'scope> for &'scope S {
    fn arg_bytes(self) -> sealed::ArgBytes {
        let r = AsyncSource::region(&self);
        sealed::ArgBytes::memory(r, r.read())
    }
}

impl<D: CopyDest + ?Sized> sealed::Sealed for &mut D {}
impl<'scope, D: CopyDest + ?Sized> KernelArg<'scope> for &'scope mut D {
    fn arg_bytes(mut self) -> sealed::ArgBytes {
        let r = AsyncDest::region(&mut self);
        sealed::ArgBytes::memory(r, r.write())
    }
}

impl<T: DeviceRepr> sealed::Sealed for Claimed<'_, T> {}
impl<'scope, T: DeviceRepr> KernelArg<'scope> for Claimed<'scope, T> {
    fn arg_bytes(self) -> sealed::ArgBytes {
        // The kernel may read or write it: ordered as a write.
        let r = AsyncSource::region(&self);
        sealed::ArgBytes::memory(r, r.write())
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelArg<'_> for $t {
            fn arg_bytes(self) -> sealed::ArgBytes {
                sealed::ArgBytes::scalar(&self.to_ne_bytes())
            }
        }
    )*};
}
scalar_args!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

impl sealed::Sealed for bool {}
impl KernelArg<'_> for bool {
    fn arg_bytes(self) -> sealed::ArgBytes {
        sealed::ArgBytes::scalar(&[u8::from(self)])
    }
}

#[cfg(feature = "half")]
scalar_args!(half::f16, half::bf16);

/// A parameter of a [`KernelArgs`] list, for [`KernelArgs::update`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelParam {
    index: usize,
    raw: sys::aclrtParamHandle,
    len: usize,
    kind: ParamKind,
}

/// What a parameter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParamKind {
    Value,
    Memory,
    Placeholder,
}

impl KernelParam {
    /// Its position in the parameter list.
    pub fn index(&self) -> usize {
        self.index
    }
}

/// Where a list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Taking parameters.
    Building,
    /// Sealed (`aclrtKernelArgsFinalize`).
    Finalized,
    /// Sealed once, then a parameter was updated: sealed again before the next launch.
    Updated,
}

/// An argument list of a kernel (`aclrtKernelArgsInitByUserMem`), in memory of its own, for
/// [`Scope::launch`](crate::Scope::launch). Parameters are appended in order
/// (`aclrtKernelArgsAppend`, `aclrtKernelArgsAppendPlaceHolder`); the first launch seals the list
/// (`aclrtKernelArgsFinalize`, placeholder data first); [`KernelArgs::update`] changes a
/// parameter for the next launches (`aclrtKernelArgsParaUpdate`).
///
/// | operation | C function |
/// |---|---|
/// | [`Scope::kernel_args`](crate::Scope::kernel_args), [`KernelArgs::with_capacity`] | `aclrtKernelArgsGetHandleMemSize`, `aclrtKernelArgsGetMemSize`, `aclrtKernelArgsInitByUserMem` |
/// | [`KernelArgs::arg`], [`KernelArgs::value`] | `aclrtKernelArgsAppend` |
/// | [`KernelArgs::placeholder`] | `aclrtKernelArgsAppendPlaceHolder` (then `aclrtKernelArgsGetPlaceHolderBuffer` when sealed) |
/// | [`KernelArgs::update`] | `aclrtKernelArgsParaUpdate` |
/// | first launch, launch after an update | `aclrtKernelArgsFinalize` |
#[derive(Debug)]
pub struct KernelArgs<'scope> {
    func: &'scope KernelFunction,
    memory: ListMemory,
    params: Vec<KernelParam>,
    /// Placeholder data, copied into the list's buffers when it is sealed.
    pending: Vec<(sys::aclrtParamHandle, Vec<u8>)>,
    /// Devices of the memory arguments.
    devices: Vec<i32>,
    /// How the kernel may use each memory argument, for the scope's ordering.
    accesses: Vec<Access>,
    state: State,
    /// Invariant in `'scope`, like [`Claimed`]: a list of one scope is no list of another.
    _scope: PhantomData<&'scope mut &'scope ()>,
}

/// Where a list lives.
#[derive(Debug)]
enum ListMemory {
    /// Memory of the list's own (`aclrtKernelArgsInitByUserMem`).
    Owned {
        /// `aclrtKernelArgsGetHandleMemSize` bytes; its address is the handle. A `Vec` (not a
        /// `Box`): the runtime keeps pointers into both memories, which moving the list must
        /// not invalidate.
        handle: Vec<u64>,
        /// The argument bytes (`aclrtKernelArgsGetMemSize` bytes), which the runtime writes.
        _buffer: Vec<u64>,
    },
    /// The calling thread's list (`aclrtKernelArgsInit`), which the thread's next
    /// `aclrtKernelArgsInit` starts again: only for a list made, filled and launched within one
    /// call that runs no other code ([`LaunchBuilder`](crate::LaunchBuilder)'s launch).
    Thread(sys::aclrtArgsHandle),
}

/// The most bytes of parameters and placeholder data a one-call launch puts in the thread's list
/// (64 KiB, less the system slots and the 8-byte slot of each of at most 128 parameters).
pub(crate) const THREAD_LIST_BYTES: usize = 64 * 1024 - 8 * 8 - 8 * 128;

impl<'scope> KernelArgs<'scope> {
    /// A list for `func` with room for `bytes` bytes of parameters and placeholder data.
    pub fn with_capacity(func: &'scope KernelFunction, bytes: usize) -> Result<KernelArgs<'scope>> {
        func.device().ensure_current()?;
        let (mut handle_bytes, mut args_bytes) = (0usize, 0usize);
        // SAFETY: a live function handle and valid out-pointers.
        unsafe {
            raw::aclrtKernelArgsGetHandleMemSize(func.as_raw(), &mut handle_bytes)?;
            raw::aclrtKernelArgsGetMemSize(func.as_raw(), bytes, &mut args_bytes)?;
        }
        let mut handle = vec![0u64; handle_bytes.div_ceil(8).max(1)];
        let mut buffer = vec![0u64; args_bytes.div_ceil(8).max(1)];
        // SAFETY: both memories are owned by the list, of the sizes the runtime asked for, and
        // stay at their addresses (never resized) for as long as the list lives.
        unsafe {
            raw::aclrtKernelArgsInitByUserMem(
                func.as_raw(),
                handle.as_mut_ptr().cast(),
                buffer.as_mut_ptr().cast(),
                buffer.len() * 8,
            )
        }?;
        Ok(KernelArgs::new(
            func,
            ListMemory::Owned {
                handle,
                _buffer: buffer,
            },
            0,
        ))
    }

    /// The calling thread's list for `func` (`aclrtKernelArgsInit`), for `params` parameters.
    /// It stays valid only until the thread's next `aclrtKernelArgsInit`: the caller fills and
    /// launches it in the same call, running no other code in between.
    pub(crate) fn thread_list(
        func: &'scope KernelFunction,
        params: usize,
    ) -> Result<KernelArgs<'scope>> {
        func.device().ensure_current()?;
        let mut handle: sys::aclrtArgsHandle = std::ptr::null_mut();
        // SAFETY: a live function handle and a valid out-pointer.
        unsafe { raw::aclrtKernelArgsInit(func.as_raw(), &mut handle) }?;
        Ok(KernelArgs::new(func, ListMemory::Thread(handle), params))
    }

    fn new(func: &'scope KernelFunction, memory: ListMemory, params: usize) -> KernelArgs<'scope> {
        KernelArgs {
            func,
            memory,
            params: Vec::with_capacity(params),
            pending: Vec::new(),
            devices: Vec::with_capacity(params),
            accesses: Vec::with_capacity(params),
            state: State::Building,
            _scope: PhantomData,
        }
    }

    /// The function the list is for.
    pub fn function(&self) -> &'scope KernelFunction {
        self.func
    }

    /// The parameters appended so far.
    pub fn params(&self) -> &[KernelParam] {
        &self.params
    }

    fn raw(&mut self) -> sys::aclrtArgsHandle {
        match &mut self.memory {
            ListMemory::Owned { handle, .. } => handle.as_mut_ptr().cast(),
            ListMemory::Thread(handle) => *handle,
        }
    }

    fn building(&self, what: &'static str) -> Result<()> {
        if self.state != State::Building {
            return Err(Error::argument(
                what,
                "the list was sealed by a launch: no parameter can be added any more (update \
                 one with KernelArgs::update)",
            ));
        }
        Ok(())
    }

    fn append_bytes(&mut self, bytes: &[u8], kind: ParamKind) -> Result<KernelParam> {
        self.building("aclrtKernelArgsAppend")?;
        let mut p: sys::aclrtParamHandle = std::ptr::null_mut();
        // SAFETY: a live list owned by `self`; `bytes` for the call (the runtime copies them);
        // a valid out-pointer.
        unsafe {
            raw::aclrtKernelArgsAppend(
                self.raw(),
                bytes.as_ptr().cast_mut().cast::<c_void>(),
                bytes.len(),
                &mut p,
            )
        }?;
        let param = KernelParam {
            index: self.params.len(),
            raw: p,
            len: bytes.len(),
            kind,
        };
        self.params.push(param);
        Ok(param)
    }

    /// Appends the next parameter. Memory must be device memory; the scope checks its device
    /// against the stream's at launch.
    pub fn arg(&mut self, arg: impl KernelArg<'scope>) -> Result<KernelParam> {
        self.push(arg.arg_bytes())
    }

    /// Appends an argument's bytes (see [`KernelArgs::arg`]).
    pub(crate) fn push(&mut self, a: sealed::ArgBytes) -> Result<KernelParam> {
        if let Some((location, access)) = a.memory {
            let Some(device) = location.device() else {
                return Err(Error::argument(
                    "aclrtKernelArgsAppend",
                    format!(
                        "parameter {} is host memory: kernels take device memory",
                        self.params.len()
                    ),
                ));
            };
            let p = self.append_bytes(&a.bytes[..a.len], ParamKind::Memory)?;
            self.devices.push(device);
            self.accesses.push(access);
            return Ok(p);
        }
        self.append_bytes(&a.bytes[..a.len], ParamKind::Value)
    }

    /// Appends a parameter of a plain-data type passed by value (a struct of the kernel's, a
    /// tiling record), as its bytes.
    pub fn value<T: DeviceRepr>(&mut self, value: &T) -> Result<KernelParam> {
        self.value_bytes(bytes_of(std::slice::from_ref(value)))
    }

    /// Appends the bytes of a plain-data value (see [`KernelArgs::value`]).
    pub(crate) fn value_bytes(&mut self, bytes: &[u8]) -> Result<KernelParam> {
        if bytes.is_empty() {
            return Err(Error::argument(
                "aclrtKernelArgsAppend",
                "a value of 0 bytes is no kernel parameter",
            ));
        }
        self.append_bytes(bytes, ParamKind::Value)
    }

    /// Appends a placeholder: a pointer parameter whose data (`data`, plain values) the launch
    /// copies to the device, passing the kernel its device address.
    pub fn placeholder<T: DeviceRepr>(&mut self, data: &[T]) -> Result<KernelParam> {
        self.placeholder_bytes(bytes_of(data).to_vec())
    }

    /// Appends a placeholder with its data's bytes (see [`KernelArgs::placeholder`]).
    pub(crate) fn placeholder_bytes(&mut self, data: Vec<u8>) -> Result<KernelParam> {
        self.building("aclrtKernelArgsAppendPlaceHolder")?;
        if data.is_empty() {
            return Err(Error::argument(
                "aclrtKernelArgsAppendPlaceHolder",
                "placeholder data of 0 bytes",
            ));
        }
        let mut p: sys::aclrtParamHandle = std::ptr::null_mut();
        // SAFETY: a live list owned by `self` and a valid out-pointer.
        unsafe { raw::aclrtKernelArgsAppendPlaceHolder(self.raw(), &mut p) }?;
        self.pending.push((p, data));
        let param = KernelParam {
            index: self.params.len(),
            raw: p,
            len: 8,
            kind: ParamKind::Placeholder,
        };
        self.params.push(param);
        Ok(param)
    }

    /// Replaces the value of a scalar or plain-data parameter for the next launches
    /// (`aclrtKernelArgsParaUpdate`); the size must be the parameter's. Memory parameters and
    /// placeholders cannot be updated (their borrows were taken when they were appended).
    pub fn update<T: DeviceRepr>(&mut self, param: KernelParam, value: &T) -> Result<()> {
        let api = "aclrtKernelArgsParaUpdate";
        if self.params.get(param.index) != Some(&param) {
            return Err(Error::argument(
                api,
                "the parameter is not one of this list",
            ));
        }
        match param.kind {
            ParamKind::Placeholder => {
                return Err(Error::argument(api, "a placeholder cannot be updated"));
            }
            ParamKind::Memory => {
                return Err(Error::argument(
                    api,
                    "a memory parameter cannot be updated: its borrow was taken when it was \
                     appended",
                ));
            }
            ParamKind::Value => {}
        }
        if size_of::<T>() != param.len {
            return Err(Error::argument(
                api,
                format!(
                    "parameter {} has {} byte(s), the new value {}",
                    param.index,
                    param.len,
                    size_of::<T>()
                ),
            ));
        }
        let bytes = bytes_of(std::slice::from_ref(value));
        // SAFETY: a live list and one of its parameters; the bytes live for the call.
        unsafe {
            raw::aclrtKernelArgsParaUpdate(
                self.raw(),
                param.raw,
                bytes.as_ptr().cast_mut().cast(),
                bytes.len(),
            )
        }?;
        if self.state == State::Finalized {
            self.state = State::Updated;
        }
        Ok(())
    }

    /// Seals the list for a launch: placeholder data into their buffers, then
    /// `aclrtKernelArgsFinalize`.
    pub(crate) fn seal(&mut self) -> Result<sys::aclrtArgsHandle> {
        if self.state == State::Finalized {
            return Ok(self.raw());
        }
        self.func.device().ensure_current()?;
        for (p, data) in std::mem::take(&mut self.pending) {
            let mut buf: *mut c_void = std::ptr::null_mut();
            // SAFETY: a live list and one of its placeholders; a valid out-pointer.
            unsafe {
                raw::aclrtKernelArgsGetPlaceHolderBuffer(self.raw(), p, data.len(), &mut buf)
            }?;
            // SAFETY: the runtime gave `data.len()` bytes of the list's buffer at `buf`.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), data.len()) };
        }
        // SAFETY: a live list owned by `self`.
        unsafe { raw::aclrtKernelArgsFinalize(self.raw()) }?;
        self.state = State::Finalized;
        Ok(self.raw())
    }

    /// How the kernel may use its memory parameters.
    pub(crate) fn accesses(&self) -> &[Access] {
        &self.accesses
    }

    /// The devices of the memory parameters.
    pub(crate) fn devices(&self) -> &[i32] {
        &self.devices
    }
}
