//! `acl_tdt_queue.h`: queues, their attributes and routes (the `tdt` concept), as the host
//! processor of the runtime answers them (the emulator's run mode is `ACL_HOST`): queues of
//! bytes and user data (`acltdtEnqueueData`, `acltdtDequeueData`), routes that forward between
//! them; the shared buffers (`acltdtAllocBuf` ...) and their queues (`acltdtEnqueue`), and
//! sharing with other processes (`acltdtGrantQueue`), are the device side's: 200006.

use super::*;
use crate::tdt::objects::{self, Route};
use crate::tdt::queues::{self, Payload};
use ascendcl_sys::{
    ACL_TDT_DVPP_MEM, ACL_TDT_NORMAL_MEM, ACL_TDT_QUEUE_DEPTH_UINT32, ACL_TDT_QUEUE_NAME_PTR,
    ACL_TDT_QUEUE_ROUTE_DST_UINT32, ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL,
    ACL_TDT_QUEUE_ROUTE_QUERY_DST, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32,
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, ACL_TDT_QUEUE_ROUTE_QUERY_SRC,
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32,
    ACL_TDT_QUEUE_ROUTE_SRC_UINT32, ACL_TDT_QUEUE_ROUTE_STATUS_INT32,
};

/// The runtime's parameter copy: `src_len` bytes into a destination of `dst_len` (100000 when
/// larger), returning how many were copied.
///
/// # Safety
/// `src` is valid for `src_len` reads and `dst` for `dst_len` writes (when not NULL).
unsafe fn copy_param(src: *const u8, src_len: usize, dst: *mut u8, dst_len: usize) -> R<usize> {
    if src.is_null() || dst.is_null() {
        return fail(INVALID_PARAM, "the parameter is NULL");
    }
    if src_len > dst_len {
        return fail(
            INVALID_PARAM,
            format!("the value is {src_len} bytes, more than the {dst_len} its destination holds"),
        );
    }
    // SAFETY: the caller's contract; both lengths checked above.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, src_len) };
    Ok(src_len)
}

/// The calling thread's current device, which queue calls act on (`rtGetDevice`).
fn current_device() -> R<i32> {
    crate::device::context::current_ids().map(|(d, _)| d)
}

fn host_side_only(what: &str) -> R {
    fail(
        FEATURE_UNSUPPORTED,
        format!(
            "{what} is the device side's (shared buffers); the run mode is ACL_HOST, whose queues \
             carry data through acltdtEnqueueData / acltdtDequeueData"
        ),
    )
}

/// Runs a call that returns a handle: NULL, the failure recorded, when it fails or panics.
fn handle_or_null<T>(api: &'static str, f: impl FnOnce() -> R<usize>) -> *mut T {
    let run = move || match f() {
        Ok(h) => h as *mut T,
        Err(e) => {
            record(api, e);
            std::ptr::null_mut()
        }
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        panicked(api, p.as_ref());
        std::ptr::null_mut()
    })
}

acl! {
    /// `acltdtCreateQueue`: a queue on the current device with the attributes (NULL: a
    /// generated name, depth 8); its id into `qid`. Names are unique among the live queues.
    fn acltdtCreateQueue(attr: *const acltdtQueueAttr, qid: *mut u32) {
        // SAFETY: NULL or valid for one write (the C contract).
        let qid = unsafe { Out::new(qid, "qid") }?;
        let device = current_device()?;
        let (name, depth) = if attr.is_null() {
            (None, queues::DEFAULT_DEPTH)
        } else {
            objects::with_attr(attr as usize, |a| {
                let name = a.name.to_str().map_err(|_| Fail { code: INVALID_PARAM, msg: "the name is not UTF-8".into() })?;
                Ok(((!name.is_empty()).then(|| name.to_string()), a.depth))
            })?
        };
        qid.set(queues::create(name.as_deref(), depth, device)?);
        Ok(())
    }
}

acl! {
    /// `acltdtDestroyQueue`: a queue in a bound route must be unbound first (500001).
    fn acltdtDestroyQueue(qid: u32) {
        queues::destroy(qid)
    }
}

