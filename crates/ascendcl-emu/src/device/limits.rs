//! Resource limits: the cube and vector cores a device (process-wide) or a stream may use
//! (`aclrt*ResLimit`), and the stream whose limits the calling thread uses. The emulator runs no
//! kernels, so the limits are recorded and reported, not enforced.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::lock::{Mutex, Rank};
use crate::device::soc;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Limit types: `ACL_RT_DEV_RES_CUBE_CORE` 0, `ACL_RT_DEV_RES_VECTOR_CORE` 1.
const TYPES: u32 = 2;

#[derive(Default)]
struct Limits {
    devices: HashMap<i32, [Option<u32>; 2]>,
    streams: HashMap<usize, [Option<u32>; 2]>,
}

static LIMITS: LazyLock<Mutex<Limits>> = LazyLock::new(|| Mutex::ranked(Rank::Limits));

thread_local! {
    /// The stream whose limits the calling thread uses (`aclrtUseStreamResInCurrentThread`).
    static USED: Cell<usize> = const { Cell::new(0) };
}

/// Checks a limit type (107000 beyond the two).
pub(crate) fn check_type(t: u32) -> R {
    if t >= TYPES {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "type {t} is not ACL_RT_DEV_RES_CUBE_CORE (0) or ACL_RT_DEV_RES_VECTOR_CORE (1)"
            ),
        );
    }
    Ok(())
}

/// The hardware count of a limit type.
pub(crate) fn hardware(t: u32) -> u32 {
    let s = soc::current();
    if t == 0 { s.ai_core } else { s.vector_core }
}

/// Checks a limit value against the hardware (107000 above it).
pub(crate) fn check_value(t: u32, value: u32) -> R {
    let hw = hardware(t);
    if value > hw {
        return fail(
            RT_PARAM_INVALID,
            format!("value {value} exceeds the device's {hw} {} cores", name(t)),
        );
    }
    Ok(())
}

fn name(t: u32) -> &'static str {
    if t == 0 { "cube" } else { "vector" }
}

/// The device's limit of type `t` (the hardware count when none is set).
pub(crate) fn device(dev: i32, t: u32) -> u32 {
    LIMITS
        .lock()
        .devices
        .get(&dev)
        .and_then(|l| l[t as usize])
        .unwrap_or_else(|| hardware(t))
}

/// Sets a device limit (process-wide; the last call wins).
pub(crate) fn set_device(dev: i32, t: u32, value: u32) {
    HOOKS.ensure();
    LIMITS.lock().devices.entry(dev).or_default()[t as usize] = Some(value);
}

/// Restores a device's hardware counts.
pub(crate) fn reset_device(dev: i32) {
    LIMITS.lock().devices.remove(&dev);
}

/// The stream's own limit of type `t`, if set.
pub(crate) fn stream_own(stream: usize, t: u32) -> Option<u32> {
    LIMITS
        .lock()
        .streams
        .get(&stream)
        .and_then(|l| l[t as usize])
}

/// Sets a stream limit.
pub(crate) fn set_stream(stream: usize, t: u32, value: u32) {
    HOOKS.ensure();
    LIMITS.lock().streams.entry(stream).or_default()[t as usize] = Some(value);
}

/// Forgets a stream's limits (reset, or the stream destroyed).
pub(crate) fn reset_stream(stream: usize) {
    LIMITS.lock().streams.remove(&stream);
}

/// Makes the calling thread use `stream`'s limits (0: none).
pub(crate) fn use_stream(stream: usize) {
    USED.with(|u| u.set(stream));
}

/// The stream whose limits the calling thread uses (0: none).
pub(crate) fn used_stream() -> usize {
    USED.with(Cell::get)
}

/// Forgets every limit (`aclFinalize`).
pub(crate) fn clear() {
    let mut l = LIMITS.lock();
    l.devices.clear();
    l.streams.clear();
}

/// A destroyed stream's limits go with it; finalize forgets them all.
static HOOKS: Registration = Registration::new(Hooks {
    name: "resource limits",
    stream_destroyed: Some(reset_stream),
    finalized: Some(|_| clear()),
    ..Hooks::NONE
});
