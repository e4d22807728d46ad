//! Host-function subscription (`aclrtSubscribeHostFunc`): a thread of this crate subscribed to
//! a stream runs the host functions launched on it, inside `aclrtProcessHostFunc`. Only the
//! IPV350 class of SoCs offers it; other runtimes answer `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`,
//! which [`Stream::subscribe_host_fns`] returns as that typed error.

use crate::error::{Error, Result};
use crate::raw;
use crate::stream::Stream;
use crate::subscribed_thread::{SubscribedThread, Subscription};
use ascendcl_sys::{self as sys, AclError};
use std::marker::PhantomData;

/// How long one `aclrtProcessHostFunc` call waits before the thread checks for shutdown.
const POLL_MS: i32 = 20;

/// A thread subscribed to a stream's host functions (`aclrtSubscribeHostFunc`): while it
/// lives, [`Stream::launch_host_fn`] closures launched on the stream run on this thread (it
/// loops on `aclrtProcessHostFunc`) instead of a runtime thread, in stream order, and the
/// stream waits for each. Dropping it (or [`HostFnSubscription::close`]) waits for the
/// stream, unsubscribes (`aclrtUnSubscribeHostFunc`) and joins the thread.
///
/// It holds a handle on the stream. Not `Send`: it owns its thread and must be closed by the
/// thread that opened it (never by a host function it runs, which would wait for itself).
#[derive(Debug)]
pub struct HostFnSubscription {
    thread: SubscribedThread<HostFns>,
    _not_send: PhantomData<*mut ()>,
}

/// The host-function kind of subscription.
#[derive(Debug)]
struct HostFns;

impl Subscription for HostFns {
    const THREAD_NAME: &'static str = "ascendcl-host-fn";
    const SUBSCRIBE_API: &'static str = "aclrtSubscribeHostFunc";
    const THREAD: &'static str = "the host-function thread";

    fn process() -> Result<()> {
        // SAFETY: a plain value; the calling thread is the subscribed one, and the closures it
        // runs were packaged by `Stream::launch_host_fn` to run once.
        unsafe { raw::aclrtProcessHostFunc(POLL_MS) }
    }

    fn timed_out(e: &Error) -> bool {
        matches!(
            e.code(),
            Some(AclError::REPORT_TIMEOUT)
                | Some(AclError::WAIT_CALLBACK_TIMEOUT)
                | Some(AclError::TIMEOUT)
                | Some(AclError::WAIT_TIMEOUT)
        )
    }

    unsafe fn subscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSubscribeHostFunc(thread_id, stream) }
    }

    unsafe fn unsubscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtUnSubscribeHostFunc(thread_id, stream) }
    }
}

impl HostFnSubscription {
    /// The OS thread id passed to `aclrtSubscribeHostFunc`.
    pub fn thread_id(&self) -> u64 {
        self.thread.thread_id()
    }

    /// The subscribed stream.
    pub fn stream(&self) -> &Stream {
        self.thread.stream()
    }

    /// Waits for the stream, unsubscribes and joins the thread, reporting failures (including
    /// the thread's own).
    pub fn close(mut self) -> Result<()> {
        self.thread.shutdown()
    }
}

impl Drop for HostFnSubscription {
    fn drop(&mut self) {
        crate::drop_errors::report(self.thread.shutdown());
    }
}

impl Stream {
    /// Starts a thread that runs this stream's host functions (`aclrtSubscribeHostFunc`).
    /// Offered by IPV350-class SoCs only: elsewhere the runtime's
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` comes back as the error
    /// (`e.code() == Some(AclError::FEATURE_NOT_SUPPORT)`), and host functions keep running on
    /// the runtime's thread.
    pub fn subscribe_host_fns(&self) -> Result<HostFnSubscription> {
        Ok(HostFnSubscription {
            thread: SubscribedThread::start(self)?,
            _not_send: PhantomData,
        })
    }
}
