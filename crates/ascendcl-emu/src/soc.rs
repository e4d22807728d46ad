//! The SoCs the emulator can claim to be, with the figures the runtime reports for them (core
//! counts and L2 size from the SoCs' published specifications).

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
}

const MIB: u64 = 1 << 20;

const fn a2(name: &'static str, ai_core: u32, l2_mib: u64) -> Soc {
    Soc {
        name,
        ai_core,
        vector_core: ai_core * 2,
        aicpu: 6,
        l2: l2_mib * MIB,
        npu_arch: 2201,
    }
}

/// The table: Atlas A2 (910B) and A3 (910_93xx) SoCs.
pub(crate) const SOCS: &[Soc] = &[
    a2("Ascend910B1", 24, 192),
    a2("Ascend910B2", 24, 192),
    a2("Ascend910B2C", 24, 192),
    a2("Ascend910B3", 20, 192),
    a2("Ascend910B4", 20, 96),
    a2("Ascend910_9382", 24, 192),
    a2("Ascend910_9392", 24, 192),
    a2("Ascend910_9362", 20, 168),
    a2("Ascend910_9372", 20, 192),
];

/// The figures of the configured SoC; a name outside the table reports the Ascend910B2's.
pub(crate) fn current() -> Soc {
    crate::config::with(|c| {
        SOCS.iter()
            .copied()
            .find(|s| s.name.eq_ignore_ascii_case(&c.soc))
            .unwrap_or(SOCS[1])
    })
}
