// Launch support for the Rust modules ascendc-build generates: kernel descriptors, the launch
// builder and its checks, the host-mode launch through the runtime's kernel binary API, the NPU
// launch, and the errors.
//
// ascendc-build writes this file next to every generated module, which includes it in a private
// module; it compiles against the `ascendcl` crate of the crate that builds the kernels. All of
// the code that depends on the ascendcl API is here, so that the generated modules stay small.

use ::std::any::TypeId;
use ::std::ffi::{CString, c_char, c_void};
use ::std::fmt;
use ::std::sync::Mutex;

pub use ::ascendcl::Scope;
use ::ascendcl::{AsyncDest, AsyncSource, BackendKind, DeviceRepr, MemoryLocation};

/// The most blocks one launch may have (the runtime's limit).
pub const MAX_BLOCKS: u32 = 65_535;

/// How the kernels of a library were built, and so where they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Compiled for the host CPU; they run on the emulator backend.
    Host,
    /// Compiled by CANN's `ascendc_library()`; they run on an NPU (the CANN backend).
    Npu,
}

impl Mode {
    /// `host` or `npu`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Host => "host",
            Mode::Npu => "npu",
        }
    }

    /// Whether kernels of this mode can run on a backend of `kind`.
    pub fn runs_on(self, kind: BackendKind) -> bool {
        match self {
            Mode::Host => kind == BackendKind::Emulator,
            Mode::Npu => matches!(kind, BackendKind::Cann | BackendKind::Linked),
        }
    }
}

/// A Rust element or scalar type of a kernel parameter.
#[derive(Clone, Copy)]
pub struct Elem {
    name: &'static str,
    id: fn() -> TypeId,
}

impl Elem {
    /// The element type `T`, named `name` in messages.
    pub const fn of<T: 'static>(name: &'static str) -> Elem {
        Elem {
            name,
            id: TypeId::of::<T>,
        }
    }

    fn is<T: 'static>(&self) -> bool {
        (self.id)() == TypeId::of::<T>()
    }
}

impl fmt::Debug for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// What a kernel parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum Param {
    /// Global memory the kernel reads (`__gm__ const T*`); `None`: any element type.
    In(Option<Elem>),
    /// Global memory the kernel writes (`__gm__ T*`, `GM_ADDR`); `None`: any element type.
    Out(Option<Elem>),
    /// A scalar by value.
    Scalar(Elem),
    /// A value of a type Rust does not know (a struct by value), passed as bytes.
    Value,
}

impl Param {
    fn what(&self) -> &'static str {
        match self {
            Param::In(_) => "a buffer the kernel reads (.input)",
            Param::Out(_) => "a buffer the kernel writes (.output)",
            Param::Scalar(_) => "a scalar (.scalar)",
            Param::Value => "a value of a C++ type (.value)",
        }
    }
}

/// The C launcher of a kernel (`<<<...>>>`, NPU mode).
pub type NpuLaunch = unsafe extern "C" fn(u32, *mut c_void, *const *const c_void);

/// How a kernel is reached.
#[derive(Clone, Copy)]
pub enum Imp {
    /// Host mode: by name, in the library's kernel binary.
    Host {
        /// The library.
        library: &'static Library,
        /// `sizeof` of every parameter.
        sizes: fn() -> &'static [u32],
    },
    /// NPU mode.
    Npu {
        /// The kernel's launcher.
        launch: NpuLaunch,
        /// `sizeof` of every parameter.
        sizes: fn() -> &'static [u32],
    },
}

/// The handles the runtime gave for a library's binary (0: not loaded yet).
struct Loaded {
    binary: usize,
    functions: Vec<(&'static str, usize)>,
}

/// A host-mode kernels library: its kernel binary (a shared object the emulator runs), its
/// kernels, and the runtime's handles for them. The binary is loaded on the first launch
/// (`aclrtCreateBinary`, `aclrtBinaryLoad`) and stays loaded for the process, as the kernels a
/// CANN program registers at start-up do; each kernel's function handle
/// (`aclrtBinaryGetFunction`) is looked up once.
pub struct Library {
    name: &'static str,
    binary: fn() -> &'static [u8],
    kernels: &'static [&'static Kernel],
    loaded: Mutex<Loaded>,
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("name", &self.name)
            .field("binary_bytes", &(self.binary)().len())
            .field("kernels", &self.kernels.len())
            .finish()
    }
}

