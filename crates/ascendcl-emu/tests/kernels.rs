//! Kernel binaries, argument lists and kernel launches: every documented check and code, and
//! launches as stream tasks (blocks, arguments, placeholders, failures with the runtime's codes
//! through CONTINUE and STOP streams, timeouts, `aclrtGetErrorVerbose`). The kernels are a
//! binary written against the ABI in C (tests/kernels/abi_kernels.c). What is process-wide (the
//! exception callback, kernel output, the thread count) is checked in child processes.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The test binary, compiled once.
fn binary_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| compile_binary("emu_abi_kernels.so", None))
}

/// The test binary with its first kernel named `store2`, compiled once.
fn second_binary_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| compile_binary("emu_abi_kernels_2.so", Some("store2")))
}

fn compile_binary(name: &str, store_name: Option<&str>) -> PathBuf {
    {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/abi_kernels.c");
        let so = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        // Compiled under a name of this process and renamed into place: the tests that run in
        // child processes compile it too, and a loader must never see a half-written file.
        let partial = so.with_extension(format!("so.{}", std::process::id()));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let mut cmd = Command::new(&cc);
        if let Some(n) = store_name {
            cmd.arg(format!("-DSTORE_NAME=\"{n}\""));
        }
        let out = cmd
            .args(["-std=c11", "-O1", "-shared", "-fPIC", "-fvisibility=hidden"])
            .arg(&src)
            .arg("-o")
            .arg(&partial)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&partial, &so).expect("the compiled binary moves into place");
        so
    }
}

fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn load() -> aclrtBinHandle {
    let mut h = null_mut();
    ok(unsafe { aclrtBinaryLoadFromFile(cpath(binary_path()).as_ptr(), null_mut(), &mut h) });
    h
}

fn function(bin: aclrtBinHandle, name: &str) -> aclrtFuncHandle {
    let mut f = null_mut();
    let n = CString::new(name).unwrap();
    ok(unsafe { aclrtBinaryGetFunction(bin, n.as_ptr(), &mut f) });
    f
}

/// One argument of a launch.
enum Arg {
    Ptr(*mut c_void),
    U32(u32),
    U64(u64),
}

fn append(a: aclrtArgsHandle, arg: &Arg) -> aclError {
    let mut p = null_mut();
    unsafe {
        match arg {
            Arg::Ptr(v) => {
                aclrtKernelArgsAppend(a, (v as *const *mut c_void).cast_mut().cast(), 8, &mut p)
            }
            Arg::U32(v) => aclrtKernelArgsAppend(a, (v as *const u32).cast_mut().cast(), 4, &mut p),
            Arg::U64(v) => aclrtKernelArgsAppend(a, (v as *const u64).cast_mut().cast(), 8, &mut p),
        }
    }
}

/// A finalized argument list of the calling thread.
fn args(f: aclrtFuncHandle, list: &[Arg]) -> aclrtArgsHandle {
    let mut a = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    for x in list {
        ok(append(a, x));
    }
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    a
}

fn launch(f: aclrtFuncHandle, blocks: u32, s: aclrtStream, list: &[Arg]) {
    let a = args(f, list);
    ok(unsafe { aclrtLaunchKernelWithConfig(f, blocks, s, null_mut(), a, null_mut()) });
}

