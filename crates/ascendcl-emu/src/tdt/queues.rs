//! The process's queues: bounded FIFOs of messages, each on a device, identified by a queue id
//! and a unique name; blocking pushes and pops with the documented timeouts (-1 forever, 0 at
//! once, otherwise milliseconds); routes that forward what reaches a source queue to every
//! destination queue bound to it, as the device's queue scheduler does.
//!
//! One lock guards every queue and route (waits release it), so forwarding between queues
//! takes nothing else.

use super::dataset::ItemData;
use crate::base::error::*;
use crate::base::lock::{Condvar, Mutex, Rank, wait_until};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The longest queue name, its terminating NUL included (`RT_MQ_MAX_NAME_LEN`).
pub(crate) const MAX_NAME: usize = 128;
/// The depth of a queue created without one.
pub(crate) const DEFAULT_DEPTH: u32 = 8;
/// The depths a queue may have (a channel's capacity is its queue's depth).
pub(crate) const DEPTHS: std::ops::RangeInclusive<u32> = 2..=8192;
/// The largest user data of a message (the buffer's private area).
pub(crate) const MAX_USER_DATA: usize = 96;

/// What a message holds.
#[derive(Debug, Clone)]
pub(crate) enum Payload {
    /// Bytes and user data (`acltdtEnqueueData`).
    Bytes { data: Vec<u8>, user: Vec<u8> },
    /// A dataset sent on a channel (`acltdtSendTensor`).
    Dataset { name: String, items: Vec<ItemData> },
}

/// One queue.
#[derive(Debug)]
struct Queue {
    name: String,
    depth: u32,
    device: i32,
    messages: VecDeque<Payload>,
}

/// A route's status, as `acltdtGetQueueRouteParam` reports it.
pub(crate) const ROUTE_UNBIND: i32 = 0;
pub(crate) const ROUTE_BIND: i32 = 1;
pub(crate) const ROUTE_BIND_ABNORMAL: i32 = 2;

#[derive(Debug, Default)]
struct Table {
    next: u32,
    queues: BTreeMap<u32, Queue>,
    /// Bound routes (source, destination).
    routes: BTreeSet<(u32, u32)>,
}

static TABLE: LazyLock<(Mutex<Table>, Condvar)> =
    LazyLock::new(|| (Mutex::ranked(Rank::TdtQueues), Condvar::new()));

/// A timeout argument: -1 waits forever, 0 not at all, a positive value that many ms.
pub(crate) fn deadline(timeout_ms: i32) -> R<Option<Instant>> {
    match timeout_ms {
        -1 => Ok(None),
        t if t < -1 => fail(
            INVALID_PARAM,
            format!(
                "timeout {t} is invalid (-1 waits forever, 0 not at all, otherwise milliseconds)"
            ),
        ),
        t => Ok(Some(Instant::now() + Duration::from_millis(t as u64))),
    }
}

/// Creates a queue on `device`; `name` None gets a generated one. Returns its id.
pub(crate) fn create(name: Option<&str>, depth: u32, device: i32) -> R<u32> {
    if !DEPTHS.contains(&depth) {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "depth {depth} is outside {}..={}",
                DEPTHS.start(),
                DEPTHS.end()
            ),
        );
    }
    if let Some(n) = name
        && n.len() + 1 > MAX_NAME
    {
        return fail(
            INVALID_PARAM,
            format!(
                "the name is {} bytes long; with its NUL it must fit in {MAX_NAME}",
                n.len()
            ),
        );
    }
    let (lock, _) = &*TABLE;
    let mut t = lock.lock();
    let qid = t.next;
    let name = match name {
        Some(n) => n.to_string(),
        None => format!("queue_{qid}"),
    };
    if let Some((id, _)) = t.queues.iter().find(|(_, q)| q.name == name) {
        return fail(
            INVALID_PARAM,
            format!("a queue named {name:?} exists already (queue {id})"),
        );
    }
    t.next += 1;
    t.queues.insert(
        qid,
        Queue {
            name,
            depth,
            device,
            messages: VecDeque::new(),
        },
    );
    Ok(qid)
}

