//! Per-task log sections for GitHub Actions (`::group::`). A task's log is routed to its
//! group by [`crate::log`].
//!
//! Workflow commands are off for the whole run (`::stop-commands::TOKEN`, see
//! [`report::github`](crate::report::github)), so each group marker briefly resumes commands
//! with the current token, writes the marker, and stops them again with a fresh token. Model
//! and tool text therefore never reaches the command channel.
//!
//! With one task at a time (`--jobs 1` or a single task) the group is opened when the task
//! starts and its log streams live; with concurrent tasks each task's log is buffered and
//! written as one group when the task ends, so groups never interleave. Logs written outside
//! the task's own future (e.g. by tasks it spawns) go straight to stderr.

use std::io::{self, Write};
use std::sync::Mutex;

use crate::report::github;

/// The `::group::` writer of one run; holds the current stop-commands token.
#[derive(Debug)]
pub(crate) struct Groups {
    token: Mutex<String>,
    /// Whether each task's log is buffered (concurrent tasks) rather than streamed.
    pub buffered: bool,
}

impl Groups {
    /// Groups for a run whose commands were stopped with `token`.
    pub(crate) fn new(token: String, buffered: bool) -> Groups {
        Groups {
            token: Mutex::new(token),
            buffered,
        }
    }

    /// The current stop-commands token (to resume commands at the end of the run).
    pub(crate) fn token(&self) -> String {
        self.token.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Resume commands, write `commands`, stop them again with a fresh token, then write
    /// `body` — all under one stderr lock.
    fn emit(&self, commands: &[String], body: &[u8]) {
        self.emit_all(&[(commands, body)]);
    }

    /// Several [`emit`](Self::emit)s as one unit: the token lock and the stderr lock are held
    /// throughout, so nothing another task writes can land between them.
    fn emit_all(&self, parts: &[(&[String], &[u8])]) {
        let mut token = self.token.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = io::stderr().lock();
        for (commands, body) in parts {
            let next = github::random_token();
            let mut text = format!("::{token}::\n");
            for c in *commands {
                text.push_str(c);
                text.push('\n');
            }
            text.push_str(&format!("::stop-commands::{next}\n"));
            let _ = err.write_all(text.as_bytes());
            let _ = err.write_all(body);
            *token = next;
        }
        let _ = err.flush();
    }

    /// Open a live group for `task` (one task at a time).
    pub(crate) fn open(&self, task: &str) {
        self.emit(&[format!("::group::{}", group_title(task))], b"");
    }

    /// Close the live group.
    pub(crate) fn close(&self) {
        self.emit(&["::endgroup::".to_string()], b"");
    }

    /// Write a finished task's buffered log as one group titled with its outcome, in one
    /// piece (tasks that finish at the same moment cannot interleave their groups).
    pub(crate) fn write_buffered(&self, task: &str, outcome: &str, log: &[u8]) {
        let title = group_title(&format!("{task} ({outcome})"));
        let mut body = log.to_vec();
        if !body.is_empty() && !body.ends_with(b"\n") {
            body.push(b'\n');
        }
        let open = [format!("::group::{title}")];
        let close = ["::endgroup::".to_string()];
        self.emit_all(&[(&open, &body), (&close, b"")]);
    }
}

/// A group title on one line, with command-data escaping.
fn group_title(s: &str) -> String {
    github::escape_data(s)
}
