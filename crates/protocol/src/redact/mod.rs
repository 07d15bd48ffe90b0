//! The [`Redactor`]: secret values, and every form of them, replaced by `[REDACTED:NAME]`.
//!
//! [`forms`] lists the forms a value is searched in, [`normalize`] how spacing and case are
//! ignored; two Aho-Corasick passes find every form of every secret in linear time. Which
//! secrets are registered process-wide, and the files redacted in place, are the business of
//! the `runner` crate's `redact` module, which re-exports this one.

pub mod forms;
mod matcher;
pub mod normalize;
mod redactor;

pub use forms::{MIN_ENCODED_LEN, MIN_HALVES_LEN, MIN_SECRET_LEN};
pub use redactor::Redactor;

#[cfg(test)]
mod tests;
