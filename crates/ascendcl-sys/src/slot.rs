//! What every function-table crate of the workspace (this one, `hccl-sys`) needs once per
//! process, written once: the slot of the active backend ([`backend_slot!`]) and the name of the
//! last missing function a thread called ([`missing_symbol_slot!`]).

/// Expands, in the invoking module, to the process's backend slot: a `static ACTIVE` holding
/// `backend` (a struct with an `api: api` field), and `install` (the first call wins), `active`,
/// `api` (one atomic load; panics with `no_backend` when nothing was installed) and `try_api`.
/// `what` names the library in the documentation ("" or "HCCL "); `panics` is the paragraph of
/// `api`'s `# Panics` section.
#[doc(hidden)]
#[macro_export]
macro_rules! backend_slot {
    (
        backend: $Backend:ident,
        api: $Api:ident,
        what: $what:literal,
        panics: $panics:literal,
        no_backend: $no_backend:literal $(,)?
    ) => {
        static ACTIVE: ::std::sync::OnceLock<$Backend> = ::std::sync::OnceLock::new();

        #[doc = concat!("Makes `backend` the process's ", $what, "backend. The first call wins; \
            later calls get the active backend back as `Err` (and `backend` is dropped).")]
        pub fn install(
            backend: $Backend,
        ) -> ::std::result::Result<&'static $Backend, &'static $Backend> {
            let mut slot = Some(backend);
            let active = ACTIVE.get_or_init(|| slot.take().expect("taken once"));
            if slot.is_none() {
                Ok(active)
            } else {
                Err(active)
            }
        }

        #[doc = concat!("The active ", $what, "backend, if one was installed.")]
        pub fn active() -> ::std::option::Option<&'static $Backend> {
            ACTIVE.get()
        }

        #[doc = concat!("The active ", $what, "backend's function table. One atomic load; no \
            lock, no lookup.")]
        ///
        /// # Panics
        #[doc = $panics]
        #[inline]
        pub fn api() -> &'static $Api {
            match ACTIVE.get() {
                Some(b) => &b.api,
                None => no_backend(),
            }
        }

        #[cold]
        #[inline(never)]
        fn no_backend() -> ! {
            panic!($no_backend)
        }

        #[doc = concat!("The active ", $what, "backend's function table, or `None` when none \
            was installed.")]
        #[inline]
        pub fn try_api() -> ::std::option::Option<&'static $Api> {
            ACTIVE.get().map(|b| &b.api)
        }
    };
}

/// Expands, in the invoking module, to the per-thread record of the last function called that
/// the backend lacks: `record_missing` (what the stubs call) and `take_missing_symbol`. `what`
/// names the library ("" or "HCCL "), `not_supported` the code a stub returns.
#[doc(hidden)]
#[macro_export]
macro_rules! missing_symbol_slot {
    (what: $what:literal, not_supported: $not_supported:literal $(,)?) => {
        ::std::thread_local! {
            static MISSING: ::std::cell::Cell<::std::option::Option<&'static str>> =
                const { ::std::cell::Cell::new(None) };
        }

        /// Records that the calling thread just called a function the backend lacks.
        #[doc(hidden)]
        pub fn record_missing(name: &'static str) {
            MISSING.with(|m| m.set(Some(name)));
        }

        #[doc = concat!("Returns and clears the name of the last ", $what, "function the calling \
            thread called that the active backend lacks. Read it right after a call returned ",
            $not_supported, ".")]
        pub fn take_missing_symbol() -> ::std::option::Option<&'static str> {
            MISSING.with(::std::cell::Cell::take)
        }
    };
}
