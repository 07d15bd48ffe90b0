//! Anthropic Messages API provider (streaming). (Implemented by the provider work.)
