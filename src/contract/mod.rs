//! The JSON contracts runner writes.

#[cfg(test)]
pub(crate) mod fixtures;
