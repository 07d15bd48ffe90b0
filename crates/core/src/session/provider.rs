//! The model provider a task talks to: Anthropic, Amazon Bedrock, Google Vertex AI, an
//! OpenAI-compatible server or a replay cassette, wrapped in a recorder with `--record`.

use std::path::PathBuf;
use std::sync::Arc;

use super::RunOptions;
use crate::model::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::model::bedrock::{BedrockConfig, BedrockProvider};
use crate::model::cassette::CassetteError;
use crate::model::cassette::SystemParts;
use crate::model::openai::{OpenaiConfig, OpenaiProvider};
use crate::model::record::RecordingProvider;
use crate::model::replay::ReplayProvider;
use crate::model::vertex::{VertexConfig, VertexProvider};
use crate::model::{Provider, ProviderError};
use crate::prepare::PreparedTask;
use crate::redact::Redactor;
use crate::spec::{ProviderKind, ReplayMode};

/// Why a task's provider cannot be built (an `api_error` outcome); reads as the message the
/// user sees.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildProviderError {
    /// The provider's configuration or client cannot be set up.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// `provider: replay` without a cassette.
    #[error("provider replay needs a cassette")]
    NoCassette,
    /// The cassette to replay cannot be opened or read.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    /// The cassette `--record` names cannot be created.
    #[error("cannot create the cassette {}: {source}", path.display())]
    Record {
        /// The cassette's path.
        path: PathBuf,
        /// Why it cannot be created.
        source: std::io::Error,
    },
}

/// The provider for `task` and the key of its rate-limit governor (provider, endpoint, API
/// key digest); `Err` says why it cannot be built (an `api_error` outcome).
pub(crate) fn build_provider(
    task: &PreparedTask,
    redactor: &Arc<Redactor>,
    opts: &RunOptions,
) -> Result<(Arc<dyn Provider>, String), BuildProviderError> {
    let loaded = &task.loaded;
    let mut governor_key = "replay".to_string();
    let base: Arc<dyn Provider> = match loaded.spec.provider {
        ProviderKind::Anthropic => {
            let key = task.api_key.clone().unwrap_or_default();
            let mut config = AnthropicConfig::from_env(key);
            if let Some(t) = loaded.spec.retry.idle_timeout {
                config.idle_timeout = t.0;
            }
            config.prompt_caching = loaded.spec.prompt_caching;
            governor_key = crate::governor::key("anthropic", &config.base_url, &config.api_key);
            let p = AnthropicProvider::new(config)?;
            Arc::new(p)
        }
        ProviderKind::Openai => {
            let mut cfg = OpenaiConfig::from_settings(
                loaded.spec.openai.as_ref(),
                task.api_key.clone(),
                |k| std::env::var(k).ok(),
            );
            if let Some(t) = loaded.spec.retry.idle_timeout {
                cfg.idle_timeout = t.0;
            }
            tracing::debug!(config = ?cfg, "openai provider");
            governor_key = crate::governor::key(
                "openai",
                &cfg.base_url,
                cfg.api_key.as_deref().unwrap_or_default(),
            );
            Arc::new(OpenaiProvider::new(cfg)?)
        }
        ProviderKind::Bedrock => {
            let mut cfg = BedrockConfig::from_lookup(|k| std::env::var(k).ok())?;
            if let Some(t) = loaded.spec.retry.idle_timeout {
                cfg.idle_timeout = t.0;
            }
            cfg.prompt_caching = loaded.spec.prompt_caching;
            tracing::debug!(config = ?cfg, "bedrock provider");
            governor_key = crate::governor::key(
                "bedrock",
                &cfg.endpoint,
                cfg.credentials.static_key_id().unwrap_or(&cfg.region),
            );
            Arc::new(BedrockProvider::new(cfg)?)
        }
        ProviderKind::Vertex => {
            let mut cfg = VertexConfig::from_lookup(|k| std::env::var(k).ok())?;
            if let Some(t) = loaded.spec.retry.idle_timeout {
                cfg.idle_timeout = t.0;
            }
            cfg.prompt_caching = loaded.spec.prompt_caching;
            tracing::debug!(config = ?cfg, "vertex provider");
            governor_key = crate::governor::key("vertex", &cfg.base_url, &cfg.project);
            Arc::new(VertexProvider::new(cfg)?)
        }
        ProviderKind::Replay => {
            let path = loaded
                .cassette
                .clone()
                .ok_or(BuildProviderError::NoCassette)?;
            let replay = ReplayProvider::open(&path, &loaded.workdir)?;
            match loaded.spec.replay_mode {
                ReplayMode::Lenient => Arc::new(replay),
                ReplayMode::Strict => {
                    Arc::new(replay.strict(redactor.clone(), system_parts(&loaded.spec)))
                }
            }
        }
    };
    let provider = match &opts.record {
        Some(path) => RecordingProvider::create(
            base,
            path,
            &loaded.workdir,
            redactor.clone(),
            system_parts(&loaded.spec),
        )
        .map(|p| Arc::new(p) as Arc<dyn Provider>)
        .map_err(|source| BuildProviderError::Record {
            path: path.clone(),
            source,
        }),
        None => Ok(base),
    }?;
    Ok((provider, governor_key))
}

/// The parts of the spec's system prompt a cassette records and strict replay compares.
fn system_parts(spec: &crate::spec::TaskSpec) -> SystemParts {
    SystemParts {
        custom: spec.system_prompt.clone(),
        append: spec.system_prompt_append.clone(),
    }
}
