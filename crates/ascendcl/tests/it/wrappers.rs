//! The smaller wrappers: a device's UUID, device synchronisation with a timeout, peer-access
//! status, host-memory mapping by accelerator, 32-bit fills (synchronous and in a scope),
//! allocations with attributes (device and pinned host memory), and kernel binaries loaded from
//! bytes with options.

use crate::common::*;
use ascendcl::{
    Accelerator, BinaryCore, DeviceAlloc, DeviceBuffer, DeviceUuid, Error, HostBuffer,
    LaunchConfig, LoadOptions, MallocAttrs, MallocPolicy, Module, PointerLocation,
    pointer_attributes, raw,
};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn device_uuid_is_stable_and_formatted() {
    let r = rt();
    let d = r.device(0).unwrap();
    let id = d.uuid().unwrap();
    assert_eq!(d.uuid().unwrap(), id, "the same device has the same UUID");
    let mut bytes = ascendcl::sys::aclrtUuid::default();
    // SAFETY: a valid out-pointer.
    unsafe { raw::aclrtDeviceGetUuid(0, &mut bytes) }.unwrap();
    assert_eq!(id.as_bytes(), &bytes.bytes.map(|b| b as u8));
    assert_eq!(DeviceUuid::from_bytes(*id.as_bytes()), id);
    let text = id.to_string();
    assert_eq!(text.len(), 36, "{text}");
    let groups: Vec<usize> = text.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "{text}");
    assert!(
        text.chars()
            .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    if needs_devices(&r, 2, "device_uuid_is_stable_and_formatted (second device)") {
        assert_ne!(r.device(1).unwrap().uuid().unwrap(), id);
    }
}

#[test]
fn synchronize_device_with_timeout() {
    let r = rt();
    let d = r.device(0).unwrap();
    d.synchronize_timeout(None).unwrap();
    d.synchronize_timeout(Some(Duration::from_secs(5))).unwrap();

    let stream = d.create_stream().unwrap();
    let (go, wait) = mpsc::channel::<()>();
    let blocked = stream
        .launch_host_fn(move || {
            let _ = wait.recv();
        })
        .unwrap();
    let e = d
        .synchronize_timeout(Some(Duration::from_millis(20)))
        .unwrap_err();
    assert_eq!(e.code(), Some(AclError::STREAM_SYNC_TIMEOUT), "{e}");
    assert_eq!(e.api(), Some("aclrtSynchronizeDeviceWithTimeout"));
    go.send(()).unwrap();
    d.synchronize_timeout(None).unwrap();
    assert!(stream.is_complete().unwrap());
    drop(blocked);
}

#[test]
fn peer_access_status_follows_enabling() {
    let r = rt();
    if !needs_devices(&r, 2, "peer_access_status_follows_enabling") {
        return;
    }
    let (a, b) = (r.device(0).unwrap(), r.device(1).unwrap());
    if !a.can_access_peer(&b).unwrap() {
        skip(
            "peer_access_status_follows_enabling",
            "devices 0 and 1 cannot access each other",
        );
        return;
    }
    assert!(!a.peer_access_enabled(&b).unwrap());
    assert!(!b.peer_access_enabled(&a).unwrap());
    let access = a.enable_peer_access(&b).unwrap();
    assert!(a.peer_access_enabled(&b).unwrap());
    assert!(b.peer_access_enabled(&a).unwrap());
    access.disable().unwrap();
    assert!(!a.peer_access_enabled(&b).unwrap());
    assert!(!b.peer_access_enabled(&a).unwrap());
}

#[test]
fn host_memory_mapping_by_accelerator() {
    let r = rt();
    let d = r.device(0).unwrap();
    for &acc in Accelerator::ALL {
        let can = d.maps_host_memory(acc).unwrap();
        if emulator_active() {
            // One address space: every engine reaches registered host memory.
            assert!(can, "{acc:?}");
        }
    }
    assert_eq!(Accelerator::ALL.len(), 10);
    assert_eq!(
        Accelerator::try_from(ascendcl::sys::ACL_RT_HAC_TYPE_CCU).unwrap(),
        Accelerator::Ccu
    );
}

