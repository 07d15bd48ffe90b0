//! The Edit tool: exact string replacement in a file the model has read.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_rules;
use super::util::{self, absolute_path};
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// The Edit tool.
#[derive(Clone, Copy)]
pub(crate) struct EditTool;

/// The Edit tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EditInput {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default, deserialize_with = "util::de_opt_bool")]
    replace_all: Option<bool>,
}

/// A checked Edit call.
pub(crate) struct Parsed {
    path: PathBuf,
    old: String,
    new: String,
    replace_all: bool,
}

const DESCRIPTION: &str = "Performs exact string replacements in files.

Usage:
- You must use the Read tool at least once before editing a file. This tool will error if you \
attempt an edit without reading the file, or if the file changed on disk since you read it.
- The file_path parameter must be an absolute path.
- When editing text from Read tool output, preserve the exact indentation (tabs/spaces) as it \
appears AFTER the line number prefix (spaces + line number + tab). Never include any part of \
the line number prefix in old_string or new_string.
- The edit will FAIL if old_string is not found, or if it is found more than once and \
replace_all is false. Either provide a larger string with more surrounding context to make it \
unique or use replace_all to change every instance of old_string.
- old_string and new_string must differ.
- An empty old_string creates a new file with new_string as its content.
- Use replace_all for replacing and renaming strings across the file.";

impl EditTool {
    fn parse(&self, raw: EditInput) -> Result<Parsed, CallError> {
        let path = absolute_path("file_path", &raw.file_path)?;
        if raw.old_string == raw.new_string {
            return Err(
                "No changes to make: old_string and new_string are exactly the same.".into(),
            );
        }
        Ok(Parsed {
            path,
            old: raw.old_string,
            new: raw.new_string,
            replace_all: raw.replace_all.unwrap_or(false),
        })
    }
}

#[async_trait::async_trait]
impl Tool for EditTool {
    type Input = EditInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Edit"
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
                    "description": "The absolute path to the file to modify"
                },
                "old_string": {
                    "type": "string",
                    "description": "The text to replace"
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to replace it with (must be different from old_string)"
                },
                "replace_all": {
                    "type": "boolean",
                    "default": false,
                    "description": "Replace all occurrences of old_string (default false)"
                }
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: EditInput, _ctx: &ToolContext) -> Result<Parsed, CallError> {
        self.parse(input)
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Write(vec![call.path.clone()])
    }

    async fn call(&self, parsed: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        Ok(match edit_file(ctx, &parsed) {
            Ok(out) => out,
            Err(e) => ToolOutput::error(e),
        })
    }
}

fn edit_file(ctx: &ToolContext, p: &Parsed) -> Result<ToolOutput, CallError> {
    let path = &p.path;
    file_rules::may_write(ctx, path)?;
    let shown = path.display();
    let original = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(call_error!("{shown} is a directory, not a file.")),
        Ok(_) => {
            let bytes = std::fs::read(path).map_err(|e| format!("Cannot read {shown}: {e}"))?;
            Some(String::from_utf8(bytes).map_err(|_| {
                format!("{shown} is not valid UTF-8 text; Edit supports text files only.")
            })?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(call_error!("Cannot access {shown}: {e}")),
    };

    let updated = match &original {
        None if p.old.is_empty() => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("Cannot create directory {}: {e}", parent.display()))?;
            }
            p.new.clone()
        }
        None => {
            return Err(call_error!(
                "File does not exist: {shown}. To create a new file, use an empty old_string \
                 or the Write tool."
            ));
        }
        Some(existing) if p.old.is_empty() => {
            if !existing.trim().is_empty() {
                return Err(call_error!(
                    "Cannot create new file - file already exists: {shown}. Read it and use a \
                     non-empty old_string to edit it."
                ));
            }
            util::check_read_before_write(ctx, path)?;
            p.new.clone()
        }
        Some(existing) => {
            util::check_read_before_write(ctx, path)?;
            replace(existing, &p.old, &p.new, p.replace_all)?
        }
    };

    std::fs::write(path, &updated).map_err(|e| format!("Cannot write {shown}: {e}"))?;
    util::record_read(ctx, path, true);
    tracing::debug!(path = %shown, "Edit");

    let old_text = original.as_deref().unwrap_or("");
    let structured = json!({
        "filePath": path.to_string_lossy(),
        "oldString": p.old,
        "newString": p.new,
        "originalFile": old_text,
        "structuredPatch": util::structured_patch(old_text, &updated),
        "userModified": false,
        "replaceAll": p.replace_all,
    });
    let text = if original.is_none() {
        format!("File created successfully at: {shown}")
    } else {
        format!("The file {shown} has been updated successfully.")
    };
    Ok(ToolOutput::ok(text, Some(structured)))
}