impl Library {
    /// Used by the generated code.
    pub const fn new(
        name: &'static str,
        binary: fn() -> &'static [u8],
        kernels: &'static [&'static Kernel],
    ) -> Library {
        Library {
            name,
            binary,
            kernels,
            loaded: Mutex::new(Loaded {
                binary: 0,
                functions: Vec::new(),
            }),
        }
    }

    /// The library's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel binary (a shared object the emulator loads).
    pub fn binary(&self) -> &'static [u8] {
        (self.binary)()
    }

    /// The kernels.
    pub fn kernels(&self) -> &'static [&'static Kernel] {
        self.kernels
    }

    /// The function handle of kernel `name`, loading the binary first if needed. Needs the
    /// stream's context current.
    fn function(&self, name: &'static str) -> Result<::ascendcl::sys::aclrtFuncHandle, ::ascendcl::Error> {
        let mut l = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, f)) = l.functions.iter().find(|(n, _)| *n == name) {
            return Ok(f as ::ascendcl::sys::aclrtFuncHandle);
        }
        if l.binary == 0 {
            let bytes = (self.binary)();
            // SAFETY: the bytes are a static of this program; the runtime reads them during
            // aclrtBinaryLoad only (it copies the binary), and the descriptor is destroyed after.
            let desc =
                unsafe { ::ascendcl::raw::aclrtCreateBinary(bytes.as_ptr().cast(), bytes.len()) };
            if desc.is_null() {
                return Err(::ascendcl::Error::Argument {
                    api: "aclrtCreateBinary",
                    reason: format!("the runtime refused the kernel binary of `{}`", self.name).into(),
                });
            }
            let mut handle: ::ascendcl::sys::aclrtBinHandle = ::std::ptr::null_mut();
            // SAFETY: a live descriptor and a valid out-pointer.
            let loaded = unsafe { ::ascendcl::raw::aclrtBinaryLoad(desc, &mut handle) };
            // SAFETY: the descriptor was created above and is not used again.
            let _ = unsafe { ::ascendcl::raw::aclrtDestroyBinary(desc) };
            loaded?;
            l.binary = handle as usize;
        }
        let cname = CString::new(name).unwrap_or_default();
        let mut f: ::ascendcl::sys::aclrtFuncHandle = ::std::ptr::null_mut();
        // SAFETY: a binary handle of the runtime, a NUL-terminated name, a valid out-pointer.
        unsafe {
            ::ascendcl::raw::aclrtBinaryGetFunction(
                l.binary as ::ascendcl::sys::aclrtBinHandle,
                cname.as_ptr(),
                &mut f,
            )
        }?;
        l.functions.push((name, f as usize));
        Ok(f)
    }

    /// Forgets the handles (the runtime no longer knows them: it was finalised).
    fn forget(&self) {
        let mut l = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        l.binary = 0;
        l.functions.clear();
    }

    /// Launches `kernel` with `blocks` blocks on `stream` (whose context is current), one
    /// argument per parameter: `aclrtKernelArgsInit`, `aclrtKernelArgsAppend` for each,
    /// `aclrtKernelArgsFinalize`, `aclrtLaunchKernelWithConfig`.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters, and memory they point to stays valid until
    /// the stream has run the kernel.
    unsafe fn launch(
        &self,
        kernel: &'static str,
        blocks: u32,
        stream: ::ascendcl::sys::aclrtStream,
        args: &[&[u8]],
    ) -> Result<(), ::ascendcl::Error> {
        // SAFETY: forwarded.
        match unsafe { self.launch_once(kernel, blocks, stream, args) } {
            Err(e) if e.code() == Some(::ascendcl::AclError::INVALID_HANDLE) => {
                self.forget();
                // SAFETY: forwarded.
                unsafe { self.launch_once(kernel, blocks, stream, args) }
            }
            r => r,
        }
    }

    /// # Safety
    /// As [`Library::launch`].
    unsafe fn launch_once(
        &self,
        kernel: &'static str,
        blocks: u32,
        stream: ::ascendcl::sys::aclrtStream,
        args: &[&[u8]],
    ) -> Result<(), ::ascendcl::Error> {
        let f = self.function(kernel)?;
        let mut handle: ::ascendcl::sys::aclrtArgsHandle = ::std::ptr::null_mut();
        // SAFETY: a function handle of the runtime; valid out-pointers; each argument's bytes
        // live for the call (the runtime copies them); the caller vouches for what they mean.
        unsafe {
            ::ascendcl::raw::aclrtKernelArgsInit(f, &mut handle)?;
            for a in args {
                let mut p: ::ascendcl::sys::aclrtParamHandle = ::std::ptr::null_mut();
                ::ascendcl::raw::aclrtKernelArgsAppend(
                    handle,
                    a.as_ptr().cast_mut().cast(),
                    a.len(),
                    &mut p,
                )?;
            }
            ::ascendcl::raw::aclrtKernelArgsFinalize(handle)?;
            ::ascendcl::raw::aclrtLaunchKernelWithConfig(
                f,
                blocks,
                stream,
                ::std::ptr::null_mut(),
                handle,
                ::std::ptr::null_mut(),
            )
        }
    }
}

