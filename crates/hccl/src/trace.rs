//! What the `tracing` feature reports for HCCL: a span for each collective, events for HCCL
//! failures and for the HCCL backend chosen. Without the feature the macros expand to nothing
//! (their arguments are not evaluated).

/// Enters an `INFO` span of target `hccl` until the end of the enclosing block.
#[cfg(feature = "tracing")]
macro_rules! span {
    ($name:literal $($fields:tt)*) => {
        let _span = ::tracing::info_span!(target: "hccl", $name $($fields)*).entered();
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! span {
    ($($t:tt)*) => {};
}

/// An event of target `hccl`.
#[cfg(feature = "tracing")]
macro_rules! event {
    ($level:ident, $($rest:tt)*) => {
        ::tracing::event!(target: "hccl", ::tracing::Level::$level, $($rest)*)
    };
}
#[cfg(not(feature = "tracing"))]
macro_rules! event {
    ($($t:tt)*) => {};
}

pub(crate) use {event, span};
