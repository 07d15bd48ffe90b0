//! Built-in model table: context window, output cap, prices. (Implemented by the spec work.)
//! TEMP STUB (lead): replaced by the spec branch.
#![allow(missing_docs)]
use super::Usage;
use crate::spec::ModelInfoOverride;
use std::collections::BTreeMap;
#[derive(Debug, Clone, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub context_window: u64,
    pub max_output_tokens: u32,
    pub prices: Option<Prices>,
}
impl ModelInfo {
    pub fn cost_usd(&self, _u: &Usage) -> Option<f64> {
        None
    }
}
pub fn lookup(_model: &str, _o: &BTreeMap<String, ModelInfoOverride>) -> Option<ModelInfo> {
    None
}