/// A kernel of a generated library: its name, where it is defined, its parameters.
pub struct Kernel {
    name: &'static str,
    location: &'static str,
    params: &'static [(&'static str, Param)],
    imp: Imp,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("location", &self.location)
            .field("params", &self.params)
            .finish()
    }
}

impl Kernel {
    /// Used by the generated code.
    pub const fn new(
        name: &'static str,
        location: &'static str,
        params: &'static [(&'static str, Param)],
        imp: Imp,
    ) -> Kernel {
        Kernel {
            name,
            location,
            params,
            imp,
        }
    }

    /// The function name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `file:line` of its definition.
    pub fn location(&self) -> &'static str {
        self.location
    }

    /// Parameter names and what they take.
    pub fn params(&self) -> &'static [(&'static str, Param)] {
        self.params
    }

    /// How it was built.
    pub fn mode(&self) -> Mode {
        match self.imp {
            Imp::Host { .. } => Mode::Host,
            Imp::Npu { .. } => Mode::Npu,
        }
    }

    /// Starts a launch on the scope's stream with `blocks` blocks; add one argument per
    /// parameter, in order, then [`Launch::run`].
    pub fn launch<'a, 'scope, 'env>(
        &'static self,
        scope: &'a Scope<'scope, 'env>,
        blocks: u32,
    ) -> Launch<'a, 'scope, 'env> {
        Launch {
            kernel: self,
            scope,
            blocks,
            args: Vec::with_capacity(self.params.len()),
            accesses: Vec::with_capacity(self.params.len()),
            error: None,
        }
    }
}

/// Global memory for a parameter the kernel reads: any [`AsyncSource`] of element `T`.
pub trait In<'scope, T>: AsyncSource<'scope, Elem = T> {}
impl<'scope, T: DeviceRepr, S: AsyncSource<'scope, Elem = T>> In<'scope, T> for S {}
/// Global memory for a parameter the kernel writes: any [`AsyncDest`] of element `T`.
pub trait Out<'scope, T>: AsyncDest<'scope, Elem = T> {}
impl<'scope, T: DeviceRepr, D: AsyncDest<'scope, Elem = T>> Out<'scope, T> for D {}
/// Global memory of any element type that the kernel reads (`GM_ADDR`-like parameters).
pub trait InAny<'scope>: AsyncSource<'scope> {}
impl<'scope, S: AsyncSource<'scope>> InAny<'scope> for S {}
/// Global memory of any element type that the kernel writes (`GM_ADDR`, `__gm__ void*`).
pub trait OutAny<'scope>: AsyncDest<'scope> {}
impl<'scope, D: AsyncDest<'scope>> OutAny<'scope> for D {}

