//! Built-in tools, the [`Tool`] trait they implement and the [`Registry`] that offers them.
//!
//! A tool is one file implementing [`Tool`] and one row in [`builtin::BUILTINS`]. Its input
//! is a typed struct, parsed once ([`DynTool::parse`]: the JSON Schema check, serde, then the
//! tool's own [`Tool::check`]); what a call touches is declared as an [`Access`], and the
//! permission policy decides on that, never on the tool's name.
//!
//! Pipeline for one call ([`executor`]): parse → PreToolUse hooks → permission decision on the
//! call's access → run → PostToolUse hooks → tool_result. Every failure short of a
//! [`ToolFatal`] becomes an `is_error` tool_result for the model.

/// A [`CallError`] whose message is made by `format!`.
macro_rules! call_error {
    ($($arg:tt)*) => {
        $crate::tools::CallError(format!($($arg)*))
    };
}

pub mod bash;
pub mod builtin;
pub mod edit;
pub mod executor;
mod file_rules;
pub mod glob;
pub mod grep;
pub(crate) mod journal;
pub mod read;
pub mod streaming;
pub mod structured_output;
pub mod todo;
pub mod write;

mod util;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::model::ToolSpec;
use crate::permissions::Scope;
use crate::process::ChildPolicy;
use crate::roots::SessionRoots;
pub use runner_policy::Access;

/// What a tool call produced for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text sent to the model as the tool_result content.
    pub content: String,
    /// Whether this is an error result (`is_error: true`).
    pub is_error: bool,
    /// The tool's structured result (transcript `toolUseResult`, stream-json `tool_use_result`).
    pub structured: Option<Value>,
    /// For a command that ran (the Bash tool): how it ended, for the task's list of commands.
    pub command: Option<CommandEnd>,
}

/// How a command a tool ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandEnd {
    /// Its exit code (128 + signal when a signal ended it); `None` when it never exited.
    pub exit_code: Option<i32>,
    /// It was killed at its time limit.
    pub timed_out: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>, structured: Option<Value>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            structured,
            command: None,
        }
    }

    /// An error result the model can read and react to.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            structured: None,
            command: None,
        }
    }
}

/// A call a tool cannot make as asked (an input the schema or the tool's own rules refuse, a
/// file not read before it is edited, a pattern that does not compile, a path the sandbox
/// keeps out): the message goes back to the model as an error result, so it can correct the
/// call. Reads as its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

impl From<String> for CallError {
    fn from(message: String) -> Self {
        CallError(message)
    }
}

impl From<&str> for CallError {
    fn from(message: &str) -> Self {
        CallError(message.to_string())
    }
}

impl From<CallError> for String {
    fn from(e: CallError) -> String {
        e.0
    }
}

impl std::ops::Deref for CallError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// A failure that must end the run rather than be reported to the model
/// (e.g. the output directory cannot be written).
#[derive(Debug, thiserror::Error)]
#[error("{tool}: {message}")]
pub struct ToolFatal {
    /// The tool that failed.
    pub tool: String,
    /// What happened.
    pub message: String,
}

/// What the session knows about a file the model has read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    /// Modification time when read.
    pub mtime: Option<SystemTime>,
    /// Whether the whole file was read (not just a window).
    pub full: bool,
}

/// Files read in this task, for Edit/Write's read-before-write rule.
#[derive(Debug, Default)]
pub struct ReadFileState {
    files: HashMap<PathBuf, ReadRecord>,
}

impl ReadFileState {
    /// Remember that `path` was read (or written) with this mtime.
    pub fn record(&mut self, path: PathBuf, record: ReadRecord) {
        self.files.insert(path, record);
    }

    /// What is known about `path`.
    pub fn get(&self, path: &std::path::Path) -> Option<&ReadRecord> {
        self.files.get(path)
    }
}

