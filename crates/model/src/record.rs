//! `--record FILE`: wrap a provider and write every completed exchange to a cassette.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;

use super::cassette::{
    CASSETTE_VERSION, CassetteHeader, Exchange, SystemParts, WORKDIR_TOKEN, coalesce_deltas,
    digest, normalize_request, replace_in_strings,
};
use super::{ModelCall, ModelRequest, Provider, ProviderError, StreamEvent};
use runner_protocol::redact::Redactor;

struct Writer {
    file: std::fs::File,
    seq: usize,
}

/// A provider that records what another provider answers.
pub struct RecordingProvider {
    inner: Arc<dyn Provider>,
    writer: Arc<Mutex<Writer>>,
    workdir: PathBuf,
    redactor: Arc<Redactor>,
    system: SystemParts,
}

impl RecordingProvider {
    /// Start a new cassette at `path` (truncating it) for a run in `workdir`.
    /// `system` holds the spec's `system_prompt` and `system_prompt_append`, part of each
    /// request's digest.
    pub fn create(
        inner: Arc<dyn Provider>,
        path: &Path,
        workdir: &Path,
        redactor: Arc<Redactor>,
        system: SystemParts,
    ) -> std::io::Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::File::create(path)?;
        let header = CassetteHeader {
            format: "runner-cassette".into(),
            version: CASSETTE_VERSION,
            runner_version: crate::VERSION.into(),
            recorded_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        writeln!(file, "{}", serde_json::to_string(&header)?)?;
        file.flush()?;
        Ok(RecordingProvider {
            inner,
            writer: Arc::new(Mutex::new(Writer { file, seq: 0 })),
            workdir: workdir.to_path_buf(),
            redactor,
            system,
        })
    }
}

#[async_trait::async_trait]
impl Provider for RecordingProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let call = self.inner.stream(request).await?;
        let mut normalized = normalize_request(request, &self.workdir, &self.system);
        self.redactor.redact_value(&mut normalized);
        let request_id = call.meta.request_id.clone();
        let writer = self.writer.clone();
        let workdir = self.workdir.to_string_lossy().into_owned();
        let redactor = self.redactor.clone();
        let mut seen: Vec<StreamEvent> = Vec::new();
        let mut done = false;
        let events = call.events.map(move |item| {
            if let Ok(ev) = &item {
                seen.push(ev.clone());
                if matches!(ev, StreamEvent::MessageStop) && !done {
                    done = true;
                    let merged = coalesce_deltas(std::mem::take(&mut seen));
                    let mut events = serde_json::to_value(&merged).unwrap_or_default();
                    replace_in_strings(&mut events, &workdir, WORKDIR_TOKEN);
                    redactor.redact_value(&mut events);
                    let events: Vec<StreamEvent> =
                        serde_json::from_value(events).unwrap_or_default();
                    if let Ok(mut w) = writer.lock() {
                        let ex = Exchange {
                            seq: w.seq,
                            request_digest: digest(&normalized),
                            request: normalized.clone(),
                            request_id: request_id.clone(),
                            events,
                        };
                        w.seq += 1;
                        let line = serde_json::to_string(&ex).unwrap_or_default();
                        if let Err(e) = writeln!(w.file, "{line}").and_then(|_| w.file.flush()) {
                            tracing::error!("writing the cassette failed: {e}");
                        }
                    }
                }
            }
            item
        });
        Ok(ModelCall {
            meta: call.meta,
            events: Box::pin(events),
        })
    }
}
