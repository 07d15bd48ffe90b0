//! alpha: parses `key=value` pairs.

/// Splits `s` at the first `=` into a key and a value.
pub fn pair(s: &str) -> Option<(&str, &str)> {
    s.split_once('=')
}
