//! `frozen!`: a struct whose fields only its own module (or the module named) may
//! set, read everywhere else through one getter per field.
//!
//! Owns the macro and nothing else. Used for the configuration (`model::config`'s
//! parts, `wire::tls::TlsOptions`, `model::pacing::Pacing`): a value built once and
//! then only read, so no code outside the builder can change a field after `build`.
//!
//! ```ignore
//! frozen! {
//!     /// Where the load goes.
//!     #[derive(Debug, Clone)]
//!     pub(crate) struct Target [pub(super)] {
//!         /// The server.
//!         server: String => &str as borrow;
//!         /// The port.
//!         port: u16 => u16 as copy;
//!     }
//! }
//! ```
//!
//! Each field is `name: Type => Returned as how;`, where `how` says how the getter
//! (`pub(crate)`, named as the field, documented as it, `#[inline]`: the engine reads
//! some on its hot path) returns it: `copy` (the value), `borrow` (`&field`, coerced to `Returned`:
//! `&str` for a `String`, a slice for a `Vec`), `deref` (`Option<String>` as
//! `Option<&str>`) or `as_ref` (`Option<T>` as `Option<&T>`). The visibility in
//! brackets is the fields' own. `name: Type => Returned as how, set_name;` also gives a
//! setter, for a value type that a builder in another module fills (`TlsOptions`,
//! `Pacing`): whoever holds it by shared reference, as a built `Config`'s readers do,
//! still cannot change it.

/// Declares a frozen struct (see the module's documentation).
macro_rules! frozen {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident [] $fields:tt
    ) => {
        $crate::wire::frozen::frozen! {
            $(#[$meta])*
            $vis struct $name [pub(self)] $fields
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident [$fvis:vis] {
            $(
                $(#[doc = $doc:expr])*
                $field:ident: $ty:ty => $ret:ty as $how:ident $(, $set:ident)?;
            )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[doc = $doc])*
                $fvis $field: $ty,
            )*
        }

        impl $name {
            $(
                $(#[doc = $doc])*
                #[inline]
                #[allow(dead_code)]
                pub(crate) fn $field(&self) -> $ret {
                    $crate::wire::frozen::frozen!(@get self.$field, $how)
                }
                $(
                    #[doc = concat!("Sets `", stringify!($field), "` (for the value's builder).")]
                    pub(crate) fn $set(&mut self, value: $ty) -> &mut Self {
                        self.$field = value;
                        self
                    }
                )?
            )*
        }
    };
    (@get $e:expr, copy) => {
        $e
    };
    (@get $e:expr, borrow) => {
        &$e
    };
    (@get $e:expr, deref) => {
        $e.as_deref()
    };
    (@get $e:expr, as_ref) => {
        $e.as_ref()
    };
}

pub(crate) use frozen;
