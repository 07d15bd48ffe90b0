//! The Write tool: create a file or replace an existing one the model has read.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_rules;
use super::util::{self, absolute_path};
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// The Write tool.
#[derive(Clone, Copy)]
pub(crate) struct WriteTool;

/// The Write tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct WriteInput {
    file_path: String,
    content: String,
}

const DESCRIPTION: &str = "Writes a file to the local filesystem.

Usage:
- The file_path parameter must be an absolute path, not a relative path.
- This tool will overwrite the existing file if there is one at the provided path.
- If this is an existing file, you MUST use the Read tool first to read the file's contents. \
This tool will fail if you did not read the file first, or if it changed on disk since you read it.
- Parent directories are created as needed. The original file's line endings (CRLF) are kept.
- ALWAYS prefer editing existing files with the Edit tool. NEVER write new files unless required.
- NEVER proactively create documentation files (*.md) or README files unless explicitly requested.";

/// A checked Write call: the file and its new content.
pub(crate) struct Parsed {
    path: PathBuf,
    content: String,
}

#[async_trait::async_trait]
impl Tool for WriteTool {
    type Input = WriteInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Write"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "The absolute path to the file to write (must be absolute, not relative)"
                },
                "content": {
                    "type": "string",
                    "description": "The content to write to the file"
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: WriteInput, _ctx: &ToolContext) -> Result<Parsed, CallError> {
        Ok(Parsed {
            path: absolute_path("file_path", &input.file_path)?,
            content: input.content,
        })
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Write(vec![call.path.clone()])
    }

    async fn call(&self, call: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        Ok(match write_file(ctx, &call.path, &call.content) {
            Ok(out) => out,
            Err(e) => ToolOutput::error(e),
        })
    }
}

fn write_file(ctx: &ToolContext, path: &Path, content: &str) -> Result<ToolOutput, CallError> {
    file_rules::may_write(ctx, path)?;
    let shown = path.display();
    let original = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(call_error!("{shown} is a directory, not a file.")),
        Ok(_) => {
            util::check_read_before_write(ctx, path)?;
            let bytes = std::fs::read(path).map_err(|e| format!("Cannot read {shown}: {e}"))?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(call_error!("Cannot access {shown}: {e}")),
    };
    let to_write = match &original {
        Some(old) if util::uses_crlf(old) => util::to_crlf(content),
        _ => content.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("Cannot create directory {}: {e}", parent.display()))?;
    }
    std::fs::write(path, &to_write).map_err(|e| format!("Cannot write {shown}: {e}"))?;
    util::record_read(ctx, path, true);
    tracing::debug!(path = %shown, bytes = to_write.len(), "Write");

    let patch = util::structured_patch(original.as_deref().unwrap_or(""), &to_write);
    let (kind, text) = match original {
        None => ("create", format!("File created successfully at: {shown}")),
        Some(_) => (
            "update",
            format!("The file {shown} has been updated successfully."),
        ),
    };
    let structured = json!({
        "type": kind,
        "filePath": path.to_string_lossy(),
        "content": content,
        "structuredPatch": patch,
        "originalFile": original,
    });
    Ok(ToolOutput::ok(text, Some(structured)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::read::ReadTool;
    use crate::tools::util::test_support::{call, ctx, validate};

    async fn write(ctx: &ToolContext, path: &Path, content: &str) -> ToolOutput {
        call(
            &WriteTool,
            json!({"file_path": path, "content": content}),
            ctx,
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn creates_with_parents() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("a/b/new.txt");
        let out = write(&ctx, &f, "hi\n").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains("created"));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "hi\n");
        let s = out.structured.unwrap();
        assert_eq!(s["type"], "create");
        assert_eq!(s["originalFile"], Value::Null);
        assert_eq!(s["structuredPatch"][0]["lines"], json!(["+hi"]));
        // Written files count as read: a second write is allowed.
        let out = write(&ctx, &f, "again\n").await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.structured.unwrap()["type"], "update");
    }

    #[tokio::test]
    async fn refuses_unread_and_changed_files() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("x.txt");
        std::fs::write(&f, "old\n").unwrap();
        let out = write(&ctx, &f, "new\n").await;
        assert!(out.is_error && out.content.contains("has not been read"));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old\n");

        call(&ReadTool, json!({"file_path": f}), &ctx)
            .await
            .unwrap();
        // Changed on disk after the read (a distinct mtime).
        std::fs::write(&f, "changed by someone\n").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let out = write(&ctx, &f, "new\n").await;
        assert!(out.is_error && out.content.contains("modified since read"));

        call(&ReadTool, json!({"file_path": f}), &ctx)
            .await
            .unwrap();
        let out = write(&ctx, &f, "new\n").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains("updated"));
        let s = out.structured.unwrap();
        assert_eq!(s["originalFile"], "changed by someone\n");
        assert_eq!(
            s["structuredPatch"][0]["lines"],
            json!(["-changed by someone", "+new"])
        );
    }

    #[tokio::test]
    async fn keeps_crlf_line_endings() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("w.txt");
        std::fs::write(&f, "a\r\nb\r\n").unwrap();
        call(&ReadTool, json!({"file_path": f}), &ctx)
            .await
            .unwrap();
        let out = write(&ctx, &f, "a\nc\n").await;
        assert!(!out.is_error);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "a\r\nc\r\n");
    }

    #[test]
    fn validates_inputs() {
        let (_d, ctx) = ctx();
        let e = validate(
            &WriteTool,
            &json!({"file_path": "rel.txt", "content": ""}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("absolute"));
        let e = validate(&WriteTool, &json!({"file_path": "/x"}), &ctx).unwrap_err();
        assert!(e.contains("`content`"));
    }
}
