//! A small crate with two `cargo clippy` warnings for the fix-clippy example to fix.

/// Whether `name` is on the list of enabled features.
pub fn is_enabled(features: &Vec<String>, name: &str) -> bool {
    features.iter().any(|f| f == name) == true
}

/// The number of enabled features.
pub fn count(features: &[String]) -> usize {
    features.len()
}
