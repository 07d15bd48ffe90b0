//! The HTTP client the OTLP exporter sends with: the workspace's reqwest (blocking, on the
//! SDK's export threads) with the export timeout, saying once on stderr when the collector
//! cannot be reached or refuses what is sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// Sends exports; the first failure of any of its clones is logged, the rest are not.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    inner: reqwest::blocking::Client,
    warned: Arc<AtomicBool>,
}

impl Client {
    /// Wrap `inner`.
    pub(crate) fn new(inner: reqwest::blocking::Client) -> Client {
        Client {
            inner,
            warned: Arc::new(AtomicBool::new(false)),
        }
    }

    fn warn_once(&self, uri: &str, why: &dyn std::fmt::Display) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "OpenTelemetry export to {uri} failed: {why} (later failures are not logged)"
            );
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri().to_string();
        match self.inner.send_bytes(request).await {
            Ok(response) => {
                if !response.status().is_success() {
                    self.warn_once(&uri, &response.status());
                }
                Ok(response)
            }
            Err(e) => {
                self.warn_once(&uri, &e);
                Err(e)
            }
        }
    }
}
