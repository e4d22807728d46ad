//! `raw_enum!`: Rust enums over the C enums' values, with lossless conversions both ways (an
//! unknown raw value is an error, never undefined behaviour).

macro_rules! raw_enum {
    (
        $(#[$m:meta])* $vis:vis enum $name:ident : $raw:ty {
            $( $(#[$vm:meta])* $v:ident = $c:path ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        $vis enum $name { $( $(#[$vm])* $v ),* }

        impl $name {
            /// Every variant, in the order of their raw values.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
        }

        impl From<$name> for $raw {
            fn from(v: $name) -> $raw {
                match v { $( $name::$v => $c as $raw ),* }
            }
        }

        impl TryFrom<$raw> for $name {
            type Error = crate::Error;
            fn try_from(raw: $raw) -> crate::Result<$name> {
                $( if raw == $c as $raw { return Ok($name::$v); } )*
                Err(crate::Error::UnknownValue { what: stringify!($name), value: raw as u64 })
            }
        }
    };
}
pub(crate) use raw_enum;
