//! Model runtime instances through the safe API: capture and replay, task-group updates, built
//! models with bound streams, labels, activation and switches; the run-time checks behind the
//! ownership rules (`docs/soundness.md`).

use crate::common::*;
use ascendcl::{
    CaptureMode, CaptureStatus, Condition, DeviceBuffer, Error, EventFlags, HostBuffer, Label,
    LabelList, MallocPolicy, Model, ModelKind, ReduceKind, StreamFlags, StreamRole,
};
use std::time::Duration;

const P: MallocPolicy = MallocPolicy::HugeFirst;

#[test]
fn a_capture_replays_with_the_inputs_of_each_execution() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut model = Model::new(&dev);
    let input = model.adopt(HostBuffer::from_slice(&dev, &[0.0f32; 8])?);
    let x = model.adopt(DeviceBuffer::<f32>::zeroed(&dev, 8, P)?);
    let y = model.adopt(DeviceBuffer::<f32>::zeroed(&dev, 8, P)?);
    let status = model.capture(&mut stream, CaptureMode::Global, |c| {
        c.copy(x, input)?;
        c.copy(y, x)?;
        c.reduce(y, x, ReduceKind::Sum)?;
        c.status()
    })?;
    assert_eq!(status, CaptureStatus::Active);
    // The thread's capture mode: swapped and restored.
    let before = CaptureMode::exchange_for_thread(CaptureMode::Relaxed)?;
    assert_eq!(
        CaptureMode::exchange_for_thread(before)?,
        CaptureMode::Relaxed
    );
    assert_eq!(model.kind(), Some(ModelKind::Captured));
    // Nothing ran during the capture.
    assert_eq!(model.get(y)?.to_vec()?, vec![0.0; 8]);
    for round in 1..=4 {
        for (i, v) in model.host_mut(input)?.iter_mut().enumerate() {
            *v = (round * 10 + i) as f32;
        }
        stream.scope(|s| s.execute(&mut model))?;
        let want: Vec<f32> = (0..8).map(|i| 2.0 * (round * 10 + i) as f32).collect();
        assert_eq!(model.get(y)?.to_vec()?, want, "round {round}");
    }
    // The stream is a plain stream again.
    let mut back = [0.0f32; 8];
    stream.scope(|s| s.copy(&mut back[..], model.get(y)?))?;
    assert_eq!(back[0], 80.0);
    Ok(())
}

#[test]
fn recording_needs_the_only_stream_handle() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let other = stream.clone();
    let mut model = Model::new(&dev);
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let e = model
        .capture(&mut stream, CaptureMode::Relaxed, |c| c.fill_bytes(x, 1))
        .unwrap_err();
    assert!(
        matches!(e, Error::StreamNotExclusive { others: 1, .. }),
        "{e}"
    );
    assert_eq!(model.kind(), None);
    drop(other);
    model.capture(&mut stream, CaptureMode::Relaxed, |c| c.fill_bytes(x, 1))?;
    // Binding too.
    let persistent = dev.create_stream_with(StreamFlags::PERSISTENT, 0)?;
    let keep = persistent.clone();
    let mut built = Model::new(&dev);
    let e = built
        .build(|b| b.bind(persistent, StreamRole::Head))
        .unwrap_err();
    assert!(matches!(e, Error::StreamNotExclusive { .. }), "{e}");
    assert_eq!(built.kind(), None);
    drop(keep);
    Ok(())
}

#[test]
fn a_failed_or_panicking_capture_records_nothing() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut model = Model::new(&dev);
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let e = model
        .capture(&mut stream, CaptureMode::Global, |c| {
            c.fill_bytes(x, 1)?;
            Err::<(), _>(ascendcl::Error::HostFnPanicked {
                message: "user failure".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(e, Error::HostFnPanicked { .. }));
    assert_eq!(model.kind(), None);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = model.capture(
            &mut stream,
            CaptureMode::Global,
            |c| -> ascendcl::Result<()> {
                c.fill_bytes(x, 2)?;
                panic!("in the capture")
            },
        );
    }));
    assert!(caught.is_err());
    assert_eq!(model.kind(), None);
    // The capture ended both times: the stream runs work again, and a new capture works.
    stream.synchronize()?;
    model.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(x, 3))?;
    stream.scope(|s| s.execute(&mut model))?;
    assert_eq!(model.get(x)?.to_vec()?, vec![3; 4]);
    Ok(())
}

