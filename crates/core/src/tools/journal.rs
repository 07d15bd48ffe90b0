//! Side-effecting calls on record before they act: a call allowed to write announces that it
//! starts — a Write or Edit just before it changes the file, a command as soon as its shell
//! runs, with its process group — as a `runner_tool_started` transcript record. A run killed
//! before the call's result is recorded leaves that record behind, so the resume tells the model
//! the call may have completed instead of offering to run it again, and stops the group if it
//! still runs (`session::resume`).

use crate::events::{RunEvent, Sinks, new_uuid};
use crate::process::identity::GroupIdentity;

/// Where calls announce their start: the task's event sinks.
#[derive(Clone)]
pub(crate) struct Journal(Sinks);

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Journal")
    }
}

impl Journal {
    /// A journal writing to `sinks`.
    pub(crate) fn new(sinks: Sinks) -> Journal {
        Journal(sinks)
    }

    /// The announcement for one call.
    pub(crate) fn call(&self, tool_use_id: &str, tool_name: &str) -> CallStart {
        CallStart {
            journal: self.clone(),
            tool_use_id: tool_use_id.to_string(),
            tool_name: tool_name.to_string(),
        }
    }
}

/// One call's announcement, made once, when it starts.
#[derive(Clone, Debug)]
pub(crate) struct CallStart {
    journal: Journal,
    tool_use_id: String,
    tool_name: String,
}

impl CallStart {
    /// Record that the call starts, with the process group it started, if any.
    pub(crate) fn announce(&self, group: Option<GroupIdentity>) {
        let event = RunEvent::ToolStarted {
            uuid: new_uuid(),
            tool_use_id: self.tool_use_id.clone(),
            tool_name: self.tool_name.clone(),
            group,
        };
        if let Err(e) = self.journal.0.emit(&event) {
            tracing::error!("writing run output failed: {e}");
        }
    }
}
