//! [`CommConfig`]: a checked communicator configuration (`HcclCommConfig`).

use crate::error::{Error, Result};
use hccl_sys as sys;
use std::time::Duration;

/// A communicator configuration for the `…Config` initialisers, built by
/// [`CommConfig::builder`]. A value set here beats the matching environment variable.
#[derive(Clone)]
pub struct CommConfig {
    raw: Box<sys::HcclCommConfig>,
}

impl std::fmt::Debug for CommConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommConfig")
            .field("buffer_size_mb", &self.raw.hcclBufferSize)
            .field("deterministic", &self.raw.hcclDeterministic)
            .field("exec_timeout_s", &self.raw.hcclExecTimeOut)
            .finish_non_exhaustive()
    }
}

impl CommConfig {
    /// A builder with nothing set.
    pub fn builder() -> CommConfigBuilder {
        CommConfigBuilder::default()
    }

    /// How many leading fields of `HcclCommConfig` the library reads
    /// (`HcclGetCommConfigCapability`): a field numbered `k` in `HcclCommConfigCapability`
    /// (`HCCL_COMM_CONFIG_BUFFER_SIZE` = 0, …) is honoured when this is greater than `k`.
    pub fn capability() -> Result<u32> {
        let api = crate::backend::api()?;
        // SAFETY: no arguments.
        Ok(unsafe { (api.HcclGetCommConfigCapability)() })
    }

    pub(crate) fn as_raw(&self) -> *const sys::HcclCommConfig {
        &*self.raw
    }
}

/// Collects the settings of a [`CommConfig`]; [`CommConfigBuilder::build`] checks them.
#[derive(Debug, Clone, Default)]
pub struct CommConfigBuilder {
    name: Option<String>,
    buffer_size_mb: Option<u32>,
    deterministic: Option<bool>,
    exec_timeout: Option<Duration>,
}

impl CommConfigBuilder {
    /// The communicator's name (at most 127 bytes, no NUL; unique per device).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The staging buffer per communicator in MiB (at least 1; `HCCL_BUFFSIZE`).
    pub fn buffer_size_mb(mut self, mb: u32) -> Self {
        self.buffer_size_mb = Some(mb);
        self
    }

    /// A fixed reduction order, for bit-identical results run to run (`HCCL_DETERMINISTIC`).
    pub fn deterministic(mut self, on: bool) -> Self {
        self.deterministic = Some(on);
        self
    }

    /// How long a device waits inside one collective before failing it (`HCCL_EXEC_TIMEOUT`),
    /// in whole seconds, 1 to `i32::MAX`.
    pub fn exec_timeout(mut self, timeout: Duration) -> Self {
        self.exec_timeout = Some(timeout);
        self
    }

    /// Checks the settings and fills an `HcclCommConfig` (`HcclCommConfigInit`, then the set
    /// fields).
    pub fn build(self) -> Result<CommConfig> {
        const API: &str = "CommConfig::build";
        let mut raw = Box::new(sys::comm_config());
        if let Some(name) = &self.name {
            let max = sys::COMM_NAME_MAX_LENGTH as usize - 1;
            if name.is_empty() || name.len() > max {
                return Err(Error::argument(
                    API,
                    format!(
                        "a communicator name is 1 to {max} bytes, not {}",
                        name.len()
                    ),
                ));
            }
            if name.contains('\0') {
                return Err(Error::argument(
                    API,
                    "a communicator name cannot contain NUL",
                ));
            }
            raw.hcclCommName = [0; sys::COMM_NAME_MAX_LENGTH as usize];
            for (d, s) in raw.hcclCommName.iter_mut().zip(name.bytes()) {
                *d = s as std::ffi::c_char;
            }
        }
        if let Some(mb) = self.buffer_size_mb {
            if mb == 0 {
                return Err(Error::argument(API, "the buffer size is at least 1 MiB"));
            }
            raw.hcclBufferSize = mb;
        }
        if let Some(on) = self.deterministic {
            raw.hcclDeterministic = u32::from(on);
        }
        if let Some(t) = self.exec_timeout {
            let secs = t.as_secs();
            if secs == 0 || secs > i32::MAX as u64 {
                return Err(Error::argument(
                    API,
                    format!("the execution timeout is 1 s to {} s, not {t:?}", i32::MAX),
                ));
            }
            raw.hcclExecTimeOut = secs as i32;
        }
        Ok(CommConfig { raw })
    }
}