/// Scalar types a kernel parameter can take by value.
pub trait Scalar: Copy + 'static {
    /// The value's bytes, in the machine's order.
    fn bytes(self) -> Vec<u8>;
}

macro_rules! scalars {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}
scalars!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, usize);
impl Scalar for bool {
    fn bytes(self) -> Vec<u8> {
        vec![u8::from(self)]
    }
}

/// A launch being put together: arguments are checked as they are added, and the first
/// problem is reported by [`Launch::run`].
#[must_use = "a launch does nothing until `run` is called"]
pub struct Launch<'a, 'scope, 'env> {
    kernel: &'static Kernel,
    scope: &'a Scope<'scope, 'env>,
    blocks: u32,
    args: Vec<Vec<u8>>,
    /// How the kernel uses each buffer, for the scope's ordering across its streams.
    accesses: Vec<::ascendcl::Access>,
    error: Option<KernelError>,
}

impl fmt::Debug for Launch<'_, '_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launch")
            .field("kernel", &self.kernel.name)
            .field("blocks", &self.blocks)
            .field("args", &self.args.len())
            .finish()
    }
}

impl<'a, 'scope, 'env> Launch<'a, 'scope, 'env> {
    fn next_param(&mut self) -> Option<(usize, &'static str, Param)> {
        if self.error.is_some() {
            return None;
        }
        let index = self.args.len();
        match self.kernel.params.get(index) {
            Some(&(name, param)) => Some((index, name, param)),
            None => {
                self.error = Some(KernelError::ArgumentCount {
                    kernel: self.kernel.name,
                    expected: self.kernel.params.len(),
                    given: index + 1,
                });
                None
            }
        }
    }

    fn fail(&mut self, e: KernelError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn wrong_kind(&mut self, index: usize, param: &'static str, p: Param, given: &'static str) {
        self.fail(KernelError::ArgumentKind {
            kernel: self.kernel.name,
            index,
            param,
            expected: p.what(),
            given,
        });
    }

    fn memory<T: 'static>(
        &mut self,
        param: &'static str,
        elem: Option<Elem>,
        ptr: *mut T,
        location: MemoryLocation,
    ) {
        if let Some(e) = elem
            && !e.is::<T>()
        {
            return self.fail(KernelError::ElementType {
                kernel: self.kernel.name,
                param,
                expected: e.name,
                given: ::std::any::type_name::<T>(),
            });
        }
        let stream_device = self.scope.device_id();
        match location {
            MemoryLocation::Device(d) if d == stream_device => {}
            MemoryLocation::Device(d) => {
                return self.fail(KernelError::DeviceMismatch {
                    kernel: self.kernel.name,
                    param,
                    buffer_device: d,
                    stream_device,
                });
            }
            _ => {
                return self.fail(KernelError::NotDeviceMemory {
                    kernel: self.kernel.name,
                    param,
                });
            }
        }
        self.args.push((ptr as usize).to_ne_bytes().to_vec());
    }

