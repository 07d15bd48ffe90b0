//! The cloud providers' checks before a task starts: Bedrock needs a region and a credential
//! source, Vertex AI a project and readable credentials; and the variables holding their
//! credentials, kept out of tool environments and redacted like API keys.

use crate::model::ProviderError;
use crate::model::bedrock::BedrockConfig;
use crate::model::vertex::VertexConfig;
use crate::spec::ProviderKind;

/// Whether `provider`'s configuration can be read from the environment (through `lookup`);
/// `Err` says what is missing and how to set it. Credentials themselves are fetched when the
/// first request is made.
pub fn check(
    provider: ProviderKind,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<(), ProviderError> {
    match provider {
        ProviderKind::Bedrock => BedrockConfig::from_lookup(lookup).map(|_| ()),
        ProviderKind::Vertex => VertexConfig::from_lookup(lookup).map(|_| ()),
        _ => Ok(()),
    }
}

/// The variables holding `provider`'s credentials (secrets, not paths or names).
pub fn secret_vars(provider: ProviderKind) -> &'static [&'static str] {
    match provider {
        ProviderKind::Bedrock => &[
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_region_and_project_are_reported() {
        let none = |k: &str| (k == "HOME").then(|| "/nonexistent".to_string());
        let e = check(ProviderKind::Bedrock, none).unwrap_err().to_string();
        assert!(e.contains("AWS_REGION"), "{e}");
        let e = check(ProviderKind::Vertex, none).unwrap_err().to_string();
        assert!(e.contains("ANTHROPIC_VERTEX_PROJECT_ID"), "{e}");
        let ok = |k: &str| match k {
            "AWS_REGION" => Some("us-east-1".to_string()),
            "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" => Some("x".to_string()),
            _ => None,
        };
        assert!(check(ProviderKind::Bedrock, ok).is_ok());
        assert!(secret_vars(ProviderKind::Bedrock).contains(&"AWS_SESSION_TOKEN"));
        assert!(secret_vars(ProviderKind::Anthropic).is_empty());
    }
}
