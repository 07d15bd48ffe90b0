//! The Glob tool: files matching a glob pattern, newest first.
//!
//! Like Claude Code's Glob, `.gitignore` is not applied (a model looking for `dist/**/*.js`
//! should find it); `.git/` is always skipped. The walk is parallel, so large trees stay fast.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_rules::WalkFilter;
use super::util;
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};
use crate::roots::normalize_lexically;

/// Most file names one call returns.
pub(crate) const MAX_RESULTS: usize = 100;

/// The Glob tool.
#[derive(Clone, Copy)]
pub(crate) struct GlobTool;

/// The Glob tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GlobInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

const DESCRIPTION: &str = "Fast file pattern matching tool that works with any codebase size.

- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\"; `*` does not cross `/`, `**` \
matches any number of directories, `{a,b}` alternatives and `[abc]` classes work.
- The pattern is matched against paths relative to `path` (default: the working directory). \
`path` may be absolute or relative to the working directory and must be a directory; omit it \
for the working directory (never pass \"undefined\" or \"null\").
- Returns absolute paths of matching files sorted by modification time, newest first, at most \
100 (the result says when it was truncated).
- .gitignore is not applied; the .git directory is skipped.
- Use this tool when you need to find files by name patterns; use Grep to search contents.";

/// A checked Glob call.
pub(crate) struct Parsed {
    root: PathBuf,
    /// The pattern, relative to `root`.
    pattern: String,
    matcher: GlobMatcher,
}

impl Parsed {
    /// The directory the pattern can reach: `root` with the pattern's literal leading
    /// components. A `..` after a wildcard could climb anywhere, so that reaches `/`.
    fn reach(&self) -> PathBuf {
        let mut literal = PathBuf::new();
        let mut wild = false;
        for comp in self.pattern.split('/') {
            if comp.contains(['*', '?', '[', '{']) {
                wild = true;
            } else if wild && comp == ".." {
                return PathBuf::from("/");
            } else if !wild {
                literal.push(if comp.is_empty() { "/" } else { comp });
            }
        }
        normalize_lexically(&self.root.join(literal))
    }
}

impl GlobTool {
    fn parse(&self, raw: GlobInput, ctx: &ToolContext) -> Result<Parsed, CallError> {
        if raw.pattern.trim().is_empty() {
            return Err("`pattern` must not be empty".into());
        }
        let root = util::search_root(ctx, raw.path.as_deref());
        let mut pattern = raw.pattern.trim().to_string();
        // An absolute pattern under the root is made relative to it.
        if Path::new(&pattern).is_absolute() {
            let rel = Path::new(&pattern)
                .strip_prefix(&root)
                .map_err(|_| {
                    format!(
                        "`pattern` is an absolute path outside `path` ({}); give a relative \
                         pattern and set `path` instead",
                        root.display()
                    )
                })?
                .to_string_lossy()
                .into_owned();
            pattern = rel;
        }
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("`pattern` is not a valid glob: {e}"))?
            .compile_matcher();
        Ok(Parsed {
            root,
            pattern,
            matcher,
        })
    }
}

#[async_trait::async_trait]
impl Tool for GlobTool {
    type Input = GlobInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Glob"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The glob pattern to match files against"
                },
                "path": {
                    "type": "string",
                    "description": "The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter \"undefined\" or \"null\" - simply omit it for the default behavior. Must be a valid directory path if provided."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: GlobInput, ctx: &ToolContext) -> Result<Parsed, CallError> {
        self.parse(input, ctx)
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Read(vec![call.reach()])
    }

    async fn call(&self, parsed: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        if !parsed.root.is_dir() {
            return Ok(ToolOutput::error(format!(
                "Directory does not exist or is not a directory: {}",
                parsed.root.display()
            )));
        }
        let filter = match WalkFilter::new(ctx, &parsed.root) {
            Ok(f) => f,
            Err(e) => return Ok(ToolOutput::error(e)),
        };
        let cancel = ctx.cancel.clone();
        let started = Instant::now();
        let found = util::blocking(move || {
            walk(&parsed.root, &parsed.matcher, filter, &|| {
                cancel.is_cancelled()
            })
        })
        .await;
        let mut hits = match found {
            Ok(f) => f,
            Err(e) => return Ok(ToolOutput::error(e)),
        };
        hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = hits.len();
        let truncated = total > MAX_RESULTS;
        let filenames: Vec<String> = hits
            .into_iter()
            .take(MAX_RESULTS)
            .map(|(_, p)| p.to_string_lossy().into_owned())
            .collect();
        let mut content = if filenames.is_empty() {
            "No files found".to_string()
        } else {
            filenames.join("\n")
        };
        if truncated {
            content.push_str(&format!(
                "\n(Results are truncated: showing {MAX_RESULTS} of {total} files. Consider \
                 using a more specific path or pattern.)"
            ));
        }
        let structured = json!({
            "durationMs": started.elapsed().as_millis() as u64,
            "numFiles": filenames.len(),
            "filenames": filenames,
            "truncated": truncated,
            "totalMatches": total,
            "countIsComplete": true,
        });
        Ok(ToolOutput::ok(content, Some(structured)))
    }
}