#[test]
fn fill_sets_four_byte_elements() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut words = d.alloc_zeros::<u32>(5).unwrap();
    words.fill(0x0102_0304).unwrap();
    assert_eq!(words.copy_to_vec().unwrap(), [0x0102_0304; 5]);

    let mut floats = d.alloc_zeros::<f32>(6).unwrap();
    floats.slice_mut(1..4).unwrap().fill(-2.5).unwrap();
    assert_eq!(
        floats.copy_to_vec().unwrap(),
        [0.0, -2.5, -2.5, -2.5, 0.0, 0.0]
    );

    let mut pairs = d.alloc_zeros::<[u16; 2]>(3).unwrap();
    pairs.fill([7, 9]).unwrap();
    assert_eq!(pairs.copy_to_vec().unwrap(), [[7, 9]; 3]);

    let mut signed = d.alloc_zeros::<i32>(2).unwrap();
    signed.fill(-1).unwrap();
    assert_eq!(signed.copy_to_vec().unwrap(), [-1, -1]);

    // Elements of another size are refused before the runtime is called.
    let mut halves = d.alloc_zeros::<u16>(4).unwrap();
    let e = assert_argument(halves.fill(3));
    assert!(e.to_string().contains("4 bytes"), "{e}");
    let mut longs = d.alloc_zeros::<u64>(4).unwrap();
    assert_argument(longs.fill(3));
    assert_eq!(longs.copy_to_vec().unwrap(), [0; 4]);

    // An empty view is nothing to do.
    let mut empty = d.alloc_zeros::<u32>(0).unwrap();
    empty.fill(1).unwrap();
    words.slice_mut(2..2).unwrap().fill(9).unwrap();
    assert_eq!(words.copy_to_vec().unwrap(), [0x0102_0304; 5]);
}