#[test]
fn slots_buffers_and_instances() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut a = Model::new(&dev);
    let mut b = Model::new(&dev);
    let xa = a.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let _xb = b.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    // A slot of another model is refused.
    assert_argument(b.get(xa));
    assert_argument(b.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(xa, 1)));
    // An execution needs an instance.
    assert_argument(stream.scope(|s| s.execute(&mut a)));
    a.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(xa, 9))?;
    // A second instance over the first is refused; a buffer cannot leave while one exists.
    assert_argument(a.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(xa, 1)));
    assert_argument(a.take(xa));
    a.copy_from_host(xa, &[1, 2, 3, 4])?;
    assert_eq!(a.get(xa)?.to_vec()?, vec![1, 2, 3, 4]);
    stream.scope(|s| s.execute(&mut a))?;
    a.clear()?;
    assert_eq!(a.kind(), None);
    let buf = a.take(xa)?;
    assert_eq!(buf.to_vec()?, vec![9; 4]);
    assert_argument(a.get(xa));
    Ok(())
}

#[test]
fn a_task_group_update_changes_later_executions() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let (mut stream, mut update) = (dev.create_stream()?, dev.create_stream()?);
    let mut model = Model::new(&dev);
    let a = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let b = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let group = model.capture(&mut stream, CaptureMode::Relaxed, |c| {
        c.fill_bytes(a, 1)?;
        c.task_group(|g| g.fill_bytes(b, 2))
    })?;
    stream.scope(|s| s.execute(&mut model))?;
    assert_eq!(model.get(b)?.to_vec()?, vec![2; 4]);
    model.update(&mut update, &group, |u| u.fill_bytes(b, 5))?;
    model.copy_from_host(a, &[0; 4])?;
    stream.scope(|s| s.execute(&mut model))?;
    assert_eq!(model.get(a)?.to_vec()?, vec![1; 4]);
    assert_eq!(model.get(b)?.to_vec()?, vec![5; 4]);
    // The update must match the group.
    let e = model.update(&mut update, &group, |u| {
        u.fill_bytes(b, 6)?;
        u.fill_bytes(b, 7)
    });
    assert_code(e, AclError::MODEL_UPDATE_FAILED);
    // Task groups exist in captures only, and belong to one instance.
    assert_argument(model.update(&mut update, &group, |u| {
        u.task_group(|g| g.fill_bytes(b, 1)).map(drop)
    }));
    model.clear()?;
    model.capture(&mut stream, CaptureMode::Relaxed, |c| c.fill_bytes(a, 1))?;
    assert_argument(model.update(&mut update, &group, |u| u.fill_bytes(b, 1)));
    Ok(())
}

#[test]
fn a_built_model_switches_on_a_label_index_read_when_it_runs() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let exec = dev.create_stream()?;
    let labels = [Label::new(&dev)?, Label::new(&dev)?];
    let list = LabelList::new(&[&labels[0], &labels[1]])?;
    assert_eq!(list.len(), 2);
    let mut model = Model::new(&dev);
    let index = model.adopt(DeviceBuffer::<u32>::zeroed(&dev, 1, P)?);
    let out = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    let persistent = dev.create_stream_with(StreamFlags::PERSISTENT, 0)?;
    model.build(|b| {
        let s = b.bind(persistent, StreamRole::Head)?;
        b.switch_label(s, index, &list)?;
        b.set_label(s, &labels[0])?;
        b.fill_bytes(s, out, 0xA0)?;
        b.end(s)?;
        b.set_label(s, &labels[1])?;
        b.fill_bytes(s, out, 0xB1)
    })?;
    assert_eq!(model.kind(), Some(ModelKind::Built));
    // The model keeps the labels and the list it uses.
    drop(list);
    drop(labels);
    for (i, want) in [(1u32, 0xB1u8), (0, 0xA0), (7, 0xB1)] {
        model.copy_from_host(index, &[i])?;
        if i == 0 {
            model.run()?;
        } else {
            exec.scope(|s| s.execute(&mut model))?;
        }
        assert_eq!(model.get(out)?.to_vec()?, vec![want; 4], "index {i}");
    }
    Ok(())
}

