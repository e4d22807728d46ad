//! Copies and memsets: argument checks in the runtime's order, validation against the allocation
//! table, and the synchronous fast path (one short read lock, then one `memcpy`).

use crate::base::error::*;
use crate::engine::stream::Stream;
use crate::memory::work;
use crate::memory::{self, Loc, Side, access};
use std::sync::Arc;

const H2H: u32 = 0;
const H2D: u32 = 1;
const D2H: u32 = 2;
const D2D: u32 = 3;
const DEFAULT: u32 = 4;
const H2B2D: u32 = 5;

fn kind_name(kind: u32) -> &'static str {
    match kind {
        H2H => "ACL_MEMCPY_HOST_TO_HOST",
        H2D => "ACL_MEMCPY_HOST_TO_DEVICE",
        D2H => "ACL_MEMCPY_DEVICE_TO_HOST",
        D2D => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        DEFAULT => "ACL_MEMCPY_DEFAULT",
        H2B2D => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        _ => "an unknown kind",
    }
}

fn check_kind(kind: u32) -> R {
    if kind > H2B2D {
        return fail(
            INVALID_PARAM,
            format!("kind {kind} is not accepted here (0-5; 6 and 7 are for descriptor APIs)"),
        );
    }
    Ok(())
}

fn null_checks(dst: usize, src: usize) -> R {
    if dst == 0 {
        return fail(INVALID_PARAM, "dst is NULL");
    }
    if src == 0 {
        return fail(INVALID_PARAM, "src is NULL");
    }
    Ok(())
}

/// Peer access is one-way: the device that runs a copy (`exec`: the current device for a
/// synchronous copy, the stream's device for a queued one) must have enabled access to every
/// other device whose memory the copy touches (`aclrtDeviceEnablePeerAccess` on `exec`).
fn check_peer(exec: i32, d: Side, s: Side) -> R {
    let (Loc::Device(a), Loc::Device(b)) = (d.loc, s.loc) else {
        return Ok(());
    };
    if a == b {
        return Ok(());
    }
    for other in [b, a] {
        if other != exec && !crate::device::peer_enabled(exec, other) {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "a copy from device {b} to device {a} run by device {exec} needs peer access \
                     from device {exec} to device {other} (aclrtDeviceEnablePeerAccess({other}) \
                     with device {exec} current; access is one-way)"
                ),
            );
        }
    }
    Ok(())
}

/// A memset's device memory must be the executing device's own, or reachable through peer
/// access from it: a stream's tasks run on the stream's device.
fn check_reach(exec: i32, what: &str, side: Side) -> R {
    match side.loc {
        Loc::Device(owner) if owner != exec && !crate::device::peer_enabled(exec, owner) => fail(
            RT_PARAM_INVALID,
            format!(
                "{what} of device {owner}'s memory on a stream of device {exec} needs peer access \
                 from device {exec} to device {owner} (aclrtDeviceEnablePeerAccess({owner}) with \
                 device {exec} current), or a stream of device {owner}"
            ),
        ),
        _ => Ok(()),
    }
}

/// `aclrtMemcpy`.
///
/// # Safety
/// Addresses outside the allocation table (pageable host memory) must be valid for the access,
/// as the C contract requires.
pub(crate) unsafe fn memcpy(dst: usize, dest_max: usize, src: usize, count: usize, kind: u32) -> R {
    if count == 0 {
        return Ok(());
    }
    null_checks(dst, src)?;
    check_kind(kind)?;
    if dest_max == 0 {
        return fail(RT_PARAM_INVALID, "destMax is 0");
    }
    if count > dest_max {
        return fail(
            RT_PARAM_INVALID,
            format!("count {count} is larger than destMax {dest_max}"),
        );
    }
    if dst == src {
        return Ok(());
    }
    let (exec, _) = crate::device::context::current_ids()?;
    crate::device::drain(exec);
    let (d, s) = {
        let t = memory::read();
        (t.check("dst", dst, count)?, t.check("src", src, count)?)
    };
    check_peer(exec, d, s)?;
    // SAFETY: table ranges were just validated; other ranges are the caller's (see # Safety).
    unsafe { access::copy(dst, d, src, s, count) };
    Ok(())
}

