//! [`SendRecv`]: one typed item of a batch of sends and receives (`HcclSendRecvItem`).

use crate::element::Element;
use ascendcl::{AsyncDest, AsyncSource, MemoryLocation};
use hccl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;

/// One send or receive of [`Collectives::batch_send_recv`](crate::Collectives::batch_send_recv)
/// (`HcclSendRecvItem`): a typed buffer, a direction and the peer rank.
///
/// It takes the buffer's scope borrow (shared for a send, exclusive for a receive) and is
/// branded with the scope's invariant lifetime, like [`ascendcl::Claimed`]: it is accepted by
/// the scope it was made for only, once. Items of one batch may have different element types.
#[derive(Debug)]
pub struct SendRecv<'scope> {
    pub(crate) send: bool,
    pub(crate) ptr: *mut c_void,
    pub(crate) len: usize,
    pub(crate) bytes: usize,
    pub(crate) data_type: sys::HcclDataType,
    pub(crate) location: MemoryLocation,
    pub(crate) peer: u32,
    /// How the item uses its buffer, for the scope's ordering.
    pub(crate) access: ascendcl::Access,
    /// Invariant in `'scope`: an item of one scope never passes for an item of another.
    _scope: PhantomData<&'scope mut &'scope ()>,
}

impl<'scope> SendRecv<'scope> {
    /// Sends `buf` to rank `peer`, which receives the same number of elements of the same type.
    pub fn send<S>(buf: S, peer: u32) -> SendRecv<'scope>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
    {
        let r = buf.region();
        SendRecv {
            send: true,
            ptr: r.ptr().cast(),
            len: r.len(),
            bytes: r.bytes(),
            data_type: S::Elem::DATA_TYPE,
            location: r.location(),
            peer,
            access: r.read(),
            _scope: PhantomData,
        }
    }

    /// Receives `buf` from rank `peer`.
    pub fn recv<D>(mut buf: D, peer: u32) -> SendRecv<'scope>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let r = buf.region();
        SendRecv {
            send: false,
            ptr: r.ptr().cast(),
            len: r.len(),
            bytes: r.bytes(),
            data_type: D::Elem::DATA_TYPE,
            location: r.location(),
            peer,
            access: r.write(),
            _scope: PhantomData,
        }
    }

    /// Whether the item sends (else it receives).
    pub fn is_send(&self) -> bool {
        self.send
    }

    /// The peer rank.
    pub fn peer(&self) -> u32 {
        self.peer
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (the library skips such items).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn raw(&self) -> sys::HcclSendRecvItem {
        sys::HcclSendRecvItem {
            sendRecvType: if self.send {
                sys::HCCL_SEND
            } else {
                sys::HCCL_RECV
            },
            buf: self.ptr,
            count: self.len as u64,
            dataType: self.data_type,
            remoteRank: self.peer,
        }
    }
}