fn read_u32(p: *mut c_void, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    d2h(&mut b, p);
    b.chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn sync(s: aclrtStream) -> aclError {
    unsafe { aclrtSynchronizeStream(s) }
}

#[test]
fn descriptors_and_loading_check_their_arguments() {
    let _d = Dev::new(0);
    assert!(unsafe { aclrtCreateBinary(null(), 16) }.is_null());
    assert!(take_msg().contains("data is NULL"));
    err(
        unsafe { aclrtDestroyBinary(null_mut()) },
        AclError::INVALID_PARAM,
    );

    let bytes = std::fs::read(binary_path()).unwrap();
    let desc = unsafe { aclrtCreateBinary(bytes.as_ptr().cast(), bytes.len()) };
    assert!(!desc.is_null());
    let mut h = null_mut();
    err(
        unsafe { aclrtBinaryLoad(null_mut(), &mut h) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryLoad(desc, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtBinaryLoad(desc, &mut h) });
    assert!(!h.is_null());
    ok(unsafe { aclrtDestroyBinary(desc) });
    err(
        unsafe { aclrtDestroyBinary(desc) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtBinaryUnLoad(h) });

    // An empty binary is a descriptor like any other (the runtime's aclrtCreateBinaryImpl checks
    // only that data is not NULL); loading it is what fails.
    let empty = unsafe { aclrtCreateBinary(bytes.as_ptr().cast(), 0) };
    assert!(!empty.is_null());
    err(
        unsafe { aclrtBinaryLoad(empty, &mut h) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtDestroyBinary(empty) });
    let junk = [0x7fu8, b'E', b'L', b'F', 1, 2, 3, 4];
    let bad = unsafe { aclrtCreateBinary(junk.as_ptr().cast(), junk.len()) };
    err(
        unsafe { aclrtBinaryLoad(bad, &mut h) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtDestroyBinary(bad) });

    err(
        unsafe { aclrtBinaryLoadFromData(null(), 8, null(), &mut h) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryLoadFromData(bytes.as_ptr().cast(), bytes.len(), null(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryLoadFromData(bytes.as_ptr().cast(), 0, null(), &mut h) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtBinaryLoadFromData(bytes.as_ptr().cast(), bytes.len(), null(), &mut h) });
    ok(unsafe { aclrtBinaryUnLoad(h) });
}

/// Two binaries loaded from data, one after the other, are two binaries (each is staged in an
/// anonymous file that `dlopen` opens by path: the second must not get the first's path).
#[test]
fn binaries_loaded_from_data_one_after_another_stay_apart() {
    let _d = Dev::new(0);
    let first = std::fs::read(binary_path()).unwrap();
    let second = std::fs::read(second_binary_path()).unwrap();
    let (mut a, mut b) = (null_mut(), null_mut());
    ok(unsafe { aclrtBinaryLoadFromData(first.as_ptr().cast(), first.len(), null(), &mut a) });
    ok(unsafe { aclrtBinaryLoadFromData(second.as_ptr().cast(), second.len(), null(), &mut b) });
    let _ = function(b, "store2");
    let mut f = null_mut();
    err(
        unsafe { aclrtBinaryGetFunction(b, c"store".as_ptr(), &mut f) },
        AclError::PARAM_INVALID,
    );
    let _ = function(a, "store");
    ok(unsafe { aclrtBinaryUnLoad(a) });
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn load_from_file_checks_path_file_and_options() {
    let _d = Dev::new(0);
    let path = cpath(binary_path());
    let mut h = null_mut();
    err(
        unsafe { aclrtBinaryLoadFromFile(null(), null_mut(), &mut h) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), null_mut(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    let missing = CString::new("/nonexistent/kernel.so").unwrap();
    err(
        unsafe { aclrtBinaryLoadFromFile(missing.as_ptr(), null_mut(), &mut h) },
        AclError::PARAM_INVALID,
    );
    // Not a kernel binary: this test's own C source.
    let src = cpath(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/abi_kernels.c"));
    err(
        unsafe { aclrtBinaryLoadFromFile(src.as_ptr(), null_mut(), &mut h) },
        AclError::PARAM_INVALID,
    );

    let option = |type_: u32, value: u32| aclrtBinaryLoadOption {
        type_,
        value: aclrtBinaryLoadOptionValue { magic: value },
    };
    let try_options = |opts: &mut [aclrtBinaryLoadOption]| {
        let mut o = aclrtBinaryLoadOptions {
            options: opts.as_mut_ptr(),
            numOpt: opts.len(),
        };
        let mut h = null_mut();
        let r = unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), &mut o, &mut h) };
        if r == 0 {
            ok(unsafe { aclrtBinaryUnLoad(h) });
        }
        r
    };
    ok(try_options(&mut [option(
        ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD,
        1,
    )]));
    ok(try_options(&mut [option(
        ACL_RT_BINARY_LOAD_OPT_MAGIC,
        ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE,
    )]));
    err(try_options(&mut [option(0, 0)]), AclError::PARAM_INVALID);
    err(
        try_options(&mut [option(ACL_RT_BINARY_LOAD_OPT_MAGIC, 0x1234)]),
        AclError::PARAM_INVALID,
    );
    err(
        try_options(&mut [option(ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE, 1)]),
        AclError::FEATURE_NOT_SUPPORT,
    );
    let mut none = aclrtBinaryLoadOptions {
        options: null_mut(),
        numOpt: 1,
    };
    err(
        unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), &mut none, &mut h) },
        AclError::PARAM_INVALID,
    );
    none.numOpt = 0;
    ok(unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), &mut none, &mut h) });
    ok(unsafe { aclrtBinaryUnLoad(h) });
}

