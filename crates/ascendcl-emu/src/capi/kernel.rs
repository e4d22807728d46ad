//! Kernel binaries, argument lists and kernel launches.

use super::*;
use crate::kernel::args;
use crate::kernel::binary::{self, Core};
use crate::kernel::launch::{Args, Launch};
use crate::memory;

/// `aclrtCreateBinary`: a descriptor of `dataLen` bytes at `data`, which the caller keeps alive
/// until `aclrtBinaryLoad` has copied them; NULL when `data` is NULL (or an injected fault).
///
/// # Safety
/// Always safe to call; the descriptor only records the pointer.
pub unsafe extern "C" fn aclrtCreateBinary(data: *const c_void, dataLen: usize) -> aclrtBinary {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclrtCreateBinary") {
            injected("aclrtCreateBinary", code);
            return std::ptr::null_mut();
        }
        if data.is_null() {
            crate::base::error::record(
                "aclrtCreateBinary",
                Fail {
                    code: INVALID_PARAM,
                    msg: "data is NULL".to_string(),
                },
            );
            return std::ptr::null_mut();
        }
        as_ptr(binary::create_descriptor(data as usize, dataLen))
    })
    .unwrap_or(std::ptr::null_mut())
}

acl! {
    /// `aclrtDestroyBinary`: destroys the descriptor (not a binary loaded from it).
    fn aclrtDestroyBinary(binary: aclrtBinary) {
        if binary.is_null() {
            return fail(INVALID_PARAM, "binary is NULL");
        }
        binary::destroy_descriptor(handle(binary))
    }
}

/// The core type named by the load options; unknown option types, magic values that are none of
/// the three and AI CPU kernels are refused.
///
/// # Safety
/// `options` is NULL or valid, with `numOpt` options at `options->options`.
unsafe fn load_options(options: *const aclrtBinaryLoadOptions) -> R<Core> {
    if options.is_null() {
        return Ok(Core::Any);
    }
    // SAFETY: the C contract.
    let o = unsafe { &*options };
    if o.numOpt == 0 {
        return Ok(Core::Any);
    }
    if o.options.is_null() {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "options holds {} option(s) but options->options is NULL",
                o.numOpt
            ),
        );
    }
    let mut core = Core::Any;
    for i in 0..o.numOpt {
        // SAFETY: `numOpt` options, per the C contract.
        let opt = unsafe { &*o.options.add(i) };
        match opt.type_ {
            ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD => {}
            ACL_RT_BINARY_LOAD_OPT_MAGIC => {
                // SAFETY: the union member of this option type.
                let magic = unsafe { opt.value.magic };
                core = match magic {
                    ACL_RT_BINARY_MAGIC_ELF_AICORE | ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE => {
                        Core::Cube
                    }
                    ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE => Core::Vector,
                    other => {
                        return fail(
                            RT_PARAM_INVALID,
                            format!(
                                "option {i}: magic {other:#x} is none of ACL_RT_BINARY_MAGIC_ELF_AICORE, \
                                 _VECTOR_CORE and _CUBE_CORE"
                            ),
                        );
                    }
                };
            }
            ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE => {
                return fail(
                    RT_FEATURE_NOT_SUPPORT,
                    "AI CPU kernels (ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE) are not emulated: the \
                     emulator runs AI Core kernels of host-mode binaries",
                );
            }
            other => {
                return fail(
                    RT_PARAM_INVALID,
                    format!("option {i}: type {other} is not an aclrtBinaryLoadOptionType"),
                );
            }
        }
    }
    Ok(core)
}

