//! Data channels (`acl_tdt.h`) and queues (`acl_tdt_queue.h`): bounded message queues of the
//! process between the host and the emulated devices, with real data, blocking and timeouts.
//!
//! | file | owns |
//! |---|---|
//! | `channel.rs` | data channels with a capacity: a queue of datasets each |
//! | `queues.rs` | the table of queues (channels' included): depth, messages, waits with timeouts, routes and their forwarding |
//! | `dataset.rs` | data items and datasets: what a channel carries, their ownership |
//! | `objects.rs` | the small descriptors of `acl_tdt_queue.h`: queue attributes, routes, route lists, query information |
//!
//! A channel with a capacity is a queue of the table whose messages are datasets; a queue of
//! `acltdtCreateQueue` carries bytes and user data. Queues belong to the process, as the host
//! processor's do (sharing them with other processes, `acltdtGrantQueue`, is the shared-pool
//! processor's, which a host does not use: 200006).

pub(crate) mod channel;
pub(crate) mod dataset;
pub(crate) mod objects;
pub(crate) mod queues;