/// The effective kind of an async copy from the locations of its sides (the runtime's
/// location/kind table).
fn effective_kind(s: Loc, d: Loc, kind: u32) -> R<u32> {
    use Loc::*;
    let k = match (s, d) {
        (Host, Device(_)) => Some(H2D),
        (Device(_), Host) => Some(D2H),
        (Device(_), Device(_)) => Some(D2D),
        (Host, Host) => Some(H2H),
        (Unreg, Device(_)) => match kind {
            H2D | D2D => Some(kind),
            DEFAULT => Some(H2D),
            _ => None,
        },
        (Device(_), Unreg) => match kind {
            D2H | D2D => Some(kind),
            DEFAULT => Some(D2H),
            _ => None,
        },
        (Host, Unreg) => match kind {
            H2H | D2H => Some(kind),
            DEFAULT => Some(H2H),
            _ => None,
        },
        (Unreg, Host) => match kind {
            H2H | H2D => Some(kind),
            DEFAULT => Some(H2H),
            _ => None,
        },
        (Unreg, Unreg) => match kind {
            H2H..=D2D => Some(kind),
            DEFAULT => Some(H2H),
            _ => None,
        },
    };
    k.ok_or_else(|| Fail {
        code: RT_PARAM_INVALID,
        msg: format!(
            "kind {} does not fit a copy from {} to {}",
            kind_name(kind),
            loc_name(s),
            loc_name(d)
        ),
    })
}

fn loc_name(l: Loc) -> String {
    match l {
        Loc::Host => "pinned/registered host memory".to_string(),
        Loc::Device(d) => format!("device {d} memory"),
        Loc::Unreg => "pageable (unregistered) host memory".to_string(),
    }
}

/// Resolves a stream argument: a non-NULL handle first (107017), NULL later (needs a context).
fn early_stream(h: usize) -> R<Option<Arc<Stream>>> {
    if h == 0 {
        Ok(None)
    } else {
        crate::stream::get(h).map(Some)
    }
}

fn late_stream(early: Option<Arc<Stream>>) -> R<Arc<Stream>> {
    match early {
        Some(s) => Ok(s),
        None => crate::stream::get(0),
    }
}

/// `aclrtMemcpyAsync`.
///
/// # Safety
/// As [`memcpy`]; pinned and registered host memory must stay valid until the copy ran.
pub(crate) unsafe fn memcpy_async(
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: u32,
    stream: usize,
) -> R {
    if count == 0 {
        return Ok(());
    }
    null_checks(dst, src)?;
    check_kind(kind)?;
    let early = early_stream(stream)?;
    if count > dest_max {
        return fail(
            RT_PARAM_INVALID,
            format!("count {count} is larger than destMax {dest_max}"),
        );
    }
    crate::device::context::current_ids()?;
    let stream = late_stream(early)?;
    let (d, s) = {
        let t = memory::read();
        (t.check("dst", dst, count)?, t.check("src", src, count)?)
    };
    let eff = effective_kind(s.loc, d.loc, kind)?;
    if eff == H2H {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            "an asynchronous host-to-host copy is not supported; use aclrtMemcpy",
        );
    }
    if dst == src {
        return Ok(());
    }
    let pageable = s.loc == Loc::Unreg || d.loc == Loc::Unreg;
    if pageable && eff != D2D {
        // Check 10: a capturing stream refuses the copy; any other stream (a built model's
        // bound stream too) is synchronised and the copy made synchronously, before check 11
        // (the stream's context), as in the runtime's implementation. A pageable side is never
        // device memory, so no peer check applies.
        if stream.is_capturing() {
            return fail(
                RT_PARAM_INVALID,
                "a copy with pageable host memory cannot be captured (it would run \
                 synchronously); use pinned memory (aclrtMallocHost) in a captured stream",
            );
        }
        stream.synchronize(None, RT_STREAM_SYNC_TIMEOUT)?;
        // SAFETY: validated above; pageable ranges are the caller's (see # Safety).
        unsafe { access::copy(dst, d, src, s, count) };
        return Ok(());
    }
    // Check 11: a stream of another context.
    crate::stream::check_context(&stream)?;
    check_peer(stream.device, d, s)?;
    if kind == H2B2D {
        // SAFETY: the source range was validated above; it is staged now so the caller may
        // release it as soon as the call returns.
        let mut data = vec![0u8; count];
        // SAFETY: as above.
        unsafe { access::read(src, s, &mut data) };
        return stream.enqueue(work::StagedCopy { dst, data, side: d });
    }
    stream.enqueue(work::Copy {
        dst,
        src,
        len: count,
        sides: [d, s],
    })
}