fn unknown<T>(qid: u32) -> R<T> {
    fail(
        INVALID_PARAM,
        format!("queue {qid} does not exist (not created, or destroyed)"),
    )
}

/// Destroys a queue; one with bound routes must be unbound first (500001, as the runtime).
pub(crate) fn destroy(qid: u32) -> R {
    let (lock, cv) = &*TABLE;
    let mut t = lock.lock();
    if !t.queues.contains_key(&qid) {
        return unknown(qid);
    }
    if let Some((s, d)) = t.routes.iter().find(|(s, d)| *s == qid || *d == qid) {
        return fail(
            FAILURE,
            format!("queue {qid} is in the bound route {s} -> {d}: unbind it first"),
        );
    }
    t.queues.remove(&qid);
    // Waiters on it see it gone.
    cv.notify_all();
    Ok(())
}

/// The messages in a queue now.
pub(crate) fn len(qid: u32) -> R<usize> {
    let t = TABLE.0.lock();
    match t.queues.get(&qid) {
        Some(q) => Ok(q.messages.len()),
        None => unknown(qid),
    }
}

/// A queue's name, depth and device.
pub(crate) fn info(qid: u32) -> R<(String, u32, i32)> {
    let t = TABLE.0.lock();
    match t.queues.get(&qid) {
        Some(q) => Ok((q.name.clone(), q.depth, q.device)),
        None => unknown(qid),
    }
}

/// Drops every message of a queue.
pub(crate) fn reset(qid: u32) -> R {
    let (lock, cv) = &*TABLE;
    let mut t = lock.lock();
    match t.queues.get_mut(&qid) {
        Some(q) => {
            q.messages.clear();
            cv.notify_all();
            Ok(())
        }
        None => unknown(qid),
    }
}

/// Appends a message, waiting for room until `deadline`: full at the deadline is
/// `ACL_ERROR_RT_QUEUE_FULL` (207014).
pub(crate) fn push(qid: u32, message: Payload, deadline: Option<Instant>) -> R {
    let (lock, cv) = &*TABLE;
    let t = lock.lock();
    let (mut t, room) = wait_until(cv, t, deadline, |t| match t.queues.get(&qid) {
        Some(q) => q.messages.len() < q.depth as usize,
        None => true,
    });
    let Some(q) = t.queues.get_mut(&qid) else {
        return unknown(qid);
    };
    if !room {
        return fail(
            RT_QUEUE_FULL,
            format!("queue {qid} ({:?}) is full ({} messages)", q.name, q.depth),
        );
    }
    q.messages.push_back(message);
    forward(&mut t);
    cv.notify_all();
    Ok(())
}

/// The head of a queue, without taking it (waiting until `deadline`): empty at the deadline is
/// `ACL_ERROR_RT_QUEUE_EMPTY` (207013). `take` looks at it and says whether to remove it; its
/// error leaves the message in the queue.
pub(crate) fn pop_with<T>(
    qid: u32,
    deadline: Option<Instant>,
    take: impl FnOnce(&Payload) -> R<T>,
) -> R<T> {
    let (lock, cv) = &*TABLE;
    let t = lock.lock();
    let (mut t, ready) = wait_until(cv, t, deadline, |t| match t.queues.get(&qid) {
        Some(q) => !q.messages.is_empty(),
        None => true,
    });
    let Some(q) = t.queues.get_mut(&qid) else {
        return unknown(qid);
    };
    if !ready {
        return fail(
            RT_QUEUE_EMPTY,
            format!("queue {qid} ({:?}) is empty", q.name),
        );
    }
    let head = q.messages.front().expect("a message is there");
    let out = take(head)?;
    q.messages.pop_front();
    // Room in a destination: what waits in its sources can move on.
    forward(&mut t);
    cv.notify_all();
    Ok(out)
}

