//! Device information: capabilities and attributes, utilisation, health, error details, the
//! stream-priority range and compute-resource limits, the device's UUID and which of its
//! accelerators reach registered host memory, as typed methods of [`Device`].
//!
//! Every query names its device explicitly, except the two the runtime answers for the calling
//! thread's current context ([`Device::stream_priority_range`], [`Device::thread_res_limit`]):
//! those make the device's context current first, like every call of this crate.

use crate::device::Device;
use crate::error::Result;
use crate::raw;
use crate::raw_enum::raw_enum;
use ascendcl_sys as sys;
use std::fmt;

raw_enum! {
    /// A capability of [`Device::capability`] (`aclDeviceInfo`, `aclGetDeviceCapability`).
    pub enum DeviceCapability: sys::aclDeviceInfo {
        /// `ACL_DEVICE_INFO_AI_CORE_NUM`: AI cores.
        AiCoreNum = sys::ACL_DEVICE_INFO_AI_CORE_NUM,
        /// `ACL_DEVICE_INFO_VECTOR_CORE_NUM`: vector cores.
        VectorCoreNum = sys::ACL_DEVICE_INFO_VECTOR_CORE_NUM,
        /// `ACL_DEVICE_INFO_L2_SIZE`: L2 cache bytes.
        L2Size = sys::ACL_DEVICE_INFO_L2_SIZE,
    }
}

raw_enum! {
    /// An attribute of [`Device::attribute`] (`aclrtDevAttr`, `aclrtGetDeviceInfo`).
    pub enum DeviceAttr: sys::aclrtDevAttr {
        /// `ACL_DEV_ATTR_AICPU_CORE_NUM`: AI CPU cores.
        AicpuCoreNum = sys::ACL_DEV_ATTR_AICPU_CORE_NUM,
        /// `ACL_DEV_ATTR_AICORE_CORE_NUM`: AI cores.
        AicoreCoreNum = sys::ACL_DEV_ATTR_AICORE_CORE_NUM,
        /// `ACL_DEV_ATTR_CUBE_CORE_NUM`: cube cores.
        CubeCoreNum = sys::ACL_DEV_ATTR_CUBE_CORE_NUM,
        /// `ACL_DEV_ATTR_VECTOR_CORE_NUM`: vector cores.
        VectorCoreNum = sys::ACL_DEV_ATTR_VECTOR_CORE_NUM,
        /// `ACL_DEV_ATTR_WARP_SIZE`: SIMT warp size (0 where the SoC has no SIMT units).
        WarpSize = sys::ACL_DEV_ATTR_WARP_SIZE,
        /// `ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE`
        MaxThreadPerVectorCore = sys::ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE,
        /// `ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE` (same value as `ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE`)
        LocalMemPerVectorCore = sys::ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE,
        /// `ACL_DEV_ATTR_MAX_GRID_DIM_X`
        MaxGridDimX = sys::ACL_DEV_ATTR_MAX_GRID_DIM_X,
        /// `ACL_DEV_ATTR_MAX_GRID_DIM_Y`
        MaxGridDimY = sys::ACL_DEV_ATTR_MAX_GRID_DIM_Y,
        /// `ACL_DEV_ATTR_MAX_GRID_DIM_Z`
        MaxGridDimZ = sys::ACL_DEV_ATTR_MAX_GRID_DIM_Z,
        /// `ACL_DEV_ATTR_MAX_BLOCK_PER_GRID`
        MaxBlockPerGrid = sys::ACL_DEV_ATTR_MAX_BLOCK_PER_GRID,
        /// `ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK`
        MaxThreadsPerBlock = sys::ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK,
        /// `ACL_DEV_ATTR_MAX_BLOCK_DIM_X`
        MaxBlockDimX = sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_X,
        /// `ACL_DEV_ATTR_MAX_BLOCK_DIM_Y`
        MaxBlockDimY = sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_Y,
        /// `ACL_DEV_ATTR_MAX_BLOCK_DIM_Z`
        MaxBlockDimZ = sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_Z,
        /// `ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE`: device memory bytes.
        TotalGlobalMemSize = sys::ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
        /// `ACL_DEV_ATTR_L2_CACHE_SIZE`: L2 cache bytes.
        L2CacheSize = sys::ACL_DEV_ATTR_L2_CACHE_SIZE,
        /// `ACL_DEV_ATTR_SMP_ID`
        SmpId = sys::ACL_DEV_ATTR_SMP_ID,
        /// `ACL_DEV_ATTR_PHY_CHIP_ID`: the physical chip.
        PhyChipId = sys::ACL_DEV_ATTR_PHY_CHIP_ID,
        /// `ACL_DEV_ATTR_SUPER_POD_DEVICE_ID`
        SuperPodDeviceId = sys::ACL_DEV_ATTR_SUPER_POD_DEVICE_ID,
        /// `ACL_DEV_ATTR_SUPER_POD_SERVER_ID`
        SuperPodServerId = sys::ACL_DEV_ATTR_SUPER_POD_SERVER_ID,
        /// `ACL_DEV_ATTR_SUPER_POD_ID`
        SuperPodId = sys::ACL_DEV_ATTR_SUPER_POD_ID,
        /// `ACL_DEV_ATTR_CUST_OP_PRIVILEGE`
        CustOpPrivilege = sys::ACL_DEV_ATTR_CUST_OP_PRIVILEGE,
        /// `ACL_DEV_ATTR_MAINBOARD_ID`
        MainboardId = sys::ACL_DEV_ATTR_MAINBOARD_ID,
        /// `ACL_DEV_ATTR_HD_CONNECT_TYPE`
        HdConnectType = sys::ACL_DEV_ATTR_HD_CONNECT_TYPE,
        /// `ACL_DEV_ATTR_IS_VIRTUAL`: 1 for a virtual device.
        IsVirtual = sys::ACL_DEV_ATTR_IS_VIRTUAL,
        /// `ACL_DEV_ATTR_NPU_ARCH`: the NPU architecture number.
        NpuArch = sys::ACL_DEV_ATTR_NPU_ARCH,
    }
}

