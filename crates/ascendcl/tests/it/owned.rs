//! Owned, thread-safe handles: what an application does with them (store them in a struct, move
//! them into a thread, share them), and the run-time checks that replace the compile-fail cases
//! the ownership model made impossible by construction (see `tests/compile_fail.rs`).
//!
//! This file uses the public API only, the way an outside crate does: `model_moves_into_a_thread`
//! is the program of the ownership issue, and `thread_safe_handles` lists every handle the crate
//! documentation calls thread-safe.

use crate::common::*;
use ascendcl::{
    Context, Device, DeviceBuffer, DeviceSlice, DeviceSliceMut, Error, Event, HostBuffer,
    HostFnHandle, HostRegisterType, HostRegistration, MallocPolicy, PeerAccess, ReleaseError,
    Runtime, Stream,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A model as an application holds one: the device, its weights, a stream — no lifetimes.
struct Model {
    device: Device,
    weights: DeviceBuffer<f32>,
    stream: Stream,
}

impl Model {
    fn new(device: Device, weights: &[f32]) -> ascendcl::Result<Model> {
        Ok(Model {
            weights: device.clone_htod(weights)?,
            stream: device.create_stream()?,
            device,
        })
    }

    /// Copies `input` in (asynchronously, on the model's stream), then the weights' first
    /// elements out, and returns both as read back.
    fn run(&mut self, input: &[f32]) -> ascendcl::Result<(Vec<f32>, Vec<f32>)> {
        let mut scratch = self.device.alloc_zeros::<f32>(input.len())?;
        let mut echoed = vec![0.0; input.len()];
        let mut head = vec![0.0; input.len()];
        let weights = self.weights.slice(..input.len())?;
        self.stream.scope(|s| {
            let x = s.claim(&mut scratch);
            s.copy(x, input)?;
            s.copy(&mut echoed[..], x)?;
            s.copy(&mut head[..], &weights)
        })?;
        Ok((echoed, head))
    }
}

#[test]
fn model_moves_into_a_thread() {
    let rt = rt();
    let weights: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let model = Model::new(rt.device(0).unwrap(), &weights).unwrap();
    drop(rt); // the model's device keeps the runtime initialised

    let expected = weights.clone();
    let worker = std::thread::spawn(move || {
        let mut model = model;
        let input: Vec<f32> = (0..256).map(|i| -(i as f32)).collect();
        let (echoed, head) = model.run(&input).unwrap();
        assert_eq!(echoed, input, "copied in and back out on the worker thread");
        assert_eq!(
            head,
            expected[..256],
            "the weights uploaded on the main thread"
        );
        // The stream's and the weights' context is current here now.
        assert_eq!(
            ascendcl::current_context().unwrap(),
            model.device.raw_context()
        );
        model
    });
    let mut model = worker.join().unwrap();

    // Back on this thread, the model still works, and its buffers can be updated.
    model.weights.copy_from(&vec![1.0f32; 1024]).unwrap();
    let (echoed, head) = model.run(&[3.0, 4.0]).unwrap();
    assert_eq!((echoed, head), (vec![3.0, 4.0], vec![1.0, 1.0]));
    assert_eq!(model.stream.device().id(), model.device.id());
}

fn assert_send_sync<T: Send + Sync + 'static>() {}

#[test]
fn thread_safe_handles() {
    assert_send_sync::<Runtime>();
    assert_send_sync::<Device>();
    assert_send_sync::<Context>();
    assert_send_sync::<Stream>();
    assert_send_sync::<Event>();
    assert_send_sync::<DeviceBuffer<f32>>();
    assert_send_sync::<DeviceBuffer<[u8; 16]>>();
    assert_send_sync::<HostBuffer<u64>>();
    assert_send_sync::<HostRegistration<u8>>();
    assert_send_sync::<PeerAccess>();
    assert_send_sync::<HostFnHandle>();
    assert_send_sync::<Error>();
    assert_send_sync::<ReleaseError<DeviceBuffer<u8>>>();
    // Views are `Send + Sync` like the references they stand for (not 'static).
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceSlice<'_, u8>>();
    send_sync::<DeviceSliceMut<'_, u8>>();
}

/// Replaces `compile_fail/buffer_outlives_device.rs`: a buffer holds its device, so it works
/// after the last `Device` handle of the program is dropped, and the device is reset only when
/// the buffer goes.
#[test]
fn buffer_outlives_its_device_handle() {
    let r = rt();
    let buf;
    let host;
    {
        let dev = r.device(0).unwrap();
        buf = DeviceBuffer::<u8>::from_slice(&dev, &[1, 2, 3], MallocPolicy::HugeFirst).unwrap();
        host = HostBuffer::<u8>::from_slice(&dev, &[4, 5, 6]).unwrap();
    }
    assert_eq!(buf.copy_to_vec().unwrap(), [1, 2, 3]);
    let mut buf = buf;
    buf.copy_from(&host).unwrap();
    assert_eq!(buf.copy_to_vec().unwrap(), [4, 5, 6]);
    assert_eq!(buf.device().id(), 0);
    buf.free().unwrap();
    host.free().unwrap();
}

/// Replaces `compile_fail/stream_outlives_device.rs`: `Device::reset` on a handle whose stream
/// is alive releases that handle only; the stream keeps the device and goes on working.
#[test]
fn stream_outlives_its_device_handle() {
    let r = rt();
    let dev = r.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let event = dev.create_event().unwrap();
    let mut buf = dev.alloc_zeros::<u32>(4).unwrap();
    dev.reset().unwrap();
    stream.scope(|s| s.copy(&mut buf, &[7u32; 4])).unwrap();
    event.record(&stream).unwrap();
    event.synchronize().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.copy_to_vec().unwrap(), [7; 4]);
    assert_eq!(event.device().id(), 0);
}