/// Moves what waits in source queues to every destination bound to them, while every
/// destination has room (the scheduler delivers each message to all of them, in order).
fn forward(t: &mut Table) {
    loop {
        let mut moved = false;
        let sources: BTreeSet<u32> = t.routes.iter().map(|(s, _)| *s).collect();
        for src in sources {
            let dsts: Vec<u32> = t
                .routes
                .iter()
                .filter(|(s, _)| *s == src)
                .map(|(_, d)| *d)
                .collect();
            let has_room = |t: &Table| {
                dsts.iter().all(|d| {
                    t.queues
                        .get(d)
                        .is_some_and(|q| q.messages.len() < q.depth as usize)
                })
            };
            while has_room(t) {
                let Some(m) = t.queues.get_mut(&src).and_then(|q| q.messages.pop_front()) else {
                    break;
                };
                for d in &dsts {
                    if let Some(q) = t.queues.get_mut(d) {
                        q.messages.push_back(m.clone());
                    }
                }
                moved = true;
            }
        }
        if !moved {
            return;
        }
    }
}

/// Binds a route: both queues must exist and differ, and the route may not close a cycle.
/// Returns its status (`ROUTE_BIND`, or `ROUTE_BIND_ABNORMAL` with why).
pub(crate) fn bind(src: u32, dst: u32) -> Result<(), String> {
    let (lock, cv) = &*TABLE;
    let mut t = lock.lock();
    for q in [src, dst] {
        if !t.queues.contains_key(&q) {
            return Err(format!("queue {q} does not exist"));
        }
    }
    if src == dst {
        return Err(format!("a route from queue {src} to itself"));
    }
    if t.routes.contains(&(src, dst)) {
        return Ok(());
    }
    // A path dst -> ... -> src would make a cycle.
    let mut seen = BTreeSet::new();
    let mut todo = vec![dst];
    while let Some(q) = todo.pop() {
        if q == src {
            return Err(format!(
                "the route {src} -> {dst} would close a cycle of routes"
            ));
        }
        if seen.insert(q) {
            todo.extend(t.routes.iter().filter(|(s, _)| *s == q).map(|(_, d)| *d));
        }
    }
    t.routes.insert((src, dst));
    forward(&mut t);
    cv.notify_all();
    Ok(())
}

/// Unbinds a route; one that is not bound is an error.
pub(crate) fn unbind(src: u32, dst: u32) -> Result<(), String> {
    let mut t = TABLE.0.lock();
    if t.routes.remove(&(src, dst)) {
        Ok(())
    } else {
        Err(format!("the route {src} -> {dst} is not bound"))
    }
}

