//! Fault injection: make the n-th (or every) call of an API fail with its documented code.

use crate::base::error::{
    RT_INTERNAL_ERROR, RT_MEMORY_ALLOCATION, RT_NO_EVENT_RESOURCE, RT_NO_STREAM_RESOURCE,
};
use crate::base::lock::{Mutex, Rank};
use ascendcl_sys::aclError;
use std::collections::HashMap;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Which calls of an API fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultSpec {
    /// Only the n-th call (counted from 1, from when the fault was set) fails.
    Nth(u64),
    /// Every call fails.
    Every,
}

#[derive(Debug)]
struct Fault {
    spec: FaultSpec,
    code: aclError,
    calls: u64,
}

static ANY: AtomicBool = AtomicBool::new(false);
static ENV: Once = Once::new();
static TABLE: Mutex<Option<HashMap<String, Fault>>> = Mutex::new(Rank::Faults, None);

/// The code an injected fault of `api` returns unless another is given: out-of-memory
/// (207001) for the allocation functions, 207008 for stream creation, 207007 for event creation,
/// ACL_ERROR_RT_INTERNAL_ERROR (507000) for everything else.
pub fn default_code(api: &str) -> aclError {
    match api {
        "aclrtMalloc" | "aclrtMallocAlign32" | "aclrtMallocCached" | "aclrtMallocHost"
        | "aclrtHostRegister" => RT_MEMORY_ALLOCATION,
        "aclrtCreateStream" | "aclrtCreateStreamWithConfig" => RT_NO_STREAM_RESOURCE,
        "aclrtCreateEvent" | "aclrtCreateEventWithFlag" | "aclrtCreateEventExWithFlag" => {
            RT_NO_EVENT_RESOURCE
        }
        _ => RT_INTERNAL_ERROR,
    }
}

fn load_env() {
    ENV.call_once(|| {
        if let Ok(v) = std::env::var(crate::base::config::ENV_FAULTS)
            && let Err(e) = parse_and_insert(&v)
        {
            eprintln!(
                "ascendcl-emu: ignoring part of {}: {e}",
                crate::base::config::ENV_FAULTS
            );
        }
    });
}

fn insert(api: &str, spec: FaultSpec, code: aclError) {
    let mut t = TABLE.lock();
    t.get_or_insert_with(HashMap::new).insert(
        api.to_string(),
        Fault {
            spec,
            code,
            calls: 0,
        },
    );
    ANY.store(true, Ordering::Release);
}

fn parse_and_insert(list: &str) -> Result<(), String> {
    let mut problems = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match parse_item(item) {
            Ok((api, spec, code)) => insert(&api, spec, code),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Makes calls of `api` (a C function name such as `aclrtMalloc`) fail as `spec` says, with the
/// API's default code ([`default_code`]). Replaces an earlier fault of the same API and restarts
/// its call count.
pub fn inject_fault(api: &str, spec: FaultSpec) {
    inject_fault_with_code(api, spec, default_code(api));
}

/// [`inject_fault`] with an explicit return code (an `AclError` constant or a raw `aclError`).
pub fn inject_fault_with_code(api: &str, spec: FaultSpec, code: impl Into<aclError>) {
    load_env();
    insert(api, spec, code.into());
}

/// Removes every injected fault (including those read from `ASCENDCL_EMU_FAULTS`).
pub fn clear_faults() {
    load_env();
    *TABLE.lock() = None;
    ANY.store(false, Ordering::Release);
}

/// Parses and installs a comma-separated list of faults in the `ASCENDCL_EMU_FAULTS` syntax:
/// `api:N` (the N-th call fails), `api:*` (every call fails), optionally `=CODE` to choose the
/// code (`aclrtMemcpy:*=507053`). Valid entries are installed even when others are rejected.
pub fn set_faults_from_str(list: &str) -> Result<(), String> {
    load_env();
    parse_and_insert(list)
}

fn parse_item(item: &str) -> Result<(String, FaultSpec, aclError), String> {
    let (api, rest) = item
        .split_once(':')
        .ok_or_else(|| format!("{item:?} is not api:N or api:*"))?;
    let api = api.trim();
    if api.is_empty() || !api.starts_with("acl") {
        return Err(format!(
            "{item:?}: {api:?} is not an AscendCL function name"
        ));
    }
    let (spec, code) = match rest.split_once('=') {
        Some((s, c)) => (
            s.trim(),
            Some(
                c.trim()
                    .parse::<aclError>()
                    .map_err(|_| format!("{item:?}: {c:?} is not an error code"))?,
            ),
        ),
        None => (rest.trim(), None),
    };
    let spec = if spec == "*" {
        FaultSpec::Every
    } else {
        match spec.parse::<u64>() {
            Ok(n) if n > 0 => FaultSpec::Nth(n),
            _ => {
                return Err(format!(
                    "{item:?}: {spec:?} is not a call number (1, 2, ...) or *"
                ));
            }
        }
    };
    Ok((
        api.to_string(),
        spec,
        code.unwrap_or_else(|| default_code(api)),
    ))
}

/// Counts a call of `api` and returns the code to fail with when a fault fires.
#[inline]
pub(crate) fn check(api: &str) -> Option<aclError> {
    load_env();
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    check_slow(api)
}

#[cold]
fn check_slow(api: &str) -> Option<aclError> {
    let mut t = TABLE.lock();
    let f = t.as_mut()?.get_mut(api)?;
    f.calls += 1;
    let fire = match f.spec {
        FaultSpec::Every => true,
        FaultSpec::Nth(n) => f.calls == n,
    };
    fire.then_some(f.code)
}