    /// Global memory for the next parameter, which the kernel reads: a shared borrow (or a
    /// [`Claimed`](::ascendcl::Claimed) region) that lasts until the scope ends.
    pub fn input<S: AsyncSource<'scope>>(mut self, src: S) -> Self {
        let Some((index, name, p)) = self.next_param() else {
            return self;
        };
        let Param::In(elem) = p else {
            self.wrong_kind(index, name, p, "a read-only buffer (.input)");
            return self;
        };
        let r = src.region();
        self.accesses.push(r.read());
        self.memory(name, elem, r.ptr(), r.location());
        self
    }

    /// Global memory for the next parameter, which the kernel may write (or read): an
    /// exclusive borrow (or a [`Claimed`](::ascendcl::Claimed) region) that lasts until the scope
    /// ends.
    pub fn output<D: AsyncDest<'scope>>(mut self, mut dst: D) -> Self {
        let Some((index, name, p)) = self.next_param() else {
            return self;
        };
        let (elem, writes) = match p {
            Param::Out(e) => (e, true),
            // The kernel only reads it (`In`); an exclusive borrow covers that too.
            Param::In(e) => (e, false),
            _ => {
                self.wrong_kind(index, name, p, "a buffer (.output)");
                return self;
            }
        };
        let r = dst.region();
        self.accesses.push(if writes { r.write() } else { r.read() });
        self.memory(name, elem, r.ptr(), r.location());
        self
    }

    /// A scalar for the next parameter (`half` and `bfloat16_t` take their bits as `u16`).
    pub fn scalar<T: Scalar>(mut self, value: T) -> Self {
        let Some((index, name, p)) = self.next_param() else {
            return self;
        };
        match p {
            Param::Scalar(e) if e.is::<T>() => self.args.push(value.bytes()),
            Param::Scalar(e) => self.fail(KernelError::ElementType {
                kernel: self.kernel.name,
                param: name,
                expected: e.name,
                given: ::std::any::type_name::<T>(),
            }),
            _ => self.wrong_kind(index, name, p, "a scalar (.scalar)"),
        }
        self
    }

    /// The bytes of a value for the next parameter whose type Rust does not know (a struct by
    /// value); the size must equal the C++ type's `sizeof`.
    ///
    /// # Safety
    /// `bytes` must be a valid object representation of the parameter's C++ type: in
    /// particular, pointers inside it must be valid for whatever the kernel does with them.
    pub unsafe fn value(mut self, bytes: &[u8]) -> Self {
        let Some((index, name, p)) = self.next_param() else {
            return self;
        };
        if !matches!(p, Param::Value) {
            self.wrong_kind(index, name, p, "a value (.value)");
            return self;
        }
        let expected = self.sizes().get(index).copied().unwrap_or(0) as usize;
        if bytes.len() != expected {
            self.fail(KernelError::ValueSize {
                kernel: self.kernel.name,
                param: name,
                expected,
                given: bytes.len(),
            });
            return self;
        }
        self.args.push(bytes.to_vec());
        self
    }

    fn sizes(&self) -> &'static [u32] {
        match self.kernel.imp {
            Imp::Host { sizes, .. } | Imp::Npu { sizes, .. } => sizes(),
        }
    }

    /// Checks the launch and enqueues the kernel on the scope's stream, as a kernel task of the
    /// runtime. A failure of the kernel itself (a host-mode bounds check, for example) fails
    /// that task: the scope's synchronisation returns the runtime's error (a vector-core
    /// exception, `AclError::VECTOR_CORE_EXCEPTION`, for an AIV kernel), as on an NPU; see
    /// [`kernel_failure`].
    pub fn run(self) -> Result<(), KernelError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let args: Vec<&[u8]> = self.args.iter().map(Vec::as_slice).collect();
        let (kernel, blocks) = (self.kernel, self.blocks);
        // The scope orders the launch after conflicting uses of the buffers on its other
        // streams, then the kernel is enqueued on this one.
        let ordered = self.scope.enqueue(&self.accesses, |stream| {
            // SAFETY: every argument was checked against the kernel's parameters as it was
            // added: buffers are device memory of the stream's device, borrowed until the scope
            // has waited for the stream, and ordered with their other uses in the scope.
            Ok(unsafe { kernel.dispatch(stream, blocks, &args) })
        });
        ordered.unwrap_or_else(|source| {
            Err(KernelError::Runtime {
                kernel: kernel.name,
                source,
            })
        })
    }
}

