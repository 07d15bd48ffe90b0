//! Built-in tools, the `Tool` trait they implement and the registry that offers them.
//!
//! Pipeline for one call (DESIGN.md): input parse (the tool's typed input) → `validate` →
//! hooks → permission decision → `call` → hooks → tool_result. Every failure short of a
//! [`ToolFatal`] becomes an `is_error` tool_result for the model.

pub mod bash;
pub mod edit;
pub mod executor;
pub mod glob;
pub mod grep;
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

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::model::ToolSpec;
use crate::process::EnvPolicy;
use crate::roots::SessionRoots;

/// What a tool call produced for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text sent to the model as the tool_result content.
    pub content: String,
    /// Whether this is an error result (`is_error: true`).
    pub is_error: bool,
    /// The tool's structured result (transcript `toolUseResult`, stream-json `tool_use_result`).
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>, structured: Option<Value>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            structured,
        }
    }

    /// An error result the model can read and react to.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            structured: None,
        }
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

/// Everything a tool call may use. Cheap to clone; shared across concurrent calls.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Session roots (workdir, additional dirs, output dir).
    pub roots: Arc<SessionRoots>,
    /// Read-file state shared by Read/Edit/Write.
    pub read_state: Arc<Mutex<ReadFileState>>,
    /// Directory for spilled large outputs.
    pub spill_dir: PathBuf,
    /// Environment policy for child processes.
    pub env: Arc<EnvPolicy>,
    /// Cancelled when the run is interrupted; long calls must stop promptly.
    pub cancel: CancellationToken,
    /// Bash's persistent working directory (stays inside the workdir).
    pub bash_cwd: Arc<Mutex<PathBuf>>,
    /// The task's todo list (TodoWrite).
    pub todos: Arc<Mutex<Vec<todo::Todo>>>,
    /// PreToolUse/PostToolUse hooks (none unless the spec or a settings file configures them).
    pub hooks: Arc<crate::hooks::Hooks>,
}

impl ToolContext {
    /// A context for `roots` with fresh state.
    pub fn new(roots: Arc<SessionRoots>, env: EnvPolicy, cancel: CancellationToken) -> Self {
        let spill_dir = roots.output_dir.join("tool-results");
        let cwd = roots.workdir.clone();
        ToolContext {
            roots,
            read_state: Arc::new(Mutex::new(ReadFileState::default())),
            spill_dir,
            env: Arc::new(env),
            cancel,
            bash_cwd: Arc::new(Mutex::new(cwd)),
            todos: Arc::new(Mutex::new(Vec::new())),
            hooks: Arc::new(crate::hooks::Hooks::default()),
        }
    }
}

/// A built-in tool.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Name the model calls it by (`Read`, `Bash`, ...).
    fn name(&self) -> &'static str;

    /// Description offered to the model.
    fn description(&self) -> &'static str;

    /// JSON Schema of the input (Claude Code's schema for this tool).
    fn input_schema(&self) -> Value;

    /// Whether this call only reads (decides permission defaults and plan mode).
    fn is_read_only(&self, input: &Value) -> bool;

    /// Whether this call may run concurrently with other concurrency-safe calls.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.is_read_only(input)
    }

    /// Whether the permission policy decides this tool's calls. Tools that change only
    /// runner's own state (TodoWrite) return false and always run.
    fn needs_permission(&self) -> bool {
        true
    }

    /// Check the input before permissions are asked: parse errors and the tool's own rules
    /// (e.g. relative paths). `Err` is an input error sent to the model.
    fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), String>;

    /// Run the call. `Ok` output may itself be an error result for the model.
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal>;

    /// The spec offered to the model.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description().to_string(),
            input_schema: self.input_schema(),
        }
    }
}

/// The tools offered when a spec does not say, in offer order.
pub const BUILTIN_TOOLS: &[&str] = &["Read", "Write", "Edit", "Bash", "Glob", "Grep"];
/// Every tool a spec may name in `tools:` (the defaults plus opt-in ones).
pub const KNOWN_TOOLS: &[&str] = &["Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite"];

/// Look up a built-in tool by name.
pub fn builtin(name: &str) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "Read" => Arc::new(read::ReadTool),
        "Write" => Arc::new(write::WriteTool),
        "Edit" => Arc::new(edit::EditTool),
        "Bash" => Arc::new(bash::BashTool),
        "Glob" => Arc::new(glob::GlobTool),
        "Grep" => Arc::new(grep::GrepTool),
        "TodoWrite" => Arc::new(todo::TodoWriteTool),
        _ => return None,
    })
}

/// The tools offered in one task, by name, in offer order.
///
/// The tools' specs are built once, on first use, and shared by every request of the task.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    /// The specs of `tools`, built on first [`Registry::specs`] (reset by [`Registry::remove`]).
    specs: std::sync::OnceLock<Arc<Vec<ToolSpec>>>,
}

impl Registry {
    /// Build a registry of the named built-ins; unknown names are returned as errors.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut tools = Vec::new();
        for n in names {
            let n = n.as_ref();
            let tool = builtin(n).ok_or_else(|| {
                format!(
                    "unknown tool `{n}` (built-in tools: {})",
                    BUILTIN_TOOLS.join(", ")
                )
            })?;
            if !tools
                .iter()
                .any(|t: &Arc<dyn Tool>| t.name() == tool.name())
            {
                tools.push(tool);
            }
        }
        Ok(Registry {
            tools,
            specs: std::sync::OnceLock::new(),
        })
    }

    /// Offer one more tool (e.g. `StructuredOutput`), after the built-ins; a tool of the same
    /// name is replaced.
    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self.specs = std::sync::OnceLock::new();
    }

    /// Remove a tool (a bare-name deny rule removes it from what the model is offered).
    pub fn remove(&mut self, name: &str) {
        self.tools.retain(|t| t.name() != name);
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
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
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
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
}

#[async_trait::async_trait]
impl Tool for RecordedSpec {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn description(&self) -> &'static str {
        self.inner.description()
    }
    fn input_schema(&self) -> Value {
        self.spec.input_schema.clone()
    }
    fn is_read_only(&self, input: &Value) -> bool {
        self.inner.is_read_only(input)
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.inner.is_concurrency_safe(input)
    }
    fn needs_permission(&self) -> bool {
        self.inner.needs_permission()
    }
    fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), String> {
        self.inner.validate(input, ctx)
    }
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        self.inner.call(input, ctx).await
    }
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
}
