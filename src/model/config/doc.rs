#[cfg(test)]
pub(crate) mod samples;
