//! Host-name lookups in a statically linked glibc build without NSS modules.
//!
//! glibc's static `getaddrinfo` has the `files` (/etc/hosts) and `dns` (resolv.conf)
//! services built in, but for any other service /etc/nsswitch.conf names (`mdns4_minimal`,
//! `resolve`, `myhostname`, …) it dlopens `libnss_*.so.2`, which loads the machine's
//! shared libc into the static process: unsupported unless that libc is the very
//! version linked in. In such a build, `files dns` replaces the `hosts` line at start,
//! so lookups use only the built-in services. Dynamic and musl builds are unchanged
//! (the function does nothing there). docs/packaging.md.

/// In a static glibc build, makes host lookups use only `files dns`; elsewhere nothing.
/// Call once, before the first lookup (each call allocates memory glibc never frees).
pub(crate) fn builtin_host_lookups_only() {
    #[cfg(all(target_env = "gnu", target_feature = "crt-static"))]
    {
        extern "C" {
            /// glibc's override of one NSS database's service list (<nss.h>).
            fn __nss_configure_lookup(
                dbname: *const libc::c_char,
                spec: *const libc::c_char,
            ) -> libc::c_int;
        }
        // A refusal (-1; only for an unknown database) would leave nsswitch.conf's
        // services, as in a dynamic build: nothing to report.
        // SAFETY: both arguments are NUL-terminated static strings; glibc copies what it
        // keeps. Called before any lookup, from the main thread, so no lookup runs
        // concurrently with the change of the service list.
        unsafe { __nss_configure_lookup(c"hosts".as_ptr(), c"files dns".as_ptr()) };
    }
}
