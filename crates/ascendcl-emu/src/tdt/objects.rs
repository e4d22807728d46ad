//! The descriptors of `acl_tdt_queue.h`: queue attributes (a name and a depth), routes (source,
//! destination, status), route lists (routes copied by value) and route query information (a
//! mode and the queue ids it needs). Each is a handle of a registry, so a destroyed or foreign
//! pointer is refused rather than read.

use super::queues::{DEFAULT_DEPTH, ROUTE_UNBIND};
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::LazyLock;

/// A queue's attributes: an empty name means a generated one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attr {
    pub name: CString,
    pub depth: u32,
}

/// A route between two queues, with the status a bind or a query wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    pub src: u32,
    pub dst: u32,
    pub status: i32,
}

/// What a route query asks for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Query {
    pub mode: Option<i32>,
    pub src: Option<u32>,
    pub dst: Option<u32>,
}

#[derive(Debug)]
enum Object {
    Attr(Attr),
    Route(Route),
    List(Vec<Route>),
    Query(Query),
}

static OBJECTS: LazyLock<Mutex<HashMap<usize, Object>>> =
    LazyLock::new(|| Mutex::ranked(Rank::TdtDescriptors));

fn insert(o: Object) -> usize {
    let h = crate::base::hub::new_handle();
    OBJECTS.lock().insert(h, o);
    h
}

/// A new attribute set: a generated name, depth 8.
pub(crate) fn create_attr() -> usize {
    insert(Object::Attr(Attr {
        name: CString::default(),
        depth: DEFAULT_DEPTH,
    }))
}

/// A new route (status unbound).
pub(crate) fn create_route(src: u32, dst: u32) -> usize {
    insert(Object::Route(Route {
        src,
        dst,
        status: ROUTE_UNBIND,
    }))
}

/// A new, empty route list.
pub(crate) fn create_list() -> usize {
    insert(Object::List(Vec::new()))
}

/// New query information, nothing set.
pub(crate) fn create_query() -> usize {
    insert(Object::Query(Query::default()))
}

macro_rules! accessors {
    ($with:ident, $destroy:ident, $variant:ident, $t:ty, $what:literal) => {
        /// Runs `f` on the live object of this kind `h` names.
        pub(crate) fn $with<T>(h: usize, f: impl FnOnce(&mut $t) -> R<T>) -> R<T> {
            match OBJECTS.lock().get_mut(&h) {
                Some(Object::$variant(o)) => f(o),
                _ => fail(
                    INVALID_PARAM,
                    concat!($what, " is NULL or not a live ", $what),
                ),
            }
        }

        /// Destroys the object of this kind `h` names.
        pub(crate) fn $destroy(h: usize) -> R {
            let mut objects = OBJECTS.lock();
            match objects.get(&h) {
                Some(Object::$variant(_)) => {
                    objects.remove(&h);
                    Ok(())
                }
                _ => fail(
                    INVALID_PARAM,
                    concat!($what, " is NULL or not a live ", $what),
                ),
            }
        }
    };
}

accessors!(with_attr, destroy_attr, Attr, Attr, "queue attribute");
accessors!(with_route, destroy_route, Route, Route, "queue route");
accessors!(
    with_list,
    destroy_list,
    List,
    Vec<Route>,
    "queue route list"
);
accessors!(
    with_query,
    destroy_query,
    Query,
    Query,
    "queue route query info"
);

/// The route `h` names, by value.
pub(crate) fn route(h: usize) -> R<Route> {
    with_route(h, |r| Ok(*r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_are_typed_handles() {
        let a = create_attr();
        let r = create_route(1, 2);
        assert_eq!(with_attr(a, |a| Ok(a.depth)).unwrap(), DEFAULT_DEPTH);
        assert_eq!(
            with_route(a, |r| Ok(r.src)).unwrap_err().code,
            INVALID_PARAM
        );
        assert_eq!(destroy_route(a).unwrap_err().code, INVALID_PARAM);
        let l = create_list();
        let route = route(r).unwrap();
        with_list(l, |l| {
            l.push(route);
            Ok(())
        })
        .unwrap();
        assert_eq!(with_list(l, |l| Ok(l.len())).unwrap(), 1);
        destroy_route(r).unwrap();
        assert_eq!(
            with_list(l, |l| Ok(l[0].dst)).unwrap(),
            2,
            "copied by value"
        );
        for (h, d) in [(a, destroy_attr as fn(usize) -> R), (l, destroy_list)] {
            d(h).unwrap();
        }
    }
}