raw_enum! {
    /// A runtime feature of [`Device::supports`] (`aclrtDevFeatureType`).
    pub enum DeviceFeature: sys::aclrtDevFeatureType {
        /// `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV`: updating AI Core / vector tasks of
        /// captured models from the task scheduler.
        TaskUpdateAicAiv = sys::ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV,
        /// `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV`: memory-queue events across devices.
        MemqEventCrossDevice = sys::ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV,
    }
}

raw_enum! {
    /// A device's health ([`Device::status`], `aclrtDeviceStatus`).
    pub enum DeviceStatus: sys::aclrtDeviceStatus {
        /// `ACL_RT_DEVICE_STATUS_NORMAL`
        Normal = sys::ACL_RT_DEVICE_STATUS_NORMAL,
        /// `ACL_RT_DEVICE_STATUS_ABNORMAL`
        Abnormal = sys::ACL_RT_DEVICE_STATUS_ABNORMAL,
    }
}

raw_enum! {
    /// A kind of compute resource that can be limited (`aclrtDevResLimitType`).
    pub enum ResourceKind: sys::aclrtDevResLimitType {
        /// `ACL_RT_DEV_RES_CUBE_CORE`: cube cores.
        CubeCore = sys::ACL_RT_DEV_RES_CUBE_CORE,
        /// `ACL_RT_DEV_RES_VECTOR_CORE`: vector cores.
        VectorCore = sys::ACL_RT_DEV_RES_VECTOR_CORE,
    }
}

