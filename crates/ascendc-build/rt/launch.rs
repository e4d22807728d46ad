// Launch support for the Rust modules ascendc-build generates: kernel descriptors, the launch
// builder and its checks, the host-mode runner, the NPU launch, and the errors.
//
// ascendc-build writes this file next to every generated module, which includes it in a private
// module; it compiles against the `ascendcl` crate of the crate that builds the kernels. All of
// the code that depends on the ascendcl API is here, so that the generated modules stay small.

use ::std::any::TypeId;
use ::std::ffi::{CString, c_char, c_void};
use ::std::fmt;

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

/// The C entry of a kernel: unpacks one pointer per argument and calls the kernel (host mode).
pub type HostCall = unsafe extern "C" fn(args: *const *const c_void);
/// The library's block runner (host mode).
pub type HostRun = unsafe extern "C" fn(*const HostLaunch, *mut c_char, usize) -> i32;
/// The C launcher of a kernel (`<<<...>>>`, NPU mode).
pub type NpuLaunch = unsafe extern "C" fn(u32, *mut c_void, *const *const c_void);

/// How a kernel is reached.
#[derive(Clone, Copy)]
pub enum Imp {
    /// Host mode.
    Host {
        /// The kernel's argument entry.
        call: HostCall,
        /// The library's block runner.
        run: HostRun,
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

/// A global-memory range a host-mode kernel may access (mirrors `ascendc_host_region`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HostRegion {
    /// First byte.
    pub base: *const c_void,
    /// Length in bytes.
    pub bytes: u64,
    /// 1 when the kernel may write it.
    pub writable: u32,
}

/// One launch handed to the host runner (mirrors `ascendc_host_launch`).
#[repr(C)]
#[derive(Debug)]
pub struct HostLaunch {
    /// The kernel's name, NUL-terminated.
    pub kernel: *const c_char,
    /// The kernel's argument entry, called once per block.
    pub entry: HostCall,
    /// One pointer to each argument's bytes.
    pub args: *const *const c_void,
    /// Number of blocks.
    pub block_dim: u32,
    /// The buffer arguments.
    pub regions: *const HostRegion,
    /// Number of `regions`.
    pub region_count: u32,
    /// 1: global-memory accesses must stay inside `regions`.
    pub check_regions: u32,
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
            regions: Vec::new(),
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
    regions: Vec<HostRegion>,
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
        len: usize,
        location: MemoryLocation,
        writable: bool,
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
        self.regions.push(HostRegion {
            base: ptr.cast_const().cast(),
            bytes: (len.saturating_mul(size_of::<T>())) as u64,
            writable: u32::from(writable),
        });
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
        self.memory(name, elem, r.ptr(), r.len(), r.location(), false);
        self
    }

    /// Global memory for the next parameter, which the kernel may write (or read): an
    /// exclusive borrow (or a [`Claimed`](::ascendcl::Claimed) region) that lasts until the scope
    /// ends.
    pub fn output<D: AsyncDest<'scope>>(mut self, mut dst: D) -> Self {
        let Some((index, name, p)) = self.next_param() else {
            return self;
        };
        let (elem, writable) = match p {
            Param::Out(e) => (e, true),
            // The kernel only reads it; an exclusive borrow covers that too.
            Param::In(e) => (e, false),
            _ => {
                self.wrong_kind(index, name, p, "a buffer (.output)");
                return self;
            }
        };
        let r = dst.region();
        self.memory(name, elem, r.ptr(), r.len(), r.location(), writable);
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

