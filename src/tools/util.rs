//! Helpers shared by the tools.