raw_enum! {
    /// The kind of a device error ([`ErrorVerbose::error_type`], `aclrtErrorType`).
    pub enum DeviceErrorType: sys::aclrtErrorType {
        /// `ACL_RT_NO_ERROR`: no error is recorded.
        NoError = sys::ACL_RT_NO_ERROR,
        /// `ACL_RT_ERROR_MEMORY`
        Memory = sys::ACL_RT_ERROR_MEMORY,
        /// `ACL_RT_ERROR_L2`
        L2 = sys::ACL_RT_ERROR_L2,
        /// `ACL_RT_ERROR_AICORE`
        AiCore = sys::ACL_RT_ERROR_AICORE,
        /// `ACL_RT_ERROR_LINK`
        Link = sys::ACL_RT_ERROR_LINK,
        /// `ACL_RT_ERROR_L3_PORT`
        L3Port = sys::ACL_RT_ERROR_L3_PORT,
        /// `ACL_RT_ERROR_OTHERS`
        Others = sys::ACL_RT_ERROR_OTHERS,
    }
}

raw_enum! {
    /// A hardware accelerator of a device (`aclrtHacType`), as [`Device::maps_host_memory`]
    /// asks about it.
    pub enum Accelerator: sys::aclrtHacType {
        /// `ACL_RT_HAC_TYPE_STARS`: the task scheduler.
        Stars = sys::ACL_RT_HAC_TYPE_STARS,
        /// `ACL_RT_HAC_TYPE_AICPU`: the AI CPU.
        Aicpu = sys::ACL_RT_HAC_TYPE_AICPU,
        /// `ACL_RT_HAC_TYPE_AIC`: the AI (cube) cores.
        Aic = sys::ACL_RT_HAC_TYPE_AIC,
        /// `ACL_RT_HAC_TYPE_AIV`: the vector cores.
        Aiv = sys::ACL_RT_HAC_TYPE_AIV,
        /// `ACL_RT_HAC_TYPE_PCIEDMA`: PCIe DMA.
        PcieDma = sys::ACL_RT_HAC_TYPE_PCIEDMA,
        /// `ACL_RT_HAC_TYPE_RDMA`: RDMA.
        Rdma = sys::ACL_RT_HAC_TYPE_RDMA,
        /// `ACL_RT_HAC_TYPE_SDMA`: system DMA.
        Sdma = sys::ACL_RT_HAC_TYPE_SDMA,
        /// `ACL_RT_HAC_TYPE_DVPP`: the digital vision pre-processing unit.
        Dvpp = sys::ACL_RT_HAC_TYPE_DVPP,
        /// `ACL_RT_HAC_TYPE_UDMA`: UB DMA.
        Udma = sys::ACL_RT_HAC_TYPE_UDMA,
        /// `ACL_RT_HAC_TYPE_CCU`: the collective communication unit.
        Ccu = sys::ACL_RT_HAC_TYPE_CCU,
    }
}

/// The 16-byte universally unique identifier of a device ([`Device::uuid`],
/// `aclrtDeviceGetUuid`): the same NPU has the same UUID in every process, whatever its id in
/// each. Displayed in the usual 8-4-4-4-12 hexadecimal form.
///
/// ```
/// use ascendcl::DeviceUuid;
/// let id = DeviceUuid::from_bytes([0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0, 1, 2, 3, 4, 5, 6, 7]);
/// assert_eq!(id.to_string(), "12345678-9abc-def0-0001-020304050607");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceUuid([u8; 16]);

impl DeviceUuid {
    /// The UUID of these bytes.
    pub const fn from_bytes(bytes: [u8; 16]) -> DeviceUuid {
        DeviceUuid(bytes)
    }

    /// The bytes, in the runtime's order.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for DeviceUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Utilisation percentages of a device ([`Device::utilization`],
/// `aclrtGetDeviceUtilizationRate`); `None` where the runtime could not measure it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utilization {
    /// Cube units, percent.
    pub cube: Option<u32>,
    /// Vector units, percent.
    pub vector: Option<u32>,
    /// AI CPU, percent.
    pub aicpu: Option<u32>,
    /// Memory, percent.
    pub memory: Option<u32>,
}