impl Kernel {
    /// The checks of every launch (argument count, block count, backend), then the launch on
    /// `stream` through the runtime (host mode) or the `<<<...>>>` launcher (NPU mode).
    ///
    /// # Safety
    /// The arguments are the bytes of the kernel's parameters, and the memory they point to
    /// stays valid and untouched by the host until the stream has run the kernel.
    unsafe fn dispatch(
        &'static self,
        stream: &::ascendcl::Stream,
        blocks: u32,
        args: &[&[u8]],
    ) -> Result<(), KernelError> {
        let kernel = self.name;
        if args.len() != self.params.len() {
            return Err(KernelError::ArgumentCount {
                kernel,
                expected: self.params.len(),
                given: args.len(),
            });
        }
        if blocks == 0 {
            return Err(KernelError::ZeroBlocks { kernel });
        }
        if blocks > MAX_BLOCKS {
            return Err(KernelError::TooManyBlocks { kernel, blocks });
        }
        let mode = self.mode();
        let backend = ::ascendcl::sys::active().map(|b| b.kind);
        if !backend.is_some_and(|k| mode.runs_on(k)) {
            return Err(KernelError::WrongBackend {
                kernel,
                mode,
                backend,
            });
        }
        // Kernel output is written after the program's: what Rust has buffered goes first.
        let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
        let runtime = |source| KernelError::Runtime { kernel, source };
        // A span of ascendcl's `tracing` feature (nothing without it).
        let _span = ::ascendcl::launch_span(kernel, blocks, stream.device_id());
        stream.make_current().map_err(runtime)?;
        match self.imp {
            Imp::Host { library, .. } => {
                // SAFETY: forwarded; the runtime copies the argument values during the call.
                unsafe { library.launch(kernel, blocks, stream.as_raw(), args) }.map_err(runtime)
            }
            Imp::Npu { launch, .. } => {
                let ptrs: Vec<*const c_void> = args.iter().map(|a| a.as_ptr().cast()).collect();
                // SAFETY: forwarded; the launcher copies the argument values before returning.
                unsafe { launch(blocks, stream.as_raw(), ptrs.as_ptr()) };
                Ok(())
            }
        }
    }

    /// Enqueues the kernel on `stream` with `blocks` blocks and its arguments given as the bytes
    /// of each parameter (a device address as its 8 bytes), without a scope and without the
    /// checks of the builder beyond the argument count and sizes, the block count and the
    /// backend.
    ///
    /// # Safety
    /// The arguments are the kernel's parameters, and the memory they point to stays valid and
    /// untouched by the host until the stream has run the kernel (a later synchronisation of the
    /// stream returned).
    pub unsafe fn launch_unchecked(
        &'static self,
        stream: &::ascendcl::Stream,
        blocks: u32,
        args: &[&[u8]],
    ) -> Result<(), KernelError> {
        let sizes = match self.imp {
            Imp::Host { sizes, .. } | Imp::Npu { sizes, .. } => sizes(),
        };
        for (i, (a, &size)) in args.iter().zip(sizes).enumerate() {
            if a.len() != size as usize {
                return Err(KernelError::ValueSize {
                    kernel: self.name,
                    param: self.params.get(i).map_or("?", |p| p.0),
                    expected: size as usize,
                    given: a.len(),
                });
            }
        }
        // SAFETY: forwarded.
        unsafe { self.dispatch(stream, blocks, args) }
    }
}

/// The description of a kernel failure in the runtime's message, if `error` is one:
/// `Some("<kernel>: block i of n: <what happened>")`. The emulator reports a failed block as
/// `kernel failed: <kernel>: block i of n: <what>` in the message of the synchronisation that
/// returns the vector-core (or AI-core) exception; the real runtime's messages differ, and give
/// `None`.
pub fn kernel_failure(error: &::ascendcl::Error) -> Option<&str> {
    use ::ascendcl::AclError;
    let code = error.code()?;
    if code != AclError::VECTOR_CORE_EXCEPTION && code != AclError::AICORE_EXCEPTION {
        return None;
    }
    const MARK: &str = "kernel failed: ";
    let text = error.runtime_message()?;
    let line = text.lines().find(|l| l.contains(MARK))?;
    let rest = &line[line.find(MARK)? + MARK.len()..];
    Some(rest.rfind(" (ACL_ERROR").map_or(rest, |end| &rest[..end]))
}

