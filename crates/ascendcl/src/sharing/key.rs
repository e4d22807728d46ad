//! Export keys: the names the runtime gives exported IPC memory ([`IpcMemKey`]) and exported
//! notifies ([`NotifyKey`]), at most 64 bytes with no NUL, passed to other processes as text.

use crate::error::{Error, Result};
use std::ffi::{CStr, CString, c_char};
use std::fmt;

/// The size of the buffer the runtime writes a key into: 64 bytes and the NUL.
pub(crate) const KEY_BUFFER: usize = 65;

macro_rules! export_key {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name(CString);

        impl $name {
            /// A key received from the exporting process: 1 to 64 bytes, no NUL; anything else
            /// is an [`Error::Argument`]. Whether it names a live export is for the runtime to
            /// say when it is imported.
            pub fn new(key: impl Into<Vec<u8>>) -> Result<$name> {
                let bytes = key.into();
                if bytes.is_empty() || bytes.len() >= KEY_BUFFER {
                    return Err(Error::argument(
                        concat!(stringify!($name), "::new"),
                        format!("{} bytes: a key has 1 to 64", bytes.len()),
                    ));
                }
                CString::new(bytes).map($name).map_err(|_| {
                    Error::argument(concat!(stringify!($name), "::new"), "a key has no NUL byte")
                })
            }

            /// The key the runtime wrote into `buf` (NUL-terminated).
            pub(crate) fn from_buffer(api: &'static str, buf: &[c_char; KEY_BUFFER]) -> Result<$name> {
                let bytes: Vec<u8> = buf.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
                if bytes.len() == KEY_BUFFER || bytes.is_empty() {
                    return Err(Error::argument(api, "the runtime wrote no NUL-terminated key"));
                }
                $name::new(bytes)
            }

            /// The key's bytes (without the NUL).
            pub fn as_bytes(&self) -> &[u8] {
                self.0.as_bytes()
            }

            /// The key as the C functions take it.
            pub fn as_c_str(&self) -> &CStr {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({:?})"), self.0)
            }
        }

        /// The key as text (bytes that are not UTF-8 are replaced: keys the runtime makes are
        /// printable).
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0.to_string_lossy())
            }
        }

        impl std::str::FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<$name> {
                $name::new(s)
            }
        }
    };
}

export_key!(
    /// The name of device memory exported to other processes
    /// ([`IpcMemExport::key`](crate::IpcMemExport::key), from `aclrtIpcMemGetExportKey`), which
    /// they import with [`IpcMemImport::open`](crate::IpcMemImport::open).
    ///
    /// ```
    /// let key: ascendcl::IpcMemKey = "key-from-the-other-process".parse()?;
    /// assert_eq!(key.to_string(), "key-from-the-other-process");
    /// assert!("".parse::<ascendcl::IpcMemKey>().is_err());
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    IpcMemKey
);

export_key!(
    /// The name of a notify exported to other processes ([`Notify::export`](crate::Notify::export),
    /// from `aclrtNotifyGetExportKey`), which they import with
    /// [`ImportedNotify::open`](crate::ImportedNotify::open).
    NotifyKey
);
