//! The `tracing` feature, seen by a subscriber of this test's own: the backend chosen and why,
//! spans for scopes (one stream and several), submissions and kernel launches, nested as the
//! calls are, and events for a failing runtime call and for a release that failed in `Drop`.
//! One test in a binary of its own: the subscriber and the backend are process-wide.

mod common;

use ascendcl::{BackendChoice, LaunchConfig, Module, Runtime};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span or an event as the subscriber saw it.
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    name: String,
    level: tracing::Level,
    fields: HashMap<String, String>,
    /// The id of the span it was created in (its parent), if any.
    parent: Option<u64>,
    id: Option<u64>,
}

impl Seen {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("{self:?} has no field {name}"))
    }
}

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

/// Records every span and event, with the span each was made in (a thread's entered spans).
#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    spans: Mutex<Vec<Seen>>,
    events: Mutex<Vec<Seen>>,
    stacks: Mutex<HashMap<std::thread::ThreadId, Vec<u64>>>,
}

impl Recorder {
    fn current(&self) -> Option<u64> {
        let stacks = self.stacks.lock().unwrap();
        stacks
            .get(&std::thread::current().id())
            .and_then(|s| s.last().copied())
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = attrs.parent().map(Id::into_u64).or_else(|| {
            if attrs.is_contextual() {
                self.current()
            } else {
                None
            }
        });
        self.spans.lock().unwrap().push(Seen {
            target: attrs.metadata().target().to_string(),
            name: attrs.metadata().name().to_string(),
            level: *attrs.metadata().level(),
            fields,
            parent,
            id: Some(id),
        });
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        self.events.lock().unwrap().push(Seen {
            target: event.metadata().target().to_string(),
            name: event.metadata().name().to_string(),
            level: *event.metadata().level(),
            fields,
            parent: self.current(),
            id: None,
        });
    }
    fn enter(&self, span: &Id) {
        let mut stacks = self.stacks.lock().unwrap();
        stacks
            .entry(std::thread::current().id())
            .or_default()
            .push(span.into_u64());
    }
    fn exit(&self, span: &Id) {
        let mut stacks = self.stacks.lock().unwrap();
        let stack = stacks.entry(std::thread::current().id()).or_default();
        if let Some(i) = stack.iter().rposition(|&s| s == span.into_u64()) {
            stack.remove(i);
        }
    }
}

fn spans(r: &Recorder, name: &str) -> Vec<Seen> {
    let all = r.spans.lock().unwrap();
    all.iter().filter(|s| s.name == name).cloned().collect()
}

fn events(r: &Recorder, message_part: &str) -> Vec<Seen> {
    let all = r.events.lock().unwrap();
    all.iter()
        .filter(|e| {
            e.fields
                .get("message")
                .is_some_and(|m| m.contains(message_part))
        })
        .cloned()
        .collect()
}

#[test]
fn spans_and_events_reach_a_subscriber() {
    let recorder: &'static Recorder = Box::leak(Box::default());
    tracing::subscriber::set_global_default(recorder).unwrap();

    // The backend chosen, with its reason, once.
    let rt = Runtime::with_backend(BackendChoice::Emulator).unwrap();
    let _again = Runtime::with_backend(BackendChoice::Emulator).unwrap();
    let chosen = events(recorder, "backend chosen");
    assert_eq!(chosen.len(), 1, "{chosen:?}");
    assert_eq!(chosen[0].target, "ascendcl");
    assert_eq!(chosen[0].level, tracing::Level::INFO);
    assert_eq!(chosen[0].field("backend"), "emulator");
    assert!(
        chosen[0].field("reason").contains("the emulator was named"),
        "{chosen:?}"
    );

    let dev = rt.device(0).unwrap();
    let (a, b) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());

    // A scope on one stream, with a launch in it: the launch's span is inside the scope's.
    let module = Module::load(&dev, common::module_kernels()).unwrap();
    let scale = module.function("scale").unwrap();
    let mut data = dev.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    a.scope(|s| {
        // SAFETY: scale(float* data, float factor, uint32_t n) over the 3 elements.
        unsafe {
            s.launch_builder(&scale)
                .arg(&mut data)
                .arg(2.0f32)
                .arg(3u32)
                .launch(&LaunchConfig::blocks(2))
        }
    })
    .unwrap();
    assert_eq!(data.copy_to_vec().unwrap(), [2.0, 4.0, 6.0]);
    let scopes = spans(recorder, "scope");
    assert_eq!(scopes.len(), 1, "{scopes:?}");
    assert_eq!(scopes[0].target, "ascendcl");
    assert_eq!(scopes[0].field("streams"), "1");
    assert_eq!(scopes[0].field("device"), "0");
    let launches = spans(recorder, "launch");
    assert_eq!(launches.len(), 1, "{launches:?}");
    assert_eq!(launches[0].field("kernel"), "scale");
    assert_eq!(launches[0].field("blocks"), "2");
    assert_eq!(
        launches[0].parent, scopes[0].id,
        "the launch is inside the scope"
    );

    // A scope over two streams, and a submission.
    let mut out = vec![0u32; 4];
    let src = dev.clone_htod(&[7u32; 4]).unwrap();
    ascendcl::scope([&a, &b], |[x, _]| x.copy(&mut out, &src)).unwrap();
    assert_eq!(out, [7; 4]);
    let two = spans(recorder, "scope");
    assert_eq!(two.len(), 2);
    assert_eq!(two[1].field("streams"), "2");
    let job = b.submit((src, vec![0u32; 4]), |s, (src, back)| s.copy(back, &*src));
    assert_eq!(job.wait().unwrap().1, [7; 4]);
    let submits = spans(recorder, "submit");
    assert_eq!(submits.len(), 1, "{submits:?}");
    assert_eq!(submits[0].field("streams"), "1");

    // A failing runtime call is a WARN event naming the function and the code.
    let e = rt.device(99).unwrap_err();
    let failed = events(recorder, "runtime call failed");
    let set = failed
        .iter()
        .find(|f| f.field("api") == "aclrtSetDevice")
        .unwrap_or_else(|| panic!("no event for aclrtSetDevice in {failed:?}"));
    assert_eq!(set.level, tracing::Level::WARN);
    assert_eq!(set.field("code"), e.code().unwrap().0.to_string());
    assert!(set.field("error").contains("aclrtSetDevice"), "{set:?}");

    // A release that fails in Drop is an ERROR event (and still kept for take_drop_errors).
    // (A stream of its own: `b`'s last handle may be held by the submission's completion a
    // little longer.)
    let c = dev.create_stream().unwrap();
    ascendcl_emu::inject_fault("aclrtDestroyStream", ascendcl_emu::FaultSpec::Nth(1));
    drop(c);
    ascendcl_emu::clear_faults();
    let dropped = events(recorder, "a release in Drop failed");
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].level, tracing::Level::ERROR);
    assert_eq!(dropped[0].field("api"), "aclrtDestroyStream");
    let kept = ascendcl::take_drop_errors();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].api(), Some("aclrtDestroyStream"));
}
