//! The one owner of the objects a program reaches through handles: a typed registry per kind of
//! object ([`Registry`]), and the handles themselves, from one counter. The hub names no concept:
//! each concept's object type says which registry it lives in ([`Resource::KIND`]), so the
//! concepts import the hub and never the other way round.
//!
//! A registry counts its objects per device as it inserts and removes them, so a per-device
//! limit is checked in O(1) (an `aclrtCreateEvent` among 50,000 live events costs what the first
//! one did).

use super::lock::{Rank, ReadGuard, RwLock};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The kinds of objects the hub holds, one registry each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Contexts (`aclrtContext`).
    Context,
    /// Streams (`aclrtStream`).
    Stream,
    /// Events (`aclrtEvent`).
    Event,
    /// Notifies (`aclrtNotify`).
    Notify,
    /// Model runtime instances (`aclmdlRI`).
    Model,
    /// Task groups of captured models (`aclrtTaskGrp`).
    TaskGroup,
    /// Labels (`aclrtLabel`).
    Label,
    /// Label lists (`aclrtLabelList`).
    LabelList,
    /// Loaded kernel binaries (`aclrtBinHandle`).
    Binary,
    /// Kernel functions (`aclrtFuncHandle`).
    Function,
    /// Binary descriptors (`aclrtBinary`).
    BinaryDescriptor,
    /// Data buffers (`aclDataBuffer`).
    DataBuffer,
    /// The operator library's tensors, scalars and executors (`aclTensor`, `aclScalar`,
    /// `aclOpExecutor`).
    Operator,
}

impl Kind {
    const COUNT: usize = Kind::Operator as usize + 1;

    /// The rank of the kind's registry lock.
    fn rank(self) -> Rank {
        match self {
            Kind::Context => Rank::Contexts,
            Kind::Stream => Rank::Streams,
            Kind::Event => Rank::Events,
            Kind::Notify => Rank::Notifies,
            Kind::Model => Rank::Models,
            Kind::TaskGroup => Rank::TaskGroups,
            Kind::Label => Rank::Labels,
            Kind::LabelList => Rank::LabelLists,
            Kind::Binary => Rank::Binaries,
            Kind::Function => Rank::Functions,
            Kind::BinaryDescriptor => Rank::BinaryDescriptors,
            Kind::DataBuffer => Rank::DataBuffers,
            Kind::Operator => Rank::Operators,
        }
    }
}

/// An object the hub holds.
pub(crate) trait Resource: Send + Sync + 'static {
    /// Which registry holds it.
    const KIND: Kind;

    /// Its handle (made by [`Hub::new_handle`]).
    fn handle(&self) -> usize;

    /// The device it counts against (per-device limits and counts), if any.
    fn device(&self) -> Option<i32> {
        None
    }
}

/// The objects of one kind.
pub(crate) struct Registry<T> {
    map: RwLock<Map<T>>,
}

struct Map<T> {
    items: HashMap<usize, Arc<T>>,
    per_device: HashMap<i32, usize>,
}

impl<T> Map<T> {
    fn count(&mut self, dev: Option<i32>, up: bool) {
        if let Some(d) = dev {
            let n = self.per_device.entry(d).or_insert(0);
            if up {
                *n += 1;
            } else {
                *n = n.saturating_sub(1);
            }
        }
    }
}

impl<T: Resource> Registry<T> {
    fn new(rank: Rank) -> Registry<T> {
        Registry {
            map: RwLock::new(
                rank,
                Map {
                    items: HashMap::new(),
                    per_device: HashMap::new(),
                },
            ),
        }
    }

    /// The object of handle `h`.
    #[inline]
    pub(crate) fn get(&self, h: usize) -> Option<Arc<T>> {
        self.map.read().items.get(&h).cloned()
    }

    /// Adds an object.
    pub(crate) fn insert(&self, item: Arc<T>) {
        let mut m = self.map.write();
        let dev = item.device();
        if m.items.insert(item.handle(), item).is_none() {
            m.count(dev, true);
        }
    }

    /// Adds an object made by `make` unless its device already holds `limit` objects of this
    /// kind; `Err` is the device's count.
    pub(crate) fn insert_within(
        &self,
        device: i32,
        limit: usize,
        make: impl FnOnce() -> Arc<T>,
    ) -> Result<Arc<T>, usize> {
        let mut m = self.map.write();
        let n = m.per_device.get(&device).copied().unwrap_or(0);
        if n >= limit {
            return Err(n);
        }
        let item = make();
        let dev = item.device();
        if m.items.insert(item.handle(), Arc::clone(&item)).is_none() {
            m.count(dev, true);
        }
        Ok(item)
    }

    /// Adds an object made by `make` unless the registry already holds `limit` objects; `Err` is
    /// the count.
    pub(crate) fn insert_within_total(
        &self,
        limit: usize,
        make: impl FnOnce() -> Arc<T>,
    ) -> Result<Arc<T>, usize> {
        let mut m = self.map.write();
        if m.items.len() >= limit {
            return Err(m.items.len());
        }
        let item = make();
        let dev = item.device();
        if m.items.insert(item.handle(), Arc::clone(&item)).is_none() {
            m.count(dev, true);
        }
        Ok(item)
    }

