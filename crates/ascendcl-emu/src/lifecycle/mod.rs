//! The runtime's life: `aclInit` (the configuration file checked, the init callbacks called) and
//! `aclFinalize` (the finalize callbacks, then every device released and every concept's
//! finalize hook run), counted references for `aclFinalizeReference`.

pub(crate) mod callbacks;
pub(crate) mod json;

use crate::base::error::*;
use crate::base::hooks;
use crate::base::leak;
use crate::base::lock::{Mutex, Rank};

/// Whether the runtime is initialised, and its references.
#[derive(Debug)]
struct Life {
    initialized: bool,
    refs: u64,
}

/// `aclInit` and `aclFinalize` run one at a time, their callbacks included (which run without
/// any other lock of the runtime, so that they may call the runtime; not aclInit or aclFinalize,
/// which would wait for themselves).
static LIFE: Mutex<Life> = Mutex::new(
    Rank::Lifecycle,
    Life {
        initialized: false,
        refs: 0,
    },
);

/// `aclInit`.
pub(crate) fn init(config_path: Option<&str>) -> R {
    crate::profiling::env_start();
    let mut life = LIFE.lock();
    if life.initialized {
        life.refs += 1;
        return fail(
            REPEAT_INITIALIZE,
            "aclInit was already called (the repeat is counted for aclFinalizeReference)",
        );
    }
    let mut config = String::new();
    let file = config_path.filter(|p| !p.is_empty());
    if let Some(p) = file {
        config = std::fs::read_to_string(p).map_err(|e| Fail {
            code: INVALID_FILE,
            msg: format!("cannot read the configuration file {p:?}: {e}"),
        })?;
        if !config.trim().is_empty() && !json::is_valid(&config) {
            return fail(
                PARSE_FILE,
                format!("the configuration file {p:?} is not valid JSON"),
            );
        }
    }
    callbacks::on_init(&config, file.is_some())?;
    life.initialized = true;
    life.refs = 1;
    Ok(())
}

/// `aclFinalize` (`reference` false) or `aclFinalizeReference`; returns the remaining count.
pub(crate) fn finalize(reference: bool) -> R<u64> {
    let mut life = LIFE.lock();
    if !life.initialized {
        return fail(
            REPEAT_FINALIZE,
            "the runtime is not initialised (aclFinalize was already called, or aclInit never was)",
        );
    }
    if reference && life.refs > 1 {
        life.refs -= 1;
        return Ok(life.refs);
    }
    // A failing finalize callback fails the call and the runtime stays initialised.
    callbacks::on_finalize()?;
    life.initialized = false;
    life.refs = 0;
    let mut total = crate::device::release_all();
    hooks::finalized(&mut total);
    leak::keep(total, "aclFinalize");
    Ok(0)
}
