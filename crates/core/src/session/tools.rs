//! The tools one task offers: the spec's built-ins, less the tools a bare deny rule removes,
//! the tools of its MCP servers, plus `StructuredOutput` when the spec sets `output:`; for a
//! resumed run, what its tools knew (read-before-write state, todos) and the tool schemas it
//! sent.

use std::sync::Arc;

use crate::permissions::Policy;
use crate::spec::LoadedSpec;
use crate::tools::structured_output::{StructuredOutputHandle, StructuredOutputTool};
use crate::tools::{CallError, DynTool, Erased, Registry, ToolSession, UnknownTool};
use crate::transcript::resume::Resume;

/// Why a task's tools cannot be offered (an `agent_error` outcome); reads as the message the
/// user sees.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolsError {
    /// The spec's `tools:` names a tool that is not built in.
    #[error(transparent)]
    Unknown(#[from] UnknownTool),
    /// The spec's `output.schema` is not a usable JSON Schema.
    #[error(transparent)]
    StructuredOutput(#[from] CallError),
}

/// The registry for `loaded` under `policy` with the MCP servers' tools `mcp`, and the
/// structured-output handle when the spec sets `output:`. `Err` says why the tools cannot be
/// offered.
pub(crate) fn registry(
    loaded: &LoadedSpec,
    policy: &Policy,
    mcp: Vec<Arc<dyn DynTool>>,
    resume: Option<&Resume>,
    ctx: &ToolSession,
) -> Result<(Registry, Option<StructuredOutputHandle>), ToolsError> {
    let mut registry = Registry::from_names(&loaded.spec.tools)?;
    for t in policy.removed_tools() {
        registry.remove(&t);
    }
    for t in mcp {
        registry.add(t);
    }
    let structured = match structured_output_tool(loaded)? {
        Some(tool) => {
            let handle = tool.handle();
            registry.add(Arc::new(Erased(Arc::new(tool))));
            Some(handle)
        }
        None => None,
    };
    if let Some(r) = resume {
        resume_tool_state(r, ctx, &mut registry);
    }
    Ok((registry, structured))
}

/// Restore what a resumed run's tools knew: read-before-write state, todos, and the tool
/// schemas that were sent (kept when the same tools are offered).
fn resume_tool_state(r: &Resume, ctx: &ToolSession, registry: &mut Registry) {
    if let Ok(mut state) = ctx.read_state.lock() {
        for (path, record) in &r.read_files {
            state.record(path.clone(), record.clone());
        }
    }
    if let (Some(todos), Ok(mut t)) = (&r.todos, ctx.todos.lock()) {
        *t = todos.clone();
    }
    if let Some(specs) = &r.tool_specs {
        let recorded: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        if recorded == registry.names() {
            registry.set_specs(specs.clone());
        } else {
            tracing::warn!(
                recorded = ?recorded,
                now = ?registry.names(),
                "the tools offered differ from the run's; sending the current tool schemas"
            );
        }
    }
}

/// The `StructuredOutput` tool for a spec with `output:` (its handle is [`StructuredOutputTool::handle`]).
fn structured_output_tool(loaded: &LoadedSpec) -> Result<Option<StructuredOutputTool>, ToolsError> {
    let (Some(out), Some(schema)) = (&loaded.spec.output, &loaded.output_schema) else {
        return Ok(None);
    };
    let handle = StructuredOutputHandle::new(out.max_retries);
    StructuredOutputTool::new(schema.clone(), handle)
        .map(Some)
        .map_err(ToolsError::from)
}
