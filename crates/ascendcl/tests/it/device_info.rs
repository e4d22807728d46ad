//! Device information: capabilities and attributes, utilisation, status, error details, the
//! stream-priority range and resource limits.

use crate::common::*;
use ascendcl::{
    DeviceAttr, DeviceCapability, DeviceErrorType, DeviceFeature, DeviceStatus, ResourceKind,
    StreamFlags,
};

#[test]
fn capabilities_agree_with_attributes() {
    let r = rt();
    let d = r.device(0).unwrap();
    let cores = d.capability(DeviceCapability::AiCoreNum).unwrap();
    assert!(cores > 0);
    assert_eq!(d.attribute(DeviceAttr::AicoreCoreNum).unwrap(), cores);
    assert_eq!(
        d.capability(DeviceCapability::VectorCoreNum).unwrap(),
        d.attribute(DeviceAttr::VectorCoreNum).unwrap()
    );
    assert_eq!(
        d.capability(DeviceCapability::L2Size).unwrap(),
        d.attribute(DeviceAttr::L2CacheSize).unwrap()
    );
    assert_eq!(d.attribute(DeviceAttr::IsVirtual).unwrap(), 0);
    for &f in DeviceFeature::ALL {
        let supported = d.supports(f).unwrap();
        if emulator_active() {
            // The emulated A2 part updates model tasks (as the cross-version sample's README
            // shows on one); it has no cross-device memory-queue events.
            assert_eq!(supported, f == DeviceFeature::TaskUpdateAicAiv, "{f:?}");
        }
    }
    if needs_emulator("capabilities_agree_with_attributes", "SoC table") {
        // The emulator's default SoC, Ascend910B2.
        assert_eq!(cores, 24);
        assert_eq!(d.attribute(DeviceAttr::VectorCoreNum).unwrap(), 48);
        assert_eq!(d.attribute(DeviceAttr::AicpuCoreNum).unwrap(), 6);
        assert_eq!(d.attribute(DeviceAttr::L2CacheSize).unwrap(), 192 << 20);
        assert_eq!(d.attribute(DeviceAttr::NpuArch).unwrap(), 2201);
    }
    // Every attribute the enum names is answered, each a number the runtime knows.
    for &a in DeviceAttr::ALL {
        d.attribute(a)
            .unwrap_or_else(|e| panic!("{a:?} is answered: {e}"));
    }
    // The raw values round-trip, and a value the enum does not name is an error, not UB.
    for &c in DeviceCapability::ALL {
        let raw: ascendcl::sys::aclDeviceInfo = c.into();
        assert_eq!(DeviceCapability::try_from(raw).unwrap(), c);
    }
    assert!(DeviceAttr::try_from(999).is_err());
}

#[test]
fn utilisation_status_and_error_details() {
    let r = rt();
    let d = r.device(0).unwrap();
    let u = d.utilization().unwrap();
    for p in [u.cube, u.vector, u.aicpu, u.memory].into_iter().flatten() {
        assert!(p <= 100, "{u:?}");
    }
    if needs_emulator("utilisation_status_and_error_details", "idle device") {
        assert_eq!(
            (u.cube, u.vector, u.aicpu, u.memory),
            (Some(0), Some(0), Some(0), None)
        );
    }
    assert_eq!(d.status().unwrap(), DeviceStatus::Normal);
    let e = d.error_verbose().unwrap();
    assert_eq!(e.error_type, DeviceErrorType::NoError);
    assert!(!e.try_repair && !e.has_detail);
}

#[test]
fn the_priority_range_bounds_stream_priorities() {
    let r = rt();
    let d = r.device(0).unwrap();
    let range = d.stream_priority_range().unwrap();
    assert!(range.greatest <= range.least, "{range:?}");
    assert!(range.contains(range.least) && range.contains(range.greatest));
    assert!(!range.contains(range.least + 1));
    let lowest = u32::try_from(range.least).unwrap();
    let s = d.create_stream_with(StreamFlags::empty(), lowest).unwrap();
    assert_eq!(s.priority().unwrap(), lowest);
    // Asked from a thread whose current context is another device's, it is still this one's.
    std::thread::spawn(move || assert_eq!(d.stream_priority_range().unwrap(), range))
        .join()
        .unwrap();
}

#[test]
fn device_resource_limits_set_read_and_reset() {
    let _g = device_limits();
    let r = rt();
    let d = r.device(0).unwrap();
    let cube = d.res_limit(ResourceKind::CubeCore).unwrap();
    let vector = d.res_limit(ResourceKind::VectorCore).unwrap();
    assert!(cube > 0 && vector > 0);
    // Above the hardware: refused, and nothing changes.
    let e = d
        .set_res_limit(ResourceKind::CubeCore, cube + 1)
        .unwrap_err();
    assert_eq!(e.code(), Some(AclError::PARAM_INVALID), "{e}");
    assert_eq!(e.api(), Some("aclrtSetDeviceResLimit"));
    assert_eq!(d.res_limit(ResourceKind::CubeCore).unwrap(), cube);

    d.set_res_limit(ResourceKind::CubeCore, cube / 2).unwrap();
    d.set_res_limit(ResourceKind::VectorCore, vector / 3)
        .unwrap();
    assert_eq!(d.res_limit(ResourceKind::CubeCore).unwrap(), cube / 2);
    // The calling thread sees the device's limits, from any thread.
    assert_eq!(
        d.thread_res_limit(ResourceKind::VectorCore).unwrap(),
        vector / 3
    );
    let d2 = d.clone();
    std::thread::spawn(move || {
        assert_eq!(
            d2.thread_res_limit(ResourceKind::CubeCore).unwrap(),
            cube / 2
        )
    })
    .join()
    .unwrap();
    d.reset_res_limits().unwrap();
    assert_eq!(d.res_limit(ResourceKind::CubeCore).unwrap(), cube);
    assert_eq!(d.res_limit(ResourceKind::VectorCore).unwrap(), vector);
    assert_eq!(
        d.thread_res_limit(ResourceKind::VectorCore).unwrap(),
        vector
    );
}
