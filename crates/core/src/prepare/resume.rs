//! Preparing a task that continues a transcript (`runner resume`, `runner exec --resume`):
//! read it, choose the spec (the run's recorded resolved spec, or the current file with
//! `--use-current-spec`), prepare that spec like any task ([`super::prepare`]), and attach
//! the [`Resume`] point rebuilt from the transcript.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Overrides, PrepareError, PreparedTask, prepare};
use crate::agent::Input;
use crate::model::Role;
use crate::spec::TaskSpec;
use crate::transcript::reader::{Transcript, TranscriptError, read_transcript};
use crate::transcript::resume::{
    DEFAULT_CONTINUATION, Resume, end_last_line, read_files, recorded_loaded, todos, totals,
    workdir,
};

/// What to resume and how (from the command line).
#[derive(Debug, Clone, Default)]
pub struct ResumeRequest {
    /// The transcript to continue.
    pub transcript: PathBuf,
    /// The task spec given on the command line (required for Claude Code transcripts).
    pub spec: Option<PathBuf>,
    /// Use the spec file as it is now, even if it changed since the run.
    pub use_current_spec: bool,
    /// A user message to continue with.
    pub prompt: Option<String>,
}

/// Why a run cannot be resumed (exit 2, nothing runs).
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The transcript cannot be read.
    #[error("{0}")]
    Transcript(#[from] TranscriptError),
    /// The spec (recorded or current) is not usable.
    #[error("{0}")]
    Prepare(#[from] PrepareError),
    /// Anything else, with a message saying what to do.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The transcript.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn invalid(path: &Path, message: impl Into<String>) -> ResumeError {
    ResumeError::Invalid {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Read the transcript and prepare the task that continues it.
pub fn prepare_resume(req: &ResumeRequest, o: &Overrides) -> Result<PreparedTask, ResumeError> {
    let path = std::path::absolute(&req.transcript).unwrap_or_else(|_| req.transcript.clone());
    let t = read_transcript(&path)?;
    let conv = t.conversation()?;
    if conv.messages.is_empty() {
        return Err(invalid(
            &path,
            "no conversation to resume (no user or assistant records)",
        ));
    }
    let init = t.init_info();
    let mut prepared = match &init {
        Some(info) => runner_spec(req, o, &t, info)?,
        None => {
            let Some(spec) = &req.spec else {
                return Err(invalid(
                    &path,
                    "not a runner transcript (no runner_init record), so it holds no task spec; give one: `runner resume TRANSCRIPT SPEC`",
                ));
            };
            tracing::info!(transcript = %path.display(), spec = %spec.display(), "resuming a Claude Code transcript with the given spec");
            prepare(crate::spec::load(spec).map_err(PrepareError::from)?, o)?
        }
    };
    if t.result().and_then(|r| r.get("runner_outcome")) == Some(&Value::from("success"))
        && req.prompt.is_none()
    {
        return Err(invalid(
            &path,
            "the run already finished successfully; give --prompt TEXT to continue the conversation anyway",
        ));
    }

    let session_id = init
        .as_ref()
        .map(|i| i.session_id.clone())
        .or_else(|| {
            t.records.iter().find_map(|r| {
                r.value
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
        })
        .unwrap_or_else(crate::events::new_uuid);

    let mut state = totals(&t, &prepared.loaded.spec);
    state.messages = conv.messages.clone();
    state.last_uuid = conv.last_uuid.clone();
    let ends_with_answer =
        conv.messages.last().map(|m| m.role) == Some(Role::Assistant) && conv.unanswered.is_empty();
    let input = match &req.prompt {
        Some(p) => Input::User(p.clone()),
        None if ends_with_answer => Input::User(DEFAULT_CONTINUATION.into()),
        None => Input::Continue,
    };
    tracing::info!(
        transcript = %path.display(),
        records = conv.records,
        messages = conv.messages.len(),
        turns = state.turns,
        tokens = state.usage.total(),
        unanswered = conv.unanswered.len(),
        compact_boundary = ?conv.compact_boundary,
        "resuming"
    );
    // With the current spec the prompt and tools are rebuilt from it; otherwise the run sends
    // exactly what it sent before.
    let recorded = init.as_ref().filter(|_| !req.use_current_spec);
    // A runner run's output directory is the transcript's: its git base is recorded there,
    // and (when it is one, with runner's files in it) its transcript directory is the one
    // above.
    let run_dir = path.parent().filter(|_| init.is_some());
    let git_base = match run_dir {
        Some(dir) => crate::git::read_base(dir).map_err(|e| invalid(&path, e.to_string()))?,
        None => None,
    };
    let transcript_dir = run_dir
        .filter(|d| git_base.is_some() || d.join(crate::report::result_file::RESULT_FILE).is_file())
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    end_last_line(&path).map_err(|e| invalid(&path, format!("cannot append to it: {e}")))?;
    let resume = Resume {
        transcript_path: path,
        session_id,
        state,
        input,
        system_prompt: recorded.map(|i| i.system_prompt.clone()),
        tool_specs: recorded.map(|i| i.tools.clone()).filter(|t| !t.is_empty()),
        read_files: read_files(&conv.tool_calls),
        todos: todos(&conv.tool_calls),
        unanswered: conv.unanswered,
        transcript_dir,
        git_base,
    };
    prepared.resume = Some(Box::new(resume));
    Ok(prepared)
}

/// The task for a runner transcript: the recorded resolved spec unless the current one is
/// asked for; a changed spec is reported either way.
fn runner_spec(
    req: &ResumeRequest,
    o: &Overrides,
    t: &Transcript,
    info: &crate::events::InitInfo,
) -> Result<PreparedTask, ResumeError> {
    let spec_path = req.spec.clone().unwrap_or_else(|| info.spec_path.clone());
    let current = if spec_path.is_file() {
        match crate::spec::load(&spec_path) {
            Ok(l) => Some(prepare(l, o)),
            Err(e) => Some(Err(PrepareError::from(e))),
        }
    } else {
        None
    };
    if req.use_current_spec {
        return match current {
            Some(p) => Ok(p?),
            None => Err(invalid(
                &t.path,
                format!(
                    "--use-current-spec: the spec file {} does not exist",
                    spec_path.display()
                ),
            )),
        };
    }
    let recorded: TaskSpec = serde_json::from_value(info.spec.clone()).map_err(|e| {
        invalid(
            &t.path,
            format!("the run's recorded spec cannot be read ({e}); pass --use-current-spec to resume with the spec file as it is now"),
        )
    })?;
    let workdir = workdir(t, info).map_err(|m| invalid(&t.path, m.to_string()))?;
    let loaded = recorded_loaded(&info.spec_path, recorded, workdir)
        .map_err(|m| invalid(&t.path, m.to_string()))?;
    let prepared = prepare(loaded, o)?;
    match current {
        Some(Ok(cur)) => {
            let a = serde_json::to_value(&cur.loaded.spec).unwrap_or(Value::Null);
            let b = serde_json::to_value(&prepared.loaded.spec).unwrap_or(Value::Null);
            let changed = changed_keys(&a, &b);
            if !changed.is_empty() {
                tracing::warn!(
                    "the spec {} changed since the run (differs in: {}); resuming with the run's recorded spec (pass --use-current-spec to use the file as it is now)",
                    spec_path.display(),
                    changed.join(", ")
                );
            }
        }
        Some(Err(e)) => tracing::warn!(
            "the spec {} no longer loads ({e}); resuming with the run's recorded spec",
            spec_path.display()
        ),
        None => tracing::info!(
            "the spec {} is gone; resuming with the run's recorded spec",
            spec_path.display()
        ),
    }
    Ok(prepared)
}

/// Top-level spec keys whose values differ.
fn changed_keys(a: &Value, b: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_keys_lists_top_level_differences() {
        let a = serde_json::json!({"name": "t", "limits": {"max_turns": 3}, "prompt": "x"});
        let b = serde_json::json!({"name": "t", "limits": {"max_turns": 4}, "model": "m"});
        assert_eq!(changed_keys(&a, &b), vec!["limits", "model", "prompt"]);
    }
}