    /// Checks the launch and enqueues the kernel on the scope's stream. A failure of the kernel
    /// itself (a host-mode bounds check, for example) is reported when the scope ends, as
    /// [`ascendcl::Error::HostFnPanicked`] (see [`kernel_failure`]).
    pub fn run(self) -> Result<(), KernelError> {
        let kernel = self.kernel.name;
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.args.len() != self.kernel.params.len() {
            return Err(KernelError::ArgumentCount {
                kernel,
                expected: self.kernel.params.len(),
                given: self.args.len(),
            });
        }
        if self.blocks == 0 {
            return Err(KernelError::ZeroBlocks { kernel });
        }
        if self.blocks > MAX_BLOCKS {
            return Err(KernelError::TooManyBlocks {
                kernel,
                blocks: self.blocks,
            });
        }
        let mode = self.kernel.mode();
        let backend = ::ascendcl::sys::active().map(|b| b.kind);
        if !backend.is_some_and(|k| mode.runs_on(k)) {
            return Err(KernelError::WrongBackend {
                kernel,
                mode,
                backend,
            });
        }
        // Kernel output goes to the C stdout: what Rust has buffered must reach it first.
        let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
        let scope = self.scope;
        let runtime = |source| KernelError::Runtime { kernel, source };
        match self.kernel.imp {
            Imp::Host { call, run, .. } => {
                let job = HostJob {
                    kernel: CString::new(kernel).unwrap_or_default(),
                    call,
                    run,
                    args: self.args,
                    regions: self.regions,
                    blocks: self.blocks,
                };
                scope
                    .launch_host_fn(move || job.execute())
                    .map(drop)
                    .map_err(runtime)
            }
            Imp::Npu { launch, .. } => {
                scope.stream().make_current().map_err(runtime)?;
                let ptrs: Vec<*const c_void> =
                    self.args.iter().map(|a| a.as_ptr().cast()).collect();
                // SAFETY: every argument was checked against the kernel's parameters: buffers
                // are device memory of the stream's device, borrowed until the scope has waited
                // for the stream; the launcher copies the argument values before returning.
                unsafe { launch(self.blocks, scope.as_raw(), ptrs.as_ptr()) };
                Ok(())
            }
        }
    }
}

/// A host-mode launch moved onto the stream's host-function thread.
struct HostJob {
    kernel: CString,
    call: HostCall,
    run: HostRun,
    args: Vec<Vec<u8>>,
    regions: Vec<HostRegion>,
    blocks: u32,
}

// SAFETY: the raw pointers are addresses of device memory (host memory on the emulator) that
// the launching scope borrows until it has waited for the stream, which is after this job ran;
// nothing else in the job is tied to a thread.
unsafe impl Send for HostJob {}

/// Prefix of the host function panic message of a failed kernel.
const FAILED: &str = "kernel failed: ";

impl HostJob {
    fn execute(self) {
        let ptrs: Vec<*const c_void> = self.args.iter().map(|a| a.as_ptr().cast()).collect();
        let launch = HostLaunch {
            kernel: self.kernel.as_ptr(),
            entry: self.call,
            args: ptrs.as_ptr(),
            block_dim: self.blocks,
            regions: self.regions.as_ptr(),
            region_count: self.regions.len() as u32,
            check_regions: 1,
        };
        let mut message = vec![0u8; 2048];
        // SAFETY: `launch` points to live argument storage; the buffers it names are borrowed by
        // the scope that enqueued this job until the stream has run it; `message` holds
        // `message.len()` bytes.
        let rc = unsafe { (self.run)(&launch, message.as_mut_ptr().cast(), message.len()) };
        if rc != 0 {
            let end = message
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(message.len());
            let text = String::from_utf8_lossy(&message[..end]).into_owned();
            // Fails the host function without running the panic hook: the stream's next
            // synchronisation (the end of the scope) reports it.
            ::std::panic::resume_unwind(Box::new(format!(
                "{FAILED}{}: {text}",
                self.kernel.to_string_lossy()
            )));
        }
    }
}

/// The kernel failure a scope reported, if `error` is one: `Some("<kernel>: <what happened>")`.
pub fn kernel_failure(error: &::ascendcl::Error) -> Option<&str> {
    match error {
        ::ascendcl::Error::HostFnPanicked { message } => message.strip_prefix(FAILED),
        _ => None,
    }
}

/// Enqueues a host function for a `<<<...>>>` launch made by C++ code (host mode).
pub fn enqueue_raw(
    stream: *mut c_void,
    func: Option<unsafe extern "C" fn(*mut c_void)>,
    arg: *mut c_void,
) -> i32 {
    let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
    match ::ascendcl::sys::try_api() {
        // SAFETY: the C++ launcher passes its caller's stream and a job that stays alive until
        // `func` has run it; the runtime checks the stream handle.
        Some(api) => unsafe { (api.aclrtLaunchHostFunc)(stream, func, arg) },
        None => ::ascendcl::sys::ACL_ERROR_UNINITIALIZE,
    }
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

impl From<KernelError> for ::ascendcl::Error {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::Runtime { source, .. } => source,
            other => ::ascendcl::Error::Argument {
                api: "kernel launch",
                reason: other.to_string().into(),
            },
        }
    }
}
