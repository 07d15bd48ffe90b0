//! beta: formats `key=value` pairs.

/// Joins a key and a value with `=`.
pub fn pair(key: &str, value: &str) -> String {
    format!("{key}={value}")
}