fn check_device(qid: u32) -> R {
    let device = current_device()?;
    let (_, _, on) = queues::info(qid)?;
    if on != device {
        return fail(
            INVALID_PARAM,
            format!("queue {qid} is on device {on}, not the current device {device}"),
        );
    }
    Ok(())
}

acl! {
    /// `acltdtEnqueueData`: a copy of `dataSize` bytes (and up to 96 bytes of user data);
    /// `timeout` -1 waits for room, 0 does not wait, n waits n ms; full then is 207014.
    fn acltdtEnqueueData(qid: u32, data: *const c_void, dataSize: usize, userData: *const c_void, userDataSize: usize, timeout: i32, rsv: u32) {
        if data.is_null() {
            return fail(INVALID_PARAM, "data is NULL");
        }
        if dataSize == 0 {
            return fail(INVALID_PARAM, "dataSize is 0");
        }
        if userDataSize > queues::MAX_USER_DATA {
            return fail(INVALID_PARAM, format!("userDataSize {userDataSize} is larger than {}", queues::MAX_USER_DATA));
        }
        if userData.is_null() && userDataSize > 0 {
            return fail(INVALID_PARAM, format!("userData is NULL but userDataSize is {userDataSize}"));
        }
        let _ = rsv;
        let deadline = queues::deadline(timeout)?;
        check_device(qid)?;
        // SAFETY: the caller's contract: `dataSize` readable bytes at `data`, `userDataSize`
        // at `userData`.
        let (data, user) = unsafe {
            (
                std::slice::from_raw_parts(data.cast::<u8>(), dataSize).to_vec(),
                if userDataSize == 0 { Vec::new() } else { std::slice::from_raw_parts(userData.cast::<u8>(), userDataSize).to_vec() },
            )
        };
        queues::push(qid, Payload::Bytes { data, user }, deadline)
    }
}

acl! {
    /// `acltdtDequeueData`: the next message into `data` (room for `dataSize`; its length into
    /// `retDataSize`) and its user data into `userData` (up to `userDataSize` bytes); `timeout`
    /// as for an enqueue, empty then is 207013. A message larger than `dataSize` stays queued.
    fn acltdtDequeueData(qid: u32, data: *mut c_void, dataSize: usize, retDataSize: *mut usize, userData: *mut c_void, userDataSize: usize, timeout: i32) {
        if data.is_null() {
            return fail(INVALID_PARAM, "data is NULL");
        }
        if dataSize == 0 {
            return fail(INVALID_PARAM, "dataSize is 0");
        }
        // SAFETY: NULL or valid for one write (the C contract).
        let ret = unsafe { Out::new(retDataSize, "retDataSize") }?;
        if userData.is_null() && userDataSize > 0 {
            return fail(INVALID_PARAM, format!("userData is NULL but userDataSize is {userDataSize}"));
        }
        let deadline = queues::deadline(timeout)?;
        check_device(qid)?;
        let (bytes, user) = queues::pop_with(qid, deadline, |m| match m {
            Payload::Bytes { data, .. } if data.len() > dataSize => fail(
                INVALID_PARAM,
                format!("the message is {} bytes, more than dataSize {dataSize}", data.len()),
            ),
            Payload::Bytes { data, user } => Ok((data.clone(), user.clone())),
            Payload::Dataset { .. } => fail(INVALID_PARAM, format!("queue {qid} is a channel's")),
        })?;
        // SAFETY: `data` holds `dataSize` >= the message's bytes; `userData` `userDataSize`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len());
            let n = user.len().min(userDataSize);
            if n > 0 {
                std::ptr::copy_nonoverlapping(user.as_ptr(), userData.cast::<u8>(), n);
            }
        }
        ret.set(bytes.len());
        Ok(())
    }
}

acl! {
    /// `acltdtEnqueue`: shared buffers are the device side's (200006 in host run mode).
    fn acltdtEnqueue(qid: u32, buf: acltdtBuf, timeout: i32) {
        let _ = (qid, buf, timeout);
        host_side_only("acltdtEnqueue")
    }
}

acl! {
    /// `acltdtDequeue`: shared buffers are the device side's (200006 in host run mode).
    fn acltdtDequeue(qid: u32, buf: *mut acltdtBuf, timeout: i32) {
        let _ = (qid, buf, timeout);
        host_side_only("acltdtDequeue")
    }
}