#[test]
fn activation_and_stream_switches() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let ev = dev.create_event_with_flags(EventFlags::SYNC)?;
    let mut model = Model::new(&dev);
    let (l, r) = (
        model.adopt(DeviceBuffer::from_slice(&dev, &[0i32], P)?),
        model.adopt(DeviceBuffer::from_slice(&dev, &[0i32], P)?),
    );
    let (a, b, c) = (
        model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?),
        model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?),
        model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?),
    );
    let persistent = || dev.create_stream_with(StreamFlags::PERSISTENT, 0);
    model.build(|bld| {
        let head = bld.bind(persistent()?, StreamRole::Head)?;
        let helper = bld.bind(persistent()?, StreamRole::OnActivation)?;
        let taken = bld.bind(persistent()?, StreamRole::OnActivation)?;
        // head: activate helper and wait for it; then switch to `taken` when l > r.
        bld.activate(head, helper)?;
        bld.wait_event(head, &ev)?;
        bld.reset_event(head, &ev)?;
        bld.switch_stream(head, l, Condition::Greater, r, taken)?;
        bld.fill_bytes(head, a, 1)?;
        bld.fill_bytes(helper, b, 2)?;
        bld.record_event(helper, &ev)?;
        bld.fill_bytes(taken, c, 3)
    })?;
    for (left, right, switched) in [(5, 3, true), (3, 5, false)] {
        model.copy_from_host(l, &[left])?;
        model.copy_from_host(r, &[right])?;
        for s in [a, b, c] {
            model.copy_from_host(s, &[0; 4])?;
        }
        model.run_timeout(Duration::from_secs(10))?;
        assert_eq!(
            model.get(b)?.to_vec()?,
            vec![2; 4],
            "the activated stream ran"
        );
        assert_eq!(
            model.get(a)?.to_vec()?[0] == 1,
            !switched,
            "{left} > {right}"
        );
        assert_eq!(
            model.get(c)?.to_vec()?[0] == 3,
            switched,
            "{left} > {right}"
        );
    }
    Ok(())
}

#[test]
fn bind_refusals() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let mut model = Model::new(&dev);
    assert_argument(model.build(|b| b.bind(dev.create_stream()?, StreamRole::Head)));
    assert_eq!(model.kind(), None);
    // A bound stream belongs to its build: another model's builder refuses it.
    let bound = model.build(|b| {
        b.bind(
            dev.create_stream_with(StreamFlags::PERSISTENT, 0)?,
            StreamRole::Head,
        )
    })?;
    let mut other = Model::new(&dev);
    assert_argument(other.build(|b| b.end(bound)));
    assert_argument(other.build(|b| {
        let s = b.bind(
            dev.create_stream_with(StreamFlags::PERSISTENT, 0)?,
            StreamRole::Head,
        )?;
        b.activate(s, bound)
    }));
    model.clear()?;
    // A captured model has no synchronous run.
    let mut stream = dev.create_stream()?;
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    model.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(x, 1))?;
    assert_code(model.run(), AclError::PARAM_INVALID);
    Ok(())
}

#[test]
fn a_timed_out_run_is_stopped_before_it_returns() -> ascendcl::Result<()> {
    let rt = rt();
    let dev = rt.device(0)?;
    let never = dev.create_event_with_flags(EventFlags::SYNC)?;
    let mut model = Model::new(&dev);
    let out = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 4, P)?);
    model.build(|b| {
        let s = b.bind(
            dev.create_stream_with(StreamFlags::PERSISTENT, 0)?,
            StreamRole::Head,
        )?;
        // The event is never recorded: the wait never ends.
        b.wait_event(s, &never)?;
        b.fill_bytes(s, out, 1)
    })?;
    let e = model.run_timeout(Duration::from_millis(20)).unwrap_err();
    assert!(e.code().is_some(), "{e}");
    // The execution was aborted: the buffer is the model's again and nothing writes it.
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(model.get(out)?.to_vec()?, vec![0; 4]);
    Ok(())
}

#[test]
fn host_function_subscription_is_a_typed_error_on_a2() -> ascendcl::Result<()> {
    if !needs_emulator(
        "host_function_subscription_is_a_typed_error_on_a2",
        "A2 SoC",
    ) {
        return Ok(());
    }
    let rt = rt();
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let e = stream.subscribe_host_fns().unwrap_err();
    assert_eq!(e.code(), Some(AclError::FEATURE_NOT_SUPPORT), "{e}");
    // Host functions still run, on the runtime's thread.
    let h = stream.launch_host_fn(|| {})?;
    h.wait()?;
    Ok(())
}