/// Launches a kernel of `library` for a `<<<...>>>` launch made by C++ code (host mode): the
/// arguments come packed (each parameter at the next multiple of 8 bytes, ascendc_host/binary.h)
/// and are appended one by one. Returns the runtime's code.
pub fn enqueue_packed(
    library: &'static Library,
    stream: *mut c_void,
    name: *const c_char,
    blocks: u32,
    args: *const c_void,
    bytes: usize,
) -> i32 {
    let run = || -> i32 {
        let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
        if name.is_null() || (args.is_null() && bytes > 0) {
            return ::ascendcl::AclError::INVALID_PARAM.0;
        }
        // SAFETY: the C++ launcher passes the kernel's name as a NUL-terminated literal.
        let name = unsafe { ::std::ffi::CStr::from_ptr(name) };
        let Some(kernel) = library
            .kernels
            .iter()
            .find(|k| k.name.as_bytes() == name.to_bytes())
        else {
            return ::ascendcl::AclError::PARAM_INVALID.0;
        };
        let packed: &[u8] = if bytes == 0 {
            &[]
        } else {
            // SAFETY: the C++ launcher passes its buffer of `bytes` bytes for the call.
            unsafe { ::std::slice::from_raw_parts(args.cast::<u8>(), bytes) }
        };
        let sizes = match kernel.imp {
            Imp::Host { sizes, .. } | Imp::Npu { sizes, .. } => sizes(),
        };
        let mut split = Vec::with_capacity(kernel.params.len());
        let mut at = 0usize;
        for &size in sizes.iter().take(kernel.params.len()) {
            at = (at + 7) & !7;
            let Some(a) = packed.get(at..at + size as usize) else {
                return ::ascendcl::AclError::PARAM_INVALID.0;
            };
            split.push(a);
            at += size as usize;
        }
        // A span of ascendcl's `tracing` feature (nothing without it); the stream's device is
        // not known here.
        let _span = ::ascendcl::launch_span(kernel.name, blocks, -1);
        // SAFETY: the C++ launcher converted each argument to its parameter's type; what the
        // pointers among them point to is the C++ caller's contract, as with `<<<...>>>`.
        match unsafe { library.launch(kernel.name, blocks, stream, &split) } {
            Ok(()) => 0,
            Err(e) => e.code().map_or(::ascendcl::AclError::RT_INTERNAL_ERROR.0, |c| c.0),
        }
    };
    // Called from C++: nothing may unwind out of it.
    ::std::panic::catch_unwind(run).unwrap_or(::ascendcl::AclError::RT_INTERNAL_ERROR.0)
}