/// `aclrtMemset`.
///
/// # Safety
/// A pageable destination must be valid for `count` bytes.
pub(crate) unsafe fn memset(dst: usize, max: usize, value: i32, count: usize) -> R {
    if count == 0 {
        return Ok(());
    }
    if dst == 0 {
        return fail(INVALID_PARAM, "devPtr is NULL");
    }
    if count > max {
        return fail(
            RT_PARAM_INVALID,
            format!("count {count} is larger than maxCount {max}"),
        );
    }
    let (exec, _) = crate::device::context::current_ids()?;
    crate::device::drain(exec);
    let side = memory::read().check("devPtr", dst, count)?;
    // SAFETY: validated above (or pageable memory vouched for by the caller).
    unsafe { access::fill(dst, side, value as u8, count) };
    Ok(())
}

/// `aclrtMemsetAsync`.
///
/// # Safety
/// As [`memset`]; the memory must stay valid until the task ran.
pub(crate) unsafe fn memset_async(
    dst: usize,
    max: usize,
    value: i32,
    count: usize,
    stream: usize,
) -> R {
    if count == 0 {
        return Ok(());
    }
    if dst == 0 {
        return fail(INVALID_PARAM, "devPtr is NULL");
    }
    let early = early_stream(stream)?;
    if count > max {
        return fail(
            RT_PARAM_INVALID,
            format!("count {count} is larger than maxCount {max}"),
        );
    }
    crate::device::context::current_ids()?;
    let stream = late_stream(early)?;
    crate::stream::check_context(&stream)?;
    let side = memory::read().check("devPtr", dst, count)?;
    check_reach(stream.device, "a memset", side)?;
    if side.loc == Loc::Unreg {
        stream.synchronize(None, RT_STREAM_SYNC_TIMEOUT)?;
        // SAFETY: pageable memory vouched for by the caller.
        unsafe { access::fill(dst, side, value as u8, count) };
        return Ok(());
    }
    stream.enqueue(work::Memset {
        dst,
        val: value as u8,
        len: count,
        side,
    })
}

/// `aclrtMemsetD32` (`stream` None) or `aclrtMemsetD32Async`: `n` 32-bit words of `value`.
///
/// # Safety
/// A pageable destination must be valid for the fill (and, queued, until it ran).
pub(crate) unsafe fn memset_d32(
    dst: usize,
    max: usize,
    value: u32,
    n: usize,
    stream: Option<usize>,
) -> R {
    if n == 0 {
        return Ok(());
    }
    if dst == 0 {
        return fail(INVALID_PARAM, "ptr is NULL");
    }
    let early = match stream {
        Some(h) => early_stream(h)?,
        None => None,
    };
    let len = n.checked_mul(4).filter(|l| *l <= max).ok_or_else(|| Fail {
        code: RT_PARAM_INVALID,
        msg: format!("{n} words (4 bytes each) exceed memSize {max}"),
    })?;
    let (exec, _) = crate::device::context::current_ids()?;
    if stream.is_none() {
        crate::device::drain(exec);
    }
    let side = memory::read().check("ptr", dst, len)?;
    if stream.is_some() {
        let s = late_stream(early)?;
        crate::stream::check_context(&s)?;
        check_reach(s.device, "a 32-bit memset", side)?;
        if side.loc != Loc::Unreg {
            return s.enqueue(work::Fill32 {
                dst,
                value,
                words: n,
                side,
            });
        }
        s.synchronize(None, RT_STREAM_SYNC_TIMEOUT)?;
    }
    // SAFETY: validated above (or pageable memory vouched for by the caller).
    unsafe { access::fill32(dst, side, value, n) };
    Ok(())
}

/// Arguments of a 2D copy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Copy2d {
    pub dst: usize,
    pub dpitch: usize,
    pub src: usize,
    pub spitch: usize,
    pub width: usize,
    pub height: usize,
    pub kind: u32,
}

/// A checked 2D copy: destination side, source side, direction, resolved stream.
type Checked2d = (Side, Side, u32, Option<Arc<Stream>>);

