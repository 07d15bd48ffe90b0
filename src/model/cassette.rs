//! Cassettes: versioned JSONL recordings of model exchanges (DESIGN.md "Cassettes").
//!
//! Line 1 is a header; each further line is one exchange: the normalized request, its digest
//! and the full provider-neutral event stream of the response. Paths under the workdir are
//! stored as `${WORKDIR}/...` so a cassette replays on another machine.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ModelRequest, StreamEvent};

/// The cassette format version this build reads and writes.
pub const CASSETTE_VERSION: u32 = 1;
/// Placeholder for the workdir inside cassettes.
pub const WORKDIR_TOKEN: &str = "${WORKDIR}";

/// First line of a cassette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CassetteHeader {
    /// Always `runner-cassette`.
    pub format: String,
    /// Format version.
    pub version: u32,
    /// runner version that recorded it.
    pub runner_version: String,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
}

/// One recorded request/response pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// 0-based position.
    pub seq: usize,
    /// sha256 over the normalized request (model, messages, tools).
    pub request_digest: String,
    /// The normalized request.
    pub request: Value,
    /// Provider request id when recorded.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The response's events, in order.
    pub events: Vec<StreamEvent>,
}

/// Why a cassette could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be opened or read.
    #[error("{}: cannot read cassette: {source}", path.display())]
    Io {
        /// Cassette path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not what the format expects.
    #[error("{}:{line}: invalid cassette: {message}", path.display())]
    Invalid {
        /// Cassette path.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A cassette read from disk.
#[derive(Debug, Clone)]
pub struct Cassette {
    /// Its header.
    pub header: CassetteHeader,
    /// Its exchanges, in order.
    pub exchanges: Vec<Exchange>,
}

impl Cassette {
    /// Read and check a cassette file.
    pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let invalid = |line: usize, message: String| CassetteError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut lines = BufReader::new(file).lines().enumerate();
        let header_line = match lines.next() {
            Some((_, l)) => l.map_err(io)?,
            None => {
                return Err(invalid(
                    1,
                    "empty file: expected a cassette header line".into(),
                ));
            }
        };
        let header: CassetteHeader = serde_json::from_str(&header_line)
            .map_err(|e| invalid(1, format!("expected a header object {{\"format\":\"runner-cassette\",\"version\":{CASSETTE_VERSION},...}}: {e}")))?;
        if header.format != "runner-cassette" {
            return Err(invalid(
                1,
                format!("format is `{}`, expected `runner-cassette`", header.format),
            ));
        }
        if header.version != CASSETTE_VERSION {
            return Err(invalid(
                1,
                format!(
                    "cassette version {} is not supported by runner {} (it reads version {CASSETTE_VERSION}); re-record it with `runner exec --record`",
                    header.version,
                    crate::VERSION
                ),
            ));
        }
        let mut exchanges = Vec::new();
        for (i, line) in lines {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            let ex: Exchange = serde_json::from_str(&line)
                .map_err(|e| invalid(i + 1, format!("expected an exchange object: {e}")))?;
            exchanges.push(ex);
        }
        Ok(Cassette { header, exchanges })
    }
}

/// Replace every occurrence of `from` with `to` in all strings of `v`.
pub fn replace_in_strings(v: &mut Value, from: &str, to: &str) {
    if from.is_empty() {
        return;
    }
    match v {
        Value::String(s) if s.contains(from) => *s = s.replace(from, to),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_in_strings(x, from, to)),
        Value::Object(m) => m.values_mut().for_each(|x| replace_in_strings(x, from, to)),
        _ => {}
    }
}

/// Merge consecutive deltas of the same block into one event, so a path split across
/// stream fragments can be found and masked (and cassettes stay small).
pub fn coalesce(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::with_capacity(events.len());
    for ev in events {
        match (out.last_mut(), ev) {
            (
                Some(StreamEvent::TextDelta { index: a, text }),
                StreamEvent::TextDelta {
                    index: b,
                    text: more,
                },
            ) if *a == b => text.push_str(&more),
            (
                Some(StreamEvent::InputJsonDelta {
                    index: a,
                    partial_json,
                }),
                StreamEvent::InputJsonDelta {
                    index: b,
                    partial_json: more,
                },
            ) if *a == b => partial_json.push_str(&more),
            (
                Some(StreamEvent::ThinkingDelta { index: a, thinking }),
                StreamEvent::ThinkingDelta {
                    index: b,
                    thinking: more,
                },
            ) if *a == b => thinking.push_str(&more),
            (_, ev) => out.push(ev),
        }
    }
    out
}

/// The normalized form of a request: workdir masked, runner's own system prompt left out
/// (it carries the date), everything else as sent.
pub fn normalize_request(request: &ModelRequest, workdir: &Path) -> Value {
    let mut v = serde_json::json!({
        "model": request.model,
        "messages": request.messages,
        "tools": request.tools,
    });
    replace_in_strings(&mut v, &workdir.to_string_lossy(), WORKDIR_TOKEN);
    v
}

/// sha256 of the normalized request's compact JSON, as `sha256:<hex>`.
pub fn digest(normalized: &Value) -> String {
    let bytes = serde_json::to_vec(normalized).unwrap_or_default();
    let hash = Sha256::digest(&bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;

    #[test]
    fn normalization_masks_workdir_and_system() {
        let req = ModelRequest {
            model: "m".into(),
            system: "today is 2026-12-02".into(),
            messages: vec![Message::user_text("read /tmp/w1/src/a.rs")],
            tools: vec![],
            max_tokens: 10,
            thinking: None,
        };
        let a = normalize_request(&req, Path::new("/tmp/w1"));
        let mut req2 = req.clone();
        req2.system = "today is 2027-01-01".into();
        req2.messages = vec![Message::user_text("read /other/src/a.rs")];
        let b = normalize_request(&req2, Path::new("/other"));
        assert_eq!(a, b);
        assert_eq!(digest(&a), digest(&b));
        assert!(a.to_string().contains("${WORKDIR}/src/a.rs"));
    }

    #[test]
    fn coalesce_merges_split_fragments() {
        let evs = vec![
            StreamEvent::InputJsonDelta {
                index: 1,
                partial_json: "{\"p\":\"/tm".into(),
            },
            StreamEvent::InputJsonDelta {
                index: 1,
                partial_json: "p/w1/a\"}".into(),
            },
            StreamEvent::BlockStop { index: 1 },
        ];
        let out = coalesce(evs);
        assert_eq!(out.len(), 2);
        assert!(
            matches!(&out[0], StreamEvent::InputJsonDelta { partial_json, .. } if partial_json.contains("/tmp/w1/a"))
        );
    }

    #[test]
    fn version_mismatch_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        std::fs::write(&p, "{\"format\":\"runner-cassette\",\"version\":99,\"runner_version\":\"9\",\"recorded_at\":\"x\"}\n").unwrap();
        let e = Cassette::load(&p).unwrap_err().to_string();
        assert!(e.contains("version 99 is not supported"), "{e}");
        std::fs::write(&p, "").unwrap();
        assert!(
            Cassette::load(&p)
                .unwrap_err()
                .to_string()
                .contains(":1: invalid cassette: empty file")
        );
    }
}