/// Replace `old` by `new` in `content` under the uniqueness rule. When the file uses CRLF and
/// the model sent LF, match on the LF-normalized text and restore CRLF afterwards.
fn replace(content: &str, old: &str, new: &str, replace_all: bool) -> Result<String, CallError> {
    let exact = content.matches(old).count();
    if exact > 0 {
        return apply(content, old, new, replace_all, exact);
    }
    if content.contains("\r\n") && !old.contains("\r\n") {
        let lf = content.replace("\r\n", "\n");
        let count = lf.matches(old).count();
        if count > 0 {
            let updated = apply(&lf, old, &new.replace("\r\n", "\n"), replace_all, count)?;
            return Ok(util::to_crlf(&updated));
        }
    }
    Err(call_error!(
        "String to replace not found in file (0 matches). Check the exact text, including \
         whitespace and indentation, and include enough surrounding context; Read the file \
         again if unsure.\nString: {old}"
    ))
}

fn apply(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    count: usize,
) -> Result<String, CallError> {
    if count > 1 && !replace_all {
        return Err(call_error!(
            "Found {count} matches of the string to replace, but replace_all is false. To \
             replace all occurrences, set replace_all to true. To replace only one occurrence, \
             provide more surrounding context to uniquely identify the instance.\nString: {old}"
        ));
    }
    Ok(if replace_all {
        content.replace(old, new)
    } else {
        content.replacen(old, new, 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::read::ReadTool;
    use crate::tools::util::test_support::{call, ctx, validate};
    use std::path::Path;

    async fn edit(ctx: &ToolContext, input: Value) -> ToolOutput {
        call(&EditTool, input, ctx).await.unwrap()
    }

    async fn read(ctx: &ToolContext, path: &Path) {
        let out = call(&ReadTool, json!({"file_path": path}), ctx)
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.content);
    }

    #[tokio::test]
    async fn unique_replacement_with_patch() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("a.rs");
        std::fs::write(&f, "fn a() {}\nfn b() {}\n").unwrap();
        read(&ctx, &f).await;
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "fn b", "new_string": "fn c"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "fn a() {}\nfn c() {}\n"
        );
        let s = out.structured.unwrap();
        assert_eq!(s["originalFile"], "fn a() {}\nfn b() {}\n");
        assert_eq!(s["replaceAll"], false);
        assert_eq!(
            s["structuredPatch"][0]["lines"],
            json!([" fn a() {}", "-fn b() {}", "+fn c() {}"])
        );
        // The edit refreshed the read state: a second edit needs no new Read.
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "fn a", "new_string": "fn z"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
    }

    #[tokio::test]
    async fn counts_matches_in_errors() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("m.txt");
        std::fs::write(&f, "x = 1\nx = 1\ny\n").unwrap();
        read(&ctx, &f).await;
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await;
        assert!(out.is_error);
        assert!(out.content.contains("Found 2 matches") && out.content.contains("context"));
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "nope", "new_string": "q"}),
        )
        .await;
        assert!(out.is_error && out.content.contains("0 matches"));
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
        )
        .await;
        assert!(!out.is_error);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "x = 2\nx = 2\ny\n");
    }

    #[tokio::test]
    async fn read_before_edit() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("r.txt");
        std::fs::write(&f, "abc").unwrap();
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "b", "new_string": "B"}),
        )
        .await;
        assert!(out.is_error && out.content.contains("has not been read"));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "abc");
    }

    #[tokio::test]
    async fn crlf_and_trailing_newline_preserved() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("c.txt");
        std::fs::write(&f, "one\r\ntwo\r\nthree\r\n").unwrap();
        read(&ctx, &f).await;
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "one\ntwo", "new_string": "one\n2\nmore"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "one\r\n2\r\nmore\r\nthree\r\n"
        );

        let g = ctx.session.roots.workdir.join("nonl.txt");
        std::fs::write(&g, "a\nb").unwrap();
        read(&ctx, &g).await;
        edit(
            &ctx,
            json!({"file_path": g, "old_string": "a", "new_string": "A"}),
        )
        .await;
        assert_eq!(std::fs::read_to_string(&g).unwrap(), "A\nb");
    }

    #[tokio::test]
    async fn empty_old_string_creates() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("sub/new.txt");
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "", "new_string": "hello\n"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "hello\n");
        let out = edit(
            &ctx,
            json!({"file_path": f, "old_string": "", "new_string": "again\n"}),
        )
        .await;
        assert!(out.is_error && out.content.contains("already exists"));
    }

    #[test]
    fn same_strings_are_an_input_error() {
        let (_d, ctx) = ctx();
        let e = validate(
            &EditTool,
            &json!({"file_path": "/x", "old_string": "a", "new_string": "a"}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("No changes"));
        let e = validate(
            &EditTool,
            &json!({"file_path": "/x", "old_string": "a", "new_string": "b", "replace_all": "yes"}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("replace_all"), "{e}");
    }
}
