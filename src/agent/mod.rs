//! The agent loop and its state.

pub mod outcome;

pub use outcome::{Outcome, OutcomeKind};
