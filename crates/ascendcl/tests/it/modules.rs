//! Kernel binaries and launches through the safe API: `Module`, `KernelFunction`, `KernelArgs`,
//! `Scope::launch`, `Scope::launch_builder`. The kernels are a host-mode binary written against
//! the binary ABI (tests/kernels/module_kernels.c, compiled here with `$CC`, else `cc`), so
//! these tests run on the emulator (they skip themselves on another backend).

use crate::common::*;
use ascendcl::{
    BinaryCore, DeviceRepr, Error, KernelFunction, LaunchConfig, LoadOptions, MAX_BLOCKS, Module,
    ScheduleMode,
};
use std::time::Duration;

/// The kernel's `Fill` struct, byte for byte.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Fill {
    n: u32,
    value: f32,
}
// SAFETY: two 4-byte plain fields, no padding, every bit pattern valid, no pointers.
unsafe impl DeviceRepr for Fill {}

#[test]
fn load_functions_and_their_errors() {
    let rt = rt();
    if !needs_emulator(
        "load_functions_and_their_errors",
        "host-mode kernel binaries",
    ) {
        return;
    }
    let dev = rt.device(0).unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    assert_eq!(m.device().id(), 0);
    let add = m.function("add").unwrap();
    assert_eq!(add.name(), "add");
    assert_eq!(add.origin(), module_kernels().display().to_string());
    let e = m.function("no_such_kernel").unwrap_err();
    assert_eq!(e.code(), Some(AclError::PARAM_INVALID), "{e}");
    assert_eq!(e.api(), Some("aclrtBinaryGetFunction"));
    assert!(matches!(m.function("a\0b"), Err(Error::Argument { .. })));

    let bytes = std::fs::read(module_kernels()).unwrap();
    let from_bytes = Module::from_bytes(&dev, &bytes).unwrap();
    from_bytes.function("scale").unwrap();
    assert!(matches!(
        Module::from_bytes(&dev, &[]),
        Err(Error::Argument { .. })
    ));
    let e = Module::from_bytes(&dev, b"\x7fELF not a kernel binary").unwrap_err();
    assert_eq!(e.code(), Some(AclError::PARAM_INVALID), "{e}");
    let e = Module::load(&dev, "/nonexistent/kernels.so").unwrap_err();
    assert_eq!(e.api(), Some("aclrtBinaryLoadFromFile"));
    let with = Module::load_with(
        &dev,
        module_kernels(),
        LoadOptions {
            lazy: true,
            core: Some(BinaryCore::VectorCore),
        },
    )
    .unwrap();
    with.unload().unwrap();

    // Unloading keeps the binary while a function holds it.
    let scale = from_bytes.function("scale").unwrap();
    from_bytes.unload().unwrap();
    let stream = dev.create_stream().unwrap();
    let mut data = dev.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    stream
        .scope(|s| {
            // SAFETY: scale(float* data, float factor, uint32_t n) over the 3 elements.
            unsafe {
                s.launch_builder(&scale)
                    .arg(&mut data)
                    .arg(2.0f32)
                    .arg(3u32)
                    .launch(&LaunchConfig::blocks(2))
            }
        })
        .unwrap();
    assert_eq!(data.copy_to_vec().unwrap(), [2.0, 4.0, 6.0]);
    m.unload().unwrap();
}

#[test]
fn launch_builder_runs_the_kernel_on_the_scopes_stream() {
    let rt = rt();
    if !needs_emulator(
        "launch_builder_runs_the_kernel",
        "host-mode kernel binaries",
    ) {
        return;
    }
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    let add = m.function("add").unwrap();
    let n = 1000usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = dev.clone_htod(&xs).unwrap();
    let mut y = dev.clone_htod(&vec![0.5f32; n]).unwrap();
    let mut back = vec![0f32; n];
    stream
        .scope(|s| {
            let yc = s.claim(&mut y);
            for _ in 0..2 {
                // SAFETY: add(const float* x, float* y, uint32_t n), n elements each.
                unsafe {
                    s.launch_builder(&add)
                        .arg(&x)
                        .arg(yc)
                        .arg(n as u32)
                        .launch(&LaunchConfig::blocks(7).schedule(ScheduleMode::Batch))
                }?;
            }
            // Ordered after both launches on the stream.
            s.copy(&mut back, yc)
        })
        .unwrap();
    let want: Vec<f32> = xs.iter().map(|v| 0.5 + 2.0 * v).collect();
    assert_eq!(back, want);
}