acl! {
    /// `acltdtGrantQueue`: sharing queues between processes is the shared-pool processor's
    /// (200006 on a host).
    fn acltdtGrantQueue(qid: u32, pid: i32, permission: u32, timeout: i32) {
        let _ = (qid, pid, permission, timeout);
        fail(FEATURE_UNSUPPORTED, "sharing a queue with another process is the shared-pool processor's, not the host's")
    }
}

acl! {
    /// `acltdtAttachQueue`: see `acltdtGrantQueue` (200006 on a host).
    fn acltdtAttachQueue(qid: u32, timeout: i32, permission: *mut u32) {
        let _ = (qid, timeout, permission);
        fail(FEATURE_UNSUPPORTED, "sharing a queue with another process is the shared-pool processor's, not the host's")
    }
}

/// Binds or unbinds every route of a list, writing each one's status back; the call fails
/// (500001) when one of them did.
fn for_routes(list: *mut acltdtQueueRouteList, bind: bool) -> R {
    if list.is_null() {
        return fail(INVALID_PARAM, "qRouteList is NULL");
    }
    let routes = objects::with_list(list as usize, |l| Ok(l.clone()))?;
    let mut failed = Vec::new();
    let mut statuses = Vec::with_capacity(routes.len());
    for r in &routes {
        let outcome = if bind {
            queues::bind(r.src, r.dst)
        } else {
            queues::unbind(r.src, r.dst)
        };
        statuses.push(match (&outcome, bind) {
            (Ok(()), true) => queues::ROUTE_BIND,
            (Ok(()), false) => queues::ROUTE_UNBIND,
            (Err(_), true) => queues::ROUTE_BIND_ABNORMAL,
            (Err(_), false) => r.status,
        });
        if let Err(why) = outcome {
            failed.push(why);
        }
    }
    objects::with_list(list as usize, |l| {
        for (r, s) in l.iter_mut().zip(statuses) {
            r.status = s;
        }
        Ok(())
    })?;
    if failed.is_empty() {
        Ok(())
    } else {
        fail(
            FAILURE,
            format!(
                "{} of {} routes failed: {}",
                failed.len(),
                routes.len(),
                failed.join("; ")
            ),
        )
    }
}

acl! {
    /// `acltdtBindQueueRoutes`: every route of the list (both queues live, no cycle); each
    /// route's status is written back.
    fn acltdtBindQueueRoutes(qRouteList: *mut acltdtQueueRouteList) {
        for_routes(qRouteList, true)
    }
}

acl! {
    /// `acltdtUnbindQueueRoutes`: every route of the list; each route's status is written back.
    fn acltdtUnbindQueueRoutes(qRouteList: *mut acltdtQueueRouteList) {
        for_routes(qRouteList, false)
    }
}

acl! {
    /// `acltdtQueryQueueRoutes`: the bound routes the query selects into the list (cleared
    /// first): by source, destination, both, or the abnormal ones; the mode and the ids it needs
    /// must be set.
    fn acltdtQueryQueueRoutes(queryInfo: *const acltdtQueueRouteQueryInfo, qRouteList: *mut acltdtQueueRouteList) {
        if qRouteList.is_null() || queryInfo.is_null() {
            return fail(INVALID_PARAM, "queryInfo or qRouteList is NULL");
        }
        objects::with_list(qRouteList as usize, |l| { l.clear(); Ok(()) })?;
        let q = objects::with_query(queryInfo as usize, |q| Ok(*q))?;
        let Some(mode) = q.mode else {
            return fail(INVALID_PARAM, "the query's mode is not set (acltdtSetQueueRouteQueryInfo)");
        };
        let need = |what: &str, v: Option<u32>| v.ok_or_else(|| Fail { code: INVALID_PARAM, msg: format!("the query's {what} queue is not set") });
        let found = match mode {
            m if m == ACL_TDT_QUEUE_ROUTE_QUERY_SRC as i32 => queues::routes(Some(need("source", q.src)?), None, false),
            m if m == ACL_TDT_QUEUE_ROUTE_QUERY_DST as i32 => queues::routes(None, Some(need("destination", q.dst)?), false),
            m if m == ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST as i32 => {
                queues::routes(Some(need("source", q.src)?), Some(need("destination", q.dst)?), false)
            }
            m if m == ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL as i32 => queues::routes(None, None, true),
            m => return fail(INVALID_PARAM, format!("query mode {m} is not SRC (0), DST (1), SRC_AND_DST (2) or ABNORMAL (100)")),
        };
        objects::with_list(qRouteList as usize, |l| {
            l.extend(found.into_iter().map(|(src, dst, status)| Route { src, dst, status }));
            Ok(())
        })
    }
}

