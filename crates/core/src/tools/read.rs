//! The Read tool: a text file, `cat -n` style, a window of lines at a time.

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_rules;
use super::util::{self, absolute_path};
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// Lines returned when no `limit` is given.
pub(crate) const DEFAULT_LIMIT: usize = 2000;
/// Lines longer than this many characters are cut with a marker.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Most bytes of file content one call returns.
pub(crate) const MAX_BYTES: usize = 262_144;
/// Bytes sniffed for binary content.
const SNIFF_BYTES: usize = 8192;

/// Extensions refused as images or other non-text formats this runner cannot render.
const NON_TEXT_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tiff", "tif", "svgz", "pdf", "ipynb",
];

/// The Read tool.
#[derive(Clone, Copy)]
pub(crate) struct ReadTool;

/// The Read tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReadInput {
    file_path: String,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    limit: Option<u64>,
}

/// A checked Read call.
pub(crate) struct Parsed {
    path: PathBuf,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl ReadTool {
    fn parse(&self, raw: ReadInput) -> Result<Parsed, CallError> {
        let path = absolute_path("file_path", &raw.file_path)?;
        if raw.limit == Some(0) {
            return Err("`limit` must be at least 1".into());
        }
        Ok(Parsed {
            path,
            offset: raw.offset.map(|n| n as usize),
            limit: raw.limit.map(|n| n as usize),
        })
    }
}

const DESCRIPTION: &str = "Reads a file from the local filesystem.

Usage:
- The file_path parameter must be an absolute path, not a relative path.
- By default, it reads up to 2000 lines starting from the beginning of the file.
- You can optionally specify a line offset (1-based start line) and limit (number of lines), \
which is especially handy for long files; prefer reading the whole file when it is small.
- Results are returned using cat -n format, with line numbers starting at 1.
- Lines longer than 2000 characters are truncated.
- Files larger than 256 KiB return their first part only; use offset and limit to read the rest.
- This tool reads text files only: directories, images, PDFs and binary files are refused. \
To list a directory use the Bash tool with `ls`, or the Glob tool.
- A file must be Read before it can be changed with Edit or Write.";

#[async_trait::async_trait]
impl Tool for ReadTool {
    type Input = ReadInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Read"
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
                    "description": "The absolute path to the file to read"
                },
                "offset": {
                    "type": "number",
                    "description": "The line number to start reading from. Only provide if the file is too large to read at once"
                },
                "limit": {
                    "type": "number",
                    "description": "The number of lines to read. Only provide if the file is too large to read at once."
                }
            },
            "required": ["file_path"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: ReadInput, _ctx: &ToolContext) -> Result<Parsed, CallError> {
        self.parse(input)
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Read(vec![call.path.clone()])
    }

    async fn call(&self, parsed: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        let path = parsed.path.clone();
        if let Err(e) = file_rules::may_read(ctx, &path) {
            return Ok(ToolOutput::error(e));
        }
        let result = util::blocking(move || read_window(&parsed)).await;
        Ok(match result {
            Err(e) | Ok(Err(e)) => ToolOutput::error(e),
            Ok(Ok(window)) => {
                util::record_read(ctx, &path, window.full);
                window.into_output(&path)
            }
        })
    }
}

/// What one Read produced.
struct Window {
    /// Numbered text for the model.
    numbered: String,
    /// The raw lines returned (without numbers).
    content: String,
    start_line: usize,
    num_lines: usize,
    total_lines: usize,
    /// A notice appended after the content (partial view, empty file, offset past end).
    notice: Option<String>,
    /// Whether the whole file was returned.
    full: bool,
    truncated_by_cap: bool,
}

impl Window {
    fn into_output(self, path: &Path) -> ToolOutput {
        let mut text = self.numbered;
        if let Some(notice) = &self.notice {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(notice);
        }
        let mut file = json!({
            "filePath": path.to_string_lossy(),
            "content": self.content,
            "numLines": self.num_lines,
            "startLine": self.start_line,
            "totalLines": self.total_lines,
        });
        if self.truncated_by_cap {
            file["truncatedByTokenCap"] = json!(true);
        }
        ToolOutput::ok(text, Some(json!({"type": "text", "file": file})))
    }
}