/// What every tool call of one task shares: its roots, the state the tools keep between
/// calls, the environment and sandbox of its commands, hooks, redaction and records. Built once
/// by the session ([`ToolSession::new`] and the `with_*` steps), then shared read-only behind
/// an `Arc` (the state calls change is behind its own lock).
#[derive(Debug)]
pub struct ToolSession {
    /// Session roots (workdir, additional dirs, output dir).
    pub roots: Arc<SessionRoots>,
    /// Read-file state shared by Read/Edit/Write.
    pub read_state: Mutex<ReadFileState>,
    /// Directory for spilled large outputs.
    pub spill_dir: PathBuf,
    /// Environment policy for child processes.
    pub env: Arc<ChildPolicy>,
    /// Cancelled when the run is interrupted.
    pub cancel: CancellationToken,
    /// Bash's persistent working directory (stays inside the workdir).
    pub bash_cwd: Mutex<PathBuf>,
    /// The task's todo list (TodoWrite).
    pub todos: Mutex<Vec<todo::Todo>>,
    /// PreToolUse/PostToolUse hooks (none unless the spec or a settings file configures them).
    pub hooks: Arc<crate::hooks::Hooks>,
    /// The commands the task ran, in order (the result's `runner_commands`).
    pub commands: Mutex<Vec<crate::events::CommandRun>>,
    /// The task's secrets: tool results are redacted with it before the model sees them.
    pub redactor: Arc<crate::redact::Redactor>,
    /// Where side-effecting calls announce their start (None: not recorded, e.g. in tests).
    pub(crate) journal: Option<journal::Journal>,
    /// Checks the files that steer git and CI before and after each call that may change
    /// something (None: not checked, e.g. in tests).
    pub integrity: Option<Arc<crate::integrity::Integrity>>,
}

impl ToolSession {
    /// The shared part for `roots`, with fresh state, no hooks, no redaction, no journal and
    /// no integrity check.
    pub fn new(roots: Arc<SessionRoots>, env: ChildPolicy, cancel: CancellationToken) -> Self {
        let spill_dir = roots.output_dir.join("tool-results");
        let cwd = roots.workdir.clone();
        ToolSession {
            roots,
            read_state: Mutex::new(ReadFileState::default()),
            spill_dir,
            env: Arc::new(env),
            cancel,
            bash_cwd: Mutex::new(cwd),
            todos: Mutex::new(Vec::new()),
            hooks: Arc::new(crate::hooks::Hooks::default()),
            commands: Mutex::default(),
            redactor: Arc::default(),
            journal: None,
            integrity: None,
        }
    }

    /// Run the calls' hooks.
    pub fn with_hooks(mut self, hooks: Arc<crate::hooks::Hooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Redact tool results with `redactor`.
    pub fn with_redactor(mut self, redactor: Arc<crate::redact::Redactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// Check the files that steer git and CI around the calls that may change something.
    pub fn with_integrity(mut self, integrity: Arc<crate::integrity::Integrity>) -> Self {
        self.integrity = Some(integrity);
        self
    }

    /// Announce side-effecting calls in `journal` before they act.
    pub(crate) fn with_journal(mut self, journal: journal::Journal) -> Self {
        self.journal = Some(journal);
        self
    }
}

/// One tool call's context: the task's shared [`ToolSession`] and what belongs to the call
/// alone. Cheap to clone (an `Arc`, a token and a scope), once per call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// What every call of the task shares.
    pub session: Arc<ToolSession>,
    /// What this call may do (from its permission decision): a command runs confined to it.
    pub scope: Scope,
    /// Cancelled when the run is interrupted or a sibling call failed; long calls stop
    /// promptly.
    pub cancel: CancellationToken,
    /// The call's announcement, when it is a command allowed to write: the command makes it
    /// as soon as its shell runs, with its process group.
    pub(crate) started: Option<journal::CallStart>,
}

impl ToolContext {
    /// A read-only call context of `session`, cancelled with the run.
    pub fn of(session: Arc<ToolSession>) -> Self {
        let cancel = session.cancel.clone();
        ToolContext {
            session,
            scope: Scope::ReadOnly,
            cancel,
            started: None,
        }
    }

