//! Anthropic Messages API provider (streaming). (Implemented by the provider work.)
//! TEMP STUB (lead)
#![allow(missing_docs)]
use super::{ModelCall, ModelRequest, Provider, ProviderError};
pub struct AnthropicConfig;
impl AnthropicConfig {
    pub fn from_env(_k: String) -> Self {
        AnthropicConfig
    }
}
pub struct AnthropicProvider;
impl AnthropicProvider {
    pub fn new(_c: AnthropicConfig) -> Result<Self, ProviderError> {
        Ok(AnthropicProvider)
    }
}
pub fn install_crypto_provider() {}
#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }
    async fn stream(&self, _r: &ModelRequest) -> Result<ModelCall, ProviderError> {
        Err(ProviderError::Config("stub".into()))
    }
}
