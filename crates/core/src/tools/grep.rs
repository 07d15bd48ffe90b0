//! The Grep tool: ripgrep's search (its crates) over the workspace.
//!
//! Like `rg`: `.gitignore` is respected (also outside git repositories), hidden files and
//! binary files are skipped. Walking and searching are parallel; results are sorted afterwards
//! so the output is stable.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_rules::WalkFilter;
use super::util;
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// Entries returned when the call gives no `head_limit`.
pub(crate) const DEFAULT_HEAD_LIMIT: usize = 250;
/// Characters of one content line shown before it is cut.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// The Grep tool.
#[derive(Clone, Copy)]
pub(crate) struct GrepTool;

/// The Grep tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GrepInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    output_mode: Option<String>,
    #[serde(default, rename = "-i", deserialize_with = "util::de_opt_bool")]
    case_insensitive: Option<bool>,
    #[serde(default, rename = "-n", deserialize_with = "util::de_opt_bool")]
    line_numbers: Option<bool>,
    #[serde(default, rename = "-o", deserialize_with = "util::de_opt_bool")]
    only_matching: Option<bool>,
    #[serde(default, rename = "-A", deserialize_with = "util::de_opt_u64")]
    after: Option<u64>,
    #[serde(default, rename = "-B", deserialize_with = "util::de_opt_u64")]
    before: Option<u64>,
    #[serde(default, rename = "-C", deserialize_with = "util::de_opt_u64")]
    context_c: Option<u64>,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    context: Option<u64>,
    #[serde(default, deserialize_with = "util::de_opt_bool")]
    multiline: Option<bool>,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    head_limit: Option<u64>,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    offset: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Content,
    Files,
    Count,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Content => "content",
            Mode::Files => "files_with_matches",
            Mode::Count => "count",
        }
    }
}

/// A checked Grep call.
pub(crate) struct Parsed {
    pattern: String,
    root: PathBuf,
    globs: Vec<String>,
    file_type: Option<String>,
    mode: Mode,
    case_insensitive: bool,
    line_numbers: bool,
    only_matching: bool,
    before: usize,
    after: usize,
    multiline: bool,
    head_limit: Option<usize>,
    offset: usize,
}

