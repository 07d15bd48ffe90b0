//! The agent loop, its state, and how a run ends.

pub mod context;
pub mod normalize;
pub mod prompt;
pub mod run;
pub mod state;
pub mod structured;

pub use run::{Agent, Input, LoopLimits, StopCause, Stopper, hook_stopped, run};
pub use state::State;