acl! {
    /// `acltdtAllocBuf`: the type must be NORMAL_MEM (0) or DVPP_MEM (1); shared buffers are
    /// the device side's (200006 in host run mode).
    fn acltdtAllocBuf(size: usize, type_: u32, buf: *mut acltdtBuf) {
        if type_ != ACL_TDT_NORMAL_MEM && type_ != ACL_TDT_DVPP_MEM {
            return fail(INVALID_PARAM, format!("type {type_} is not ACL_TDT_NORMAL_MEM (0) or ACL_TDT_DVPP_MEM (1)"));
        }
        if buf.is_null() {
            return fail(INVALID_PARAM, "buf is NULL");
        }
        let _ = size;
        host_side_only("acltdtAllocBuf")
    }
}

macro_rules! device_side_buffers {
    ($($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),*);)*) => {
        $(
            acl! {
                $(#[$m])*
                fn $name($($a: $t),*) {
                    let _ = ($($a),*);
                    host_side_only(stringify!($name))
                }
            }
        )*
    };
}

device_side_buffers! {
    /// `acltdtFreeBuf`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtFreeBuf(buf: acltdtBuf);
    /// `acltdtGetBufData`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtGetBufData(buf: acltdtBuf, dataPtr: *mut *mut c_void, size: *mut usize);
    /// `acltdtSetBufDataLen`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtSetBufDataLen(buf: acltdtBuf, len: usize);
    /// `acltdtGetBufDataLen`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtGetBufDataLen(buf: acltdtBuf, len: *mut usize);
    /// `acltdtGetBufUserData`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtGetBufUserData(buf: acltdtBuf, dataPtr: *mut c_void, size: usize, offset: usize);
    /// `acltdtSetBufUserData`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtSetBufUserData(buf: acltdtBuf, dataPtr: *const c_void, size: usize, offset: usize);
    /// `acltdtCopyBufRef`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtCopyBufRef(buf: acltdtBuf, newBuf: *mut acltdtBuf);
    /// `acltdtAppendBufChain`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtAppendBufChain(headBuf: acltdtBuf, buf: acltdtBuf);
    /// `acltdtGetBufChainNum`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtGetBufChainNum(headBuf: acltdtBuf, num: *mut u32);
    /// `acltdtGetBufFromChain`: see `acltdtAllocBuf` (200006 in host run mode).
    fn acltdtGetBufFromChain(headBuf: acltdtBuf, index: u32, buf: *mut acltdtBuf);
}

/// `acltdtCreateQueueAttr`: a generated name, depth 8.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtCreateQueueAttr() -> *mut acltdtQueueAttr {
    handle_or_null("acltdtCreateQueueAttr", || Ok(objects::create_attr()))
}

acl! {
    /// `acltdtDestroyQueueAttr`.
    fn acltdtDestroyQueueAttr(attr: *const acltdtQueueAttr) {
        objects::destroy_attr(attr as usize)
    }
}

