//! How the ranks of a communicator find each other: a hub (a TCP listener run by the process
//! that created the root info, or by the first process of a rank table's first server) that
//! collects every rank's [`Member`](crate::wire::Member) description and hands out the list,
//! then relays aborts and departures until every rank has left; and each rank's side of it.

pub(crate) mod hub;
pub(crate) mod member;
