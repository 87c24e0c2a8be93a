//! Request rendering: the bytes of each request, built once and reused.