#[test]
fn argument_lists_take_values_placeholders_and_updates() {
    let rt = rt();
    if !needs_emulator("argument_lists_take_values", "host-mode kernel binaries") {
        return;
    }
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    let (scale, fill, table) = (
        m.function("scale").unwrap(),
        m.function("fill").unwrap(),
        m.function("table_sum").unwrap(),
    );
    let mut data = dev.clone_htod(&[1.0f32; 4]).unwrap();
    let mut out = dev.alloc_zeros::<f32>(1).unwrap();
    let mut filled = dev.alloc_zeros::<f32>(6).unwrap();
    stream
        .scope(|s| {
            let mut args = s.kernel_args(&scale)?;
            args.arg(&mut data)?;
            let factor = args.arg(3.0f32)?;
            args.arg(4u32)?;
            assert_eq!(args.params().len(), 3);
            assert_eq!(factor.index(), 1);
            // SAFETY: scale(float* data, float factor, uint32_t n) over 4 elements.
            unsafe { s.launch(&mut args, &LaunchConfig::blocks(1)) }?;
            args.update(factor, &0.5f32)?;
            // SAFETY: as above.
            unsafe { s.launch(&mut args, &LaunchConfig::blocks(2)) }?;
            // Sealed by the launches: no more parameters; sizes must match.
            assert!(matches!(args.arg(1u32), Err(Error::Argument { .. })));
            assert!(matches!(
                args.update(factor, &1.0f64),
                Err(Error::Argument { .. })
            ));
            let first = args.params()[0];
            assert!(matches!(
                args.update(first, &0u64),
                Err(Error::Argument { .. })
            ));

            // SAFETY: fill(float* out, Fill f), f.n = 5 of the 6 elements.
            unsafe {
                s.launch_builder(&fill)
                    .arg(&mut filled)
                    .value(&Fill { n: 5, value: 7.5 })
                    .launch(&LaunchConfig::blocks(3))
            }?;
            // SAFETY: table_sum(float* out, const float* table, uint32_t n), the table a
            // placeholder of 3 floats.
            unsafe {
                s.launch_builder(&table)
                    .arg(&mut out)
                    .placeholder(&[1.0f32, 2.0, 4.5])
                    .arg(3u32)
                    .launch(&LaunchConfig::blocks(1))
            }
        })
        .unwrap();
    assert_eq!(data.copy_to_vec().unwrap(), [1.5; 4]);
    assert_eq!(
        filled.copy_to_vec().unwrap(),
        [7.5, 7.5, 7.5, 7.5, 7.5, 0.0]
    );
    assert_eq!(out.copy_to_vec().unwrap(), [7.5]);
}

#[test]
fn builder_launches_leave_kept_lists_alone_and_take_large_placeholders() {
    let rt = rt();
    if !needs_emulator(
        "builder_launches_leave_kept_lists",
        "host-mode kernel binaries",
    ) {
        return;
    }
    let dev = rt.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    let (scale, table) = (
        m.function("scale").unwrap(),
        m.function("table_sum").unwrap(),
    );
    let mut data = dev.clone_htod(&[1.0f32; 4]).unwrap();
    let (mut small, mut large) = (
        dev.alloc_zeros::<f32>(1).unwrap(),
        dev.alloc_zeros::<f32>(1).unwrap(),
    );
    // 20000 floats (80000 bytes): more than the thread's list holds, so the builder makes a list
    // of its own.
    let big: Vec<f32> = (0..20_000).map(|i| (i % 4) as f32).collect();
    let want: f32 = big.iter().sum();
    stream
        .scope(|s| {
            let mut kept = s.kernel_args(&scale)?;
            kept.arg(&mut data)?;
            kept.arg(2.0f32)?;
            kept.arg(4u32)?;
            // SAFETY: scale(float* data, float factor, uint32_t n) over 4 elements.
            unsafe { s.launch(&mut kept, &LaunchConfig::blocks(1)) }?;
            // SAFETY: table_sum(float* out, const float* table, uint32_t n) over the table.
            unsafe {
                s.launch_builder(&table)
                    .arg(&mut small)
                    .placeholder(&[1.0f32, 2.0])
                    .arg(2u32)
                    .launch(&LaunchConfig::blocks(1))
            }?;
            // The builder's launch started the thread's list again; the kept list is its own.
            // SAFETY: as above.
            unsafe { s.launch(&mut kept, &LaunchConfig::blocks(2)) }?;
            // SAFETY: as above, over the large table.
            unsafe {
                s.launch_builder(&table)
                    .arg(&mut large)
                    .placeholder(&big)
                    .arg(big.len() as u32)
                    .launch(&LaunchConfig::blocks(1))
            }
        })
        .unwrap();
    assert_eq!(data.copy_to_vec().unwrap(), [4.0; 4]);
    assert_eq!(small.copy_to_vec().unwrap(), [3.0]);
    assert_eq!(large.copy_to_vec().unwrap(), [want]);
}

