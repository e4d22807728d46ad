//! Virtual memory in one process: granularity, physical allocations, reserved ranges, mappings
//! used by copies and scopes, access rights, and the checks made before the runtime is called.
//! (Sharing with other processes: `tests/it/sharing.rs`; the order of the releases:
//! `tests/release_order.rs`.)

use crate::common::*;
use ascendcl::{
    AccessFlags, AccessLocation, DeviceBuffer, Error, GranularityOption, MallocPolicy, MemAccess,
    MemAttr, MemoryLocation, PhysicalLocation, PhysicalMemProp, PhysicalMemory, VirtualRange, copy,
};

const MIB2: usize = 2 << 20;

#[test]
fn granularity_of_each_kind_of_memory() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    for prop in [
        PhysicalMemProp::device(MemAttr::HbmHuge),
        PhysicalMemProp::device(MemAttr::Huge),
        PhysicalMemProp::host(MemAttr::DdrHuge),
    ] {
        for option in GranularityOption::ALL {
            let g = device.allocation_granularity(&prop, *option).unwrap();
            assert!(g.is_power_of_two() && g >= 4096, "{prop:?} {option:?}: {g}");
        }
    }
    if emulator_active() {
        let huge = PhysicalMemProp::default();
        assert_eq!(
            device
                .allocation_granularity(&huge, GranularityOption::Minimum)
                .unwrap(),
            MIB2
        );
        let one_g = PhysicalMemProp::device(MemAttr::HbmHuge1g);
        assert_eq!(
            device
                .allocation_granularity(&one_g, GranularityOption::Recommended)
                .unwrap(),
            1 << 30
        );
    }
    // Host (DDR) memory is not device memory: the runtime refuses the property.
    assert_code(
        device.allocation_granularity(
            &PhysicalMemProp::device(MemAttr::DdrHuge),
            GranularityOption::Minimum,
        ),
        AclError::INVALID_PARAM,
    );
}

#[test]
fn physical_sizes_are_checked_before_the_runtime() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let prop = PhysicalMemProp::default();
    let g = device
        .allocation_granularity(&prop, GranularityOption::Minimum)
        .unwrap();
    for size in [0, 1, g + 1, g / 2] {
        let e = assert_argument(PhysicalMemory::new(&device, size, prop));
        assert_eq!(e.api(), Some("aclrtMallocPhysical"));
    }
    // A DDR attribute on a device is the runtime's to refuse (the granularity query fails
    // first, with the same code).
    assert_code(
        PhysicalMemory::new(&device, g, PhysicalMemProp::device(MemAttr::DdrNormal)),
        AclError::INVALID_PARAM,
    );
    let phys = PhysicalMemory::new(&device, 2 * g, prop).unwrap();
    assert_eq!(phys.size(), 2 * g);
    assert_eq!(phys.location(), MemoryLocation::Device(0));
    assert!(!phys.is_imported());
    assert!(!phys.as_raw().is_null());
    phys.free().unwrap();
}

