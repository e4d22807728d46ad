//! The `tracing` feature of hccl, seen by a subscriber of this test's own: the HCCL backend
//! chosen, a span for each collective (inside the scope's span of ascendcl's feature), and an
//! event for a failing HCCL call. One test in a binary of its own: the subscriber is global.

use hccl::{Collectives, Comm, ReduceOp};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// (target, name, fields) of each span and event.
type Seen = (String, String, HashMap<String, String>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    spans: Mutex<Vec<Seen>>,
    events: Mutex<Vec<Seen>>,
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let m = attrs.metadata();
        self.spans
            .lock()
            .unwrap()
            .push((m.target().to_string(), m.name().to_string(), fields));
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let m = event.metadata();
        self.events
            .lock()
            .unwrap()
            .push((m.target().to_string(), m.name().to_string(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn collectives_and_hccl_failures_reach_a_subscriber() {
    let recorder: &'static Recorder = Box::leak(Box::default());
    tracing::subscriber::set_global_default(recorder).unwrap();

    let rt = ascendcl::Runtime::with_backend(ascendcl::BackendChoice::Emulator).unwrap();
    let devices = [rt.device(0).unwrap(), rt.device(1).unwrap()];
    let comms = Comm::init_all(&devices).unwrap();
    std::thread::scope(|t| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|comm| {
                t.spawn(move || {
                    let dev = comm.device().clone();
                    let stream = dev.create_stream().unwrap();
                    let send = dev.clone_htod(&[comm.rank() as i32 + 1; 4]).unwrap();
                    let mut recv = dev.alloc_zeros::<i32>(4).unwrap();
                    hccl::scope(&stream, |s| {
                        s.all_reduce(&comm, &send, &mut recv, ReduceOp::Sum)
                    })
                    .unwrap();
                    recv.copy_to_vec().unwrap()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), [3; 4]);
        }
    });

    let events = recorder.events.lock().unwrap().clone();
    let chosen: Vec<_> = events
        .iter()
        .filter(|(_, _, f)| {
            f.get("message")
                .is_some_and(|m| m.contains("HCCL backend chosen"))
        })
        .collect();
    assert_eq!(chosen.len(), 1, "{events:?}");
    assert_eq!(chosen[0].0, "hccl");
    assert_eq!(chosen[0].2["backend"], "emulator");
    assert_eq!(chosen[0].2["acl_backend"], "emulator");

    let spans = recorder.spans.lock().unwrap().clone();
    let collectives: Vec<_> = spans
        .iter()
        .filter(|(target, name, _)| target == "hccl" && name == "collective")
        .collect();
    assert_eq!(collectives.len(), 2, "{spans:?}");
    let mut ranks: Vec<_> = collectives
        .iter()
        .map(|(_, _, f)| f["rank"].clone())
        .collect();
    ranks.sort();
    assert_eq!(ranks, ["0", "1"]);
    for (_, _, f) in &collectives {
        assert_eq!(f["api"], "HcclAllReduce");
        assert_eq!(f["grouped"], "false");
    }
    // The scopes the collectives ran in are ascendcl's spans.
    let scopes = spans
        .iter()
        .filter(|(target, name, _)| target == "ascendcl" && name == "scope")
        .count();
    assert!(scopes >= 2, "{spans:?}");
    drop(spans);

    // A failing HCCL call (a rank table that is not JSON): a WARN event naming it.
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "not json").unwrap();
    let e = Comm::init_cluster_info(&devices[0], bad.path(), 0, None).unwrap_err();
    let events = recorder.events.lock().unwrap().clone();
    let failed: Vec<_> = events
        .iter()
        .filter(|(t, _, f)| {
            t == "hccl" && f.get("message").is_some_and(|m| m == "HCCL call failed")
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert_eq!(failed[0].2["api"], "HcclCommInitClusterInfo");
    assert_eq!(failed[0].2["error"], e.to_string());
}