#[test]
fn a_failing_kernel_is_the_scopes_error_and_the_stream_goes_on() {
    let rt = rt();
    if !needs_emulator(
        "a_failing_kernel_is_the_scopes_error",
        "host-mode kernel binaries",
    ) {
        return;
    }
    // The kernel fails on purpose: on the device kept for failures.
    let dev = failure_device(&rt);
    let stream = dev.create_stream().unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    let fault = m.function("fault").unwrap();
    let add = m.function("add").unwrap();
    let mut out = dev.alloc_zeros::<f32>(2).unwrap();
    let e = stream
        .scope(|s| {
            // SAFETY: fault(float* out) touches nothing.
            unsafe {
                s.launch_builder(&fault)
                    .arg(&mut out)
                    .launch(&LaunchConfig::blocks(2))
            }
        })
        .unwrap_err();
    assert_eq!(e.code(), Some(AclError::VECTOR_CORE_EXCEPTION), "{e}");
    assert_eq!(e.api(), Some("aclrtSynchronizeStream"));
    assert!(
        e.runtime_message()
            .is_some_and(|m| m.contains("fault: block 1 of 2: deliberate fault")),
        "{e:?}"
    );
    let x = dev.clone_htod(&[1.0f32, 2.0]).unwrap();
    stream
        .scope(|s| {
            // SAFETY: add(const float* x, float* y, uint32_t n), 2 elements.
            unsafe {
                s.launch_builder(&add)
                    .arg(&x)
                    .arg(&mut out)
                    .arg(2u32)
                    .launch(&LaunchConfig::blocks(1).timeout(Duration::from_secs(5)))
            }
        })
        .unwrap();
    assert_eq!(out.copy_to_vec().unwrap(), [1.0, 2.0]);
}

/// Launches `add` with the given arguments and configuration, returning the launch's error.
fn refused(
    add: &KernelFunction,
    cfg: LaunchConfig,
    host: bool,
    other: Option<&ascendcl::Device>,
) -> Error {
    let dev = add.device().clone();
    let stream = dev.create_stream().unwrap();
    let x = dev.clone_htod(&[1.0f32; 4]).unwrap();
    let mut y = dev.alloc_zeros::<f32>(4).unwrap();
    let mut elsewhere = other.map(|d| d.alloc_zeros::<f32>(4).unwrap());
    let host_mem = vec![0f32; 4];
    let r = stream.scope(|s| {
        let b = s.launch_builder(add);
        let b = if host { b.arg(&host_mem) } else { b.arg(&x) };
        let b = match &mut elsewhere {
            Some(e) => b.arg(e),
            None => b.arg(&mut y),
        };
        // SAFETY: refused before anything is enqueued (or add over 4 elements).
        unsafe { b.arg(4u32).launch(&cfg) }
    });
    assert_eq!(y.copy_to_vec().unwrap(), [0.0; 4], "a refused launch ran");
    r.unwrap_err()
}

#[test]
fn bad_launches_are_refused_before_anything_is_enqueued() {
    let rt = rt();
    if !needs_emulator("bad_launches_are_refused", "host-mode kernel binaries") {
        return;
    }
    let dev = rt.device(0).unwrap();
    let dev1 = rt.device(1).unwrap();
    let m = Module::load(&dev, module_kernels()).unwrap();
    let add = m.function("add").unwrap();
    let arg = |e: Error| match e {
        Error::Argument { api, reason } => format!("{api}: {reason}"),
        other => panic!("not an argument error: {other:?}"),
    };
    assert!(arg(refused(&add, LaunchConfig::blocks(0), false, None)).contains("0 blocks"));
    assert!(
        arg(refused(
            &add,
            LaunchConfig::blocks(MAX_BLOCKS + 1),
            false,
            None
        ))
        .contains("a launch has 1 to 65535")
    );
    assert!(arg(refused(&add, LaunchConfig::blocks(1), true, None)).contains("host memory"));
    assert!(
        arg(refused(&add, LaunchConfig::blocks(1), false, Some(&dev1)))
            .contains("memory of device 1")
    );
    // A function loaded for device 1 on a stream of device 0.
    let m1 = Module::load(&dev1, module_kernels()).unwrap();
    let add1 = m1.function("add").unwrap();
    let stream = dev.create_stream().unwrap();
    let x = dev.clone_htod(&[1.0f32]).unwrap();
    let e = stream
        .scope(|s| {
            // SAFETY: refused before anything is enqueued.
            unsafe {
                s.launch_builder(&add1)
                    .arg(&x)
                    .arg(&x)
                    .arg(1u32)
                    .launch(&LaunchConfig::blocks(1))
            }
        })
        .unwrap_err();
    assert!(arg(e).contains("was loaded for device 1"));
}