/// The runtime's detailed view of a device's last error ([`Device::error_verbose`],
/// `aclrtGetErrorVerbose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorVerbose {
    /// What failed; [`DeviceErrorType::NoError`] when nothing did.
    pub error_type: DeviceErrorType,
    /// Whether the runtime considers the error repairable (`tryRepair`).
    pub try_repair: bool,
    /// Whether the runtime recorded details of the error (`hasDetail`).
    pub has_detail: bool,
}

/// The stream priorities a device accepts ([`Device::stream_priority_range`]): `greatest` is
/// the highest priority (the smallest number), `least` the lowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorityRange {
    /// The lowest priority (the largest number).
    pub least: i32,
    /// The highest priority (the smallest number).
    pub greatest: i32,
}

impl PriorityRange {
    /// Whether `priority` lies in the range.
    pub fn contains(&self, priority: i32) -> bool {
        let (lo, hi) = if self.greatest <= self.least {
            (self.greatest, self.least)
        } else {
            (self.least, self.greatest)
        };
        (lo..=hi).contains(&priority)
    }
}

fn percent(v: i32) -> Option<u32> {
    u32::try_from(v).ok()
}

impl Device {
    fn id_u32(&self) -> u32 {
        // A device id is never negative (checked when the device was opened).
        self.id().unsigned_abs()
    }

    /// A capability of the device (`aclGetDeviceCapability`).
    pub fn capability(&self, what: DeviceCapability) -> Result<i64> {
        let mut v = 0i64;
        // SAFETY: a valid out-pointer; the other arguments are plain values.
        unsafe { raw::aclGetDeviceCapability(self.id_u32(), what.into(), &mut v) }?;
        Ok(v)
    }

    /// Whether the device supports a runtime feature (`aclrtGetDeviceCapability`).
    pub fn supports(&self, feature: DeviceFeature) -> Result<bool> {
        let mut v = 0i32;
        // SAFETY: a valid out-pointer; the other arguments are plain values.
        unsafe { raw::aclrtGetDeviceCapability(self.id(), feature.into(), &mut v) }?;
        Ok(v == sys::ACL_DEV_FEATURE_SUPPORT as i32)
    }

    /// An attribute of the device (`aclrtGetDeviceInfo`).
    pub fn attribute(&self, attr: DeviceAttr) -> Result<i64> {
        let mut v = 0i64;
        // SAFETY: a valid out-pointer; the other arguments are plain values.
        unsafe { raw::aclrtGetDeviceInfo(self.id_u32(), attr.into(), &mut v) }?;
        Ok(v)
    }

    /// The device's current utilisation (`aclrtGetDeviceUtilizationRate`).
    pub fn utilization(&self) -> Result<Utilization> {
        let mut u = sys::aclrtUtilizationInfo {
            cubeUtilization: -1,
            vectorUtilization: -1,
            aicpuUtilization: -1,
            memoryUtilization: -1,
            utilizationExtend: std::ptr::null_mut(),
        };
        // SAFETY: a valid out-pointer to a local struct whose extension pointer is NULL (no
        // extended information is asked for).
        unsafe { raw::aclrtGetDeviceUtilizationRate(self.id(), &mut u) }?;
        Ok(Utilization {
            cube: percent(u.cubeUtilization),
            vector: percent(u.vectorUtilization),
            aicpu: percent(u.aicpuUtilization),
            memory: percent(u.memoryUtilization),
        })
    }

