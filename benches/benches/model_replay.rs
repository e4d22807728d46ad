//! Replaying captured work: `cargo bench -p ascendcl-benches --bench model_replay`.
//!
//! | group | functions | what |
//! | --- | --- | --- |
//! | `model_replay/<tasks>` | `direct` | `tasks` memsets of one device buffer enqueued in a `Stream::scope` (each an `aclrtMemsetAsync`), then the scope's `aclrtSynchronizeStream` |
//! | `model_replay/<tasks>` | `captured` | the same memsets captured once into a `Model`; each iteration is one `aclmdlRIExecuteAsync` and the scope's synchronisation |
//!
//! The ratio `captured / direct` is the cost of one execution relative to issuing the tasks,
//! measured in the same process on the same backend.

use ascendcl::{CaptureMode, DeviceBuffer, MallocPolicy, Model};
use criterion::{BenchmarkId, Criterion};
use std::time::Duration;

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let rt = ascendcl::Runtime::new().expect("aclInit");
    let dev = rt.device(0).expect("aclrtSetDevice");
    let mut stream = dev.create_stream().expect("a stream");
    let mut group = c.benchmark_group("model_replay");
    for tasks in [1usize, 16, 256] {
        let mut direct = DeviceBuffer::<u8>::zeroed(&dev, 256, MallocPolicy::HugeFirst).unwrap();
        group.bench_function(BenchmarkId::new("direct", tasks), |b| {
            b.iter(|| {
                stream
                    .scope(|s| {
                        let d = s.claim(&mut direct);
                        for i in 0..tasks {
                            s.fill_bytes(d, i as u8)?;
                        }
                        Ok(())
                    })
                    .unwrap()
            })
        });
        let mut model = Model::new(&dev);
        let buf =
            model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 256, MallocPolicy::HugeFirst).unwrap());
        model
            .capture(&mut stream, CaptureMode::Global, |r| {
                (0..tasks).try_for_each(|i| r.fill_bytes(buf, i as u8))
            })
            .unwrap();
        group.bench_function(BenchmarkId::new("captured", tasks), |b| {
            b.iter(|| stream.scope(|s| s.execute(&mut model)).unwrap())
        });
    }
    group.finish();
    c.final_summary();
}
