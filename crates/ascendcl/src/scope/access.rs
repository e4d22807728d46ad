//! What scope operations accept: memory borrowed for the scope ([`AsyncSource`],
//! [`AsyncDest`]) and the regions a scope claimed ([`Claimed`]), branded with the scope.

use crate::copy::{CopyDest, CopySource, MemoryLocation, RawRegion};
use crate::error::Result;
use crate::memory::{DeviceRepr, resolve_range};
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// Memory a scope operation may read until the scope ends.
///
/// # Safety
/// The region stays valid, unmoved and unwritten by the host until the end of `'scope`.
pub unsafe trait AsyncSource<'scope> {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory. An operation that hands it to the runtime declares the read to the scope
    /// ([`RawRegion::read`] with [`Scope::enqueue`](crate::Scope::enqueue)), which orders it
    /// after writes of the same claimed memory on the scope's other streams.
    fn region(&self) -> RawRegion<Self::Elem>;
}

/// Memory a scope operation may write until the scope ends.
///
/// # Safety
/// The region stays valid, unmoved and untouched by the host until the end of `'scope`.
pub unsafe trait AsyncDest<'scope> {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory. An operation that hands it to the runtime declares the write to the scope
    /// ([`RawRegion::write`] with [`Scope::enqueue`](crate::Scope::enqueue)), which orders it
    /// after reads and writes of the same claimed memory on the scope's other streams.
    fn region(&mut self) -> RawRegion<Self::Elem>;
}

// SAFETY: the shared borrow lasts for 'scope, so nobody writes or frees the memory.
unsafe impl<'scope, S: CopySource + ?Sized> AsyncSource<'scope> for &'scope S {
    type Elem = S::Elem;
    #[inline]
    fn region(&self) -> RawRegion<S::Elem> {
        self.source_region()
    }
}

// SAFETY: the exclusive borrow lasts for 'scope.
unsafe impl<'scope, D: CopyDest + ?Sized> AsyncDest<'scope> for &'scope mut D {
    type Elem = D::Elem;
    #[inline]
    fn region(&mut self) -> RawRegion<D::Elem> {
        self.dest_region()
    }
}

/// A buffer the scope holds exclusively until it ends ([`Scope::claim`](crate::Scope::claim));
/// copyable, so several operations — on any of the scope's streams — can read and write it.
///
/// The scope tracks the uses of each claim: the stream of its last write and the streams that
/// read it since. A use on another stream of the scope is ordered after the uses it conflicts
/// with (the scope makes that stream wait for an event recorded after them), unless they are
/// ordered already. A `Claimed` is branded with the `'scope` lifetime of the scope that claimed
/// it, and that lifetime is invariant: it is accepted by the operations of that scope only, on
/// whichever of its streams. Handing it to another scope (which knows nothing of its uses) does
/// not compile, nor does keeping it beyond the scope. `docs/soundness.md` gives the argument.
#[derive(Debug)]
pub struct Claimed<'scope, T> {
    pub(crate) region: RawRegion<T>,
    /// Invariant in `'scope`: a region of one scope never passes for a region of another.
    pub(crate) _scope: PhantomData<(&'scope mut &'scope (), *mut T)>,
}

impl<T> Clone for Claimed<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Claimed<'_, T> {}

impl<'scope, T: DeviceRepr> Claimed<'scope, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }
    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }
    /// Where the memory is.
    pub fn location(&self) -> MemoryLocation {
        self.region.location()
    }
    /// The address, for FFI that enqueues work on one of the scope's streams (kernel
    /// arguments). The memory stays valid and untouched by the host until the scope ends. Work
    /// that uses the address must be enqueued through [`Scope::enqueue`](crate::Scope::enqueue)
    /// with the access it makes ([`RawRegion::read`] / [`RawRegion::write`] of
    /// [`AsyncSource::region`]), which orders it after conflicting uses on the scope's other
    /// streams; work enqueued otherwise may race with them: that is for the `unsafe` caller to
    /// rule out.
    pub fn as_ptr(&self) -> *const T {
        self.region.ptr()
    }
    /// The address, for FFI that writes the memory; the same contract as [`Claimed::as_ptr`].
    pub fn as_mut_ptr(&self) -> *mut T {
        self.region.ptr()
    }
    /// A part of the claimed memory; out of bounds is an error. Its uses are tracked as uses of
    /// the whole claim.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Claimed<'scope, T>> {
        let (start, len) = resolve_range("Claimed::slice", range, self.region.len())?;
        Ok(Claimed {
            region: RawRegion::new(
                self.region.ptr().wrapping_add(start),
                len,
                self.region.location(),
            )
            .with_context(self.region.context())
            .with_claim(self.region.claim()),
            _scope: PhantomData,
        })
    }
}

// SAFETY: the scope holds the exclusive borrow of the memory for 'scope.
unsafe impl<'scope, T: DeviceRepr> AsyncSource<'scope> for Claimed<'scope, T> {
    type Elem = T;
    #[inline]
    fn region(&self) -> RawRegion<T> {
        self.region
    }
}
// SAFETY: as above.
unsafe impl<'scope, T: DeviceRepr> AsyncDest<'scope> for Claimed<'scope, T> {
    type Elem = T;
    #[inline]
    fn region(&mut self) -> RawRegion<T> {
        self.region
    }
}