acl! {
    /// `aclrtBinaryLoadFromFile`: loads a host-mode kernel binary (a shared object built by
    /// ascendc-build) from a file.
    fn aclrtBinaryLoadFromFile(binPath: *const c_char, options: *mut aclrtBinaryLoadOptions, binHandle: *mut aclrtBinHandle) {
        if binPath.is_null() {
            return fail(INVALID_PARAM, "binPath is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(binHandle, "binHandle") }?;
        // SAFETY: C contract.
        let core = unsafe { load_options(options) }?;
        // SAFETY: a NUL-terminated path, per the C contract.
        let path = unsafe { CStr::from_ptr(binPath) };
        out.set(as_ptr(binary::load_file(path, core)?));
        Ok(())
    }
}

acl! {
    /// `aclrtBinaryLoadFromData`: loads a kernel binary from memory (copied).
    fn aclrtBinaryLoadFromData(data: *const c_void, length: usize, options: *const aclrtBinaryLoadOptions, binHandle: *mut aclrtBinHandle) {
        if data.is_null() {
            return fail(INVALID_PARAM, "data is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(binHandle, "binHandle") }?;
        if length == 0 {
            return fail(RT_PARAM_INVALID, "length is 0");
        }
        // SAFETY: C contract.
        let core = unsafe { load_options(options) }?;
        // SAFETY: `length` readable bytes, per the C contract.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) };
        out.set(as_ptr(binary::load_data(bytes, core)?));
        Ok(())
    }
}

acl! {
    /// `aclrtBinaryLoad`: loads the binary a descriptor describes (its bytes are copied).
    fn aclrtBinaryLoad(binary: aclrtBinary, binHandle: *mut aclrtBinHandle) {
        if binary.is_null() {
            return fail(INVALID_PARAM, "binary is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(binHandle, "binHandle") }?;
        let (data, len) = binary::descriptor(handle(binary))?;
        if len == 0 {
            return fail(RT_PARAM_INVALID, "the binary descriptor has 0 bytes");
        }
        // SAFETY: the caller keeps the descriptor's bytes alive until this call returns.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len) };
        out.set(as_ptr(binary::load_data(bytes, Core::Any)?));
        Ok(())
    }
}

acl! {
    /// `aclrtBinaryUnLoad`: the handle and its function handles become invalid; launches already
    /// queued still run.
    fn aclrtBinaryUnLoad(binHandle: aclrtBinHandle) {
        if binHandle.is_null() {
            return fail(INVALID_PARAM, "binHandle is NULL");
        }
        binary::unload(handle(binHandle))
    }
}

acl! {
    /// `aclrtBinaryGetFunction`: the kernel named `kernelName` (107000 when the binary has none).
    fn aclrtBinaryGetFunction(binHandle: aclrtBinHandle, kernelName: *const c_char, funcHandle: *mut aclrtFuncHandle) {
        if binHandle.is_null() {
            return fail(INVALID_PARAM, "binHandle is NULL");
        }
        if kernelName.is_null() {
            return fail(INVALID_PARAM, "kernelName is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(funcHandle, "funcHandle") }?;
        binary::binary(handle(binHandle))?;
        crate::device::context::current_ids()?;
        // SAFETY: a NUL-terminated name, per the C contract.
        let name = unsafe { CStr::from_ptr(kernelName) }.to_string_lossy();
        out.set(as_ptr(binary::function_by_name(handle(binHandle), &name)?));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsInit`: the calling thread's argument list, started again for `funcHandle`
    /// (the previous list of the thread is gone).
    fn aclrtKernelArgsInit(funcHandle: aclrtFuncHandle, argsHandle: *mut aclrtArgsHandle) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(argsHandle, "argsHandle") }?;
        let f = binary::function(handle(funcHandle))?;
        out.set(as_ptr(args::init(&f)));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsGetHandleMemSize`: bytes of memory an argument list of the kernel takes.
    fn aclrtKernelArgsGetHandleMemSize(funcHandle: aclrtFuncHandle, memSize: *mut usize) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(memSize, "memSize") }?;
        let f = binary::function(handle(funcHandle))?;
        out.set(args::handle_bytes(f.kernel().params as u32));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsGetMemSize`: argument bytes for `userArgsSize` bytes of parameters, with
    /// room for alignment and system parameters.
    fn aclrtKernelArgsGetMemSize(funcHandle: aclrtFuncHandle, userArgsSize: usize, actualArgsSize: *mut usize) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(actualArgsSize, "actualArgsSize") }?;
        let f = binary::function(handle(funcHandle))?;
        out.set(args::mem_size(&f, userArgsSize));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsInitByUserMem`: an argument list in the caller's memory (`argsHandle`,
    /// `aclrtKernelArgsGetHandleMemSize` bytes) with the caller's argument buffer.
    fn aclrtKernelArgsInitByUserMem(funcHandle: aclrtFuncHandle, argsHandle: aclrtArgsHandle, userHostMem: *mut c_void, actualArgsSize: usize) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        if userHostMem.is_null() {
            return fail(INVALID_PARAM, "userHostMem is NULL");
        }
        if actualArgsSize == 0 {
            return fail(INVALID_PARAM, "actualArgsSize is 0");
        }
        let f = binary::function(handle(funcHandle))?;
        // SAFETY: the C contract: both memories are the caller's, of the sizes stated.
        unsafe {
            args::init_by_user_mem(&f, handle(argsHandle), handle(userHostMem), actualArgsSize)
        }
    }
}

acl! {
    /// `aclrtKernelArgsAppend`: copies the next parameter into the list.
    fn aclrtKernelArgsAppend(argsHandle: aclrtArgsHandle, param: *mut c_void, paramSize: usize, paramHandle: *mut aclrtParamHandle) {
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        if param.is_null() {
            return fail(INVALID_PARAM, "param is NULL");
        }
        if paramSize == 0 {
            return fail(INVALID_PARAM, "paramSize is 0");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(paramHandle, "paramHandle") }?;
        // SAFETY: `paramSize` readable bytes at `param`, per the C contract.
        let p = unsafe { args::append(handle(argsHandle), param.cast::<u8>(), paramSize) }?;
        out.set(as_ptr(p));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsAppendPlaceHolder`: a pointer slot the launch fills with the device
    /// address of the placeholder's buffer.
    fn aclrtKernelArgsAppendPlaceHolder(argsHandle: aclrtArgsHandle, paramHandle: *mut aclrtParamHandle) {
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(paramHandle, "paramHandle") }?;
        out.set(as_ptr(args::append_placeholder(handle(argsHandle))?));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsGetPlaceHolderBuffer`: `dataSize` bytes of host memory for a placeholder's
    /// data, after every parameter.
    fn aclrtKernelArgsGetPlaceHolderBuffer(argsHandle: aclrtArgsHandle, paramHandle: aclrtParamHandle, dataSize: usize, bufferAddr: *mut *mut c_void) {
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        if paramHandle.is_null() {
            return fail(INVALID_PARAM, "paramHandle is NULL");
        }
        if dataSize == 0 {
            return fail(INVALID_PARAM, "dataSize is 0");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(bufferAddr, "bufferAddr") }?;
        let b = args::placeholder_buffer(handle(argsHandle), handle(paramHandle), dataSize)?;
        out.set(as_ptr(b));
        Ok(())
    }
}

acl! {
    /// `aclrtKernelArgsParaUpdate`: new bytes for an ordinary parameter; finalize again before a
    /// launch.
    fn aclrtKernelArgsParaUpdate(argsHandle: aclrtArgsHandle, paramHandle: aclrtParamHandle, param: *mut c_void, paramSize: usize) {
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        if paramHandle.is_null() {
            return fail(INVALID_PARAM, "paramHandle is NULL");
        }
        if param.is_null() {
            return fail(INVALID_PARAM, "param is NULL");
        }
        if paramSize == 0 {
            return fail(INVALID_PARAM, "paramSize is 0");
        }
        // SAFETY: `paramSize` readable bytes at `param`, per the C contract.
        unsafe {
            args::update(handle(argsHandle), handle(paramHandle), param.cast::<u8>(), paramSize)
        }
    }
}

acl! {
    /// `aclrtKernelArgsFinalize`: seals the list for launches.
    fn aclrtKernelArgsFinalize(argsHandle: aclrtArgsHandle) {
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        args::finalize(handle(argsHandle))
    }
}

/// The most blocks of one launch.
const MAX_BLOCKS: u32 = u16::MAX as u32;

/// What the launch attributes ask for: the timeout and the engine.
struct Cfg {
    timeout: Option<Duration>,
    engine: Option<Core>,
}

/// Checks `cfg` as the runtime does (NULL is no configuration; attributes it does not know are
/// ignored).
///
/// # Safety
/// `cfg` is NULL or valid, with `numAttrs` attributes at `cfg->attrs`.
unsafe fn launch_cfg(cfg: *const aclrtLaunchKernelCfg) -> R<Cfg> {
    let mut c = Cfg {
        timeout: None,
        engine: None,
    };
    if cfg.is_null() {
        return Ok(c);
    }
    // SAFETY: the C contract.
    let cfg = unsafe { &*cfg };
    if cfg.attrs.is_null() {
        return fail(RT_PARAM_INVALID, "cfg->attrs is NULL");
    }
    let (mut seconds, mut micros) = (None, None);
    for i in 0..cfg.numAttrs {
        // SAFETY: `numAttrs` attributes, per the C contract.
        let a = unsafe { &*cfg.attrs.add(i) };
        // SAFETY: each arm reads the union member of its attribute id.
        unsafe {
            match a.id {
                ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE if a.value.schemMode >= 2 => {
                    return fail(
                        RT_PARAM_INVALID,
                        format!("schemMode {} is not in [0, 2)", a.value.schemMode),
                    );
                }
                ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH
                    if a.value.isBlockTaskPrefetch > 1 =>
                {
                    return fail(
                        RT_PARAM_INVALID,
                        format!(
                            "isBlockTaskPrefetch {} is not 0 or 1",
                            a.value.isBlockTaskPrefetch
                        ),
                    );
                }
                ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP if a.value.isDataDump > 1 => {
                    return fail(
                        RT_PARAM_INVALID,
                        format!("isDataDump {} is not 0 or 1", a.value.isDataDump),
                    );
                }
                ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE => {
                    c.engine = Some(if a.value.engineType == ACL_RT_ENGINE_TYPE_AIC {
                        Core::Cube
                    } else {
                        Core::Vector
                    });
                }
                ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT => seconds = Some(a.value.timeout),
                ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US => {
                    let t = a.value.timeoutUs;
                    micros = Some((u64::from(t.timeoutHigh) << 32) | u64::from(t.timeoutLow));
                }
                _ => {}
            }
        }
    }
    match (seconds, micros) {
        (Some(_), Some(_)) => {
            return fail(
                RT_PARAM_INVALID,
                "ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT and _TIMEOUT_US cannot be given together",
            );
        }
        (Some(s), None) if s > 0 => c.timeout = Some(Duration::from_secs(u64::from(s))),
        (None, Some(us)) if us > 0 => c.timeout = Some(Duration::from_micros(us)),
        _ => {}
    }
    Ok(c)
}

/// A stream for a launch: live, and of the current context.
fn launch_stream(stream: aclrtStream) -> R<Arc<crate::engine::stream::Stream>> {
    let s = crate::stream::get(handle(stream))?;
    crate::stream::check_context(&s)?;
    Ok(s)
}

acl! {
    /// `aclrtLaunchKernelWithConfig`: launches the kernel with the arguments of a finalized list
    /// (copied now, placeholder buffers included) as a task of `stream`.
    fn aclrtLaunchKernelWithConfig(funcHandle: aclrtFuncHandle, numBlocks: u32, stream: aclrtStream, cfg: *mut aclrtLaunchKernelCfg, argsHandle: aclrtArgsHandle, reserve: *mut c_void) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        if numBlocks == 0 {
            return fail(INVALID_PARAM, "numBlocks is 0");
        }
        if argsHandle.is_null() {
            return fail(INVALID_PARAM, "argsHandle is NULL");
        }
        if !reserve.is_null() {
            return fail(INVALID_PARAM, "reserve is a reserved parameter and must be NULL");
        }
        let f = binary::function(handle(funcHandle))?;
        let s = launch_stream(stream)?;
        let snap = args::snapshot(handle(argsHandle), f.handle)?;
        // SAFETY: C contract (NULL or valid).
        let c = unsafe { launch_cfg(cfg) }?;
        if numBlocks > MAX_BLOCKS {
            return fail(RT_PARAM_INVALID, format!("numBlocks {numBlocks} exceeds {MAX_BLOCKS}"));
        }
        s.enqueue(Launch {
            func: snap.func,
            blocks: numBlocks,
            args: Args::Copied {
                words: snap.words,
                len: snap.len,
            },
            device: s.device,
            timeout: c.timeout,
            engine: c.engine,
        })
    }
}

acl! {
    /// `aclrtLaunchKernel`: launches the kernel with `argsSize` bytes of packed arguments in
    /// device memory at `argsData`, read when the kernel starts.
    fn aclrtLaunchKernel(funcHandle: aclrtFuncHandle, numBlocks: u32, argsData: *const c_void, argsSize: usize, stream: aclrtStream) {
        if funcHandle.is_null() {
            return fail(INVALID_PARAM, "funcHandle is NULL");
        }
        if argsData.is_null() {
            return fail(INVALID_PARAM, "argsData is NULL");
        }
        let f = binary::function(handle(funcHandle))?;
        if numBlocks == 0 {
            return fail(RT_PARAM_INVALID, "numBlocks is 0");
        }
        if numBlocks > MAX_BLOCKS {
            return fail(RT_PARAM_INVALID, format!("numBlocks {numBlocks} exceeds {MAX_BLOCKS}"));
        }
        if argsSize == 0 {
            return fail(RT_PARAM_INVALID, "argsSize is 0");
        }
        let s = launch_stream(stream)?;
        // Where the arguments are is checked when the kernel starts, as the device reads them.
        let side = memory::read().check("argsData", argsData as usize, argsSize).unwrap_or(memory::Side::PAGEABLE);
        s.enqueue(Launch {
            func: f,
            blocks: numBlocks,
            args: Args::Device {
                addr: argsData as usize,
                len: argsSize,
                side,
            },
            device: s.device,
            timeout: None,
            engine: None,
        })
    }
}
