//! SSE block assembler: provider events → completed blocks → ModelResponse. (Implemented by the provider work.)
//! TEMP STUB (lead): replaced by the provider branch.
#![allow(missing_docs)]
use super::{ContentBlock, ModelResponse, ProviderError, StreamEvent};
#[derive(Default)]
pub struct Assembler;
impl Assembler {
    pub fn new() -> Self {
        Assembler
    }
    pub fn push(
        &mut self,
        _ev: StreamEvent,
    ) -> Result<Option<(usize, ContentBlock)>, ProviderError> {
        Ok(None)
    }
    pub fn finish(self, _request_id: Option<String>) -> Result<ModelResponse, ProviderError> {
        Err(ProviderError::Incomplete { after_bytes: false })
    }
}
