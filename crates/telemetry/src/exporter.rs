//! The run's exporters: built when a run is configured to export, flushed once at its end
//! within a bounded time.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;

use crate::client::Client;
use crate::config::Config;
use crate::metrics::Instruments;
use crate::trace::{Shared, TaskEnd, TaskStart, TaskTrace};

/// An exporter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The HTTP client could not be built.
    #[error("OpenTelemetry HTTP client: {0}")]
    Client(String),
    /// The OTLP exporter rejected its configuration (an endpoint or header variable).
    #[error("OpenTelemetry exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// A run's telemetry: the providers, the batch span and the instruments.
#[derive(Debug)]
pub struct Telemetry {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
    shared: Arc<Shared>,
    batch: Context,
    timeout: Duration,
}

/// `TRACEPARENT` (and `TRACESTATE`) read through `var`, as the parent context.
fn parent(var: &impl Fn(&str) -> Option<String>) -> Context {
    let mut carrier = HashMap::new();
    for (header, name) in [("traceparent", "TRACEPARENT"), ("tracestate", "TRACESTATE")] {
        if let Some(v) = var(name) {
            carrier.insert(header.to_string(), v);
        }
    }
    TraceContextPropagator::new().extract_with_context(&Context::new(), &carrier)
}

impl Telemetry {
    /// Build the exporters `config` asks for and open the batch span (under `TRACEPARENT`'s
    /// trace when set); `var` reads the environment, `version` is runner's.
    pub fn start(
        config: &Config,
        version: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Telemetry, TelemetryError> {
        let timeout = config.timeout;
        // The workspace's reqwest brings no TLS provider: the process's, or ring (runner's).
        let _ = rustls::crypto::ring::default_provider().install_default();
        // reqwest's blocking client runs its own runtime; it is built off the caller's (async)
        // thread.
        let client = std::thread::spawn(move || {
            reqwest::blocking::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .build()
        })
        .join()
        .map_err(|_| TelemetryError::Client("the thread building it panicked".into()))?
        .map_err(|e| TelemetryError::Client(e.to_string()))?;
        let client = Client::new(client);
        let resource = crate::resource::build(version, &var);
        let endpoint = |path: &str| {
            config
                .fallback_endpoint
                .as_ref()
                .map(|e| format!("{}/{path}", e.trim_end_matches('/')))
        };

        let mut traces = SdkTracerProvider::builder().with_resource(resource.clone());
        if config.traces {
            let mut b = SpanExporter::builder()
                .with_http()
                .with_http_client(client.clone())
                .with_timeout(timeout);
            if let Some(e) = endpoint("v1/traces") {
                b = b.with_endpoint(e);
            }
            traces = traces.with_batch_exporter(b.build()?);
        }
        let traces = traces.build();

        let mut metrics = SdkMeterProvider::builder().with_resource(resource);
        if config.metrics {
            let mut b = MetricExporter::builder()
                .with_http()
                .with_http_client(client)
                .with_timeout(timeout);
            if let Some(e) = endpoint("v1/metrics") {
                b = b.with_endpoint(e);
            }
            metrics = metrics.with_reader(PeriodicReader::builder(b.build()?).build());
        }
        let metrics = metrics.build();

        let scope = opentelemetry::InstrumentationScope::builder("runner")
            .with_version(version.to_string())
            .build();
        let tracer = traces.tracer_with_scope(scope.clone());
        let meter = opentelemetry::metrics::MeterProvider::meter_with_scope(&metrics, scope);
        let parent = parent(&var);
        let span = tracer
            .span_builder("runner batch")
            .with_attributes([KeyValue::new("runner.version", version.to_string())])
            .start_with_context(&tracer, &parent);
        let batch = parent.with_span(span);
        Ok(Telemetry {
            traces,
            metrics,
            shared: Arc::new(Shared {
                tracer,
                instruments: Instruments::new(&meter),
                content: config.content,
                tasks: Default::default(),
            }),
            batch,
            timeout,
        })
    }

    /// Whether prompt and tool content goes on every task's spans (`--otel-content`).
    pub fn content(&self) -> bool {
        self.shared.content
    }

    /// Open a task's span under the batch span.
    pub fn task(&self, start: TaskStart) -> TaskTrace {
        TaskTrace::start(self.shared.clone(), &self.batch, start)
    }

    /// End the run: every task of `tasks` (name and how it ended, as the batch reports them)
    /// gets its span ended and is counted, also those a second signal cut short or that never
    /// ran; then the batch span ends (with the number of tasks) and everything is flushed,
    /// waiting at most the export timeout (plus a moment): an unreachable collector does not
    /// hold the exit up.
    pub fn shutdown(&self, tasks: &[(String, TaskEnd)]) {
        self.shared.end_remaining(&self.batch, tasks);
        let span = self.batch.span();
        span.set_attribute(KeyValue::new("runner.tasks", tasks.len() as i64));
        span.end();
        let deadline = Instant::now() + self.timeout + Duration::from_millis(500);
        let (tx, rx) = mpsc::channel();
        let traces = self.traces.clone();
        let timeout = self.timeout;
        let t = tx.clone();
        let spawned = [
            std::thread::Builder::new()
                .name("otel-flush-traces".into())
                .spawn(move || {
                    let _ = traces.shutdown_with_timeout(timeout);
                    let _ = t.send(());
                }),
            {
                let metrics = self.metrics.clone();
                std::thread::Builder::new()
                    .name("otel-flush-metrics".into())
                    .spawn(move || {
                        let _ = metrics.shutdown_with_timeout(timeout);
                        let _ = tx.send(());
                    })
            },
        ];
        let waiting = spawned.iter().filter(|s| s.is_ok()).count();
        for _ in 0..waiting {
            let left = deadline.saturating_duration_since(Instant::now());
            if rx.recv_timeout(left).is_err() {
                tracing::warn!(
                    "OpenTelemetry: the final export did not finish within {} ms; giving up on it",
                    self.timeout.as_millis()
                );
                break;
            }
        }
    }
}
