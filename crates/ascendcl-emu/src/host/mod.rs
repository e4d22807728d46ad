//! Host work queued on streams: callbacks handed to subscribed threads (`aclrtLaunchCallback`)
//! and host functions, run on the stream's worker or routed to subscribed threads
//! (`aclrtSubscribeHostFunc`).

pub(crate) mod host_func;
pub(crate) mod report;
pub(crate) mod subscriptions;
pub(crate) mod work;