/// Replaces `compile_fail/finalize_while_device_open.rs`: `Runtime::finalize` releases its own
/// handle; the open device holds another, so the runtime stays initialised for it.
#[test]
fn finalize_while_a_device_is_open_releases_the_handle_only() {
    let r = rt();
    let dev = r.device(0).unwrap();
    assert!(Runtime::handle_count() >= 2, "the device holds a handle");
    r.finalize().unwrap();
    dev.synchronize().unwrap();
    let b = dev.clone_htod(&[9u16; 8]).unwrap();
    assert_eq!(b.copy_to_vec().unwrap(), [9; 8]);
    assert!(dev.runtime().device_count().unwrap() >= 1);
}

/// Replaces `compile_fail/peer_access_outlives_device.rs`: the token holds both devices, so it
/// works after their handles are dropped.
#[test]
fn peer_access_outlives_its_device_handles() {
    let r = rt();
    if !needs_devices(&r, 2, "peer_access_outlives_its_device_handles") {
        return;
    }
    let (token, a, mut b) = {
        let d0 = r.device(0).unwrap();
        let d1 = r.device(1).unwrap();
        let a = DeviceBuffer::from_slice(&d0, &[1u8, 2, 3], MallocPolicy::HugeFirstP2p).unwrap();
        let b = DeviceBuffer::<u8>::zeroed(&d1, 3, MallocPolicy::HugeFirstP2p).unwrap();
        (d0.enable_peer_access(&d1).unwrap(), a, b)
    };
    token.copy(&mut b, &a).unwrap();
    assert_eq!(b.copy_to_vec().unwrap(), [1, 2, 3]);
    assert_eq!(token.devices(), (0, 1));
    token.disable().unwrap();
}

