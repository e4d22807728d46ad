//! The stream engine: in-order queues of work, each run by its own worker thread. It knows one
//! trait, [`work::Work`] (what a unit of work touches, how it runs, how it fails), and one seam
//! for what records a stream's submissions instead of running them, [`record::Recorder`], and one
//! for what times the work it runs, [`trace`]; it imports no concept.

pub(crate) mod exception;
pub(crate) mod failure;
mod poll;
pub(crate) mod record;
pub(crate) mod stream;
pub(crate) mod trace;
pub(crate) mod work;