#[test]
fn functions_by_name_and_unload() {
    let _d = Dev::new(0);
    let bin = load();
    let name = CString::new("store").unwrap();
    let mut f = null_mut();
    err(
        unsafe { aclrtBinaryGetFunction(null_mut(), name.as_ptr(), &mut f) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryGetFunction(bin, null(), &mut f) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryGetFunction(bin, name.as_ptr(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtBinaryGetFunction(0x10 as aclrtBinHandle, name.as_ptr(), &mut f) },
        AclError::INVALID_HANDLE,
    );
    let unknown = CString::new("no_such_kernel").unwrap();
    err(
        unsafe { aclrtBinaryGetFunction(bin, unknown.as_ptr(), &mut f) },
        AclError::PARAM_INVALID,
    );
    let f1 = function(bin, "store");
    assert_eq!(function(bin, "store"), f1, "one handle per kernel");
    assert_ne!(function(bin, "spin"), f1);
    let bin_addr = bin as usize;
    std::thread::spawn(move || {
        let mut f = null_mut();
        let n = CString::new("store").unwrap();
        err(
            unsafe { aclrtBinaryGetFunction(bin_addr as aclrtBinHandle, n.as_ptr(), &mut f) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();

    // A launch queued before the unload still runs; the handles are gone after it.
    let s = stream();
    let spin = function(bin, "spin");
    let buf = malloc(16);
    launch(spin, 1, s, &[Arg::U32(20)]);
    launch(f1, 4, s, &[Arg::Ptr(buf), Arg::U32(10)]);
    err(
        unsafe { aclrtBinaryUnLoad(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtBinaryUnLoad(bin) });
    err(unsafe { aclrtBinaryUnLoad(bin) }, AclError::INVALID_HANDLE);
    ok(sync(s));
    assert_eq!(read_u32(buf, 4), [10, 11, 12, 13]);
    let mut a = null_mut();
    err(
        unsafe { aclrtKernelArgsInit(f1, &mut a) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtBinaryGetFunction(bin, name.as_ptr(), &mut f) },
        AclError::INVALID_HANDLE,
    );
    free(buf);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn argument_lists_check_every_step() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let mut a = null_mut();
    err(
        unsafe { aclrtKernelArgsInit(null_mut(), &mut a) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsInit(f, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsInit(0x40 as aclrtFuncHandle, &mut a) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });

    let v = 7u32;
    let mut p = null_mut();
    let vp = (&v as *const u32).cast_mut().cast::<c_void>();
    err(
        unsafe { aclrtKernelArgsAppend(null_mut(), vp, 4, &mut p) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsAppend(a, null_mut(), 4, &mut p) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsAppend(a, vp, 0, &mut p) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsAppend(a, vp, 4, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsAppend(0x48 as aclrtArgsHandle, vp, 4, &mut p) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) });
    err(
        unsafe { aclrtKernelArgsFinalize(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    err(
        unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    let mut ph = null_mut();
    err(
        unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) },
        AclError::FEATURE_NOT_SUPPORT,
    );

    // The thread's list is one: Init again starts it over, with the same handle.
    let mut again = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut again) });
    assert_eq!(again, a);
    ok(unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) });
    // At most 128 parameters.
    for _ in 1..128 {
        ok(unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) });
    }
    err(
        unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) },
        AclError::PARAM_INVALID,
    );
    // At most 64 KiB of arguments.
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    let big = vec![0u8; 40 << 10];
    ok(unsafe { aclrtKernelArgsAppend(a, big.as_ptr().cast_mut().cast(), big.len(), &mut p) });
    err(
        unsafe { aclrtKernelArgsAppend(a, big.as_ptr().cast_mut().cast(), big.len(), &mut p) },
        AclError::PARAM_INVALID,
    );

    // Placeholders: a buffer after every parameter, then no more parameters.
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    ok(unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) });
    ok(unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) });
    err(
        unsafe { aclrtKernelArgsAppendPlaceHolder(a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut buf = null_mut();
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, p, 8, &mut buf) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 0, &mut buf) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, null_mut(), 8, &mut buf) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 8, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 1 << 20, &mut buf) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 8, &mut buf) });
    assert_eq!(buf as usize % 8, 0);
    err(
        unsafe { aclrtKernelArgsAppend(a, vp, 4, &mut p) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    err(
        unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 8, &mut buf) },
        AclError::FEATURE_NOT_SUPPORT,
    );

    // Updates: ordinary parameters of the same size only, then finalize again.
    let w = 9u32;
    let wp = (&w as *const u32).cast_mut().cast::<c_void>();
    err(
        unsafe { aclrtKernelArgsParaUpdate(null_mut(), p, wp, 4) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, null_mut(), wp, 4) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, p, null_mut(), 4) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, p, wp, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, ph, wp, 4) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, p, wp, 8) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtKernelArgsParaUpdate(a, 0x1000 as aclrtParamHandle, wp, 4) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtKernelArgsParaUpdate(a, p, wp, 4) });
    let s = stream();
    err(
        unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), a, null_mut()) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn lists_in_user_memory_hold_the_kernels_parameters() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let (mut hsize, mut msize) = (0usize, 0usize);
    err(
        unsafe { aclrtKernelArgsGetHandleMemSize(null_mut(), &mut hsize) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsGetHandleMemSize(f, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtKernelArgsGetHandleMemSize(f, &mut hsize) });
    err(
        unsafe { aclrtKernelArgsGetMemSize(f, 12, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtKernelArgsGetMemSize(f, 12, &mut msize) });
    assert_eq!(
        msize,
        12 + 64 + 2 * 8,
        "user bytes, system slots, alignment per parameter"
    );
    let mut handle = vec![0u64; hsize.div_ceil(8)];
    let mut mem = vec![0u8; msize];
    let a = handle.as_mut_ptr().cast::<c_void>();
    let m = mem.as_mut_ptr().cast::<c_void>();
    err(
        unsafe { aclrtKernelArgsInitByUserMem(null_mut(), a, m, msize) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsInitByUserMem(f, null_mut(), m, msize) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsInitByUserMem(f, a, null_mut(), msize) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtKernelArgsInitByUserMem(f, a, m, 0) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtKernelArgsInitByUserMem(f, a, m, msize) });

    let out = malloc(16);
    ok(append(a, &Arg::Ptr(out)));
    ok(append(a, &Arg::U32(40)));
    // `store` has two parameters: a third does not fit a list sized for it.
    err(append(a, &Arg::U32(1)), AclError::PARAM_INVALID);
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    // The thread's own list is another one.
    let other = args(f, &[Arg::Ptr(out), Arg::U32(1)]);
    assert_ne!(other, a);
    let s = stream();
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 2, s, null_mut(), a, null_mut()) });
    ok(sync(s));
    assert_eq!(read_u32(out, 2), [40, 41]);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn launch_with_config_checks_its_arguments_and_attributes() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let spin = function(bin, "spin");
    let out = malloc(16);
    let s = stream();
    let a = args(f, &[Arg::Ptr(out), Arg::U32(0)]);
    let launch_cfg = |blocks: u32, cfg: *mut aclrtLaunchKernelCfg| unsafe {
        aclrtLaunchKernelWithConfig(f, blocks, s, cfg, a, null_mut())
    };
    err(
        unsafe { aclrtLaunchKernelWithConfig(null_mut(), 1, s, null_mut(), a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(launch_cfg(0, null_mut()), AclError::INVALID_PARAM);
    err(
        unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), null_mut(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), a, 8 as *mut c_void) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe {
            aclrtLaunchKernelWithConfig(0x40 as aclrtFuncHandle, 1, s, null_mut(), a, null_mut())
        },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe {
            aclrtLaunchKernelWithConfig(f, 1, 0x40 as aclrtStream, null_mut(), a, null_mut())
        },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtLaunchKernelWithConfig(spin, 1, s, null_mut(), a, null_mut()) },
        AclError::PARAM_INVALID,
    );
    err(launch_cfg(65536, null_mut()), AclError::PARAM_INVALID);

    let attr = |id: u32, value: aclrtLaunchKernelAttrValue| aclrtLaunchKernelAttr { id, value };
    let cfg_of = |attrs: &mut [aclrtLaunchKernelAttr]| {
        let mut c = aclrtLaunchKernelCfg {
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len(),
        };
        launch_cfg(1, &mut c)
    };
    let v = |f: fn(&mut aclrtLaunchKernelAttrValue)| {
        let mut x = aclrtLaunchKernelAttrValue { rsv: [0; 4] };
        f(&mut x);
        x
    };
    err(
        cfg_of(&mut [attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
            v(|x| x.schemMode = 2),
        )]),
        AclError::PARAM_INVALID,
    );
    err(
        cfg_of(&mut [attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,
            v(|x| x.isBlockTaskPrefetch = 2),
        )]),
        AclError::PARAM_INVALID,
    );
    err(
        cfg_of(&mut [attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
            v(|x| x.isDataDump = 2),
        )]),
        AclError::PARAM_INVALID,
    );
    err(
        cfg_of(&mut [
            attr(ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, v(|x| x.timeout = 1)),
            attr(
                ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US,
                v(|x| x.timeoutUs.timeoutLow = 5),
            ),
        ]),
        AclError::PARAM_INVALID,
    );
    ok(cfg_of(&mut [
        attr(ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, v(|x| x.schemMode = 1)),
        attr(ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, v(|x| x.isDataDump = 1)),
        attr(99, v(|x| x.rsv = [7; 4])),
    ]));
    let mut no_attrs = aclrtLaunchKernelCfg {
        attrs: null_mut(),
        numAttrs: 0,
    };
    err(launch_cfg(1, &mut no_attrs), AclError::PARAM_INVALID);
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [0]);

    // A list that is not finalized.
    let mut fresh = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut fresh) });
    err(
        unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), fresh, null_mut()) },
        AclError::PARAM_INVALID,
    );
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn blocks_get_their_index_and_launches_are_stream_ordered() {
    let _d = Dev::new(0);
    let bin = load();
    let store = function(bin, "store");
    let spin = function(bin, "spin");
    let out = malloc(64);
    let s = stream();
    launch(spin, 1, s, &[Arg::U32(10)]);
    launch(store, 16, s, &[Arg::Ptr(out), Arg::U32(100)]);
    // A copy after the launch sees what the kernel wrote.
    let mut host = vec![0u8; 64];
    ok(unsafe {
        aclrtMemcpyAsync(
            host.as_mut_ptr().cast(),
            64,
            out,
            64,
            ACL_MEMCPY_DEVICE_TO_HOST,
            s,
        )
    });
    ok(sync(s));
    let got: Vec<u32> = host
        .chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (100..116).collect::<Vec<u32>>());
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn placeholders_point_at_a_copy_of_their_buffer() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "sum");
    let out = malloc(4);
    let s = stream();
    let mut a = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    ok(append(a, &Arg::Ptr(out)));
    let mut ph = null_mut();
    ok(unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) });
    let mut p = null_mut();
    let n = 5u32;
    ok(unsafe { aclrtKernelArgsAppend(a, (&n as *const u32).cast_mut().cast(), 4, &mut p) });
    let mut buf = null_mut();
    ok(unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 20, &mut buf) });
    let data = buf.cast::<u32>();
    for i in 0..5 {
        unsafe { data.add(i).write(i as u32 + 1) };
    }
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), a, null_mut()) });
    // The launch took a copy: changing the host buffer now changes nothing.
    unsafe { data.write(100) };
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [15]);
    // An update of an ordinary parameter, finalized again, applies to the next launch.
    let three = 3u32;
    ok(unsafe { aclrtKernelArgsParaUpdate(a, p, (&three as *const u32).cast_mut().cast(), 4) });
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), a, null_mut()) });
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [100 + 2 + 3]);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_kernel_follows_a_device_pointer_stored_in_device_memory() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "indirect");
    let (slot, target) = (malloc(8), malloc(4));
    h2d(slot, &(target as usize as u64).to_ne_bytes());
    h2d(target, &[0u8; 4]);
    let s = stream();
    launch(f, 1, s, &[Arg::Ptr(slot)]);
    ok(sync(s));
    assert_eq!(read_u32(target, 1), [77]);
    free(slot);
    free(target);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_kernel_reads_across_mappings_placed_back_to_back() {
    let _d = Dev::new(0);
    const MIB2: usize = 2 << 20;
    let prop = aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: ACL_HBM_MEM_HUGE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    };
    let mut va = null_mut();
    ok(unsafe { aclrtReserveMemAddress(&mut va, 3 * MIB2, 0, null_mut(), 0) });
    let mut hs = [null_mut(); 2];
    for (i, h) in hs.iter_mut().enumerate() {
        ok(unsafe { aclrtMallocPhysical(h, MIB2, &prop, 0) });
        ok(unsafe { aclrtMapMem(va.wrapping_byte_add(i * MIB2), MIB2, 0, *h, 0) });
    }
    // Four words, two on each side of the boundary between the mappings.
    let data = va.wrapping_byte_add(MIB2 - 8);
    let words: Vec<u8> = [1u32, 2, 30, 400]
        .iter()
        .flat_map(|w| w.to_ne_bytes())
        .collect();
    h2d(data, &words);
    let bin = load();
    let f = function(bin, "sum");
    let out = malloc(4);
    let s = stream();
    let mut a = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    for x in [Arg::Ptr(out), Arg::Ptr(data), Arg::U32(4)] {
        ok(append(a, &x));
    }
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 1, s, null_mut(), a, null_mut()) });
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [433]);
    // The runtime's lookup finds the whole run of mappings; past it, nothing is mapped.
    let probe = function(bin, "probe");
    launch(
        probe,
        1,
        s,
        &[Arg::Ptr(va), Arg::U64((2 * MIB2 - 1) as u64)],
    );
    ok(sync(s));
    launch(probe, 1, s, &[Arg::Ptr(va), Arg::U64((2 * MIB2) as u64)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    ok(unsafe { aclrtDestroyStream(s) });
    free(out);
    for (i, h) in hs.iter().enumerate() {
        ok(unsafe { aclrtUnmapMem(va.wrapping_byte_add(i * MIB2)) });
        ok(unsafe { aclrtFreePhysical(*h) });
    }
    ok(unsafe { aclrtReleaseMemAddress(va) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_kernel_touching_device_memory_where_nothing_lives_fails_its_task() {
    let _d = Dev::new(0);
    const MIB2: usize = 2 << 20;
    let bin = load();
    // `store` writes through its pointer without asking the runtime first.
    let f = function(bin, "store");
    let s = stream();
    // The unmapped part of a reservation.
    let mut va = null_mut();
    ok(unsafe { aclrtReserveMemAddress(&mut va, MIB2, 0, null_mut(), 0) });
    launch(f, 1, s, &[Arg::Ptr(va), Arg::U32(5)]);
    assert_eq!(AclError(sync(s)), AclError::VECTOR_CORE_EXCEPTION);
    let m = take_msg();
    assert!(m.contains("in no live allocation"), "{m}");
    // The stream goes on.
    let out = malloc(4);
    launch(f, 1, s, &[Arg::Ptr(out), Arg::U32(9)]);
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [9]);
    free(out);
    ok(unsafe { aclrtReleaseMemAddress(va) });
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn launch_kernel_reads_its_arguments_from_device_memory() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let out = malloc(16);
    let s = stream();
    let mut packed = [0u8; 12];
    packed[..8].copy_from_slice(&(out as usize as u64).to_ne_bytes());
    packed[8..].copy_from_slice(&50u32.to_ne_bytes());
    let dargs = malloc(12);
    h2d(dargs, &packed);
    err(
        unsafe { aclrtLaunchKernel(null_mut(), 1, dargs, 12, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtLaunchKernel(f, 1, null(), 12, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtLaunchKernel(0x40 as aclrtFuncHandle, 1, dargs, 12, s) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtLaunchKernel(f, 0, dargs, 12, s) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtLaunchKernel(f, 1, dargs, 0, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtLaunchKernel(f, 3, dargs, 12, s) });
    ok(sync(s));
    assert_eq!(read_u32(out, 3), [50, 51, 52]);
    // Host memory is not where the device reads arguments: the kernel fails.
    ok(unsafe { aclrtLaunchKernel(f, 1, packed.as_ptr().cast(), 12, s) });
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    // Too few bytes for the kernel's parameters: the kernel fails too.
    ok(unsafe { aclrtLaunchKernel(f, 1, dargs, 8, s) });
    let code = sync(s);
    assert_eq!(code, AclError::VECTOR_CORE_EXCEPTION);
    assert!(take_msg().contains("short arguments"));
    free(dargs);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_failed_kernel_fails_its_task_with_the_core_exception() {
    let _d = Dev::new(0);
    let bin = load();
    let fail_odd = function(bin, "fail_odd");
    let store = function(bin, "store");
    let cube = function(bin, "cube");
    let out = malloc(16);
    let s = stream();
    // CONTINUE (the default): the stream reports the failure once and goes on.
    launch(fail_odd, 4, s, &[Arg::Ptr(out)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    launch(fail_odd, 4, s, &[Arg::Ptr(out)]);
    assert_eq!(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    let msg = take_msg();
    assert!(
        msg.contains(
            "kernel failed: fail_odd: block 1 of 4: odd block (and 1 more block(s) failed)"
        ),
        "{msg}"
    );
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        AclError::VECTOR_CORE_EXCEPTION
    );
    assert_eq!(read_u32(out, 4), [1, 0, 1, 0], "the other blocks ran");
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(9)]);
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [9]);
    // A cube-core kernel reports an AI-core exception, unless the launch or the binary says
    // it runs on vector cores.
    launch(cube, 1, s, &[]);
    err(sync(s), AclError::AICORE_EXCEPTION);
    let mut engine = [aclrtLaunchKernelAttr {
        id: ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE,
        value: aclrtLaunchKernelAttrValue {
            engineType: ACL_RT_ENGINE_TYPE_AIV,
        },
    }];
    let mut cfg = aclrtLaunchKernelCfg {
        attrs: engine.as_mut_ptr(),
        numAttrs: 1,
    };
    let a = args(cube, &[]);
    ok(unsafe { aclrtLaunchKernelWithConfig(cube, 1, s, &mut cfg, a, null_mut()) });
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    let mut opt = [aclrtBinaryLoadOption {
        type_: ACL_RT_BINARY_LOAD_OPT_MAGIC,
        value: aclrtBinaryLoadOptionValue {
            magic: ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE,
        },
    }];
    let mut opts = aclrtBinaryLoadOptions {
        options: opt.as_mut_ptr(),
        numOpt: 1,
    };
    let mut vbin = null_mut();
    ok(unsafe { aclrtBinaryLoadFromFile(cpath(binary_path()).as_ptr(), &mut opts, &mut vbin) });
    let vcube = function(vbin, "cube");
    launch(vcube, 1, s, &[]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(vbin) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn stop_mode_fails_the_context_after_a_kernel_failure() {
    let _d = Dev::new(0);
    // A context of its own: STOP mode switches the whole context.
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let bin = load();
    let fail_odd = function(bin, "fail_odd");
    let store = function(bin, "store");
    let out = malloc(8);
    let s = stream();
    let other = stream();
    ok(unsafe { aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE.into()) });
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(1)]);
    launch(fail_odd, 2, s, &[Arg::Ptr(out)]);
    launch(store, 2, s, &[Arg::Ptr(out), Arg::U32(5)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    assert_eq!(
        read_u32(out, 2),
        [1, 0],
        "the task after the failure was discarded"
    );
    // Every submission and synchronisation of the context reports it.
    let a = args(store, &[Arg::Ptr(out), Arg::U32(7)]);
    err(
        unsafe { aclrtLaunchKernelWithConfig(store, 1, other, null_mut(), a, null_mut()) },
        AclError::VECTOR_CORE_EXCEPTION,
    );
    err(sync(other), AclError::VECTOR_CORE_EXCEPTION);
    free(out);
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetDevice(0) });
    ok(unsafe { aclrtResetDevice(0) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn timeouts_and_error_details() {
    // Device 1: the error details are the device's, and no other test of this file uses it.
    let _d = Dev::new(1);
    let bin = load();
    let spin = function(bin, "spin");
    let probe = function(bin, "probe");
    let fail_odd = function(bin, "fail_odd");
    let s = stream();
    let mut info: aclrtErrorInfo = unsafe { std::mem::zeroed() };
    err(
        unsafe { aclrtGetErrorVerbose(1, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetErrorVerbose(1, &mut info) });
    assert_eq!(info.errorType, ACL_RT_NO_ERROR);

    let spin_with_timeout = |ms: u32, us: u32| {
        let mut t = [aclrtLaunchKernelAttr {
            id: ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US,
            value: aclrtLaunchKernelAttrValue {
                timeoutUs: aclrtTimeoutUs {
                    timeoutLow: us,
                    timeoutHigh: 0,
                },
            },
        }];
        let mut cfg = aclrtLaunchKernelCfg {
            attrs: t.as_mut_ptr(),
            numAttrs: 1,
        };
        let a = args(spin, &[Arg::U32(ms)]);
        ok(unsafe { aclrtLaunchKernelWithConfig(spin, 1, s, &mut cfg, a, null_mut()) });
        sync(s)
    };
    err(spin_with_timeout(30, 1000), AclError::VECTOR_CORE_TIMEOUT);
    ok(spin_with_timeout(1, 10_000_000));

    let buf = malloc(16);
    launch(probe, 1, s, &[Arg::Ptr(buf), Arg::U64(12)]);
    ok(sync(s));
    launch(probe, 1, s, &[Arg::Ptr(buf), Arg::U64(16)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    ok(unsafe { aclrtGetErrorVerbose(1, &mut info) });
    assert_eq!(info.errorType, ACL_RT_ERROR_MEMORY);
    assert_eq!(info.hasDetail, 1);
    let uce = unsafe { info.detail.uceInfo };
    assert_eq!(uce.arraySize, 1);
    assert_eq!(uce.memUceInfoArray[0].addr as usize, buf as usize + 16);
    assert_eq!(uce.memUceInfoArray[0].len, 4);
    launch(fail_odd, 2, s, &[Arg::Ptr(buf)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    ok(unsafe { aclrtGetErrorVerbose(1, &mut info) });
    assert_eq!(info.errorType, ACL_RT_ERROR_OTHERS);
    free(buf);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

const CHILD: &str = "ASCENDCL_EMU_KERNEL_TEST_CHILD";

/// Runs `child_process_checks` in a child process with `threads` kernel threads.
fn in_child(threads: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_checks",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(ascendcl_emu::kernel_pool::ENV_KERNEL_THREADS, threads)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn printf_parallel_blocks_and_the_exception_callback() {
    let out = in_child("4");
    // The harness may print its own text before the first line of the test.
    let lines: Vec<&str> = out
        .lines()
        .filter_map(|l| {
            ["store block", "child:"]
                .iter()
                .find_map(|m| l.find(m))
                .map(|i| &l[i..])
        })
        .collect();
    let mut expected: Vec<String> = vec!["child: before".to_string()];
    expected.extend((0..8).map(|b| format!("store block {b}")));
    expected.push("child: after".to_string());
    expected.push("child: met 2".to_string());
    expected.push("store block 0".to_string());
    expected.push("child: exception of the last task true device 0 code 507035".to_string());
    assert_eq!(lines, expected);
}

static EXCEPTION: std::sync::Mutex<Option<(u32, u32, u32)>> = std::sync::Mutex::new(None);

extern "C" fn on_exception(info: *mut aclrtExceptionInfo) {
    let got = unsafe {
        (
            aclrtGetTaskIdFromExceptionInfo(info),
            aclrtGetDeviceIdFromExceptionInfo(info),
            aclrtGetErrorCodeFromExceptionInfo(info),
        )
    };
    *EXCEPTION.lock().unwrap() = Some(got);
}

/// The child's part: kernel output in block order between the program's lines, two blocks
/// that wait for each other (four threads), and the exception callback of a failed kernel.
#[test]
fn child_process_checks() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    assert_eq!(ascendcl_emu::kernel_pool::threads(), 4);
    let _d = Dev::new(0);
    let bin = load();
    let store = function(bin, "store");
    let meet = function(bin, "meet");
    let fail_odd = function(bin, "fail_odd");
    let out = malloc(64);
    let s = stream();
    println!("child: before");
    launch(store, 8, s, &[Arg::Ptr(out), Arg::U32(0)]);
    ok(sync(s));
    println!("child: after");
    let count = malloc(4);
    h2d(count, &[0; 4]);
    launch(meet, 2, s, &[Arg::Ptr(count)]);
    ok(sync(s));
    println!("child: met {}", read_u32(count, 1)[0]);
    ok(unsafe { aclrtSetExceptionInfoCallback(Some(on_exception)) });
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(0)]);
    launch(fail_odd, 2, s, &[Arg::Ptr(out)]);
    err(sync(s), AclError::VECTOR_CORE_EXCEPTION);
    ok(unsafe { aclrtSetExceptionInfoCallback(None) });
    let (task, device, code) = EXCEPTION.lock().unwrap().expect("the callback ran");
    // The failed task is the last one this thread put on a stream it created.
    let mut last = 0;
    ok(unsafe { aclrtGetThreadLastTaskId(&mut last) });
    println!(
        "child: exception of the last task {} device {device} code {code}",
        task == last
    );
    free(count);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

/// Released by the test once the memory a queued kernel will touch is gone.
static GATE_OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A host function that holds its stream until [`GATE_OPEN`] (10 s at most).
extern "C" fn gate(_: *mut c_void) {
    let start = std::time::Instant::now();
    while !GATE_OPEN.load(std::sync::atomic::Ordering::Acquire)
        && start.elapsed() < std::time::Duration::from_secs(10)
    {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_kernel_touching_a_released_reservation_fails_its_task() {
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let s = stream();
    let mut va = null_mut();
    ok(unsafe { aclrtReserveMemAddress(&mut va, 2 << 20, 0, null_mut(), 0) });
    ok(unsafe { aclrtReleaseMemAddress(va) });
    // A stale address of the released reservation: the launch fails, the process lives on.
    launch(f, 1, s, &[Arg::Ptr(va), Arg::U32(5)]);
    assert_eq!(AclError(sync(s)), AclError::VECTOR_CORE_EXCEPTION);
    let m = take_msg();
    assert!(m.contains("in no live allocation"), "{m}");
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

const IPC_CHILD: &str = "ASCENDCL_EMU_KERNEL_TEST_IPC_KEY";

/// The exporter's part: the importer (a child process) queues a kernel writing into the import
/// behind a gate, closes the import, then opens the gate; the kernel fails its task instead of
/// crashing the child; then it imports again and queues the kernel behind another kernel
/// only: the close waits for both, and the kernel's write reaches the exporter.
#[test]
fn a_kernel_queued_on_an_ipc_import_closed_under_it_fails_its_task() {
    let _d = Dev::new(0);
    let p = malloc(4096);
    h2d(p, &[7u8; 4096]);
    let mut key = [0 as std::ffi::c_char; 65];
    ok(unsafe { aclrtIpcMemGetExportKey(p, 4096, key.as_mut_ptr(), 65, 1) });
    let key = unsafe { std::ffi::CStr::from_ptr(key.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "ipc_import_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(IPC_CHILD, &key)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("child: closed under the kernel: 507035"),
        "{stdout}"
    );
    let mut back = [0u8; 4096];
    d2h(&mut back, p);
    // The kernel queued before the first close (behind a gate) wrote nothing; the one queued
    // before the second close (behind another kernel only) ran before the close.
    assert_eq!(
        &back[..4],
        &55u32.to_ne_bytes(),
        "the second import's kernel wrote"
    );
    assert!(back[4..].iter().all(|b| *b == 7), "the rest is untouched");
    let k = CString::new(key).unwrap();
    ok(unsafe { aclrtIpcMemClose(k.as_ptr()) });
    free(p);
}

/// The importer's part of the test above.
#[test]
fn ipc_import_child() {
    let Ok(key) = std::env::var(IPC_CHILD) else {
        return;
    };
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let key = CString::new(key).unwrap();
    let mut p = null_mut();
    ok(unsafe { aclrtIpcMemImportByKey(&mut p, key.as_ptr(), 0) });
    let s = stream();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(gate), null_mut()) });
    launch(f, 1, s, &[Arg::Ptr(p), Arg::U32(5)]);
    ok(unsafe { aclrtIpcMemClose(key.as_ptr()) });
    GATE_OPEN.store(true, std::sync::atomic::Ordering::Release);
    let code = sync(s);
    println!("child: closed under the kernel: {code}");
    // Queued behind a kernel, not a gate: the close waits for both, then unmaps.
    let spin = function(bin, "spin");
    ok(unsafe { aclrtIpcMemImportByKey(&mut p, key.as_ptr(), 0) });
    launch(spin, 1, s, &[Arg::U32(50)]);
    launch(f, 1, s, &[Arg::Ptr(p), Arg::U32(55)]);
    ok(unsafe { aclrtIpcMemClose(key.as_ptr()) });
    ok(unsafe { aclrtDestroyStreamForce(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_synchronous_copy_right_after_a_launch_sees_what_the_kernel_wrote() {
    let _d = Dev::new(0);
    let bin = load();
    let (spin, store) = (function(bin, "spin"), function(bin, "store"));
    let out = malloc(4);
    h2d(out, &[0; 4]);
    let s = stream();
    // The kernel runs after 50 ms of another: on a device both would be done by the next call.
    launch(spin, 1, s, &[Arg::U32(50)]);
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(123)]);
    let copy = malloc(4);
    ok(unsafe { aclrtMemcpy(copy, 4, out, 4, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    assert_eq!(read_u32(copy, 1), [123]);
    // A memset right after a launch comes after it too.
    launch(spin, 1, s, &[Arg::U32(50)]);
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(7)]);
    ok(unsafe { aclrtMemset(out, 4, 0, 4) });
    assert_eq!(read_u32(out, 1), [0]);
    ok(sync(s));
    free(copy);
    free(out);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

#[test]
fn a_synchronous_copy_does_not_wait_for_work_behind_a_gate() {
    let _d = Dev::new(0);
    let bin = load();
    let store = function(bin, "store");
    let out = malloc(4);
    h2d(out, &[0; 4]);
    let s = stream();
    let mut e = null_mut();
    ok(unsafe { aclrtCreateEvent(&mut e) });
    // The kernel waits for an event only this thread records, after the copy: a copy that
    // waited for it would wait for itself. The copy sees the memory as it was.
    ok(unsafe { aclrtStreamWaitEvent(s, e) });
    launch(store, 1, s, &[Arg::Ptr(out), Arg::U32(9)]);
    assert_eq!(read_u32(out, 1), [0]);
    let other = stream();
    ok(unsafe { aclrtRecordEvent(e, other) });
    ok(sync(s));
    assert_eq!(read_u32(out, 1), [9]);
    ok(sync(other));
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyStream(other) });
    ok(unsafe { aclrtDestroyStream(s) });
    free(out);
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}

const NO_ARENA_CHILD: &str = "ASCENDCL_EMU_KERNEL_TEST_NO_ARENA";

/// Without the device arena (address space limited below its smallest size), each allocation
/// is a memory file of its own; a kernel touching one after its free fails its launch (the
/// child lives on to say so).
#[test]
fn a_kernel_touching_a_freed_allocation_of_its_own_file_fails_its_task() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 3500000 && exec \"$0\" --exact freed_file_child --nocapture --test-threads=1")
        .arg(&exe)
        .env(NO_ARENA_CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("child: freed file: 507035"), "{stdout}");
}

/// The child's part of the test above.
#[test]
fn freed_file_child() {
    if std::env::var_os(NO_ARENA_CHILD).is_none() {
        return;
    }
    let _d = Dev::new(0);
    let bin = load();
    let f = function(bin, "store");
    let s = stream();
    let p = malloc(4096);
    launch(f, 1, s, &[Arg::Ptr(p), Arg::U32(1)]);
    ok(sync(s));
    free(p);
    launch(f, 1, s, &[Arg::Ptr(p), Arg::U32(5)]);
    println!("child: freed file: {}", sync(s));
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtBinaryUnLoad(bin) });
}
