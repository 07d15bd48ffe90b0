//! The spec settings the model providers interpret, defined here and re-exported by the spec:
//! `replay_mode`, `openai:`, and the `models:` table entries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the replay provider checks requests against the cassette.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// Serve responses in order; only check that the conversation has the recorded length and
    /// that tool results answer the recorded tool_use ids.
    #[default]
    Lenient,
    /// Also require each request's normalized digest (model, messages, tools,
    /// `system_prompt_append`) to match the recording; a mismatch fails the run (`api_error`,
    /// exit 4) with a diff of what changed. A prompt regression test.
    Strict,
}

impl ReplayMode {
    /// The spec's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReplayMode::Lenient => "lenient",
            ReplayMode::Strict => "strict",
        }
    }

    /// Parse the spec/CLI spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "lenient" => Some(ReplayMode::Lenient),
            "strict" => Some(ReplayMode::Strict),
            _ => None,
        }
    }

    /// Whether this is the default mode (kept out of serialized specs).
    pub fn is_lenient(&self) -> bool {
        *self == ReplayMode::Lenient
    }
}

/// Settings for `provider: openai`. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenaiSettings {
    /// API base URL, ending in `/v1` as the official SDKs expect (runner appends
    /// `/chat/completions`). Default: `$OPENAI_BASE_URL`, else `https://api.openai.com/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key, sent as `Authorization: Bearer`. Default
    /// `OPENAI_API_KEY`. An empty string means no key and no `Authorization` header (local
    /// servers such as Ollama or vLLM without `--api-key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Send `stream_options.include_usage` so the server reports token usage (default true).
    /// Turn off for servers that reject it; token budgets then use an estimate (~4 characters
    /// per token) and the run logs that the figures are estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
}

/// A model table entry from the spec; unset fields keep the built-in value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelInfoOverride {
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Output token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// USD per million input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_usd_per_mtok: Option<f64>,
    /// USD per million output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_usd_per_mtok: Option<f64>,
    /// USD per million cache-write input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_usd_per_mtok: Option<f64>,
    /// USD per million cache-read input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_usd_per_mtok: Option<f64>,
}