#[test]
fn a_mapping_is_memory_for_copies_and_scopes() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let stream = device.create_stream().unwrap();
    let range = VirtualRange::reserve(&device, 2 * MIB2).unwrap();
    assert_eq!(range.size(), 2 * MIB2);
    assert!(!range.as_ptr().is_null());
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let mut mem = range.map::<u32>(MIB2, phys).unwrap();
    assert_eq!(mem.len(), MIB2 / 4);
    assert_eq!(mem.offset(), MIB2);
    assert_eq!(mem.as_ptr() as usize, range.as_ptr() as usize + MIB2);
    assert_eq!(mem.location(), MemoryLocation::Device(0));
    assert_eq!(range.mapped_parts(), [(MIB2, MIB2)]);
    let pattern: Vec<u32> = (0..mem.len() as u32).collect();

    // Synchronous copies, views, memset.
    mem.copy_from_host(&pattern).unwrap();
    assert_eq!(mem.to_vec().unwrap(), pattern);
    assert_eq!(mem.slice(10..13).unwrap().to_vec().unwrap(), [10, 11, 12]);
    let mut back = vec![0u32; 3];
    mem.slice(5..8).unwrap().copy_to_host(&mut back).unwrap();
    assert_eq!(back, [5, 6, 7]);
    mem.slice_mut(0..2).unwrap().fill_bytes(0xff).unwrap();
    assert_eq!(
        mem.slice(0..3).unwrap().to_vec().unwrap(),
        [u32::MAX, u32::MAX, 2]
    );

    // To and from an ordinary device buffer of the same device.
    let mut buf = DeviceBuffer::<u32>::zeroed(&device, mem.len(), MallocPolicy::HugeFirst).unwrap();
    copy(&mut buf, &mem).unwrap();
    assert_eq!(buf.copy_to_vec().unwrap()[2..5], [2, 3, 4]);
    mem.fill_bytes(0).unwrap();
    mem.copy_from(&buf).unwrap();
    assert_eq!(mem.to_vec().unwrap()[..3], [u32::MAX, u32::MAX, 2]);

    // Asynchronous work: the scope borrows the mapping like a buffer and claims it.
    let mut out = vec![0u32; mem.len()];
    stream
        .scope(|s| {
            let m = s.claim(&mut mem);
            s.fill_bytes(m.slice(0..1)?, 0)?;
            s.copy(m.slice(1..2)?, &pattern[7..8])?;
            s.copy(&mut out, m)
        })
        .unwrap();
    assert_eq!(out[..3], [0, 7, 2]);
    stream.scope(|s| s.copy(&mut buf, &mem)).unwrap();
    assert_eq!(buf.copy_to_vec().unwrap()[..3], [0, 7, 2]);

    // Unmapping gives the physical memory back; it maps again, elsewhere, with another type.
    let phys = mem.unmap().unwrap();
    assert!(range.mapped_parts().is_empty());
    let bytes = range.map::<u8>(0, phys).unwrap();
    assert_eq!(bytes.len(), MIB2);
    assert_eq!(
        bytes.slice(4..8).unwrap().to_vec().unwrap(),
        7u32.to_ne_bytes()
    );
    drop(bytes);
    buf.free().unwrap();
    range.release().unwrap();
}

#[test]
fn mappings_are_refused_before_the_runtime_and_give_the_memory_back() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let range = VirtualRange::reserve(&device, 2 * MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    // Past the end, overflowing, misaligned for the element type: the memory comes back.
    let e = range.map::<u8>(MIB2 + 1, phys).unwrap_err();
    assert!(matches!(e.error(), Error::Argument { .. }), "{}", e.error());
    let e = range.map::<u8>(usize::MAX, e.into_handle()).unwrap_err();
    assert!(matches!(e.error(), Error::Argument { .. }), "{}", e.error());
    let e = range.map::<u64>(4, e.into_handle()).unwrap_err();
    assert!(matches!(e.error(), Error::Argument { .. }), "{}", e.error());
    let e = range.map::<[u8; 0]>(0, e.into_handle()).unwrap_err();
    assert!(matches!(e.error(), Error::Argument { .. }), "{}", e.error());
    let first = range.map::<u8>(0, e.into_handle()).unwrap();

    // Overlapping parts of one range never map, whatever the backend would do.
    let other = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let e = range.map::<u8>(0, other).unwrap_err();
    assert!(e.error().to_string().contains("overlap"), "{}", e.error());
    let second = range.map::<u8>(MIB2, e.into_handle()).unwrap();
    let mut parts = range.mapped_parts();
    parts.sort();
    assert_eq!(parts, [(0, MIB2), (MIB2, MIB2)]);
    drop(first);
    assert_eq!(range.mapped_parts(), [(MIB2, MIB2)]);

    // A range whose handle is released while mapped stays until its last mapping goes.
    let start = range.as_ptr();
    range.release().unwrap();
    assert_eq!(second.range().as_ptr(), start);
    assert_eq!(second.to_vec().unwrap().len(), MIB2);
    drop(second);
}