fn read_window(p: &Parsed) -> Result<Window, CallError> {
    let path = &p.path;
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(call_error!("File does not exist: {shown}"));
        }
        Err(e) => return Err(call_error!("Cannot read {shown}: {e}")),
    };
    if meta.is_dir() {
        return Err(call_error!(
            "{shown} is a directory, not a file. Use the Glob tool or `ls` in Bash to list it."
        ));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if NON_TEXT_EXTENSIONS.contains(&ext.as_str()) {
        return Err(call_error!(
            "{shown} is a .{ext} file; this runner's Read tool supports text files only \
             (images, PDFs and notebooks are not supported)."
        ));
    }
    let file = File::open(path).map_err(|e| format!("Cannot read {shown}: {e}"))?;
    let mut reader = BufReader::new(file);

    let head = sniff(&mut reader).map_err(|e| format!("Cannot read {shown}: {e}"))?;
    if looks_binary(&head) {
        return Err(call_error!(
            "{shown} appears to be a binary file (it contains NUL bytes or invalid UTF-8); \
             Read supports text files only."
        ));
    }
    if meta.len() == 0 {
        return Ok(Window {
            numbered: String::new(),
            content: String::new(),
            start_line: 1,
            num_lines: 0,
            total_lines: 0,
            notice: Some(
                "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
                    .to_string(),
            ),
            full: true,
            truncated_by_cap: false,
        });
    }

    let start = p.offset.unwrap_or(1).max(1);
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT);
    let mut numbered = String::new();
    let mut content = String::new();
    let mut bytes = 0usize;
    let mut num_lines = 0usize;
    let mut truncated_by_cap = false;
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("Cannot read {shown}: {e}"))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < start || num_lines >= limit || truncated_by_cap {
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.strip_suffix('\n').unwrap_or(&line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = cut_line(line);
        let entry = format!("{line_no:>6}\t{line}");
        if bytes + entry.len() + 1 > MAX_BYTES && num_lines > 0 {
            truncated_by_cap = true;
            continue;
        }
        bytes += entry.len() + 1;
        if num_lines > 0 {
            numbered.push('\n');
            content.push('\n');
        }
        numbered.push_str(&entry);
        content.push_str(&line);
        num_lines += 1;
    }
    let total = line_no;
    let notice = if start > total {
        Some(format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset \
             ({start}). The file has {total} lines.</system-reminder>"
        ))
    } else if truncated_by_cap || (p.offset.is_none() && p.limit.is_none() && num_lines < total) {
        let last = start + num_lines.saturating_sub(1);
        Some(format!(
            "<system-reminder>PARTIAL view: showing lines {start}-{last} of {total} \
             (the file is larger than a single read allows). Use offset and limit to read \
             the rest.</system-reminder>"
        ))
    } else {
        None
    };
    Ok(Window {
        numbered,
        content,
        start_line: start,
        num_lines,
        total_lines: total,
        notice,
        full: start == 1 && num_lines == total,
        truncated_by_cap,
    })
}

/// Read the first bytes of the file and rewind.
fn sniff(reader: &mut BufReader<File>) -> std::io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    reader
        .by_ref()
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    reader.seek(SeekFrom::Start(0))?;
    Ok(head)
}

/// NUL bytes, or invalid UTF-8 that is not just a character cut at the sniff boundary.
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some() || head.len() < SNIFF_BYTES,
    }
}

