//! Cassettes: versioned JSONL recordings of model exchanges (`--record`, `provider: replay`).
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
    /// sha256 over the normalized request (model, messages, tools, system_prompt,
    /// system_append).
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
        Ok(Cassette { exchanges })
    }
}

/// Merge each block's text, thinking, signature and input-JSON deltas into one delta per kind,
/// placed just before the block's `BlockStop` (or before `MessageDelta`/`MessageStop` for a
/// block that never stopped). Masking the workdir works on whole strings, so a path split
/// across two fragments would otherwise escape it. The assembled response is unchanged.
pub fn coalesce_deltas(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    use std::collections::BTreeMap;
    /// Which delta kind a pending string belongs to.
    #[derive(PartialEq, Clone, Copy)]
    enum Kind {
        Text,
        Thinking,
        Signature,
        Json,
    }
    fn emit(index: usize, parts: Vec<(Kind, String)>, out: &mut Vec<StreamEvent>) {
        for (kind, s) in parts {
            out.push(match kind {
                Kind::Text => StreamEvent::TextDelta { index, text: s },
                Kind::Thinking => StreamEvent::ThinkingDelta { index, thinking: s },
                Kind::Signature => StreamEvent::SignatureDelta {
                    index,
                    signature: s,
                },
                Kind::Json => StreamEvent::InputJsonDelta {
                    index,
                    partial_json: s,
                },
            });
        }
    }
    let mut pending: BTreeMap<usize, Vec<(Kind, String)>> = BTreeMap::new();
    let mut out = Vec::with_capacity(events.len());
    for ev in events {
        let (index, kind, text) = match ev {
            StreamEvent::TextDelta { index, text } => (index, Kind::Text, text),
            StreamEvent::ThinkingDelta { index, thinking } => (index, Kind::Thinking, thinking),
            StreamEvent::SignatureDelta { index, signature } => (index, Kind::Signature, signature),
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => (index, Kind::Json, partial_json),
            StreamEvent::BlockStop { index } => {
                if let Some(parts) = pending.remove(&index) {
                    emit(index, parts, &mut out);
                }
                out.push(StreamEvent::BlockStop { index });
                continue;
            }
            other @ (StreamEvent::MessageDelta { .. } | StreamEvent::MessageStop) => {
                for (index, parts) in std::mem::take(&mut pending) {
                    emit(index, parts, &mut out);
                }
                out.push(other);
                continue;
            }
            other => {
                out.push(other);
                continue;
            }
        };
        let parts = pending.entry(index).or_default();
        match parts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, s)) => s.push_str(&text),
            None => parts.push((kind, text)),
        }
    }
    for (index, parts) in pending {
        emit(index, parts, &mut out);
    }
    out
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

/// The parts of a system prompt a cassette compares: the spec's own instructions
/// (`system_prompt`, which replace runner's) and its `system_prompt_append`. runner's own
/// system prompt is left out: it carries the date, platform and workdir.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemParts {
    /// The spec's `system_prompt` (or `--system-prompt`), when set.
    pub custom: Option<String>,
    /// The spec's `system_prompt_append` (or `--append-system-prompt`), when set.
    pub append: Option<String>,
}

/// The normalized form of a request: workdir masked, runner's own system prompt left out,
/// a custom `system_prompt` kept as `system_prompt` and the `system_prompt_append` as
/// `system_append` (each only when set, so cassettes recorded without one keep their digest),
/// everything else as sent.
pub fn normalize_request(request: &ModelRequest, workdir: &Path, system: &SystemParts) -> Value {
    let mut v = serde_json::json!({
        "model": request.model,
        "messages": request.messages,
        "tools": request.tools.as_slice(),
    });
    let set = |t: &Option<String>| {
        t.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    if let Value::Object(m) = &mut v {
        if let Some(c) = set(&system.custom) {
            m.insert("system_prompt".into(), c.into());
        }
        if let Some(a) = set(&system.append) {
            m.insert("system_append".into(), a.into());
        }
    }
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
    use crate::Message;

    #[test]
    fn normalization_masks_workdir_and_keeps_the_specs_system_prompt() {
        let req = ModelRequest {
            model: "m".into(),
            system: "today is 2026-12-02".into(),
            messages: vec![Message::user_text("read /tmp/w1/src/a.rs")],
            tools: vec![].into(),
            max_tokens: 10,
            thinking: None,
        };
        let append = |a: &str| SystemParts {
            custom: None,
            append: Some(a.into()),
        };
        let a = normalize_request(&req, Path::new("/tmp/w1"), &SystemParts::default());
        let mut req2 = req.clone();
        req2.system = "today is 2027-01-01".into();
        req2.messages = vec![Message::user_text("read /other/src/a.rs")];
        let b = normalize_request(&req2, Path::new("/other"), &append(" "));
        assert_eq!(a, b);
        assert_eq!(digest(&a), digest(&b));
        assert!(a.to_string().contains("${WORKDIR}/src/a.rs"));
        let c = normalize_request(&req, Path::new("/tmp/w1"), &append("Be brief."));
        assert_eq!(c["system_append"], "Be brief.");
        assert_ne!(digest(&a), digest(&c));
        // A custom system prompt is compared too (workdir masked), and a changed one differs.
        let custom = |t: &str| SystemParts {
            custom: Some(t.into()),
            append: None,
        };
        let d = normalize_request(&req, Path::new("/tmp/w1"), &custom("Review /tmp/w1 only."));
        assert_eq!(d["system_prompt"], "Review ${WORKDIR} only.");
        let e = normalize_request(&req, Path::new("/tmp/w1"), &custom("Review nothing."));
        assert_ne!(digest(&a), digest(&d));
        assert_ne!(digest(&d), digest(&e));
    }

    #[test]
    fn coalesced_deltas_assemble_the_same_and_mask_split_paths() {
        use crate::assembler::Assembler;
        let events = vec![
            StreamEvent::MessageStart {
                id: "m".into(),
                model: "x".into(),
                usage: Default::default(),
            },
            StreamEvent::BlockStart {
                index: 0,
                block: serde_json::json!({"type":"tool_use","id":"a","name":"Read","input":{}}),
            },
            StreamEvent::BlockStart {
                index: 1,
                block: serde_json::json!({"type":"tool_use","id":"b","name":"Read","input":{}}),
            },
            StreamEvent::InputJsonDelta {
                index: 0,
                partial_json: "{\"file_path\":\"/tmp/w".into(),
            },
            StreamEvent::InputJsonDelta {
                index: 1,
                partial_json: "{}".into(),
            },
            StreamEvent::InputJsonDelta {
                index: 0,
                partial_json: "1/a.rs\"}".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::MessageDelta {
                stop_reason: Some(crate::StopReason::ToolUse),
                stop_sequence: None,
                usage: Default::default(),
            },
            StreamEvent::MessageStop,
        ];
        let assemble = |evs: &[StreamEvent]| {
            let mut a = Assembler::new();
            for e in evs {
                a.push(e.clone()).unwrap();
            }
            a.finish(None).unwrap()
        };
        let merged = coalesce_deltas(events.clone());
        assert_eq!(assemble(&events), assemble(&merged));
        assert_eq!(merged.len(), events.len() - 1);
        let mut v = serde_json::to_value(&merged).unwrap();
        replace_in_strings(&mut v, "/tmp/w1", WORKDIR_TOKEN);
        assert!(v.to_string().contains("${WORKDIR}/a.rs"), "{v}");
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