    /// A call context for `roots` with a fresh session (tests, benches).
    pub fn new(roots: Arc<SessionRoots>, env: ChildPolicy, cancel: CancellationToken) -> Self {
        Self::of(Arc::new(ToolSession::new(roots, env, cancel)))
    }
}

/// A built-in tool: its typed input, what a call touches, and what it does.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    /// What the model sends: deserialized once, after a check against [`Tool::input_schema`].
    type Input: DeserializeOwned + JsonSchema;
    /// A call that passed [`Tool::check`]: what [`Tool::access`] describes and
    /// [`Tool::call`] runs.
    type Call: Send + Sync + 'static;

    /// Name the model calls it by (`Read`, `Bash`, ...).
    fn name(&self) -> &'static str;

    /// Description offered to the model.
    fn description(&self) -> &'static str;

    /// The JSON Schema offered to the model (Claude Code's wording for its tools); `Input`
    /// must accept what it describes (a unit test holds the two together).
    fn input_schema(&self) -> Value;

    /// The tool's own rules beyond the schema (absolute paths, ranges, valid patterns); `Err`
    /// is an input error sent to the model.
    fn check(&self, input: Self::Input, ctx: &ToolContext) -> Result<Self::Call, CallError>;

    /// What the call touches; the permission policy decides on this.
    fn access(&self, call: &Self::Call) -> Access;

    /// Whether the call may run concurrently with other concurrency-safe calls. By default a
    /// call that only reads files may; a command's safety is decided by the policy (the
    /// executor asks it for [`Access::Exec`]).
    fn concurrency_safe(&self, call: &Self::Call) -> bool {
        matches!(self.access(call), Access::Read(_))
    }

    /// Whether the call itself validates the input against the schema (so that a miss is
    /// answered, and counted, by the call); the shallow schema check before parsing is then
    /// skipped.
    fn validates_own_input(&self) -> bool {
        false
    }

    /// Run the call. `Ok` output may itself be an error result for the model.
    async fn call(&self, call: Self::Call, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal>;
}

/// A tool as the registry holds it, whatever its input type.
pub trait DynTool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;

    /// The spec offered to the model.
    fn spec(&self) -> ToolSpec;

    /// Parse and check one call's input; `Err` is an input error for the model.
    fn parse(&self, input: &Value, ctx: &ToolContext) -> Result<Box<dyn CheckedCall>, CallError>;

    /// The JSON Schema derived from the typed input (tests hold it to [`DynTool::spec`]'s).
    fn typed_schema(&self) -> Value;
}

/// A parsed and checked call, ready for the policy and to run.
#[async_trait::async_trait]
pub trait CheckedCall: Send + Sync {
    /// What it touches.
    fn access(&self) -> &Access;

    /// Whether it may run concurrently with other concurrency-safe calls.
    fn concurrency_safe(&self) -> bool;

    /// Run it.
    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal>;
}

/// A [`Tool`] behind the [`DynTool`] face.
pub(crate) struct Erased<T: Tool>(pub Arc<T>);

impl<T: Tool> DynTool for Erased<T> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.0.name().to_string(),
            description: self.0.description().to_string(),
            input_schema: self.0.input_schema(),
        }
    }

    fn parse(&self, input: &Value, ctx: &ToolContext) -> Result<Box<dyn CheckedCall>, CallError> {
        let raw: T::Input = if self.0.validates_own_input() {
            serde_json::from_value(input.clone()).map_err(|e| format!("invalid input: {e}"))?
        } else {
            util::parse_input(&self.0.input_schema(), input)?
        };
        let call = self.0.check(raw, ctx)?;
        let access = self.0.access(&call);
        let concurrent = self.0.concurrency_safe(&call);
        Ok(Box::new(Checked {
            tool: self.0.clone(),
            call,
            access,
            concurrent,
        }))
    }

    fn typed_schema(&self) -> Value {
        serde_json::to_value(schemars::schema_for!(T::Input)).unwrap_or_default()
    }
}

