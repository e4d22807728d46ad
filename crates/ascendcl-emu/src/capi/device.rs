//! Devices: setting and resetting them, their count and synchronisation, peer access, and
//! the queries of the emulated SoC: capabilities, attributes, utilisation, status, UUID and name.

use super::*;
use crate::device::soc;

acl! {
    /// `aclrtSetDevice`: joins (or creates) the device's default context and makes it current.
    fn aclrtSetDevice(deviceId: i32) {
        crate::device::set(deviceId)
    }
}

acl! {
    /// `aclrtResetDevice`: drops one reference; the last releases the device's resources.
    fn aclrtResetDevice(deviceId: i32) {
        crate::device::reset(deviceId, false)
    }
}

acl! {
    /// `aclrtResetDeviceForce`: releases the device at once, whatever its reference count.
    fn aclrtResetDeviceForce(deviceId: i32) {
        crate::device::reset(deviceId, true)
    }
}

acl! {
    /// `aclrtGetDevice`: the current context's device; 107002 without one.
    fn aclrtGetDevice(deviceId: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(deviceId, "deviceId") }?;
        out.set(crate::device::context::current_device()?);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceCount`: the configured number of devices.
    fn aclrtGetDeviceCount(count: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(count, "count") }?.set(crate::device::count());
        Ok(())
    }
}

acl! {
    /// `aclrtSynchronizeDevice`: waits for every stream of the current device.
    fn aclrtSynchronizeDevice() {
        crate::device::synchronize(None)
    }
}

acl! {
    /// `aclrtSynchronizeDeviceWithTimeout`: as `aclrtSynchronizeDevice`, up to `timeout` ms
    /// (-1: forever); 507046 on expiry.
    fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) {
        crate::device::synchronize(timeout_arg(timeout)?)
    }
}

acl! {
    /// `aclrtDeviceCanAccessPeer`: 1 for two different emulated devices.
    fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(canAccessPeer, "canAccessPeer") }?;
        crate::device::check(deviceId)?;
        crate::device::check(peerDeviceId)?;
        if deviceId == peerDeviceId {
            return fail(
                RT_PARAM_INVALID,
                format!("deviceId and peerDeviceId are both {deviceId}"),
            );
        }
        out.set(1);
        Ok(())
    }
}

acl! {
    /// `aclrtDeviceEnablePeerAccess`: lets copies between the current device and the peer run.
    fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) {
        if flags != 0 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} must be 0 (reserved)"));
        }
        crate::device::set_peer(peerDeviceId, true)
    }
}

acl! {
    /// `aclrtDeviceDisablePeerAccess`.
    fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) {
        crate::device::set_peer(peerDeviceId, false)
    }
}

acl! {
    /// `aclrtDevicePeerAccessStatus`: 1 when `deviceId` enabled access to `peerDeviceId`.
    fn aclrtDevicePeerAccessStatus(deviceId: i32, peerDeviceId: i32, status: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        crate::device::check(deviceId)?;
        crate::device::check(peerDeviceId)?;
        out.set(i32::from(crate::device::peer_enabled(deviceId, peerDeviceId)));
        Ok(())
    }
}

acl! {
    /// `aclrtDeviceGetUuid`: a UUID of the emulated device, stable across processes and runs
    /// (derived from the device id and the SoC name).
    fn aclrtDeviceGetUuid(deviceId: i32, uuid: *mut aclrtUuid) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(uuid, "uuid") }?;
        crate::device::check(deviceId)?;
        let soc = config::with(|c| c.soc.clone());
        // FNV-1a over the SoC name, then the device id, into 16 bytes.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in soc.bytes().chain(deviceId.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut bytes = [0 as c_char; 16];
        for (i, b) in h.to_le_bytes().iter().chain((h.rotate_left(29) ^ 0x6163_6c65_6d75).to_le_bytes().iter()).enumerate() {
            bytes[i] = *b as c_char;
        }
        out.set(aclrtUuid { bytes });
        Ok(())
    }
}

/// A device id given as `u32` (the `aclGetDeviceCapability` / `aclrtGetDeviceInfo` style),
/// checked against the count with `code`.
fn check_device_u32(dev: u32, code: aclError) -> R<i32> {
    let n = crate::device::count();
    if dev >= n {
        return fail(code, format!("deviceId {dev} is outside [0, {n})"));
    }
    Ok(dev as i32)
}

acl! {
    /// `aclGetDeviceCapability`: AI cores, vector cores or L2 size of the emulated SoC;
    /// everything invalid is 100000 (the ACL layer's checks).
    fn aclGetDeviceCapability(deviceId: u32, deviceInfo: aclDeviceInfo, value: *mut i64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        check_device_u32(deviceId, INVALID_PARAM)?;
        let s = soc::current();
        let v = match deviceInfo {
            ACL_DEVICE_INFO_AI_CORE_NUM => i64::from(s.ai_core),
            ACL_DEVICE_INFO_VECTOR_CORE_NUM => i64::from(s.vector_core),
            ACL_DEVICE_INFO_L2_SIZE => s.l2 as i64,
            other => {
                return fail(INVALID_PARAM, format!("deviceInfo {other} is not AI_CORE_NUM (0), VECTOR_CORE_NUM (1) or L2_SIZE (2)"));
            }
        };
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceCapability`: whether a device feature is supported.
    /// `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV` follows the emulated SoC (1 on Atlas A2
    /// and A3, whose model tasks can be updated; 0 on IPV350);
    /// `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV` is not emulated (`ACL_DEV_FEATURE_NOT_SUPPORT`).
    fn aclrtGetDeviceCapability(deviceId: i32, devFeatureType: aclrtDevFeatureType, value: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        if !matches!(devFeatureType, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV | ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV) {
            return fail(RT_PARAM_INVALID, format!("devFeatureType {devFeatureType} is not a known feature (1 or 21)"));
        }
        crate::device::check(deviceId)?;
        let supported = devFeatureType == ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV
            && soc::current().features.task_update;
        out.set(if supported { ACL_DEV_FEATURE_SUPPORT } else { ACL_DEV_FEATURE_NOT_SUPPORT } as i32);
        Ok(())
    }
}