/// Cut a line longer than [`MAX_LINE_CHARS`] characters, with a marker.
fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => std::borrow::Cow::Borrowed(line),
        Some((idx, _)) => {
            let total = line.chars().count();
            std::borrow::Cow::Owned(format!(
                "{}... [line truncated: {} of {total} characters shown]",
                &line[..idx],
                MAX_LINE_CHARS
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::util::test_support::{call, ctx, validate};

    async fn read(ctx: &ToolContext, input: Value) -> ToolOutput {
        call(&ReadTool, input, ctx).await.unwrap()
    }

    #[tokio::test]
    async fn numbers_lines_and_records_the_read() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("a.txt");
        std::fs::write(&f, "one\r\ntwo\nthree").unwrap();
        let out = read(&ctx, json!({"file_path": f})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "     1\tone\n     2\ttwo\n     3\tthree");
        let s = out.structured.unwrap();
        assert_eq!(s["type"], "text");
        assert_eq!(s["file"]["totalLines"], 3);
        assert_eq!(s["file"]["content"], "one\ntwo\nthree");
        let state = ctx.session.read_state.lock().unwrap();
        let rec = state.get(&f).unwrap();
        assert!(rec.full);
        assert_eq!(rec.mtime, util::mtime(&f));
    }

    #[tokio::test]
    async fn offset_and_limit_window() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("n.txt");
        let body: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        std::fs::write(&f, body).unwrap();
        let out = read(&ctx, json!({"file_path": f, "offset": 4, "limit": 2})).await;
        assert_eq!(out.content, "     4\tl4\n     5\tl5");
        assert_eq!(out.structured.unwrap()["file"]["startLine"], 4);
        assert!(!ctx.session.read_state.lock().unwrap().get(&f).unwrap().full);

        let out = read(&ctx, json!({"file_path": f, "offset": 50})).await;
        assert!(!out.is_error);
        assert!(
            out.content.contains("The file has 10 lines"),
            "{}",
            out.content
        );
    }

    #[test]
    fn relative_path_is_an_input_error() {
        let (_d, ctx) = ctx();
        let e = validate(&ReadTool, &json!({"file_path": "src/main.rs"}), &ctx).unwrap_err();
        assert!(e.contains("absolute"), "{e}");
        let e = validate(&ReadTool, &json!({"file_path": 5}), &ctx).unwrap_err();
        assert!(e.contains("file_path"), "{e}");
        validate(
            &ReadTool,
            &json!({"file_path": "/x", "unknown": true}),
            &ctx,
        )
        .unwrap();
    }

    #[tokio::test]
    async fn refuses_dirs_missing_binary_and_images() {
        let (_d, ctx) = ctx();
        let w = &ctx.session.roots.workdir;
        let out = read(&ctx, json!({"file_path": w})).await;
        assert!(out.is_error && out.content.contains("directory"));
        let out = read(&ctx, json!({"file_path": w.join("nope")})).await;
        assert!(out.is_error && out.content.contains("does not exist"));
        std::fs::write(w.join("b.bin"), b"ab\0\xffcd").unwrap();
        let out = read(&ctx, json!({"file_path": w.join("b.bin")})).await;
        assert!(
            out.is_error && out.content.contains("binary"),
            "{}",
            out.content
        );
        std::fs::write(w.join("latin1.txt"), b"caf\xe9 au lait\n").unwrap();
        let out = read(&ctx, json!({"file_path": w.join("latin1.txt")})).await;
        assert!(out.is_error && out.content.contains("binary"));
        std::fs::write(w.join("p.png"), b"\x89PNG").unwrap();
        let out = read(&ctx, json!({"file_path": w.join("p.png")})).await;
        assert!(out.is_error && out.content.contains("text files only"));
        assert!(
            ctx.session
                .read_state
                .lock()
                .unwrap()
                .get(&w.join("b.bin"))
                .is_none()
        );
    }

    #[tokio::test]
    async fn empty_file_says_so() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("e.txt");
        std::fs::write(&f, "").unwrap();
        let out = read(&ctx, json!({"file_path": f})).await;
        assert!(!out.is_error);
        assert!(out.content.contains("contents are empty"));
        assert!(ctx.session.read_state.lock().unwrap().get(&f).is_some());
    }

    #[tokio::test]
    async fn long_lines_and_large_files_are_capped() {
        let (_d, ctx) = ctx();
        let f = ctx.session.roots.workdir.join("long.txt");
        std::fs::write(&f, format!("{}\nshort\n", "é".repeat(3000))).unwrap();
        let out = read(&ctx, json!({"file_path": f})).await;
        assert!(
            out.content
                .contains("[line truncated: 2000 of 3000 characters shown]")
        );
        assert!(out.content.ends_with("     2\tshort"));

        let big = ctx.session.roots.workdir.join("big.txt");
        let line = "x".repeat(199);
        let body: String = (0..1500).map(|_| format!("{line}\n")).collect();
        std::fs::write(&big, body).unwrap();
        let out = read(&ctx, json!({"file_path": big})).await;
        assert!(!out.is_error);
        assert!(out.content.len() <= MAX_BYTES + 500);
        assert!(
            out.content.contains("PARTIAL view"),
            "{}",
            &out.content[..100]
        );
        assert!(
            !ctx.session
                .read_state
                .lock()
                .unwrap()
                .get(&big)
                .unwrap()
                .full
        );

        let many = ctx.session.roots.workdir.join("many.txt");
        let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        std::fs::write(&many, body).unwrap();
        let out = read(&ctx, json!({"file_path": many})).await;
        let s = out.structured.unwrap();
        assert_eq!(s["file"]["numLines"], 2000);
        assert_eq!(s["file"]["totalLines"], 2500);
        assert!(out.content.contains("showing lines 1-2000 of 2500"));
    }
}