    /// Whether the device is healthy (`aclrtQueryDeviceStatus`).
    pub fn status(&self) -> Result<DeviceStatus> {
        let mut s: sys::aclrtDeviceStatus = 0;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtQueryDeviceStatus(self.id(), &mut s) }?;
        DeviceStatus::try_from(s)
    }

    /// The runtime's detailed record of the device's last error (`aclrtGetErrorVerbose`).
    pub fn error_verbose(&self) -> Result<ErrorVerbose> {
        let mut e = sys::aclrtErrorInfo::default();
        // SAFETY: a valid out-pointer to a local, zero-initialised struct.
        unsafe { raw::aclrtGetErrorVerbose(self.id(), &mut e) }?;
        Ok(ErrorVerbose {
            error_type: DeviceErrorType::try_from(e.errorType)?,
            try_repair: e.tryRepair != 0,
            has_detail: e.hasDetail != 0,
        })
    }

    /// The stream priorities the device accepts (`aclrtDeviceGetStreamPriorityRange`, asked in
    /// the device's context).
    pub fn stream_priority_range(&self) -> Result<PriorityRange> {
        self.ensure_current()?;
        let (mut least, mut greatest) = (0i32, 0i32);
        // SAFETY: two valid out-pointers.
        unsafe { raw::aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest) }?;
        Ok(PriorityRange { least, greatest })
    }

    /// The device-wide limit on one kind of compute resource (`aclrtGetDeviceResLimit`): the
    /// hardware count unless [`Device::set_res_limit`] lowered it.
    pub fn res_limit(&self, kind: ResourceKind) -> Result<u32> {
        let mut v = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtGetDeviceResLimit(self.id(), kind.into(), &mut v) }?;
        Ok(v)
    }

    /// Limits the cores of one kind that later work on the device may use
    /// (`aclrtSetDeviceResLimit`). A value above the hardware count is refused by the runtime
    /// (`ACL_ERROR_RT_PARAM_INVALID`). The limit applies to the whole device, for every handle
    /// and thread, until [`Device::reset_res_limits`] or the device's reset; it changes where
    /// kernels run, never which memory they may touch.
    pub fn set_res_limit(&self, kind: ResourceKind, value: u32) -> Result<()> {
        // SAFETY: plain values; the device is open while `self` is.
        unsafe { raw::aclrtSetDeviceResLimit(self.id(), kind.into(), value) }
    }

    /// Restores the hardware counts of every resource kind (`aclrtResetDeviceResLimit`).
    pub fn reset_res_limits(&self) -> Result<()> {
        // SAFETY: a plain value; the device is open while `self` is.
        unsafe { raw::aclrtResetDeviceResLimit(self.id()) }
    }

    /// The limit that applies to work the calling thread launches on this device
    /// (`aclrtGetResInCurrentThread`, asked with the device's context current): the device's
    /// limit, or a stream's while the thread uses that stream's limits.
    pub fn thread_res_limit(&self, kind: ResourceKind) -> Result<u32> {
        self.ensure_current()?;
        let mut v = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtGetResInCurrentThread(kind.into(), &mut v) }?;
        Ok(v)
    }

    /// The device's UUID (`aclrtDeviceGetUuid`).
    pub fn uuid(&self) -> Result<DeviceUuid> {
        let mut u = sys::aclrtUuid::default();
        // SAFETY: a valid out-pointer to a local struct.
        unsafe { raw::aclrtDeviceGetUuid(self.id(), &mut u) }?;
        Ok(DeviceUuid(u.bytes.map(|b| b as u8)))
    }

    /// Whether `accelerator` of this device can access host memory registered with the runtime
    /// ([`HostRegistration`](crate::HostRegistration), `aclrtHostMemMapCapabilities`).
    pub fn maps_host_memory(&self, accelerator: Accelerator) -> Result<bool> {
        let mut cap: sys::aclrtHostMemMapCapability = sys::ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
        // SAFETY: a valid out-pointer; the other arguments are plain values.
        unsafe { raw::aclrtHostMemMapCapabilities(self.id_u32(), accelerator.into(), &mut cap) }?;
        Ok(cap == sys::ACL_RT_HOST_MEM_MAP_SUPPORTED)
    }
}
