//! Several asynchronous copies in one runtime call ([`Scope::copy_batch`],
//! `aclrtMemcpyBatchAsync`): host to device and device to host pairs, their location attributes
//! derived from the buffers.

use crate::copy::{MemoryLocation, RawRegion};
use crate::error::{Error, Result};
use crate::memory::DeviceRepr;
use crate::raw;
use crate::scope::{AsyncDest, AsyncSource, Scope};
use ascendcl_sys as sys;
use std::ffi::c_void;

/// The runtime's location of one side of a batched copy.
fn location<T>(r: &RawRegion<T>) -> sys::aclrtMemLocation {
    match r.location() {
        MemoryLocation::Device(d) => sys::aclrtMemLocation {
            id: d as u32,
            type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        _ => sys::aclrtMemLocation {
            id: 0,
            type_: sys::ACL_MEM_LOCATION_TYPE_HOST,
        },
    }
}

fn same(a: &sys::aclrtMemcpyBatchAttr, b: &sys::aclrtMemcpyBatchAttr) -> bool {
    let eq =
        |x: &sys::aclrtMemLocation, y: &sys::aclrtMemLocation| x.id == y.id && x.type_ == y.type_;
    eq(&a.dstLoc, &b.dstLoc) && eq(&a.srcLoc, &b.srcLoc)
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues every `(dst, src)` pair as one batch (`aclrtMemcpyBatchAsync`). Each pair copies
    /// host memory (pageable or pinned) to device memory of the stream's device, or the reverse;
    /// lengths must be equal. Empty pairs are skipped; consecutive pairs of one direction share a
    /// location attribute. Pairs with pageable host memory are done before the call returns
    /// (the runtime synchronises the stream first); the order of the copies within the batch is
    /// unspecified, so the pairs must not overlap. A runtime failure names the failing pair.
    pub fn copy_batch<D, S>(&self, pairs: impl IntoIterator<Item = (D, S)>) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
        D::Elem: DeviceRepr,
    {
        const API: &str = "aclrtMemcpyBatchAsync";
        let dev = self.device_id();
        let (mut dsts, mut maxs, mut srcs, mut sizes) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut attrs, mut idx) = (Vec::<sys::aclrtMemcpyBatchAttr>::new(), Vec::new());
        // The caller's index of each pair passed (empty pairs are left out).
        let mut caller = Vec::new();
        let mut accesses = Vec::new();
        for (i, (mut dst, src)) in pairs.into_iter().enumerate() {
            let (d, s) = (dst.region(), src.region());
            crate::copy::refuse_managed(API, &d)?;
            crate::copy::refuse_managed(API, &s)?;
            accesses.extend([d.write(), s.read()]);
            if d.len() != s.len() {
                return Err(Error::argument(
                    API,
                    format!("pair {i}: lengths differ: {} and {}", d.len(), s.len()),
                ));
            }
            match (d.location().device(), s.location().device()) {
                (Some(x), None) | (None, Some(x)) if x == dev => {}
                (Some(_), None) | (None, Some(_)) => {
                    return Err(Error::argument(
                        API,
                        format!("pair {i}: the device memory is not the stream's device {dev}"),
                    ));
                }
                _ => {
                    return Err(Error::argument(
                        API,
                        format!("pair {i}: a batch copies host to device or device to host"),
                    ));
                }
            }
            if d.is_empty() {
                continue;
            }
            let attr = sys::aclrtMemcpyBatchAttr {
                dstLoc: location(&d),
                srcLoc: location(&s),
                rsv: [0; 16],
            };
            if attrs.last().is_none_or(|a| !same(a, &attr)) {
                attrs.push(attr);
                idx.push(dsts.len());
            }
            caller.push(i);
            dsts.push(d.ptr().cast::<c_void>());
            maxs.push(d.bytes());
            srcs.push(s.ptr().cast::<c_void>());
            sizes.push(s.bytes());
        }
        if dsts.is_empty() {
            return Ok(());
        }
        let mut fail = usize::MAX;
        let r = self.enqueue_as(API, &accesses, |st| {
            // SAFETY: every pointer/size pair comes from a region borrowed for 'scope
            // (destinations exclusively), checked above; the arrays have the lengths passed; the
            // scope waits for the stream before 'scope ends.
            unsafe {
                raw::aclrtMemcpyBatchAsync(
                    dsts.as_mut_ptr(),
                    maxs.as_mut_ptr(),
                    srcs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    dsts.len(),
                    attrs.as_mut_ptr(),
                    idx.as_mut_ptr(),
                    attrs.len(),
                    &mut fail,
                    st.as_raw(),
                )
            }
        });
        r.map_err(|e| match e {
            Error::Acl {
                api,
                code,
                name,
                message,
            } if fail < caller.len() => Error::Acl {
                api,
                code,
                name,
                message: Some(format!(
                    "pair {} of the batch failed{}",
                    caller[fail],
                    message.map(|m| format!(": {m}")).unwrap_or_default()
                )),
            },
            other => other,
        })
    }
}