const DESCRIPTION: &str = "A powerful search tool built on ripgrep.

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke `grep` or `rg` as a Bash command.
- Supports full regex syntax (e.g. \"log.*Error\", \"function\\s+\\w+\"); the syntax is \
ripgrep's: literal braces need escaping (use `interface\\{\\}` to find `interface{}` in Go code).
- Filter files with the glob parameter (e.g. \"*.js\", \"**/*.tsx\") or the type parameter \
(e.g. \"js\", \"py\", \"rust\").
- Output modes: \"files_with_matches\" (default) shows file paths, newest first; \"content\" \
shows matching lines as path:line:text (supports -A/-B/-C context, -n line numbers, default \
on, and -o only-matching); \"count\" shows match counts per file.
- head_limit (default 250, 0 = unlimited) and offset page through the results.
- By default patterns match within single lines; use multiline: true for patterns that span \
lines.
- Respects .gitignore; hidden and binary files are skipped.";

impl GrepTool {
    fn parse(&self, raw: GrepInput, ctx: &ToolContext) -> Result<Parsed, CallError> {
        if raw.pattern.is_empty() {
            return Err("`pattern` must not be empty".into());
        }
        let mode = match raw.output_mode.as_deref() {
            None | Some("files_with_matches") => Mode::Files,
            Some("content") => Mode::Content,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(call_error!(
                    "`output_mode` must be content, files_with_matches or count, got `{other}`"
                ));
            }
        };
        let ctx_all = raw.context_c.or(raw.context);
        let globs = raw.glob.as_deref().map(split_globs).unwrap_or_default();
        Ok(Parsed {
            pattern: raw.pattern,
            root: util::search_root(ctx, raw.path.as_deref()),
            globs,
            file_type: raw.file_type.filter(|t| !t.trim().is_empty()),
            mode,
            case_insensitive: raw.case_insensitive.unwrap_or(false),
            line_numbers: raw.line_numbers.unwrap_or(true),
            only_matching: raw.only_matching.unwrap_or(false),
            before: raw.before.or(ctx_all).unwrap_or(0) as usize,
            after: raw.after.or(ctx_all).unwrap_or(0) as usize,
            multiline: raw.multiline.unwrap_or(false),
            head_limit: match raw.head_limit {
                Some(0) => None,
                Some(n) => Some(n as usize),
                None => Some(DEFAULT_HEAD_LIMIT),
            },
            offset: raw.offset.unwrap_or(0) as usize,
        })
    }
}

/// Split a `glob` parameter into globs: whitespace separates them, and so do commas outside
/// `{...}` alternatives.
fn split_globs(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in raw.split_whitespace() {
        if word.contains('{') {
            out.push(word.to_string());
        } else {
            out.extend(
                word.split(',')
                    .filter(|g| !g.is_empty())
                    .map(str::to_string),
            );
        }
    }
    out
}

#[async_trait::async_trait]
impl Tool for GrepTool {
    type Input = GrepInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Grep"
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
                    "description": "The regular expression pattern to search for in file contents"
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search in (rg PATH). Defaults to current working directory."
                },
                "glob": {
                    "type": "string",
                    "description": "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\") - maps to rg --glob"
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": "Output mode: \"content\" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), \"files_with_matches\" shows file paths (supports head_limit), \"count\" shows match counts (supports head_limit). Defaults to \"files_with_matches\"."
                },
                "-B": {
                    "type": "number",
                    "description": "Number of lines to show before each match (rg -B). Requires output_mode: \"content\", ignored otherwise."
                },
                "-A": {
                    "type": "number",
                    "description": "Number of lines to show after each match (rg -A). Requires output_mode: \"content\", ignored otherwise."
                },
                "-C": {
                    "type": "number",
                    "description": "Alias for context."
                },
                "context": {
                    "type": "number",
                    "description": "Number of lines to show before and after each match (rg -C). Requires output_mode: \"content\", ignored otherwise."
                },
                "-n": {
                    "type": "boolean",
                    "description": "Show line numbers in output (rg -n). Requires output_mode: \"content\", ignored otherwise. Defaults to true."
                },
                "-i": {
                    "type": "boolean",
                    "description": "Case insensitive search (rg -i)"
                },
                "-o": {
                    "type": "boolean",
                    "description": "Print only the matched parts of matching lines (rg -o). Requires output_mode: \"content\", ignored otherwise."
                },
                "type": {
                    "type": "string",
                    "description": "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types."
                },
                "head_limit": {
                    "type": "number",
                    "description": "Limit output to first N lines/entries, equivalent to \"| head -N\". Works across all output modes: content (limits output lines), files_with_matches (limits file paths), count (limits count entries). Defaults to 250 when unspecified. Pass 0 for unlimited."
                },
                "offset": {
                    "type": "number",
                    "description": "Skip first N lines/entries before applying head_limit, equivalent to \"| tail -n +N | head -N\". Works across all output modes. Defaults to 0."
                },
                "multiline": {
                    "type": "boolean",
                    "description": "Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: GrepInput, ctx: &ToolContext) -> Result<Parsed, CallError> {
        self.parse(input, ctx)
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Read(vec![call.root.clone()])
    }

    async fn call(&self, parsed: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        let filter = match WalkFilter::new(ctx, &parsed.root) {
            Ok(f) => f,
            Err(e) => return Ok(ToolOutput::error(e)),
        };
        let cancel = ctx.cancel.clone();
        let result =
            util::blocking(move || search(&parsed, &filter, &|| cancel.is_cancelled())).await;
        Ok(match result {
            Err(e) | Ok(Err(e)) => ToolOutput::error(e),
            Ok(Ok(out)) => out,
        })
    }
}

/// One line of content output.
#[derive(Debug)]
enum Entry {
    Match(u64, String),
    Context(u64, String),
    Break,
}

/// What one file produced.
#[derive(Debug)]
struct FileHits {
    path: PathBuf,
    mtime: Option<SystemTime>,
    matches: u64,
    entries: Vec<Entry>,
}

fn build_matcher(p: &Parsed) -> Result<RegexMatcher, CallError> {
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(p.case_insensitive);
    if p.multiline {
        b.multi_line(true).dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&p.pattern)
        .map_err(|e| call_error!("Invalid regex `{}`: {e}", p.pattern))
}

