//! An OTLP/HTTP receiver on 127.0.0.1: accepts `POST /v1/traces` and `/v1/metrics`, decodes
//! them with the official protobuf definitions (`opentelemetry-proto`), gzip-compressed or not,
//! and keeps them with their headers, counting every connection made to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

#[derive(Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
    other: Vec<String>,
    /// The headers of every export request (names lower-cased).
    headers: Vec<Vec<(String, String)>>,
}

/// The receiver; it stops accepting when dropped (its thread ends with the test process).
pub struct OtlpReceiver {
    port: u16,
    got: Arc<Mutex<Received>>,
    connections: Arc<AtomicUsize>,
}

impl OtlpReceiver {
    /// Bind 127.0.0.1:0 and serve.
    pub fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Received::default()));
        let connections = Arc::new(AtomicUsize::new(0));
        let (g, c) = (got.clone(), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let g = g.clone();
                std::thread::spawn(move || serve(stream, &g));
            }
        });
        OtlpReceiver {
            port,
            got,
            connections,
        }
    }

    /// `http://127.0.0.1:PORT` (for `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Connections made so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Every span received.
    pub fn spans(&self) -> Vec<Span> {
        let got = self.got.lock().unwrap();
        assert!(got.other.is_empty(), "unexpected requests: {:?}", got.other);
        got.traces
            .iter()
            .flat_map(|r| &r.resource_spans)
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| s.spans.clone())
            .collect()
    }

    /// The headers of every export request so far (names lower-cased).
    pub fn headers(&self) -> Vec<Vec<(String, String)>> {
        self.got.lock().unwrap().headers.clone()
    }

    /// The resource attributes of the first span export.
    pub fn resource(&self) -> Vec<KeyValue> {
        let got = self.got.lock().unwrap();
        got.traces[0].resource_spans[0]
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .clone()
    }

    /// The last value of sum `name` for the data point whose attributes include `attrs`
    /// (histograms: their count), summed over matching points of the last export holding it.
    pub fn metric(&self, name: &str, attrs: &[(&str, &str)]) -> Option<f64> {
        let got = self.got.lock().unwrap();
        let mut last = None;
        for m in got
            .metrics
            .iter()
            .flat_map(|r| &r.resource_metrics)
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
            .filter(|m| m.name == name)
        {
            let matches = |a: &[KeyValue]| {
                attrs
                    .iter()
                    .all(|(k, v)| a.iter().any(|kv| kv.key == *k && text(&kv.value) == *v))
            };
            let total: f64 = match &m.data {
                Some(metric::Data::Sum(s)) => s
                    .data_points
                    .iter()
                    .filter(|p| matches(&p.attributes))
                    .map(|p| match p.value {
                        Some(number_data_point::Value::AsInt(i)) => i as f64,
                        Some(number_data_point::Value::AsDouble(d)) => d,
                        None => 0.0,
                    })
                    .sum(),
                Some(metric::Data::Histogram(h)) => h
                    .data_points
                    .iter()
                    .filter(|p| matches(&p.attributes))
                    .map(|p| p.count as f64)
                    .sum(),
                _ => continue,
            };
            last = Some(total);
        }
        last
    }
}

/// An attribute value as text (string, int, bool, double, or an array's items joined by `,`).
pub fn text(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => a
            .values
            .iter()
            .map(|v| text(&Some(v.clone())))
            .collect::<Vec<_>>()
            .join(","),
        _ => String::new(),
    }
}

/// Attribute `key` of `attrs` as text (`None`: absent).
pub fn attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| text(&kv.value))
}

/// Serve HTTP/1.1 requests on one connection until it closes.
fn serve(stream: TcpStream, got: &Mutex<Received>) {
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut length = 0usize;
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
                if k == "content-length" {
                    length = v.parse().unwrap_or(0);
                }
                headers.push((k, v));
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let gzip = headers
            .iter()
            .any(|(k, v)| k == "content-encoding" && v == "gzip");
        if gzip {
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(body.as_slice())
                .read_to_end(&mut plain)
                .unwrap();
            body = plain;
        }
        {
            let mut g = got.lock().unwrap();
            g.headers.push(headers);
            match path.as_str() {
                "/v1/traces" => g
                    .traces
                    .push(ExportTraceServiceRequest::decode(body.as_slice()).unwrap()),
                "/v1/metrics" => g
                    .metrics
                    .push(ExportMetricsServiceRequest::decode(body.as_slice()).unwrap()),
                other => g.other.push(other.to_string()),
            }
        }
        let ok =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(ok.as_bytes()).is_err() {
            return;
        }
    }
}