#[test]
fn scope_fill_is_ordered_with_the_stream() {
    let r = rt();
    let d = r.device(0).unwrap();
    let stream = d.create_stream().unwrap();
    let mut buf = d.clone_htod(&[1u32, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let mut before = vec![0u32; 8];
    let mut after = vec![0u32; 8];
    stream
        .scope(|s| {
            let b = s.claim(&mut buf);
            s.copy(&mut before, b)?;
            s.fill(b, 42)?;
            s.copy(&mut after, b)
        })
        .unwrap();
    assert_eq!(before, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(after, [42; 8]);

    let mut part = d.alloc_zeros::<f32>(4).unwrap();
    let mut front = part.slice_mut(..2).unwrap();
    stream.scope(|s| s.fill(&mut front, 0.5)).unwrap();
    assert_eq!(part.copy_to_vec().unwrap(), [0.5, 0.5, 0.0, 0.0]);

    // Host memory, other element sizes: refused.
    let mut host = vec![0u32; 4];
    let mut bytes = d.alloc_zeros::<u8>(8).unwrap();
    stream
        .scope(|s| {
            assert_argument(s.fill(&mut host, 1));
            assert_argument(s.fill(&mut bytes, 1));
            Ok(())
        })
        .unwrap();
    assert_eq!(host, [0; 4]);
    assert_eq!(bytes.copy_to_vec().unwrap(), [0; 8]);

    if needs_devices(
        &r,
        2,
        "scope_fill_is_ordered_with_the_stream (second device)",
    ) {
        let mut other = r.device(1).unwrap().alloc_zeros::<u32>(2).unwrap();
        stream
            .scope(|s| {
                let e = assert_argument(s.fill(&mut other, 1));
                assert!(e.to_string().contains("another device"), "{e}");
                Ok(())
            })
            .unwrap();
        assert_eq!(other.copy_to_vec().unwrap(), [0, 0]);
    }
}

#[test]
fn allocations_with_attributes() {
    let r = rt();
    let d = r.device(0).unwrap();
    for alloc in [
        DeviceAlloc::WithConfig(MallocAttrs::app()),
        DeviceAlloc::WithConfig(MallocAttrs::default()),
        DeviceAlloc::WithConfig(MallocAttrs { module_id: Some(7) }),
        DeviceAlloc::TaskScheduler(MallocAttrs::app()),
        DeviceAlloc::TaskScheduler(MallocAttrs::default()),
    ] {
        let mut buf =
            DeviceBuffer::<u16>::zeroed_with(&d, 1000, MallocPolicy::NormalOnly, alloc).unwrap();
        assert_eq!(buf.copy_to_vec().unwrap(), vec![0; 1000], "{alloc:?}");
        let data: Vec<u16> = (0..1000).collect();
        buf.copy_from_host(&data).unwrap();
        assert_eq!(buf.copy_to_vec().unwrap(), data, "{alloc:?}");
        let attrs = pointer_attributes(buf.as_ptr()).unwrap();
        assert_eq!(attrs.location, PointerLocation::Device(0), "{alloc:?}");
        buf.free().unwrap();
    }
    assert_eq!(
        DeviceAlloc::WithConfig(MallocAttrs::app()).api_name(),
        "aclrtMallocWithCfg"
    );
    assert_eq!(
        DeviceAlloc::TaskScheduler(MallocAttrs::default()).api_name(),
        "aclrtMallocForTaskScheduler"
    );
    assert_eq!(
        MallocAttrs::app().module_id,
        Some(MallocAttrs::APP_MODULE_ID)
    );

    // Zero elements allocate nothing.
    let empty = DeviceBuffer::<u8>::zeroed_with(
        &d,
        0,
        MallocPolicy::HugeFirst,
        DeviceAlloc::WithConfig(MallocAttrs::app()),
    )
    .unwrap();
    assert!(empty.is_empty());

    let mut host = HostBuffer::<u32>::zeroed_with(&d, 64, MallocAttrs::app()).unwrap();
    assert!(host.iter().all(|&x| x == 0));
    host.iter_mut().enumerate().for_each(|(i, x)| *x = i as u32);
    let dev = d.clone_htod(&host).unwrap();
    assert_eq!(dev.copy_to_vec().unwrap()[..], host[..]);
    let attrs = pointer_attributes(host.as_ptr()).unwrap();
    assert_eq!(attrs.location, PointerLocation::Host);
    host.free().unwrap();
    let plain = HostBuffer::<u8>::zeroed_with(&d, 16, MallocAttrs::default()).unwrap();
    assert_eq!(plain.len(), 16);
}

/// Runs the `fault` kernel (block 1 of 2 fails) of `m` and returns the error it reports.
fn fault_of(m: &Module) -> Error {
    let d = m.device();
    let stream = d.create_stream().unwrap();
    let fault = m.function("fault").unwrap();
    let mut out = d.alloc_zeros::<f32>(2).unwrap();
    stream
        .scope(|s| {
            // SAFETY: fault(float* out) touches nothing.
            unsafe {
                s.launch_builder(&fault)
                    .arg(&mut out)
                    .launch(&LaunchConfig::blocks(2))
            }
        })
        .unwrap_err()
}

#[test]
fn module_from_bytes_with_options() {
    let r = rt();
    if !needs_emulator(
        "module_from_bytes_with_options",
        "host-mode kernel binaries",
    ) {
        return;
    }
    // Its kernels fail on purpose: on the device kept for failures.
    let d = failure_device(&r);
    let bytes = std::fs::read(module_kernels()).unwrap();

    let plain = Module::from_bytes_with(&d, &bytes, LoadOptions::default()).unwrap();
    let scale = plain.function("scale").unwrap();
    assert_eq!(
        scale.origin(),
        format!("{} bytes of binary data", bytes.len())
    );
    let stream = d.create_stream().unwrap();
    let mut data = d.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    stream
        .scope(|s| {
            // SAFETY: scale(float* data, float factor, uint32_t n) over the 3 elements.
            unsafe {
                s.launch_builder(&scale)
                    .arg(&mut data)
                    .arg(3.0f32)
                    .arg(3u32)
                    .launch(&LaunchConfig::blocks(1))
            }
        })
        .unwrap();
    assert_eq!(data.copy_to_vec().unwrap(), [3.0, 6.0, 9.0]);
    // Without a core type the binary's vector kernels fail as vector-core exceptions...
    assert_eq!(
        fault_of(&plain).code(),
        Some(AclError::VECTOR_CORE_EXCEPTION)
    );
    // ...and the option makes them AI-core ones: the options reach the runtime.
    let cube = Module::from_bytes_with(
        &d,
        &bytes,
        LoadOptions {
            lazy: true,
            core: Some(BinaryCore::CubeCore),
        },
    )
    .unwrap();
    let e = fault_of(&cube);
    assert_eq!(e.code(), Some(AclError::AICORE_EXCEPTION), "{e}");
    cube.unload().unwrap();

    let e = assert_argument(Module::from_bytes_with(&d, &[], LoadOptions::default()));
    assert!(e.to_string().contains("0 bytes"), "{e}");
    let e = Module::from_bytes_with(&d, b"\x7fELF not a kernel binary", LoadOptions::default())
        .unwrap_err();
    assert_eq!(e.api(), Some("aclrtBinaryLoadFromData"), "{e}");
    assert!(e.code().is_some(), "{e}");
}
