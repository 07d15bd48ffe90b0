//! Server-sent events on the wire: one event ([`SseEvent`]), a stream's text
//! ([`render_sse`]) and back ([`parse_sse`]).

use serde_json::Value;

/// One SSE event: `event: <event>\ndata: <data>\n\n`.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` field.
    pub event: String,
    /// The `data:` field, verbatim (normally one line of JSON).
    pub data: String,
}

impl SseEvent {
    /// An event whose data is `data` serialized as compact JSON.
    pub fn new(event: impl Into<String>, data: &Value) -> Self {
        SseEvent {
            event: event.into(),
            data: data.to_string(),
        }
    }

    /// An event whose data is `data` verbatim (e.g. deliberately malformed JSON).
    pub fn raw(event: impl Into<String>, data: impl Into<String>) -> Self {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    /// The data parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }

    /// The event's wire form, including the terminating blank line.
    pub fn render(&self) -> String {
        let mut s = format!("event: {}\n", self.event);
        for line in self.data.split('\n') {
            s.push_str("data: ");
            s.push_str(line);
            s.push('\n');
        }
        s.push('\n');
        s
    }
}

/// The wire form of a sequence of events.
pub fn render_sse(events: &[SseEvent]) -> String {
    events.iter().map(SseEvent::render).collect()
}

/// Parse SSE text into `(event, data)` pairs (test-side helper; handles only what
/// [`render_sse`] produces plus `\r\n` line ends). An incomplete final block is dropped.
pub fn parse_sse(text: &str) -> Vec<SseEvent> {
    let text = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut blocks: Vec<&str> = text.split("\n\n").collect();
    // The piece after the last blank line is incomplete (or empty).
    blocks.pop();
    for block in blocks {
        let mut event = String::from("message");
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim_start().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if !data.is_empty() || event != "message" {
            out.push(SseEvent::raw(event, data.join("\n")));
        }
    }
    out
}