acl! {
    /// `aclrtCheckArchCompatibility`: whether operators built for `socVersion` run on the
    /// emulated SoC: 1 when both have the same NPU architecture, 0 otherwise; a NULL or empty
    /// name, a name the runtime's platform configuration does not describe, or a NULL output is
    /// 107000.
    fn aclrtCheckArchCompatibility(socVersion: *const c_char, canCompatible: *mut i32) {
        if socVersion.is_null() {
            return fail(RT_PARAM_INVALID, "socVersion is NULL");
        }
        if canCompatible.is_null() {
            return fail(RT_PARAM_INVALID, "canCompatible is NULL");
        }
        // SAFETY: C contract: a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(socVersion) }.to_string_lossy();
        if name.is_empty() {
            return fail(RT_PARAM_INVALID, "socVersion is an empty string");
        }
        let Some(arch) = soc::npu_arch_of(&name) else {
            return fail(RT_PARAM_INVALID, format!("SoC version {name} is invalid (no platform configuration names it)"));
        };
        // SAFETY: checked non-NULL; C contract (valid for a write).
        let out = unsafe { Out::new(canCompatible, "canCompatible") }?;
        out.set(i32::from(arch == soc::current().npu_arch));
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceInfo`: a device attribute; a device id past the count and an unknown
    /// attribute are 107000.
    fn aclrtGetDeviceInfo(deviceId: u32, attr: aclrtDevAttr, value: *mut i64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        let dev = check_device_u32(deviceId, RT_PARAM_INVALID)?;
        let s = soc::current();
        let v = match attr {
            ACL_DEV_ATTR_AICPU_CORE_NUM => i64::from(s.aicpu),
            ACL_DEV_ATTR_AICORE_CORE_NUM | ACL_DEV_ATTR_CUBE_CORE_NUM => i64::from(s.ai_core),
            ACL_DEV_ATTR_VECTOR_CORE_NUM => i64::from(s.vector_core),
            // SIMT limits exist on Ascend 950 only: 0 elsewhere.
            ACL_DEV_ATTR_WARP_SIZE..=ACL_DEV_ATTR_MAX_BLOCK_DIM_Z => 0,
            ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE => config::with(|c| c.memory) as i64,
            ACL_DEV_ATTR_L2_CACHE_SIZE => s.l2 as i64,
            ACL_DEV_ATTR_PHY_CHIP_ID | ACL_DEV_ATTR_SUPER_POD_DEVICE_ID => i64::from(dev),
            ACL_DEV_ATTR_SMP_ID
            | ACL_DEV_ATTR_SUPER_POD_SERVER_ID
            | ACL_DEV_ATTR_SUPER_POD_ID
            | ACL_DEV_ATTR_CUST_OP_PRIVILEGE
            | ACL_DEV_ATTR_MAINBOARD_ID
            | ACL_DEV_ATTR_HD_CONNECT_TYPE
            | ACL_DEV_ATTR_IS_VIRTUAL => 0,
            ACL_DEV_ATTR_NPU_ARCH => s.npu_arch,
            other => return fail(RT_PARAM_INVALID, format!("attr {other} is not an aclrtDevAttr")),
        };
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceUtilizationRate`: the emulator runs no kernels, so cube, vector and AI CPU
    /// utilisation are 0 (-1 for a device id outside the count, as for a query that fails);
    /// memory utilisation is always -1, as on hardware. `utilizationExtend` must be NULL.
    fn aclrtGetDeviceUtilizationRate(deviceId: i32, utilizationInfo: *mut aclrtUtilizationInfo) {
        if utilizationInfo.is_null() {
            return fail(INVALID_PARAM, "utilizationInfo is NULL");
        }
        // SAFETY: C contract: a non-NULL pointer is valid for reads and writes.
        let u = unsafe { &mut *utilizationInfo };
        if !u.utilizationExtend.is_null() {
            return fail(INVALID_PARAM, "utilizationInfo->utilizationExtend is reserved and must be NULL");
        }
        let v = if crate::device::check(deviceId).is_ok() { 0 } else { -1 };
        u.cubeUtilization = v;
        u.vectorUtilization = v;
        u.aicpuUtilization = v;
        u.memoryUtilization = -1;
        Ok(())
    }
}

acl! {
    /// `aclrtQueryDeviceStatus`: `ACL_RT_DEVICE_STATUS_NORMAL` (emulated devices do not fail).
    fn aclrtQueryDeviceStatus(deviceId: i32, deviceStatus: *mut aclrtDeviceStatus) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(deviceStatus, "deviceStatus") }?;
        crate::device::check(deviceId)?;
        out.set(ACL_RT_DEVICE_STATUS_NORMAL);
        Ok(())
    }
}

/// `aclrtGetSocName`: the configured SoC name (`Ascend910B2` by default); NULL on failure.
///
/// # Safety
/// Always safe to call; the returned string lives as long as the process.
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclrtGetSocName") {
            injected("aclrtGetSocName", code);
            return std::ptr::null();
        }
        crate::device::soc::name_ptr()
    })
    .unwrap_or(std::ptr::null())
}
