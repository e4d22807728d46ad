//! What the `tracing` feature reports: a span for each scope, submission and kernel launch,
//! events for runtime failures and for releases that failed in `Drop`, and the backend chosen at
//! start-up with its reason. Without the feature the macros expand to nothing (their arguments
//! are not even evaluated) and [`LaunchSpan`] is an empty struct: no cost at all.

/// Enters an `INFO` span of target `ascendcl` until the end of the enclosing block:
/// `span!("scope", streams = 2)`.
#[cfg(feature = "tracing")]
macro_rules! span {
    ($name:literal $($fields:tt)*) => {
        let _span = ::tracing::info_span!(target: "ascendcl", $name $($fields)*).entered();
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! span {
    ($($t:tt)*) => {};
}

/// An event of target `ascendcl`: `event!(WARN, api, "message")`.
#[cfg(feature = "tracing")]
macro_rules! event {
    ($level:ident, $($rest:tt)*) => {
        ::tracing::event!(target: "ascendcl", ::tracing::Level::$level, $($rest)*)
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! event {
    ($($t:tt)*) => {};
}

pub(crate) use {event, span};

/// The span of a kernel launch made outside [`Scope::launch`](crate::Scope::launch) (the typed
/// launchers `ascendc-build` generates); entered from [`launch_span`] until dropped. An empty
/// struct without the `tracing` feature.
#[doc(hidden)]
#[derive(Debug)]
pub struct LaunchSpan {
    #[cfg(feature = "tracing")]
    _entered: tracing::span::EnteredSpan,
}

/// Enters the span of a launch of `kernel` on `blocks` blocks on a stream of `device` (-1 when
/// the caller does not know it; see [`LaunchSpan`]); for generated launchers, not part of the
/// documented API.
#[doc(hidden)]
#[inline(always)]
pub fn launch_span(kernel: &str, blocks: u32, device: i32) -> LaunchSpan {
    #[cfg(feature = "tracing")]
    {
        LaunchSpan {
            _entered: tracing::info_span!(target: "ascendcl", "launch", kernel, blocks, device)
                .entered(),
        }
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (kernel, blocks, device);
        LaunchSpan {}
    }
}
