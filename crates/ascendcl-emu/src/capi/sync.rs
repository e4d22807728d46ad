//! Memory-semantic synchronisation (`aclrtValueWrite` / `aclrtValueWait`) and notifies.

use super::*;
use crate::memory;
use crate::sync::notify;
use crate::sync::work;
use std::time::Duration;

/// A stream argument checked early (a non-NULL handle, 107017) and resolved late (NULL: the
/// current context's default stream, which needs a context), then checked to belong to the
/// current context (107003).
struct StreamArg(Option<Arc<crate::engine::stream::Stream>>);

impl StreamArg {
    fn early(stream: aclrtStream) -> R<StreamArg> {
        let h = handle(stream);
        Ok(StreamArg(if h == 0 {
            None
        } else {
            Some(crate::stream::get(h)?)
        }))
    }

    fn late(self) -> R<Arc<crate::engine::stream::Stream>> {
        crate::device::context::current_ids()?;
        let s = match self.0 {
            Some(s) => s,
            None => crate::stream::get(0)?,
        };
        crate::stream::check_context(&s)?;
        Ok(s)
    }
}

/// The checks shared by `aclrtValueWrite` and `aclrtValueWait`, in the runtime's order; the
/// validated word and the stream.
fn value_args(
    dev_addr: *mut c_void,
    flag_ok: bool,
    flag: u32,
    stream: aclrtStream,
) -> R<(memory::Side, Arc<crate::engine::stream::Stream>)> {
    if dev_addr.is_null() {
        return fail(INVALID_PARAM, "devAddr is NULL");
    }
    let early = StreamArg::early(stream)?;
    if !flag_ok {
        return fail(RT_PARAM_INVALID, format!("flag {flag} is not valid here"));
    }
    let side = memory::read().check("devAddr", dev_addr as usize, 8)?;
    if !matches!(side.loc, Loc::Device(_)) {
        return fail(
            RT_PARAM_INVALID,
            format!("devAddr {dev_addr:p} is not device memory (the word must be on the device)"),
        );
    }
    Ok((side, early.late()?))
}

acl! {
    /// `aclrtValueWrite`: a stream task that stores the 64-bit `value` at `devAddr` (device
    /// memory); `flag` must be 0.
    fn aclrtValueWrite(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) {
        let (side, s) = value_args(devAddr, flag == 0, flag, stream)?;
        s.enqueue(work::ValueWrite { addr: devAddr as usize, value, side })
    }
}

acl! {
    /// `aclrtValueWait`: a stream task that waits until the 64-bit word at `devAddr` meets the
    /// condition `flag` (`ACL_STREAM_WAIT_VALUE_GEQ` 0, `EQ` 1, `AND` 2, `NOR` 3) against `value`.
    /// Only the stream waits; writes from other streams, `aclrtValueWrite`, copies and memsets
    /// satisfy it. It has no timeout of its own.
    fn aclrtValueWait(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) {
        let (side, s) = value_args(devAddr, flag < 4, flag, stream)?;
        s.enqueue(work::ValueWait { addr: devAddr as usize, value, flag, side })
    }
}

acl! {
    /// `aclrtCreateNotify`: a notify on the current device; `flag` `ACL_NOTIFY_DEFAULT` (0) or
    /// `ACL_NOTIFY_DEVICE_USE_ONLY` (1); 207009 beyond 8192 per device.
    fn aclrtCreateNotify(notify: *mut aclrtNotify, flag: u64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(notify, "notify") }?;
        if flag > 1 {
            return fail(RT_PARAM_INVALID, format!("flag {flag:#x} is not ACL_NOTIFY_DEFAULT (0) or ACL_NOTIFY_DEVICE_USE_ONLY (1)"));
        }
        let (dev, _) = crate::device::context::current_ids()?;
        out.set(as_ptr(notify::create(dev)?));
        Ok(())
    }
}

fn notify_arg(n: aclrtNotify) -> R<Arc<notify::Notify>> {
    if n.is_null() {
        return fail(INVALID_PARAM, "notify is NULL");
    }
    notify::get(handle(n))
}

acl! {
    /// `aclrtDestroyNotify`: destroys the notify at once (tasks in flight are not waited for).
    fn aclrtDestroyNotify(notify: aclrtNotify) {
        let n = notify_arg(notify)?;
        crate::device::context::current_ids()?;
        notify::destroy(n.handle)
    }
}

acl! {
    /// `aclrtRecordNotify`: a stream task that sets the notify.
    fn aclrtRecordNotify(notify: aclrtNotify, stream: aclrtStream) {
        let n = notify_arg(notify)?;
        let s = StreamArg::early(stream)?.late()?;
        s.enqueue(work::NotifyRecord(n))
    }
}

acl! {
    /// `aclrtWaitAndResetNotify`: a stream task that waits for the notify to be set and resets
    /// it (one record satisfies one wait). `timeout` in seconds, 0 (or `u32::MAX`) waits forever;
    /// on expiry the task fails and the next synchronisation reports 107020. An imported notify
    /// can only be recorded (107000).
    fn aclrtWaitAndResetNotify(notify: aclrtNotify, stream: aclrtStream, timeout: u32) {
        let n = notify_arg(notify)?;
        let s = StreamArg::early(stream)?.late()?;
        if n.imported {
            return fail(RT_PARAM_INVALID, format!("notify {:#x} was imported from another process; only its creator waits on it", n.handle));
        }
        let t = match timeout {
            0 | u32::MAX => None,
            secs => Some(Duration::from_secs(u64::from(secs))),
        };
        s.enqueue(work::NotifyWait(n, t))
    }
}