/// Why a launch was refused or failed to enqueue.
#[derive(Debug)]
#[non_exhaustive]
pub enum KernelError {
    /// `blocks` was 0.
    ZeroBlocks {
        /// The kernel.
        kernel: &'static str,
    },
    /// More blocks than the runtime accepts.
    TooManyBlocks {
        /// The kernel.
        kernel: &'static str,
        /// Blocks asked for.
        blocks: u32,
    },
    /// Too many or too few arguments (launch builder).
    ArgumentCount {
        /// The kernel.
        kernel: &'static str,
        /// Parameters of the kernel.
        expected: usize,
        /// Arguments given.
        given: usize,
    },
    /// An argument of the wrong kind (launch builder).
    ArgumentKind {
        /// The kernel.
        kernel: &'static str,
        /// 0-based parameter index.
        index: usize,
        /// The parameter.
        param: &'static str,
        /// What it takes.
        expected: &'static str,
        /// What was given.
        given: &'static str,
    },
    /// A buffer or scalar of another element type (launch builder).
    ElementType {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// The type it takes.
        expected: &'static str,
        /// The type given.
        given: &'static str,
    },
    /// A value whose size is not the C++ type's (launch builder).
    ValueSize {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// `sizeof` of the C++ type.
        expected: usize,
        /// Bytes given.
        given: usize,
    },
    /// Host memory given where the kernel needs device memory.
    NotDeviceMemory {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
    },
    /// A buffer of another device than the stream's.
    DeviceMismatch {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// The buffer's device.
        buffer_device: i32,
        /// The stream's device.
        stream_device: i32,
    },
    /// The kernels were built for another backend (host kernels need the emulator, NPU kernels
    /// CANN).
    WrongBackend {
        /// The kernel.
        kernel: &'static str,
        /// How they were built.
        mode: Mode,
        /// The active backend.
        backend: Option<BackendKind>,
    },
    /// The runtime refused the launch.
    Runtime {
        /// The kernel.
        kernel: &'static str,
        /// The runtime's error.
        source: ::ascendcl::Error,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::ZeroBlocks { kernel } => {
                write!(f, "cannot launch {kernel} with 0 blocks")
            }
            KernelError::TooManyBlocks { kernel, blocks } => write!(
                f,
                "cannot launch {kernel} with {blocks} blocks: at most {MAX_BLOCKS}"
            ),
            KernelError::ArgumentCount {
                kernel,
                expected,
                given,
            } => write!(f, "{kernel} takes {expected} argument(s), {given} given"),
            KernelError::ArgumentKind {
                kernel,
                index,
                param,
                expected,
                given,
            } => write!(
                f,
                "argument {index} (`{param}`) of {kernel} takes {expected}, not {given}"
            ),
            KernelError::ElementType {
                kernel,
                param,
                expected,
                given,
            } => write!(f, "`{param}` of {kernel} takes {expected}, not {given}"),
            KernelError::ValueSize {
                kernel,
                param,
                expected,
                given,
            } => write!(
                f,
                "`{param}` of {kernel} is {expected} byte(s) in C++, {given} given"
            ),
            KernelError::NotDeviceMemory { kernel, param } => write!(
                f,
                "`{param}` of {kernel} must be device memory, not host memory"
            ),
            KernelError::DeviceMismatch {
                kernel,
                param,
                buffer_device,
                stream_device,
            } => write!(
                f,
                "`{param}` of {kernel} is memory of device {buffer_device}, but the stream is on \
                 device {stream_device}"
            ),
            KernelError::WrongBackend {
                kernel,
                mode,
                backend,
            } => {
                let backend = backend.map_or("no".to_string(), |b| b.to_string());
                let hint = match mode {
                    Mode::Host => {
                        "run on the emulator (ASCENDCL_BACKEND=emulator), or rebuild with CANN's \
                         ascendc.cmake available for NPU kernels"
                    }
                    Mode::Npu => {
                        "run on the CANN backend, or rebuild with ASCENDC_BUILD_MODE=host for the \
                         emulator"
                    }
                };
                write!(
                    f,
                    "cannot launch {kernel}: it was built in {} mode, which does not run on the \
                     {backend} backend; {hint}",
                    mode.name()
                )
            }
            KernelError::Runtime { kernel, source } => {
                write!(f, "launching {kernel} failed: {source}")
            }
        }
    }
}

impl ::std::error::Error for KernelError {
    fn source(&self) -> Option<&(dyn ::std::error::Error + 'static)> {
        match self {
            KernelError::Runtime { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// So that `?` works on a launch where an [`ascendcl::Error`](::ascendcl::Error) is returned
/// (a `Stream::scope` closure): a runtime failure becomes the runtime's own error, a refused
/// launch travels whole as `Error::Layered` (`e.downcast_ref::<KernelError>()` gives it back).
impl From<KernelError> for ::ascendcl::Error {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::Runtime { source, .. } => source,
            other => ::ascendcl::Error::layered(other),
        }
    }
}

/// So that `?` works on a launch where an `hccl::Error` is returned (an `hccl::scope` closure).
impl ::ascendcl::IntoAclError for KernelError {}