/// Replaces `compile_fail/device_sent_to_thread.rs` and `stream_shared_across_threads.rs`: a
/// device moves to a thread that never opened one and acts on its own device there; one stream
/// is shared by several threads, each enqueuing scoped copies of its own buffers.
#[test]
fn devices_and_streams_cross_threads() {
    let r = rt();
    let dev = r.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    std::thread::spawn({
        let dev = dev.clone();
        move || {
            // A fresh thread: nothing is current until a call makes the device's context so.
            let mut b = dev.alloc_zeros::<u64>(16).unwrap();
            b.copy_from(&[5u64; 16]).unwrap();
            assert_eq!(b.copy_to_vec().unwrap(), [5; 16]);
            dev.synchronize().unwrap();
            assert_eq!(ascendcl::current_context().unwrap(), dev.raw_context());
        }
    })
    .join()
    .unwrap();
    std::thread::scope(|t| {
        for i in 0..4u32 {
            let (dev, stream) = (&dev, &stream);
            t.spawn(move || {
                let mut d = dev.alloc_zeros::<u32>(64).unwrap();
                let mut out = vec![0u32; 64];
                for round in 0..8 {
                    let v = vec![i * 100 + round; 64];
                    stream
                        .scope(|s| {
                            let c = s.claim(&mut d);
                            s.copy(c, &v)?;
                            s.copy(&mut out, c)
                        })
                        .unwrap();
                    assert_eq!(out, v);
                }
            });
        }
    });
    // A clone moved into a thread and dropped there: the stream lives on here.
    let clone = stream.clone();
    std::thread::spawn(move || clone.synchronize().unwrap())
        .join()
        .unwrap();
    stream.synchronize().unwrap();
}

/// Forced releases discard or free what other handles may be using: they need the only handle,
/// and give it back otherwise.
#[test]
fn forced_releases_need_the_only_handle() {
    let r = rt();
    let dev = r.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let other = stream.clone();
    let e = stream.destroy_force().unwrap_err();
    assert!(
        matches!(
            e.error(),
            Error::Shared {
                api: "aclrtDestroyStreamForce",
                what: "stream",
                others: 1
            }
        ),
        "{e}"
    );
    assert_eq!(e.error().api(), Some("aclrtDestroyStreamForce"));
    let stream = e.into_handle();
    stream.synchronize().unwrap();
    // A plain destroy of a shared handle releases that handle; the last one destroys.
    other.destroy().unwrap();
    stream.destroy_force().unwrap();
    // Same for events and contexts: shared handles release themselves only.
    let ev = dev.create_event().unwrap();
    ev.clone().destroy().unwrap();
    assert!(ev.is_complete().is_ok(), "the event is alive");
    ev.destroy().unwrap();
    let ctx = dev.create_context().unwrap();
    let s = ctx.create_stream().unwrap();
    ctx.clone().destroy().unwrap();
    s.synchronize().unwrap();
    drop(s);
    ctx.destroy().unwrap();
}

/// Handles captured by a host function are dropped on the runtime's callback thread, where the
/// runtime forbids releasing anything: their releases run on another thread. A stream whose
/// last handle is dropped by its own host function would otherwise wait for itself.
#[test]
fn handles_dropped_by_a_host_function_are_released_elsewhere() {
    let r = rt();
    let dev = r.device(0).unwrap();
    let stream = dev.create_stream().unwrap();
    let captured = (
        stream.clone(),
        dev.alloc_zeros::<u8>(64).unwrap(),
        dev.create_event().unwrap(),
        HostBuffer::<u8>::zeroed(&dev, 64).unwrap(),
        dev.clone(),
    );
    let ran = Arc::new(AtomicUsize::new(0));
    let ran2 = ran.clone();
    let h = stream
        .launch_host_fn(move || {
            ran2.fetch_add(1, Ordering::SeqCst);
            drop(captured);
        })
        .unwrap();
    // The host function now holds the last handle on the stream.
    drop(stream);
    let done = h.wait_timeout(Duration::from_secs(20));
    assert!(
        matches!(done, Some(Ok(()))),
        "the host function finished: {done:?}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // The device (still held here) is usable; the released handles went without errors.
    dev.synchronize().unwrap();
}

/// Registered host memory is owned by its registration and comes back when unregistered.
#[test]
fn registrations_own_their_memory() {
    let r = rt();
    let dev = r.device(0).unwrap();
    let reg = HostRegistration::new(&dev, vec![3u16; 2048], HostRegisterType::Mapped).unwrap();
    let reg = std::thread::spawn(move || {
        let mut d = reg.device().alloc_zeros::<u16>(2048).unwrap();
        d.copy_from(&reg).unwrap();
        assert_eq!(d.copy_to_vec().unwrap(), vec![3u16; 2048]);
        reg
    })
    .join()
    .unwrap();
    let v = reg.unregister().unwrap();
    assert_eq!(v, vec![3u16; 2048]);
}