/// The bound routes that match: from `src` (when given) and to `dst` (when given); with
/// `abnormal`, only those whose queues are gone (none: a queue in a route cannot be destroyed).
pub(crate) fn routes(src: Option<u32>, dst: Option<u32>, abnormal: bool) -> Vec<(u32, u32, i32)> {
    let t = TABLE.0.lock();
    t.routes
        .iter()
        .filter(|(s, d)| src.is_none_or(|x| x == *s) && dst.is_none_or(|x| x == *d))
        .map(|&(s, d)| {
            let ok = t.queues.contains_key(&s) && t.queues.contains_key(&d);
            (s, d, if ok { ROUTE_BIND } else { ROUTE_BIND_ABNORMAL })
        })
        .filter(|r| !abnormal || r.2 == ROUTE_BIND_ABNORMAL)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(b: u8) -> Payload {
        Payload::Bytes {
            data: vec![b],
            user: Vec::new(),
        }
    }

    fn byte(p: &Payload) -> R<u8> {
        match p {
            Payload::Bytes { data, .. } => Ok(data[0]),
            _ => fail(INVALID_PARAM, "not bytes"),
        }
    }

    #[test]
    fn a_queue_is_bounded_and_ordered_with_timeouts() {
        let q = create(None, 2, 0).unwrap();
        push(q, bytes(1), deadline(0).unwrap()).unwrap();
        push(q, bytes(2), deadline(0).unwrap()).unwrap();
        let start = Instant::now();
        let e = push(q, bytes(3), deadline(30).unwrap()).unwrap_err();
        assert_eq!(e.code, RT_QUEUE_FULL);
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert_eq!(len(q).unwrap(), 2);
        assert_eq!(pop_with(q, None, byte).unwrap(), 1);
        assert_eq!(pop_with(q, None, byte).unwrap(), 2);
        let e = pop_with(q, deadline(0).unwrap(), byte).unwrap_err();
        assert_eq!(e.code, RT_QUEUE_EMPTY);
        destroy(q).unwrap();
        assert_eq!(len(q).unwrap_err().code, INVALID_PARAM);
    }

    #[test]
    fn a_blocked_pop_wakes_for_a_push_of_another_thread() {
        let q = create(None, 4, 0).unwrap();
        let t = std::thread::spawn(move || pop_with(q, None, byte));
        std::thread::sleep(Duration::from_millis(20));
        push(q, bytes(7), None).unwrap();
        assert_eq!(t.join().unwrap().unwrap(), 7);
        destroy(q).unwrap();
    }

    #[test]
    fn names_are_unique_and_bounded() {
        let q = create(Some("tdt-unit-unique"), 4, 0).unwrap();
        assert_eq!(
            create(Some("tdt-unit-unique"), 4, 0).unwrap_err().code,
            INVALID_PARAM
        );
        assert_eq!(
            create(Some(&"n".repeat(MAX_NAME)), 4, 0).unwrap_err().code,
            INVALID_PARAM
        );
        assert!(create(Some(&"n".repeat(MAX_NAME - 1)), 4, 0).is_ok());
        assert_eq!(create(None, 1, 0).unwrap_err().code, RT_PARAM_INVALID);
        destroy(q).unwrap();
    }

    #[test]
    fn a_route_forwards_to_every_destination_and_refuses_cycles() {
        let (s, a, b) = (
            create(None, 4, 0).unwrap(),
            create(None, 2, 0).unwrap(),
            create(None, 4, 0).unwrap(),
        );
        push(s, bytes(1), None).unwrap();
        bind(s, a).unwrap();
        bind(s, b).unwrap();
        assert!(bind(a, s).is_err(), "a cycle");
        assert!(bind(a, a).is_err(), "to itself");
        // The first message went to a when its route was bound, before b's was.
        assert_eq!(
            (len(s).unwrap(), len(a).unwrap(), len(b).unwrap()),
            (0, 1, 0)
        );
        push(s, bytes(2), None).unwrap();
        push(s, bytes(3), None).unwrap();
        // a is full (depth 2): the third message waits in s, for both.
        assert_eq!(
            (len(s).unwrap(), len(a).unwrap(), len(b).unwrap()),
            (1, 2, 1)
        );
        assert_eq!(pop_with(a, None, byte).unwrap(), 1);
        assert_eq!(
            (len(s).unwrap(), len(a).unwrap(), len(b).unwrap()),
            (0, 2, 2)
        );
        assert_eq!(pop_with(b, None, byte).unwrap(), 2);
        assert_eq!(pop_with(b, None, byte).unwrap(), 3);
        assert_eq!(routes(Some(s), None, false).len(), 2);
        assert_eq!(routes(Some(s), Some(b), false), vec![(s, b, ROUTE_BIND)]);
        assert_eq!(destroy(s).unwrap_err().code, FAILURE);
        unbind(s, a).unwrap();
        unbind(s, b).unwrap();
        assert!(unbind(s, b).is_err());
        for q in [s, a, b] {
            destroy(q).unwrap();
        }
    }
}