acl! {
    /// `acltdtSetQueueAttr`: NAME_PTR takes the address of a `const char *` (`len` the pointer's
    /// size; the string with its NUL at most 128 bytes, copied), DEPTH_UINT32 a `uint32_t`.
    fn acltdtSetQueueAttr(attr: *mut acltdtQueueAttr, type_: acltdtQueueAttrType, len: usize, param: *const c_void) {
        if attr.is_null() || param.is_null() {
            return fail(INVALID_PARAM, "attr or param is NULL");
        }
        objects::with_attr(attr as usize, |a| match type_ {
            ACL_TDT_QUEUE_NAME_PTR => {
                let mut p: *const c_char = std::ptr::null();
                // SAFETY: `param` holds `len` readable bytes; `p` is pointer-sized.
                unsafe { copy_param(param.cast(), len, (&raw mut p).cast(), size_of::<*const c_char>()) }?;
                if p.is_null() {
                    return fail(INVALID_PARAM, "the name pointer is NULL");
                }
                // SAFETY: the caller passes the address of a NUL-terminated string.
                let name = unsafe { CStr::from_ptr(p) };
                if name.to_bytes().len() + 1 > queues::MAX_NAME {
                    return fail(INVALID_PARAM, format!("the name with its NUL is {} bytes, more than {}", name.to_bytes().len() + 1, queues::MAX_NAME));
                }
                a.name = name.to_owned();
                Ok(())
            }
            ACL_TDT_QUEUE_DEPTH_UINT32 => {
                // SAFETY: as above; the depth is 4 bytes.
                unsafe { copy_param(param.cast(), len, (&raw mut a.depth).cast(), 4) }.map(drop)
            }
            t => fail(INVALID_PARAM, format!("attribute type {t} is not NAME_PTR (0) or DEPTH_UINT32 (1)")),
        })
    }
}

acl! {
    /// `acltdtGetQueueAttr`: NAME_PTR writes a pointer to the attribute's copy of the name (valid
    /// while it lives), DEPTH_UINT32 the depth; the size written into `paramRetSize`.
    fn acltdtGetQueueAttr(attr: *const acltdtQueueAttr, type_: acltdtQueueAttrType, len: usize, paramRetSize: *mut usize, param: *mut c_void) {
        if attr.is_null() || param.is_null() {
            return fail(INVALID_PARAM, "attr or param is NULL");
        }
        // SAFETY: NULL or valid for one write (the C contract).
        let ret = unsafe { Out::new(paramRetSize, "paramRetSize") }?;
        let n = objects::with_attr(attr as usize, |a| match type_ {
            ACL_TDT_QUEUE_NAME_PTR => {
                let p = a.name.as_ptr();
                // SAFETY: `param` holds `len` writable bytes.
                unsafe { copy_param((&raw const p).cast(), size_of::<*const c_char>(), param.cast(), len) }
            }
            ACL_TDT_QUEUE_DEPTH_UINT32 => {
                // SAFETY: as above.
                unsafe { copy_param((&raw const a.depth).cast(), 4, param.cast(), len) }
            }
            t => fail(INVALID_PARAM, format!("attribute type {t} is not NAME_PTR (0) or DEPTH_UINT32 (1)")),
        })?;
        ret.set(n);
        Ok(())
    }
}

/// `acltdtCreateQueueRoute`: a route from `srcId` to `dstId`, unbound.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtCreateQueueRoute(srcId: u32, dstId: u32) -> *mut acltdtQueueRoute {
    handle_or_null("acltdtCreateQueueRoute", || {
        Ok(objects::create_route(srcId, dstId))
    })
}

acl! {
    /// `acltdtDestroyQueueRoute`.
    fn acltdtDestroyQueueRoute(route: *const acltdtQueueRoute) {
        objects::destroy_route(route as usize)
    }
}

acl! {
    /// `acltdtGetQueueRouteParam`: SRC_UINT32, DST_UINT32 or STATUS_INT32 into `param` (room for
    /// `len` bytes), its size into `paramRetSize`.
    fn acltdtGetQueueRouteParam(route: *const acltdtQueueRoute, type_: acltdtQueueRouteParamType, len: usize, paramRetSize: *mut usize, param: *mut c_void) {
        if route.is_null() || param.is_null() {
            return fail(INVALID_PARAM, "route or param is NULL");
        }
        // SAFETY: NULL or valid for one write (the C contract).
        let ret = unsafe { Out::new(paramRetSize, "paramRetSize") }?;
        let r = objects::route(route as usize)?;
        let value: [u8; 4] = match type_ {
            ACL_TDT_QUEUE_ROUTE_SRC_UINT32 => r.src.to_ne_bytes(),
            ACL_TDT_QUEUE_ROUTE_DST_UINT32 => r.dst.to_ne_bytes(),
            ACL_TDT_QUEUE_ROUTE_STATUS_INT32 => r.status.to_ne_bytes(),
            t => return fail(INVALID_PARAM, format!("route parameter {t} is not SRC (0), DST (1) or STATUS (2)")),
        };
        // SAFETY: `param` holds `len` writable bytes.
        ret.set(unsafe { copy_param(value.as_ptr(), 4, param.cast(), len) }?);
        Ok(())
    }
}