#[test]
fn host_physical_memory_maps_as_pinned_memory() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let prop = PhysicalMemProp::host(MemAttr::DdrHuge);
    let g = device
        .allocation_granularity(&prop, GranularityOption::Minimum)
        .unwrap();
    let phys = PhysicalMemory::new(&device, g, prop).unwrap();
    assert_eq!(phys.location(), MemoryLocation::Pinned);
    let range = VirtualRange::reserve(&device, g.max(MIB2)).unwrap();
    let mut mem = range.map::<u16>(0, phys).unwrap();
    mem.copy_from_host(&vec![9u16; mem.len()]).unwrap();
    assert!(mem.to_vec().unwrap().iter().all(|&x| x == 9));
    let mut dev = device.alloc_zeros::<u16>(mem.len()).unwrap();
    copy(&mut dev, &mem).unwrap();
    assert_eq!(dev.copy_to_vec().unwrap()[0], 9);
    assert_eq!(mem.access().unwrap().location, AccessLocation::Host);
}

#[test]
fn access_rights_of_a_mapping() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let mut mem = range.map::<u8>(0, phys).unwrap();
    let a = mem.access().unwrap();
    assert_eq!(a, MemAccess::read_write(0));
    mem.set_access(&[MemAccess::read_write(0)]).unwrap();
    assert_argument(mem.set_access(&[]));
    if emulator_active() {
        // Only read-write access is supported.
        let read = MemAccess {
            location: AccessLocation::Device(0),
            flags: AccessFlags::Read,
        };
        assert_code(mem.set_access(&[read]), AclError::FEATURE_NOT_SUPPORT);
        // A device that does not exist.
        assert_code(
            mem.set_access(&[MemAccess::read_write(99)]),
            AclError::INVALID_DEVICEID,
        );
    }
    assert_eq!(mem.access().unwrap().flags, AccessFlags::ReadWrite);
}

#[test]
fn the_physical_location_kinds_reach_the_runtime() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    assert_eq!(
        PhysicalMemProp::default().location,
        PhysicalLocation::Device
    );
    // NUMA host memory: the granularity of host memory.
    let numa = PhysicalMemProp {
        location: PhysicalLocation::HostNuma(0),
        attr: MemAttr::DdrNormal,
    };
    let g = device
        .allocation_granularity(&numa, GranularityOption::Minimum)
        .unwrap();
    assert!(g.is_power_of_two());
    if emulator_active() {
        // 1 GiB pages exist for device memory only.
        assert_code(
            device.allocation_granularity(
                &PhysicalMemProp::host(MemAttr::Huge1g),
                GranularityOption::Minimum,
            ),
            AclError::FEATURE_NOT_SUPPORT,
        );
    }
}

#[test]
fn the_handles_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<VirtualRange>();
    send_sync::<PhysicalMemory>();
    send_sync::<ascendcl::Mapping<f32>>();
    send_sync::<ascendcl::IpcMemExport<u8>>();
    send_sync::<ascendcl::IpcMemImport<u8>>();
    send_sync::<ascendcl::ImportedNotify>();
    // A mapping made on one thread is used and dropped on another.
    let rt = rt();
    let device = rt.device(0).unwrap();
    let range = VirtualRange::reserve(&device, MIB2).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let mut mem = range.map::<u64>(0, phys).unwrap();
    let back = std::thread::spawn(move || {
        mem.copy_from_host(&vec![3; mem.len()]).unwrap();
        mem.to_vec().unwrap()[0]
    })
    .join()
    .unwrap();
    assert_eq!(back, 3);
    assert!(
        range.mapped_parts().is_empty(),
        "unmapped by the other thread's drop"
    );
}

#[test]
fn fabric_handles_reach_the_runtime() {
    let rt = rt();
    let device = rt.device(0).unwrap();
    let phys = PhysicalMemory::new(&device, MIB2, PhysicalMemProp::default()).unwrap();
    let fabric = ascendcl::FabricHandle::from_bytes([0; 128]);
    assert_eq!(
        ascendcl::FabricHandle::from_bytes(fabric.to_bytes()),
        fabric
    );
    if emulator_active() {
        // Cross-server sharing is not emulated: the V2 calls answer 207000.
        assert_code(
            phys.export_fabric(ascendcl::Importers::Anyone),
            AclError::FEATURE_NOT_SUPPORT,
        );
        assert_code(
            PhysicalMemory::import_fabric(&device, &fabric, MIB2),
            AclError::FEATURE_NOT_SUPPORT,
        );
        // Nothing was exported, so there is no whitelist to set.
        assert_argument(phys.allow(&[ascendcl::Pid::from_raw(1)]));
    }
}
