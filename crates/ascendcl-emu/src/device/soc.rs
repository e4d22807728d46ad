//! The SoCs the emulator can claim to be, with the figures the runtime reports for them (core
//! counts and L2 size from the SoCs' published specifications) and the runtime features their
//! product documentation marks as supported.

use crate::base::config;
use crate::base::lock::{Mutex, Rank};
use std::ffi::CString;
/// The figures of one SoC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Soc {
    /// The name `aclrtGetSocName` returns.
    pub name: &'static str,
    /// AI cores (= cube cores on these SoCs).
    pub ai_core: u32,
    /// Vector cores.
    pub vector_core: u32,
    /// AI CPU cores.
    pub aicpu: u32,
    /// L2 cache in bytes.
    pub l2: u64,
    /// `ACL_DEV_ATTR_NPU_ARCH`.
    pub npu_arch: i64,
    /// The runtime features that differ between the SoCs of the table.
    pub features: Features,
}

/// Features the product documentation marks per SoC class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Features {
    /// Model runtime instances: capture, built models, labels (Atlas A2/A3; not IPV350).
    pub models: bool,
    /// `aclrtActiveStream` and `aclrtSwitchStream` (Atlas A2; not A3, not IPV350).
    pub stream_switch: bool,
    /// `aclrtSubscribeHostFunc` / `aclrtProcessHostFunc` / `aclrtUnSubscribeHostFunc` (IPV350
    /// only).
    pub host_func_subscription: bool,
    /// `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV`: the task scheduler updates AI core and
    /// vector tasks of a model (the task updates of captured models); the runtime asks the
    /// driver, and the cross-version sample's README shows 1 on an Atlas A2 part.
    pub task_update: bool,
}

/// Atlas A2 (910B).
const A2: Features = Features {
    models: true,
    stream_switch: true,
    host_func_subscription: false,
    task_update: true,
};

/// Atlas A3 (910_93xx): the documentation marks stream activation and switching unsupported.
const A3: Features = Features {
    stream_switch: false,
    ..A2
};

const MIB: u64 = 1 << 20;

const fn a2(name: &'static str, ai_core: u32, l2_mib: u64) -> Soc {
    Soc {
        name,
        ai_core,
        vector_core: ai_core * 2,
        aicpu: 6,
        l2: l2_mib * MIB,
        npu_arch: 2201,
        features: A2,
    }
}

const fn a3(name: &'static str, ai_core: u32, l2_mib: u64) -> Soc {
    Soc {
        features: A3,
        ..a2(name, ai_core, l2_mib)
    }
}

/// The IPV350 vision SoC class: NPU architecture 3505 is documented; core counts and L2 size
/// are not published, so the emulator reports a single AI core (which is also its vector core),
/// one AI CPU and no L2. It is the one class whose runtime offers host-function subscription,
/// and it has no model runtime instances.
const IPV350: Soc = Soc {
    name: "IPV350",
    ai_core: 1,
    vector_core: 1,
    aicpu: 1,
    l2: 0,
    npu_arch: 3505,
    features: Features {
        models: false,
        stream_switch: false,
        host_func_subscription: true,
        task_update: false,
    },
};

/// The table: Atlas A2 (910B) and A3 (910_93xx) SoCs, and the IPV350 class.
pub(crate) const SOCS: &[Soc] = &[
    a2("Ascend910B1", 24, 192),
    a2("Ascend910B2", 24, 192),
    a2("Ascend910B2C", 24, 192),
    a2("Ascend910B3", 20, 192),
    a2("Ascend910B4", 20, 96),
    a3("Ascend910_9382", 24, 192),
    a3("Ascend910_9392", 24, 192),
    a3("Ascend910_9362", 20, 168),
    a3("Ascend910_9372", 20, 192),
    IPV350,
];

/// The NPU architecture of every SoC the runtime's platform configuration describes (its
/// `[version] NpuArch` entry per SoC file), for `aclrtCheckArchCompatibility`.
const NPU_ARCH: &[(&str, i64)] = &[
    ("Ascend031", 3004),
    ("Ascend035", 3505),
    ("Ascend035A", 3505),
    ("Ascend035B", 3505),
    ("Ascend310B1", 3002),
    ("Ascend310B2", 3002),
    ("Ascend310B3", 3002),
    ("Ascend310B4", 3002),
    ("Ascend310P1", 2002),
    ("Ascend310P3", 2002),
    ("Ascend310P5", 2002),
    ("Ascend310P7", 2002),
    ("Ascend910A", 1001),
    ("Ascend910B", 1001),
    ("Ascend910PremiumA", 1001),
    ("Ascend910ProA", 1001),
    ("Ascend910ProB", 1001),
    ("Ascend910B1", 2201),
    ("Ascend910B2", 2201),
    ("Ascend910B2C", 2201),
    ("Ascend910B3", 2201),
    ("Ascend910B4", 2201),
    ("Ascend910B4-1", 2201),
    ("Ascend910_9362", 2201),
    ("Ascend910_9363", 2201),
    ("Ascend910_9372", 2201),
    ("Ascend910_9381", 2201),
    ("Ascend910_9382", 2201),
    ("Ascend910_9391", 2201),
    ("Ascend910_9392", 2201),
    ("Ascend350_354f", 3510),
    ("Ascend350_355e", 3510),
];

/// The NPU architecture of a SoC named as the runtime's platform configuration names it (the
/// Ascend 950PR/DT parts by their `Ascend950PR_` / `Ascend950DT_` prefix, all 3510), or of one
/// of the emulator's own SoCs; `None` for any other name.
pub(crate) fn npu_arch_of(name: &str) -> Option<i64> {
    if let Some((_, a)) = NPU_ARCH.iter().find(|(n, _)| *n == name) {
        return Some(*a);
    }
    if let Some(model) = name
        .strip_prefix("Ascend950PR_")
        .or_else(|| name.strip_prefix("Ascend950DT_"))
        && !model.is_empty()
    {
        return Some(3510);
    }
    SOCS.iter().find(|s| s.name == name).map(|s| s.npu_arch)
}

/// The figures of the configured SoC; a name outside the table reports the Ascend910B2's.
pub(crate) fn current() -> Soc {
    crate::base::config::with(|c| {
        SOCS.iter()
            .copied()
            .find(|s| s.name.eq_ignore_ascii_case(&c.soc))
            .unwrap_or(SOCS[1])
    })
}

/// Fails with 207000, naming the configured SoC, unless it has the feature `has` selects.
pub(crate) fn require(has: impl Fn(&Features) -> bool, what: &str) -> crate::base::error::R {
    let s = current();
    if has(&s.features) {
        return Ok(());
    }
    let name = crate::base::config::with(|c| c.soc.clone());
    crate::base::error::fail(
        crate::base::error::RT_FEATURE_NOT_SUPPORT,
        format!(
            "{what} is not supported on {name} (the emulated SoC, ASCENDCL_EMU_SOC; its runtime \
             answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT)"
        ),
    )
}

/// The configured SoC name as a C string that lives as long as the process (`aclrtGetSocName`):
/// each name handed out is kept, so a configuration changed later does not free it.
pub(crate) fn name_ptr() -> *const std::ffi::c_char {
    static NAMES: Mutex<Vec<CString>> = Mutex::new(Rank::SocNames, Vec::new());
    let name = config::with(|c| c.soc.clone());
    let mut v = NAMES.lock();
    if let Some(c) = v.iter().find(|c| c.to_bytes() == name.as_bytes()) {
        return c.as_ptr();
    }
    let c = CString::new(name).unwrap_or_default();
    let p = c.as_ptr();
    v.push(c);
    p
}