acl! {
    /// `aclrtGetNotifyId`: the notify's id.
    fn aclrtGetNotifyId(notify: aclrtNotify, notifyId: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(notifyId, "notifyId") }?;
        out.set(notify_arg(notify)?.id);
        Ok(())
    }
}

acl! {
    /// `aclrtNotifyBatchReset`: resets each notify of the array, stopping at the first bad one.
    fn aclrtNotifyBatchReset(notifies: *mut aclrtNotify, num: usize) {
        if notifies.is_null() {
            return fail(INVALID_PARAM, "notifies is NULL");
        }
        if num == 0 {
            return fail(RT_PARAM_INVALID, "num is 0");
        }
        // SAFETY: C contract: the array holds `num` handles.
        let all = unsafe { std::slice::from_raw_parts(notifies, num) };
        for (i, n) in all.iter().enumerate() {
            notify_arg(*n)
                .map_err(|f| Fail { code: f.code, msg: format!("notifies[{i}]: {}", f.msg) })?
                .reset();
        }
        Ok(())
    }
}

/// Why counting notifies fail: the SoCs the emulator stands for do not have them.
fn no_counting_notifies() -> String {
    format!(
        "counting notifies (aclrtCntNotify*) exist on Atlas 350 (Ascend 950) only; the emulated {} \
         (Atlas A2/A3) has none, as on hardware",
        crate::device::soc::current().name
    )
}

/// The runtime validates a counting-notify handle before the other arguments: any non-NULL
/// value is 107017, since no counting notify can be created on these SoCs (NULL passes here and
/// is refused by [`cnt_notify_null`] after the other handles).
fn cnt_notify_handle(cnt: aclrtCntNotify) -> R {
    if cnt.is_null() {
        return Ok(());
    }
    fail(
        RT_INVALID_HANDLE,
        format!(
            "{cnt:p} is not a counting notify: {}",
            no_counting_notifies()
        ),
    )
}

/// A NULL counting notify: 107000.
fn cnt_notify_null() -> R {
    fail(RT_PARAM_INVALID, "cntNotify is NULL")
}

acl! {
    /// `aclrtCntNotifyCreate`: `flag` must be 0 (107000); needs a current device (107002); a
    /// NULL `cntNotify` is 107000; then 207000: Atlas A2/A3 have no counting notifies.
    fn aclrtCntNotifyCreate(cntNotify: *mut aclrtCntNotify, flag: u64) {
        if flag != 0 {
            return fail(RT_PARAM_INVALID, format!("flag {flag:#x} is not 0"));
        }
        crate::device::context::current_ids()?;
        if cntNotify.is_null() {
            return fail(RT_PARAM_INVALID, "cntNotify is NULL");
        }
        fail(RT_FEATURE_NOT_SUPPORT, no_counting_notifies())
    }
}

acl! {
    /// `aclrtCntNotifyDestroy`: NULL is 107000, anything else 107017 (none can exist here).
    fn aclrtCntNotifyDestroy(cntNotify: aclrtCntNotify) {
        cnt_notify_handle(cntNotify)?;
        cnt_notify_null()
    }
}

acl! {
    /// `aclrtCntNotifyRecord`: `info` NULL is 100000 (checked first, by the ACL layer); then the
    /// counting notify's handle (107017), the stream's (107017), a NULL counting notify (107000).
    fn aclrtCntNotifyRecord(cntNotify: aclrtCntNotify, stream: aclrtStream, info: *mut aclrtCntNotifyRecordInfo) {
        if info.is_null() {
            return fail(INVALID_PARAM, "info is NULL");
        }
        cnt_notify_handle(cntNotify)?;
        StreamArg::early(stream)?;
        cnt_notify_null()
    }
}

acl! {
    /// `aclrtCntNotifyWaitWithTimeout`: as `aclrtCntNotifyRecord`.
    fn aclrtCntNotifyWaitWithTimeout(cntNotify: aclrtCntNotify, stream: aclrtStream, info: *mut aclrtCntNotifyWaitInfo) {
        if info.is_null() {
            return fail(INVALID_PARAM, "info is NULL");
        }
        cnt_notify_handle(cntNotify)?;
        StreamArg::early(stream)?;
        cnt_notify_null()
    }
}

acl! {
    /// `aclrtCntNotifyReset`: the handles (107017), then a NULL counting notify (107000).
    fn aclrtCntNotifyReset(cntNotify: aclrtCntNotify, stream: aclrtStream) {
        cnt_notify_handle(cntNotify)?;
        StreamArg::early(stream)?;
        cnt_notify_null()
    }
}

acl! {
    /// `aclrtCntNotifyGetId`: the handle (107017), then a NULL counting notify or `notifyId`
    /// (107000).
    fn aclrtCntNotifyGetId(cntNotify: aclrtCntNotify, notifyId: *mut u32) {
        cnt_notify_handle(cntNotify)?;
        if notifyId.is_null() {
            return fail(RT_PARAM_INVALID, "notifyId is NULL");
        }
        cnt_notify_null()
    }
}