    /// Removes the object of handle `h`.
    pub(crate) fn remove(&self, h: usize) -> Option<Arc<T>> {
        let mut m = self.map.write();
        let item = m.items.remove(&h)?;
        m.count(item.device(), false);
        Some(item)
    }

    /// Removes the objects for which `pred` holds.
    pub(crate) fn remove_where(&self, mut pred: impl FnMut(&T) -> bool) -> Vec<Arc<T>> {
        let mut m = self.map.write();
        let gone: Vec<usize> = m
            .items
            .values()
            .filter(|t| pred(t))
            .map(|t| t.handle())
            .collect();
        let mut out = Vec::with_capacity(gone.len());
        for h in gone {
            if let Some(t) = m.items.remove(&h) {
                m.count(t.device(), false);
                out.push(t);
            }
        }
        out
    }

    /// The objects for which `pred` holds.
    pub(crate) fn collect(&self, mut pred: impl FnMut(&T) -> bool) -> Vec<Arc<T>> {
        self.map
            .read()
            .items
            .values()
            .filter(|t| pred(t))
            .cloned()
            .collect()
    }

    /// How many objects count against `device`, in O(1).
    pub(crate) fn count_on(&self, device: i32) -> usize {
        self.map
            .read()
            .per_device
            .get(&device)
            .copied()
            .unwrap_or(0)
    }

    /// How many objects `pred` holds for.
    pub(crate) fn count(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        self.map.read().items.values().filter(|t| pred(t)).count()
    }

    /// How many objects there are.
    pub(crate) fn len(&self) -> usize {
        self.map.read().items.len()
    }

    /// Reads the registry under its lock (for lookups that must see one state).
    pub(crate) fn read(&self) -> RegistryRead<'_, T> {
        RegistryRead(self.map.read())
    }
}

/// A registry held for reading.
pub(crate) struct RegistryRead<'a, T>(ReadGuard<'a, Map<T>>);

impl<T> RegistryRead<'_, T> {
    /// Every object.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Arc<T>> {
        self.0.items.values()
    }
}

/// The hub: every registry, and the handle counter.
pub(crate) struct Hub {
    next: AtomicUsize,
    registries: [OnceLock<Box<dyn Any + Send + Sync>>; Kind::COUNT],
}

static HUB: Hub = Hub {
    next: AtomicUsize::new(1),
    registries: [const { OnceLock::new() }; Kind::COUNT],
};

/// The registry of `T`'s kind.
#[inline]
pub(crate) fn registry<T: Resource>() -> &'static Registry<T> {
    HUB.registry::<T>()
}

/// A fresh handle value, never reused (so a destroyed handle is always recognised, and a handle
/// of one kind is never a live handle of another).
#[inline]
pub(crate) fn new_handle() -> usize {
    HUB.new_handle()
}

impl Hub {
    /// A fresh handle value.
    pub(crate) fn new_handle(&self) -> usize {
        0x0ac1_0000_0000 + self.next.fetch_add(1, Ordering::Relaxed) * 0x40
    }

    /// The registry of `T`'s kind.
    #[inline]
    pub(crate) fn registry<T: Resource>(&self) -> &Registry<T> {
        self.registries[T::KIND as usize]
            .get_or_init(|| Box::new(Registry::<T>::new(T::KIND.rank())))
            .downcast_ref::<Registry<T>>()
            .expect("one object type per kind of the hub")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing {
        handle: usize,
        device: i32,
    }

    impl Resource for Thing {
        const KIND: Kind = Kind::DataBuffer;
        fn handle(&self) -> usize {
            self.handle
        }
        fn device(&self) -> Option<i32> {
            Some(self.device)
        }
    }

    #[test]
    fn per_device_counts_follow_inserts_and_removes() {
        let r = Registry::<Thing>::new(Rank::DataBuffers);
        let a = r
            .insert_within(3, 2, || {
                Arc::new(Thing {
                    handle: new_handle(),
                    device: 3,
                })
            })
            .unwrap();
        r.insert(Arc::new(Thing {
            handle: new_handle(),
            device: 3,
        }));
        assert_eq!(r.count_on(3), 2);
        assert_eq!(r.count_on(4), 0);
        let refused = r.insert_within(3, 2, || unreachable!("over the limit"));
        assert_eq!(refused.err(), Some(2));
        assert!(r.remove(a.handle).is_some());
        assert!(r.remove(a.handle).is_none());
        assert_eq!(r.count_on(3), 1);
        assert_eq!(r.remove_where(|t| t.device == 3).len(), 1);
        assert_eq!((r.count_on(3), r.len()), (0, 0));
    }

    #[test]
    fn handles_are_never_reused() {
        let a = new_handle();
        let b = new_handle();
        assert!(b > a);
        assert_eq!((b - a) % 0x40, 0);
    }
}
