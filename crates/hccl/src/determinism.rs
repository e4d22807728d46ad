//! [`Determinism`]: the reduction-order setting, process-wide (`HcclSetConfig` /
//! `HcclGetConfig`) and per communicator (`HcclSetCommConfig` / `HcclGetCommConfig`).

use crate::backend;
use crate::comm::Comm;
use crate::error::{Error, Result, check};
use hccl_sys as sys;

/// Whether reductions follow a fixed order, so that a run gives bit-identical results to the
/// last (`HCCL_DETERMINISTIC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Determinism {
    /// The library picks the fastest order (`0`, the default).
    Off,
    /// A fixed order (`1`).
    On,
    /// A fixed order also across algorithms (`2`, Atlas A2 only; other chips refuse it with
    /// [`ResultCode::NotSupport`](crate::ResultCode::NotSupport)).
    Strict,
}

impl Determinism {
    fn raw(self) -> i32 {
        match self {
            Determinism::Off => 0,
            Determinism::On => 1,
            Determinism::Strict => 2,
        }
    }

    fn from_raw(api: &'static str, v: i32) -> Result<Determinism> {
        match v {
            0 => Ok(Determinism::Off),
            1 => Ok(Determinism::On),
            2 => Ok(Determinism::Strict),
            v => Err(Error::Backend(format!(
                "{api} reported HCCL_DETERMINISTIC = {v}, which is none of 0, 1 and 2"
            ))),
        }
    }
}

/// Sets the determinism of the process (`HcclSetConfig(HCCL_DETERMINISTIC, …)`): it applies to
/// existing communicators too. HCCL ignores it (and succeeds) when the `HCCL_DETERMINISTIC`
/// environment variable is set.
pub fn set_determinism(d: Determinism) -> Result<()> {
    let api = backend::api()?;
    // SAFETY: plain values.
    check("HcclSetConfig", unsafe {
        (api.HcclSetConfig)(
            sys::HCCL_DETERMINISTIC,
            sys::HcclConfigValue { value: d.raw() },
        )
    })
}

/// The determinism of the process (`HcclGetConfig(HCCL_DETERMINISTIC, …)`).
pub fn determinism() -> Result<Determinism> {
    const API: &str = "HcclGetConfig";
    let api = backend::api()?;
    let mut v = sys::HcclConfigValue { value: 0 };
    // SAFETY: `v` is valid for the write.
    check(API, unsafe {
        (api.HcclGetConfig)(sys::HCCL_DETERMINISTIC, &mut v)
    })?;
    // SAFETY: the union's one field is an i32, written above (or left 0).
    Determinism::from_raw(API, unsafe { v.value })
}

impl Comm {
    /// Sets this communicator's determinism (`HcclSetCommConfig(…, HCCL_DETERMINISTIC, …)`);
    /// a function some open builds of the library lack (it then fails with
    /// [`ResultCode::NotSupport`](crate::ResultCode::NotSupport)).
    pub fn set_determinism(&self, d: Determinism) -> Result<()> {
        let api = backend::api()?;
        self.device().make_current()?;
        // SAFETY: live communicator, plain values.
        check("HcclSetCommConfig", unsafe {
            (api.HcclSetCommConfig)(
                self.as_raw(),
                sys::HCCL_DETERMINISTIC,
                sys::HcclConfigValue { value: d.raw() },
            )
        })
    }

    /// This communicator's determinism (`HcclGetCommConfig(…, HCCL_DETERMINISTIC, …)`).
    pub fn determinism(&self) -> Result<Determinism> {
        const API: &str = "HcclGetCommConfig";
        let api = backend::api()?;
        self.device().make_current()?;
        let mut v = sys::HcclConfigValue { value: 0 };
        // SAFETY: live communicator; `v` is valid for the write.
        check(API, unsafe {
            (api.HcclGetCommConfig)(self.as_raw(), sys::HCCL_DETERMINISTIC, &mut v)
        })?;
        // SAFETY: the union's one field is an i32, written above (or left 0).
        Determinism::from_raw(API, unsafe { v.value })
    }
}
