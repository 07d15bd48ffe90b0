//! Task specs: types, loading with positioned errors, defaults, schema.

pub mod duration;
pub mod load;
pub mod locate;
pub mod types;

pub use duration::SpecDuration;
pub use load::{LoadedSpec, SpecError, discover, load};
pub use types::*;