/// `acltdtCreateQueueRouteList`: an empty list.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtCreateQueueRouteList() -> *mut acltdtQueueRouteList {
    handle_or_null("acltdtCreateQueueRouteList", || Ok(objects::create_list()))
}

acl! {
    /// `acltdtDestroyQueueRouteList`.
    fn acltdtDestroyQueueRouteList(routeList: *const acltdtQueueRouteList) {
        objects::destroy_list(routeList as usize)
    }
}

acl! {
    /// `acltdtAddQueueRoute`: appends a copy of the route.
    fn acltdtAddQueueRoute(routeList: *mut acltdtQueueRouteList, route: *const acltdtQueueRoute) {
        if routeList.is_null() || route.is_null() {
            return fail(INVALID_PARAM, "routeList or route is NULL");
        }
        let r = objects::route(route as usize)?;
        objects::with_list(routeList as usize, |l| { l.push(r); Ok(()) })
    }
}

acl! {
    /// `acltdtGetQueueRoute`: copies the route at `index` into `route` (one the caller created).
    fn acltdtGetQueueRoute(routeList: *const acltdtQueueRouteList, index: usize, route: *mut acltdtQueueRoute) {
        if routeList.is_null() || route.is_null() {
            return fail(INVALID_PARAM, "routeList or route is NULL");
        }
        let r = objects::with_list(routeList as usize, |l| {
            l.get(index).copied().ok_or_else(|| Fail { code: INVALID_PARAM, msg: format!("index {index} is not below the list's size {}", l.len()) })
        })?;
        objects::with_route(route as usize, |dst| { *dst = r; Ok(()) })
    }
}

/// `acltdtGetQueueRouteNum`: 0 for anything but a live list.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetQueueRouteNum(routeList: *const acltdtQueueRouteList) -> usize {
    objects::with_list(routeList as usize, |l| Ok(l.len())).unwrap_or(0)
}

/// `acltdtCreateQueueRouteQueryInfo`: nothing set.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtCreateQueueRouteQueryInfo() -> *mut acltdtQueueRouteQueryInfo {
    handle_or_null("acltdtCreateQueueRouteQueryInfo", || {
        Ok(objects::create_query())
    })
}

acl! {
    /// `acltdtDestroyQueueRouteQueryInfo`.
    fn acltdtDestroyQueueRouteQueryInfo(info: *const acltdtQueueRouteQueryInfo) {
        objects::destroy_query(info as usize)
    }
}

acl! {
    /// `acltdtSetQueueRouteQueryInfo`: MODE_ENUM, SRC_ID_UINT32 or DST_ID_UINT32 from `value`
    /// (`len` bytes, at most 4).
    fn acltdtSetQueueRouteQueryInfo(param: *mut acltdtQueueRouteQueryInfo, type_: acltdtQueueRouteQueryInfoParamType, len: usize, value: *const c_void) {
        if param.is_null() || value.is_null() {
            return fail(INVALID_PARAM, "param or value is NULL");
        }
        let mut v = [0u8; 4];
        // SAFETY: `value` holds `len` readable bytes.
        unsafe { copy_param(value.cast(), len, v.as_mut_ptr(), 4) }?;
        objects::with_query(param as usize, |q| {
            match type_ {
                ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM => q.mode = Some(i32::from_ne_bytes(v)),
                ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 => q.src = Some(u32::from_ne_bytes(v)),
                ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32 => q.dst = Some(u32::from_ne_bytes(v)),
                t => return fail(INVALID_PARAM, format!("query parameter {t} is not MODE (0), SRC_ID (1) or DST_ID (2)")),
            }
            Ok(())
        })
    }
}