/// Checks a 2D copy; `None` when there is nothing to copy.
fn check_2d(c: &Copy2d, sync: bool, stream: Option<usize>) -> R<Option<Checked2d>> {
    if c.width == 0 || c.height == 0 {
        return Ok(None);
    }
    null_checks(c.dst, c.src)?;
    if c.width > c.spitch || c.width > c.dpitch {
        return fail(
            INVALID_PARAM,
            format!(
                "width {} is larger than spitch {} or dpitch {}",
                c.width, c.spitch, c.dpitch
            ),
        );
    }
    if !matches!(c.kind, H2D | D2H | D2D | DEFAULT) {
        return fail(
            INVALID_PARAM,
            format!("kind {} is not H2D, D2H, D2D or DEFAULT", c.kind),
        );
    }
    if c.dpitch == 0 || c.spitch == 0 {
        return fail(RT_PARAM_INVALID, "a pitch is 0");
    }
    if c.height > 5_242_880 || c.width > 5_000_000 {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "height {} or width {} exceeds the limits (5242880 rows, 5000000 bytes)",
                c.height, c.width
            ),
        );
    }
    if sync && c.kind == D2D {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            "aclrtMemcpy2d does not support device-to-device copies (use aclrtMemcpy2dAsync)",
        );
    }
    let early = match stream {
        Some(h) => early_stream(h)?,
        None => None,
    };
    let (current, _) = crate::device::context::current_ids()?;
    if sync {
        crate::device::drain(current);
    }
    let exec = early.as_ref().map_or(current, |s| s.device);
    let overflow = || Fail {
        code: RT_PARAM_INVALID,
        msg: "the pitched range overflows the address space".to_string(),
    };
    let dspan = c
        .dpitch
        .checked_mul(c.height - 1)
        .and_then(|v| v.checked_add(c.width))
        .ok_or_else(overflow)?;
    let sspan = c
        .spitch
        .checked_mul(c.height - 1)
        .and_then(|v| v.checked_add(c.width))
        .ok_or_else(overflow)?;
    let (d, s) = {
        let t = memory::read();
        (t.check("dst", c.dst, dspan)?, t.check("src", c.src, sspan)?)
    };
    let dir = match (s.loc, d.loc) {
        (Loc::Device(_), Loc::Device(_)) => D2D,
        (_, Loc::Device(_)) => H2D,
        (Loc::Device(_), _) => D2H,
        _ => {
            return fail(
                RT_PARAM_INVALID,
                "neither side of the 2D copy is device memory (host-to-host is not supported)",
            );
        }
    };
    if c.kind != DEFAULT && c.kind != dir {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "kind {} does not match the pointers (a copy from {} to {})",
                kind_name(c.kind),
                loc_name(s.loc),
                loc_name(d.loc)
            ),
        );
    }
    if sync && dir == D2D {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            "aclrtMemcpy2d does not support device-to-device copies (use aclrtMemcpy2dAsync)",
        );
    }
    check_peer(exec, d, s)?;
    let st = match stream {
        Some(_) => Some(late_stream(early)?),
        None => None,
    };
    Ok(Some((d, s, dir, st)))
}

/// `aclrtMemcpy2d`.
///
/// # Safety
/// Pageable ranges must be valid for the pitched access.
pub(crate) unsafe fn memcpy_2d(c: Copy2d) -> R {
    let Some((d, s, _, _)) = check_2d(&c, true, None)? else {
        return Ok(());
    };
    // SAFETY: validated by check_2d (pageable ranges vouched for by the caller).
    unsafe {
        access::copy_2d(
            (c.dst, d, c.dpitch),
            (c.src, s, c.spitch),
            c.width,
            c.height,
        )
    };
    Ok(())
}

/// `aclrtMemcpy2dAsync`.
///
/// # Safety
/// As [`memcpy_2d`]; pinned memory must stay valid until the task ran.
pub(crate) unsafe fn memcpy_2d_async(c: Copy2d, stream: usize) -> R {
    let Some((d, s, _, st)) = check_2d(&c, false, Some(stream))? else {
        return Ok(());
    };
    let st = st.expect("stream resolved");
    crate::stream::check_context(&st)?;
    if d.loc == Loc::Unreg || s.loc == Loc::Unreg {
        st.synchronize(None, RT_STREAM_SYNC_TIMEOUT)?;
        // SAFETY: validated by check_2d (pageable ranges vouched for by the caller).
        unsafe {
            access::copy_2d(
                (c.dst, d, c.dpitch),
                (c.src, s, c.spitch),
                c.width,
                c.height,
            )
        };
        return Ok(());
    }
    st.enqueue(work::PitchedCopy {
        dst: c.dst,
        dpitch: c.dpitch,
        src: c.src,
        spitch: c.spitch,
        width: c.width,
        height: c.height,
        sides: [d, s],
    })
}