/// One checked call of `T`.
struct Checked<T: Tool> {
    tool: Arc<T>,
    call: T::Call,
    access: Access,
    concurrent: bool,
}

#[async_trait::async_trait]
impl<T: Tool> CheckedCall for Checked<T> {
    fn access(&self) -> &Access {
        &self.access
    }

    fn concurrency_safe(&self) -> bool {
        self.concurrent
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        let Checked { tool, call, .. } = *self;
        tool.call(call, ctx).await
    }
}

/// The tools offered in one task, by name, in offer order.
///
/// The tools' specs are built once, on first use, and shared by every request of the task,
/// until the tools change (an MCP server lists new ones between turns).
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn DynTool>>,
    /// The specs of `tools`, built on first [`Registry::specs`] (reset by [`Registry::remove`]).
    specs: std::sync::OnceLock<Arc<Vec<ToolSpec>>>,
}

/// A spec's `tools:` names a tool that is not built in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{name}` (built-in tools: {known})")]
pub struct UnknownTool {
    /// The name as written.
    pub name: String,
    /// The built-in tools' names, comma-separated.
    pub known: String,
}

impl Registry {
    /// Build a registry of the named built-ins; an unknown name is an error saying which
    /// names exist.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, UnknownTool> {
        let mut registry = Registry::default();
        for n in names {
            let n = n.as_ref();
            let tool = builtin::make(n).ok_or_else(|| UnknownTool {
                name: n.to_string(),
                known: builtin::names().join(", "),
            })?;
            if registry.get(tool.name()).is_none() {
                registry.tools.push(tool);
            }
        }
        Ok(registry)
    }

    /// Offer one more tool (e.g. `StructuredOutput`), after the built-ins; a tool of the same
    /// name is replaced.
    pub fn add(&mut self, tool: Arc<dyn DynTool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self.specs = std::sync::OnceLock::new();
    }

    /// Remove a tool (a bare-name deny rule removes it from what the model is offered).
    pub fn remove(&mut self, name: &str) {
        self.retain(|n| n != name);
    }

    /// Keep only the tools whose name `keep` accepts (an MCP server's tools are replaced when
    /// it lists them again); the specs are built again on next use.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.tools.retain(|t| keep(t.name()));
        self.specs = std::sync::OnceLock::new();
    }

    /// Offer these recorded schemas instead of the tools' own, matched by name (a resumed run
    /// sends exactly what the run sent, even if this runner version words them differently).
    /// Tools without a recorded schema keep their own.
    pub fn set_specs(&mut self, specs: Vec<ToolSpec>) {
        for t in &mut self.tools {
            if let Some(spec) = specs.iter().find(|s| s.name == t.name()) {
                *t = Arc::new(RecordedSpec {
                    inner: t.clone(),
                    spec: spec.clone(),
                });
            }
        }
        self.specs = std::sync::OnceLock::new();
    }

    /// The tool called `name`, if offered.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Specs of every offered tool, in order: built once, then shared (a cheap clone).
    pub fn specs(&self) -> Arc<Vec<ToolSpec>> {
        self.specs
            .get_or_init(|| Arc::new(self.tools.iter().map(|t| t.spec()).collect()))
            .clone()
    }

    /// Names of the offered tools.
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }
}

/// A tool offered with a recorded schema (see [`Registry::set_specs`]); it runs as the tool it
/// wraps.
struct RecordedSpec {
    inner: Arc<dyn DynTool>,
    spec: ToolSpec,
}

impl DynTool for RecordedSpec {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn parse(&self, input: &Value, ctx: &ToolContext) -> Result<Box<dyn CheckedCall>, CallError> {
        self.inner.parse(input, ctx)
    }
    fn typed_schema(&self) -> Value {
        self.inner.typed_schema()
    }
}