fn search(
    p: &Parsed,
    filter: &WalkFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<ToolOutput, CallError> {
    let matcher = build_matcher(p)?;
    let meta = std::fs::metadata(&p.root)
        .map_err(|_| format!("Path does not exist: {}", p.root.display()))?;
    let base = if meta.is_dir() {
        p.root.clone()
    } else {
        p.root.parent().map(Path::to_path_buf).unwrap_or_default()
    };

    let mut walk = WalkBuilder::new(&p.root);
    let filter = filter.clone();
    // The sandbox's denied files are skipped and its denied directories not entered.
    walk.require_git(false).filter_entry(move |e| {
        e.file_name() != ".git" && filter.allows(e.path(), e.path_is_symlink())
    });
    if !p.globs.is_empty() {
        let mut ob = OverrideBuilder::new(&base);
        for g in &p.globs {
            ob.add(g)
                .map_err(|e| format!("`glob` is not a valid glob (`{g}`): {e}"))?;
        }
        walk.overrides(ob.build().map_err(|e| format!("`glob`: {e}"))?);
    }
    if let Some(t) = &p.file_type {
        let mut tb = TypesBuilder::new();
        tb.add_defaults();
        tb.select(t);
        walk.types(tb.build().map_err(|e| format!("`type`: {e}"))?);
    }

    let mut sb = SearcherBuilder::new();
    sb.line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .multi_line(p.multiline);
    if p.mode == Mode::Content {
        sb.before_context(p.before).after_context(p.after);
    }
    let searcher_template = sb.build();

    let results: Arc<Mutex<Vec<FileHits>>> = Arc::new(Mutex::new(Vec::new()));
    let errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    walk.build_parallel().run(|| {
        let results = Arc::clone(&results);
        let errors = Arc::clone(&errors);
        let matcher = matcher.clone();
        let mut searcher = searcher_template.clone();
        Box::new(move |entry| {
            if cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = FileSink {
                matcher: &matcher,
                mode: p.mode,
                only_matching: p.only_matching,
                entries: Vec::new(),
                matches: 0,
                binary: false,
            };
            if let Err(e) = searcher.search_path(&matcher, entry.path(), &mut sink) {
                errors
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(format!("{}: {e}", entry.path().display()));
                return WalkState::Continue;
            }
            if sink.matches > 0 && !sink.binary {
                let mtime = entry.metadata().ok().and_then(|m| m.modified().ok());
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(FileHits {
                        path: entry.path().to_path_buf(),
                        mtime,
                        matches: sink.matches,
                        entries: sink.entries,
                    });
            }
            WalkState::Continue
        })
    });
    for e in errors.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        tracing::debug!(error = %e, "Grep skipped a file");
    }
    let mut files = std::mem::take(&mut *results.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(render(p, &mut files))
}

/// Apply `offset` and `head_limit` to entries; returns the page and the limit if it cut.
fn paginate<T>(items: Vec<T>, p: &Parsed) -> (Vec<T>, Option<usize>) {
    let rest: Vec<T> = items.into_iter().skip(p.offset).collect();
    match p.head_limit {
        Some(limit) if rest.len() > limit => (rest.into_iter().take(limit).collect(), Some(limit)),
        _ => (rest, None),
    }
}

fn pagination_note(p: &Parsed, applied: Option<usize>) -> String {
    match (applied, p.offset) {
        (None, 0) => String::new(),
        (Some(l), 0) => format!("\n\n[Showing results with pagination = limit: {l}]"),
        (None, o) => format!("\n\n[Showing results with pagination = offset: {o}]"),
        (Some(l), o) => format!("\n\n[Showing results with pagination = limit: {l}, offset: {o}]"),
    }
}

fn render(p: &Parsed, files: &mut [FileHits]) -> ToolOutput {
    let mut structured = json!({"mode": p.mode.as_str()});
    let content = match p.mode {
        Mode::Files => {
            files.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
            let names: Vec<String> = files.iter().map(|f| shown(&f.path)).collect();
            let (page, applied) = paginate(names, p);
            structured["numFiles"] = json!(page.len());
            structured["filenames"] = json!(page);
            set_pagination(&mut structured, p, applied);
            if page.is_empty() {
                "No files found".to_string()
            } else {
                format!(
                    "Found {} file{}\n{}{}",
                    page.len(),
                    if page.len() == 1 { "" } else { "s" },
                    page.join("\n"),
                    pagination_note(p, applied)
                )
            }
        }
        Mode::Count => {
            files.sort_by(|a, b| a.path.cmp(&b.path));
            let rows: Vec<(String, u64)> =
                files.iter().map(|f| (shown(&f.path), f.matches)).collect();
            let (page, applied) = paginate(rows, p);
            let total: u64 = page.iter().map(|r| r.1).sum();
            structured["numFiles"] = json!(page.len());
            structured["filenames"] = json!(Vec::<String>::new());
            structured["numMatches"] = json!(total);
            set_pagination(&mut structured, p, applied);
            if page.is_empty() {
                "No matches found".to_string()
            } else {
                let lines: Vec<String> = page.iter().map(|(f, n)| format!("{f}:{n}")).collect();
                let text = lines.join("\n");
                structured["content"] = json!(text);
                format!(
                    "{text}\n\nFound {total} total occurrence{} across {} file{}.{}",
                    if total == 1 { "" } else { "s" },
                    page.len(),
                    if page.len() == 1 { "" } else { "s" },
                    pagination_note(p, applied)
                )
            }
        }
        Mode::Content => {
            files.sort_by(|a, b| a.path.cmp(&b.path));
            let context = p.before > 0 || p.after > 0;
            let mut lines = Vec::new();
            for (i, f) in files.iter().enumerate() {
                if context && i > 0 {
                    lines.push("--".to_string());
                }
                let name = shown(&f.path);
                for e in &f.entries {
                    lines.push(match e {
                        Entry::Break => "--".to_string(),
                        Entry::Match(n, t) if p.line_numbers => format!("{name}:{n}:{t}"),
                        Entry::Context(n, t) if p.line_numbers => format!("{name}-{n}-{t}"),
                        Entry::Match(_, t) => format!("{name}:{t}"),
                        Entry::Context(_, t) => format!("{name}-{t}"),
                    });
                }
            }
            let (page, applied) = paginate(lines, p);
            let text = page.join("\n");
            structured["numFiles"] = json!(files.len());
            structured["filenames"] = json!(Vec::<String>::new());
            structured["content"] = json!(text);
            structured["numLines"] = json!(page.len());
            set_pagination(&mut structured, p, applied);
            if page.is_empty() {
                "No matches found".to_string()
            } else {
                format!("{text}{}", pagination_note(p, applied))
            }
        }
    };
    ToolOutput::ok(content, Some(structured))
}

fn set_pagination(structured: &mut Value, p: &Parsed, applied: Option<usize>) {
    if let Some(l) = applied {
        structured["appliedLimit"] = json!(l);
    }
    if p.offset > 0 {
        structured["appliedOffset"] = json!(p.offset);
    }
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Collects one file's matches.
struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    mode: Mode,
    only_matching: bool,
    entries: Vec<Entry>,
    matches: u64,
    binary: bool,
}

/// A line's text without its terminator, lossily decoded and cut when very long.
fn line_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.to_string(),
        Some((idx, _)) => format!("{} [... line truncated]", &text[..idx]),
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = mat.line_number().unwrap_or(0);
        match self.mode {
            Mode::Files => {
                self.matches += 1;
                return Ok(false);
            }
            Mode::Count => {
                self.matches += mat.lines().count() as u64;
                return Ok(true);
            }
            Mode::Content => {}
        }
        if self.only_matching {
            let bytes = mat.bytes();
            let mut found = Vec::new();
            self.matcher
                .find_iter(bytes, |m| {
                    let line =
                        first + bytes[..m.start()].iter().filter(|b| **b == b'\n').count() as u64;
                    found.push(Entry::Match(line, line_text(&bytes[m])));
                    true
                })
                .map_err(std::io::Error::other)?;
            self.matches += found.len() as u64;
            self.entries.extend(found);
        } else {
            for (i, line) in mat.lines().enumerate() {
                self.entries
                    .push(Entry::Match(first + i as u64, line_text(line)));
                self.matches += 1;
            }
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if matches!(ctx.kind(), SinkContextKind::Other) {
            return Ok(true);
        }
        self.entries.push(Entry::Context(
            ctx.line_number().unwrap_or(0),
            line_text(ctx.bytes()),
        ));
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, Self::Error> {
        self.entries.push(Entry::Break);
        Ok(true)
    }

    fn binary_data(&mut self, _s: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::util::test_support::{call, ctx, validate};
    use std::time::Duration;

    fn put(root: &Path, rel: &str, body: &str, age_secs: u64) -> String {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        let t = SystemTime::now() - Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(t)
            .unwrap();
        path.display().to_string()
    }

    async fn grep(ctx: &ToolContext, input: Value) -> ToolOutput {
        call(&GrepTool, input, ctx).await.unwrap()
    }

    #[tokio::test]
    async fn files_with_matches_newest_first_respecting_ignores() {
        let (_d, ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        let a = put(&w, "src/a.rs", "fn needle() {}\n", 50);
        let b = put(&w, "src/b.rs", "let needle = 1;\n", 5);
        put(&w, "src/c.rs", "nothing here\n", 1);
        put(&w, "target/gen.rs", "needle\n", 1);
        put(&w, ".hidden/h.rs", "needle\n", 1);
        put(&w, "bin.dat", "needle\0\x01\x02", 1);
        std::fs::write(w.join(".gitignore"), "target/\n").unwrap();

        let out = grep(&ctx, json!({"pattern": "needle"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, format!("Found 2 files\n{b}\n{a}"));
        let s = out.structured.unwrap();
        assert_eq!(s["numFiles"], 2);
        assert_eq!(s["filenames"], json!([b, a]));

        let out = grep(&ctx, json!({"pattern": "NEEDLE"})).await;
        assert_eq!(out.content, "No files found");
        let out = grep(
            &ctx,
            json!({"pattern": "NEEDLE", "-i": true, "glob": "a.*"}),
        )
        .await;
        assert_eq!(out.content, format!("Found 1 file\n{a}"));
        let out = grep(
            &ctx,
            json!({"pattern": "needle", "type": "rust", "path": "src"}),
        )
        .await;
        assert_eq!(out.structured.unwrap()["numFiles"], 2);
        let out = grep(&ctx, json!({"pattern": "needle", "type": "nosuchtype"})).await;
        assert!(out.is_error, "{}", out.content);
    }

    #[tokio::test]
    async fn content_mode_with_context_and_numbers() {
        let (_d, ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        let f = put(&w, "x.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n", 1);
        let out = grep(
            &ctx,
            json!({"pattern": "three|six", "output_mode": "content", "-B": 1}),
        )
        .await;
        assert_eq!(
            out.content,
            format!("{f}-2-two\n{f}:3:three\n--\n{f}-5-five\n{f}:6:six")
        );
        let out = grep(
            &ctx,
            json!({"pattern": "t\\w+", "output_mode": "content", "-n": false, "-o": true}),
        )
        .await;
        assert_eq!(out.content, format!("{f}:two\n{f}:three"));
        let out = grep(
            &ctx,
            json!({"pattern": "e", "output_mode": "content", "head_limit": 2, "offset": 1}),
        )
        .await;
        assert!(
            out.content
                .starts_with(&format!("{f}:3:three\n{f}:5:five\n\n[Showing"))
        );
        let s = out.structured.unwrap();
        assert_eq!(s["appliedLimit"], 2);
        assert_eq!(s["appliedOffset"], 1);
    }

    #[tokio::test]
    async fn count_mode_and_multiline() {
        let (_d, ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        let a = put(&w, "a.txt", "x\nx\ny\n", 1);
        let b = put(&w, "b.txt", "x\n", 1);
        let out = grep(&ctx, json!({"pattern": "x", "output_mode": "count"})).await;
        assert_eq!(
            out.content,
            format!("{a}:2\n{b}:1\n\nFound 3 total occurrences across 2 files.")
        );
        assert_eq!(out.structured.unwrap()["numMatches"], 3);

        put(&w, "m.rs", "struct A {\n    f: u8,\n}\n", 1);
        let out = grep(
            &ctx,
            json!({"pattern": "struct A \\{.*?\\}", "output_mode": "content", "multiline": true}),
        )
        .await;
        assert!(out.content.contains("m.rs:1:struct A {"), "{}", out.content);
        assert!(out.content.contains("m.rs:3:}"), "{}", out.content);
        let out = grep(&ctx, json!({"pattern": "A \\{\\n"})).await;
        assert!(out.is_error, "a newline needs multiline: {}", out.content);
    }

    #[tokio::test]
    async fn invalid_regex_is_an_error_result() {
        let (_d, ctx) = ctx();
        let out = grep(&ctx, json!({"pattern": "foo(("})).await;
        assert!(out.is_error);
        assert!(
            out.content.contains("Invalid regex `foo((`"),
            "{}",
            out.content
        );
        let e = validate(
            &GrepTool,
            &json!({"pattern": "x", "output_mode": "lines"}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("output_mode"));
    }

    #[test]
    fn glob_splitting() {
        assert_eq!(split_globs("*.rs *.toml"), vec!["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.{ts,tsx}"), vec!["*.{ts,tsx}"]);
        assert_eq!(split_globs("*.js,*.md"), vec!["*.js", "*.md"]);
    }
}