/// One attribute of a batch copy: locations of both sides (type, id).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchAttr {
    pub dst_type: u32,
    pub src_type: u32,
    pub rsv_zero: bool,
}

/// `aclrtMemcpyBatch`, after the caller turned the C arrays into slices. Returns the failing
/// index with the error. The ACL layer's checks (sizes and reserved bytes) answer 100000, the
/// runtime's (attribute count and indexes, directions, each copy) 107000, as for
/// `aclrtMemcpyBatchAsync`.
///
/// # Safety
/// Pageable ranges must be valid for the accesses.
pub(crate) unsafe fn memcpy_batch(
    dsts: &[usize],
    dest_maxs: &[usize],
    srcs: &[usize],
    sizes: &[usize],
    attrs: &[BatchAttr],
    attr_idx: &[usize],
) -> Result<(), (Option<usize>, Fail)> {
    let n = sizes.len();
    let bad = |i: Option<usize>, code, msg: String| Err((i, Fail { code, msg }));
    for i in 0..n {
        if dest_maxs[i] < sizes[i] {
            return bad(
                Some(i),
                INVALID_PARAM,
                format!(
                    "destMaxs[{i}] = {} is smaller than sizes[{i}] = {}",
                    dest_maxs[i], sizes[i]
                ),
            );
        }
    }
    if let Some(j) = attrs.iter().position(|a| !a.rsv_zero) {
        return bad(
            None,
            INVALID_PARAM,
            format!("attrs[{j}].rsv has non-zero bytes"),
        );
    }
    // The runtime's checks (107000) after the ACL layer's (100000).
    check_attr_indexes(attrs.len(), attr_idx, n)?;
    if sizes.iter().all(|&s| s == 0) {
        return Ok(());
    }
    match crate::device::context::current_ids() {
        Ok((exec, _)) => crate::device::drain(exec),
        Err(f) => return Err((None, f)),
    }
    const HOST: u32 = 0;
    const DEVICE: u32 = 1;
    let mut dir = None;
    for (j, a) in attrs.iter().enumerate() {
        let d = match (a.src_type, a.dst_type) {
            (HOST, DEVICE) => H2D,
            (DEVICE, HOST) => D2H,
            _ => {
                return bad(
                    None,
                    RT_PARAM_INVALID,
                    format!(
                        "attrs[{j}] describes a copy from location type {} to {}; a batch copies \
                         host to device or device to host",
                        a.src_type, a.dst_type
                    ),
                );
            }
        };
        if dir.is_some_and(|x| x != d) {
            return bad(
                None,
                RT_PARAM_INVALID,
                "a batch mixes host-to-device and device-to-host copies".to_string(),
            );
        }
        dir = Some(d);
    }
    let dir = dir.unwrap_or(H2D);
    // The sides of every copy, validated before any runs (one allocation for the batch).
    let mut sides = Vec::with_capacity(n);
    {
        let t = memory::read();
        for i in 0..n {
            if sizes[i] == 0 {
                sides.push((Side::PAGEABLE, Side::PAGEABLE));
                continue;
            }
            if dsts[i] == 0 || srcs[i] == 0 {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!("copy {i}: a pointer is NULL"),
                );
            }
            // No per-copy allocation: the index is added to the message only on failure.
            let at = |mut f: Fail| {
                f.msg = format!("copy {i}: {}", f.msg);
                (Some(i), f)
            };
            let d = t.check("dsts[i]", dsts[i], sizes[i]).map_err(at)?;
            let s = t.check("srcs[i]", srcs[i], sizes[i]).map_err(at)?;
            let ok = match dir {
                H2D => matches!(d.loc, Loc::Device(_)) && !matches!(s.loc, Loc::Device(_)),
                _ => matches!(s.loc, Loc::Device(_)) && !matches!(d.loc, Loc::Device(_)),
            };
            if !ok {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!(
                        "copy {i} goes from {} to {}, not {}",
                        loc_name(s.loc),
                        loc_name(d.loc),
                        kind_name(dir)
                    ),
                );
            }
            sides.push((d, s));
        }
    }
    for (i, (d, s)) in sides.into_iter().enumerate() {
        if sizes[i] > 0 {
            // SAFETY: every range was validated above (pageable ones vouched for by the caller).
            unsafe { access::copy(dsts[i], d, srcs[i], s, sizes[i]) };
        }
    }
    Ok(())
}

