//! Zero copy through registered host memory: the device view of a mapped `HostRegistration`
//! used by stream work and by copies, and the registrations it is refused for.

use crate::common::*;
use ascendcl::{HostRegisterFlags, HostRegisterType, HostRegistration, MemoryLocation};

#[test]
fn mapped_registrations_lend_a_device_view() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut reg =
        HostRegistration::with_flags(&d, vec![5u32; 256], HostRegisterFlags::MAPPED).unwrap();
    let view = reg.device_view().unwrap();
    assert_eq!((view.len(), view.device_id()), (256, 0));
    assert_eq!(view.as_ptr(), reg.device_ptr().cast_const());
    // The device reads the host vector through the mapping.
    let mut dev = d.alloc_zeros::<u32>(256).unwrap();
    s.scope(|sc| sc.copy(&mut dev, &view)).unwrap();
    assert_eq!(dev.copy_to_vec().unwrap(), vec![5; 256]);
    // … and writes it: device work fills the mapped view, the host sees it afterwards.
    let src = d.clone_htod(&[9u32; 256]).unwrap();
    {
        let mut out = reg.device_view_mut().unwrap();
        assert_eq!(out.len(), 256);
        s.scope(|sc| {
            let c = sc.claim(&mut out);
            assert_eq!(c.location(), MemoryLocation::Device(0));
            sc.fill_bytes(c, 0)?;
            sc.copy(c, &src)
        })
        .unwrap();
    }
    assert_eq!(&reg[..], &[9u32; 256][..]);
    let v = reg.unregister().unwrap();
    assert_eq!(v, vec![9; 256]);
}

#[test]
fn unmapped_registrations_have_no_device_view() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut pinned =
        HostRegistration::with_flags(&d, vec![0u8; 64], HostRegisterFlags::PINNED).unwrap();
    assert!(pinned.device_ptr().is_null());
    assert_argument(pinned.device_view().map(drop));
    assert_argument(pinned.device_view_mut().map(drop));
    // aclrtHostRegister maps too.
    let mapped = HostRegistration::new(&d, vec![1u8; 64], HostRegisterType::Mapped).unwrap();
    assert_eq!(mapped.device_view().unwrap().len(), 64);
}