/// Every file under `root` whose root-relative path matches, with its mtime.
fn walk(
    root: &Path,
    matcher: &GlobMatcher,
    filter: WalkFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Vec<(Option<SystemTime>, PathBuf)> {
    let hits = Arc::new(Mutex::new(Vec::new()));
    // The sandbox's denied files are not listed and its denied directories not entered.
    let walker = WalkBuilder::new(root)
        .standard_filters(false)
        .filter_entry(move |e| {
            e.file_name() != ".git" && filter.allows(e.path(), e.path_is_symlink())
        })
        .build_parallel();
    walker.run(|| {
        let hits = Arc::clone(&hits);
        Box::new(move |entry| {
            if cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry
                .file_type()
                .is_some_and(|t| t.is_file() || t.is_symlink())
            {
                return WalkState::Continue;
            }
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                return WalkState::Continue;
            };
            if matcher.is_match(rel) {
                let mtime = entry.metadata().ok().and_then(|m| m.modified().ok());
                hits.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((mtime, path.to_path_buf()));
            }
            WalkState::Continue
        })
    });
    let mut guard = hits.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::take(&mut *guard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::util::test_support::{call, ctx, validate};
    use std::time::Duration;

    fn touch(path: &Path, age_secs: u64) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
        let t = SystemTime::now() - Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    async fn glob(ctx: &ToolContext, input: Value) -> ToolOutput {
        call(&GlobTool, input, ctx).await.unwrap()
    }

    #[tokio::test]
    async fn newest_first_absolute_and_ignores_gitignore() {
        let (_d, ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        touch(&w.join("old.rs"), 100);
        touch(&w.join("src/new.rs"), 1);
        touch(&w.join("src/b.rs"), 50);
        touch(&w.join("src/a.rs"), 50);
        touch(&w.join("target/gen.rs"), 10);
        touch(&w.join(".git/hooks/x.rs"), 1);
        touch(&w.join("notes.txt"), 1);
        std::fs::write(w.join(".gitignore"), "target/\n").unwrap();

        let out = glob(&ctx, json!({"pattern": "**/*.rs"})).await;
        assert!(!out.is_error);
        let expected: Vec<String> = [
            "src/new.rs",
            "target/gen.rs",
            "src/a.rs",
            "src/b.rs",
            "old.rs",
        ]
        .iter()
        .map(|p| w.join(p).display().to_string())
        .collect();
        assert_eq!(out.content, expected.join("\n"));
        let s = out.structured.unwrap();
        assert_eq!(s["numFiles"], 5);
        assert_eq!(s["truncated"], false);

        let out = glob(&ctx, json!({"pattern": "*.rs"})).await;
        assert_eq!(out.content, w.join("old.rs").display().to_string());

        let out = glob(&ctx, json!({"pattern": "*.rs", "path": "src"})).await;
        assert_eq!(out.structured.unwrap()["numFiles"], 3);

        let out = glob(&ctx, json!({"pattern": "*.go"})).await;
        assert_eq!(out.content, "No files found");
    }

    #[tokio::test]
    async fn caps_at_one_hundred() {
        let (_d, ctx) = ctx();
        for i in 0..120 {
            std::fs::write(ctx.session.roots.workdir.join(format!("f{i:03}.txt")), "").unwrap();
        }
        let out = glob(&ctx, json!({"pattern": "*.txt"})).await;
        let s = out.structured.unwrap();
        assert_eq!(s["numFiles"], 100);
        assert_eq!(s["truncated"], true);
        assert_eq!(s["totalMatches"], 120);
        assert!(out.content.contains("truncated"));
    }

    #[tokio::test]
    async fn bad_path_and_pattern() {
        let (_d, ctx) = ctx();
        let out = glob(&ctx, json!({"pattern": "*", "path": "missing"})).await;
        assert!(out.is_error && out.content.contains("does not exist"));
        let e = validate(&GlobTool, &json!({"pattern": "a[", "path": null}), &ctx);
        assert!(e.unwrap_err().contains("valid glob"));
        let out = glob(&ctx, json!({"pattern": "*", "path": "undefined"})).await;
        assert!(!out.is_error);
    }
}