/// `aclrtMemcpyBatchAsync`, after the caller's NULL checks and with the arrays as slices;
/// returns the failing index with the error. Entries with a pageable side are copied
/// synchronously (the stream is synchronised first), the others are queued.
///
/// # Safety
/// Pageable ranges must be valid for the accesses; pinned ranges until the copies ran.
pub(crate) unsafe fn memcpy_batch_async(
    dsts: &[usize],
    dest_maxs: &[usize],
    srcs: &[usize],
    sizes: &[usize],
    attrs: &[BatchAttr],
    attr_idx: &[usize],
    stream: &Arc<Stream>,
) -> Result<(), (Option<usize>, Fail)> {
    let n = sizes.len();
    let bad = |i: Option<usize>, code, msg: String| Err((i, Fail { code, msg }));
    check_attr_indexes(attrs.len(), attr_idx, n)?;
    const HOST: u32 = 0;
    const DEVICE: u32 = 1;
    let mut plan = Vec::with_capacity(n);
    {
        let t = memory::read();
        for i in 0..n {
            let at = |mut f: Fail| {
                f.msg = format!("copy {i}: {}", f.msg);
                (Some(i), f)
            };
            if sizes[i] == 0 || sizes[i] > dest_maxs[i] {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!(
                        "copy {i}: size {} is 0 or above destMax {}",
                        sizes[i], dest_maxs[i]
                    ),
                );
            }
            if dsts[i] == 0 || srcs[i] == 0 {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!("copy {i}: a pointer is NULL"),
                );
            }
            let a = &attrs[attr_idx.partition_point(|&k| k <= i) - 1];
            let d = t.check("dsts[i]", dsts[i], sizes[i]).map_err(at)?;
            let s = t.check("srcs[i]", srcs[i], sizes[i]).map_err(at)?;
            let is_dev = |l: Loc| matches!(l, Loc::Device(_));
            let matches = |l: Loc, ty: u32| match ty {
                DEVICE => is_dev(l),
                HOST => !is_dev(l),
                _ => false,
            };
            if !matches(d.loc, a.dst_type) || !matches(s.loc, a.src_type) {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!(
                        "copy {i} goes from {} to {}, which its attribute (location types {} to \
                         {}) does not describe",
                        loc_name(s.loc),
                        loc_name(d.loc),
                        a.src_type,
                        a.dst_type
                    ),
                );
            }
            if is_dev(d.loc) == is_dev(s.loc) {
                return bad(
                    Some(i),
                    RT_PARAM_INVALID,
                    format!("copy {i} is not host to device or device to host"),
                );
            }
            plan.push((d, s));
        }
    }
    if plan
        .iter()
        .any(|(d, s)| d.loc == Loc::Unreg || s.loc == Loc::Unreg)
    {
        stream
            .synchronize(None, RT_STREAM_SYNC_TIMEOUT)
            .map_err(|f| (None, f))?;
    }
    for (i, (d, s)) in plan.into_iter().enumerate() {
        if d.loc == Loc::Unreg || s.loc == Loc::Unreg {
            // SAFETY: validated above; pageable ranges are the caller's (see # Safety).
            unsafe { access::copy(dsts[i], d, srcs[i], s, sizes[i]) };
        } else {
            stream
                .enqueue(work::Copy {
                    dst: dsts[i],
                    src: srcs[i],
                    len: sizes[i],
                    sides: [d, s],
                })
                .map_err(|f| (Some(i), f))?;
        }
    }
    Ok(())
}

/// The runtime's checks (107000) of a batch copy's attribute list against its `n` copies: 1 to
/// `n` attributes, indexes starting at 0, strictly increasing and below `n`.
fn check_attr_indexes(
    attrs: usize,
    attr_idx: &[usize],
    n: usize,
) -> Result<(), (Option<usize>, Fail)> {
    let bad = |msg: String| {
        Err((
            None,
            Fail {
                code: RT_PARAM_INVALID,
                msg,
            },
        ))
    };
    if attrs == 0 || attrs > n {
        return bad(format!("numAttrs {attrs} is not in 1..={n}"));
    }
    if attr_idx.first() != Some(&0) {
        return bad("attrsIndexes[0] must be 0".to_string());
    }
    if let Some(j) = attr_idx.windows(2).position(|w| w[1] <= w[0]) {
        return bad(format!(
            "attrsIndexes must increase strictly (index {})",
            j + 1
        ));
    }
    if let Some(&last) = attr_idx.last()
        && last >= n
    {
        return bad(format!("attrsIndexes holds {last}, beyond numBatches {n}"));
    }
    Ok(())
}
