//! The fenced code blocks of the docs (README.md, docs/src/*.md) and the `<!-- doc-test: … -->`
//! directives above them, as `tests/it/doc_commands.rs` runs them; and the matching of a
//! command's output against the output a ```` ```console ```` block shows.
//!
//! The convention (docs/src/architecture.md, "Docs that run"): ```` ```sh ```` and
//! ```` ```console ```` blocks are commands; every other block names what it holds (`yaml`,
//! `json`, `text`, ...). A directive is an HTML comment directly above a block (blank lines
//! between are fine); several may stand in a row:
//!
//! - `<!-- doc-test: skip REASON -->` — not run; listed as skipped with REASON.
//! - `<!-- doc-test: exit N -->` — the command (every command of the block) exits with N.
//! - `<!-- doc-test: setup` + script lines + `-->` — a bash script run first, in the same
//!   directory.
//! - `<!-- doc-test: file PATH -->` — the block (any language) is written to PATH first.
//! - `<!-- doc-test: structured JSON -->` — the model answers with structured output JSON
//!   (for a task with an `output:` schema).

/// What a directive asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// Do not run the block; the reason is listed.
    Skip(String),
    /// The expected exit code.
    Exit(i32),
    /// A bash script to run before the block.
    Setup(String),
    /// Write the block's text to this path before running anything.
    File(String),
    /// The model's structured output (JSON text) for the block's task.
    Structured(String),
}

/// One fenced code block.
#[derive(Debug, Clone)]
pub struct Block {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The first word of the info string (`sh`, `console`, `yaml`; empty when there is none).
    pub lang: String,
    /// The text between the fences, the fence's indentation removed.
    pub body: String,
    /// The directives directly above it, in order.
    pub directives: Vec<Directive>,
}

impl Block {
    /// Whether the block shows commands to run.
    pub fn is_command(&self) -> bool {
        matches!(self.lang.as_str(), "sh" | "console")
    }

    /// The skip reason, when the block is not run.
    pub fn skip(&self) -> Option<&str> {
        self.directives.iter().find_map(|d| match d {
            Directive::Skip(r) => Some(r.as_str()),
            _ => None,
        })
    }

    /// The expected exit code (0 unless a directive says otherwise).
    pub fn exit(&self) -> i32 {
        self.directives
            .iter()
            .find_map(|d| match d {
                Directive::Exit(n) => Some(*n),
                _ => None,
            })
            .unwrap_or(0)
    }
}

/// The blocks of `markdown` and the problems found on the way (`line N: …`): a directive that
/// is not directly above a block, an unknown directive, a block without a language.
pub fn parse(markdown: &str) -> (Vec<Block>, Vec<String>) {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut blocks = Vec::new();
    let mut problems = Vec::new();
    let mut pending: Vec<(usize, Directive)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("<!-- doc-test:") {
            let start = i;
            let mut text = rest.to_string();
            while !text.contains("-->") && i + 1 < lines.len() {
                i += 1;
                text.push('\n');
                text.push_str(lines[i]);
            }
            let text = text.split("-->").next().unwrap_or_default();
            match directive(text) {
                Ok(d) => pending.push((start + 1, d)),
                Err(e) => problems.push(format!("line {}: {e}", start + 1)),
            }
        } else if let Some(info) = trimmed.strip_prefix("```") {
            let indent = line.len() - trimmed.len();
            let open = i;
            let mut body = String::new();
            i += 1;
            while i < lines.len() && lines[i].trim() != "```" {
                let l = lines[i];
                let cut = l.len() - l.trim_start().len();
                body.push_str(&l[cut.min(indent)..]);
                body.push('\n');
                i += 1;
            }
            let lang = info
                .split([' ', ','])
                .next()
                .unwrap_or_default()
                .to_string();
            if lang.is_empty() {
                problems.push(format!(
                    "line {}: a code block without a language (`sh` or `console` for commands, `text` for output and synopses)",
                    open + 1
                ));
            }
            blocks.push(Block {
                line: open + 1,
                lang,
                body,
                directives: pending.drain(..).map(|(_, d)| d).collect(),
            });
        } else if !trimmed.is_empty() {
            for (at, _) in pending.drain(..) {
                problems.push(format!(
                    "line {at}: a doc-test directive not directly above a code block"
                ));
            }
        }
        i += 1;
    }
    for (at, _) in pending {
        problems.push(format!(
            "line {at}: a doc-test directive not directly above a code block"
        ));
    }
    (blocks, problems)
}

fn directive(text: &str) -> Result<Directive, String> {
    let text = text.trim_start_matches([' ', '\t']);
    let (kind, arg) = text
        .split_once(|c: char| c.is_whitespace())
        .unwrap_or((text, ""));
    match kind.trim() {
        "skip" if !arg.trim().is_empty() => Ok(Directive::Skip(arg.trim().to_string())),
        "skip" => Err("`skip` needs a reason".into()),
        "exit" => arg
            .trim()
            .parse()
            .map(Directive::Exit)
            .map_err(|_| format!("`exit` needs a number, got `{}`", arg.trim())),
        "setup" => Ok(Directive::Setup(arg.trim().to_string())),
        "file" if !arg.trim().is_empty() => Ok(Directive::File(arg.trim().to_string())),
        "structured" if !arg.trim().is_empty() => Ok(Directive::Structured(arg.trim().to_string())),
        other => Err(format!(
            "unknown doc-test directive `{other}` (skip, exit, setup, file, structured)"
        )),
    }
}

/// The commands of a ```` ```console ```` block (`$ ` lines, a trailing `\` continuing onto
/// the next line), each with the output shown under it.
pub fn console_commands(body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut continuing = false;
    for line in body.lines() {
        if continuing {
            if let Some((cmd, _)) = out.last_mut() {
                cmd.push('\n');
                cmd.push_str(line);
            }
            continuing = line.ends_with('\\');
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.to_string(), String::new()));
            continuing = cmd.ends_with('\\');
        } else if let Some((_, shown)) = out.last_mut() {
            shown.push_str(line);
            shown.push('\n');
        }
    }
    out
}

/// Whether `actual` output matches the `shown` output. Lines are compared with trailing
/// whitespace dropped; in a shown line `…` stands for any text (a path, a time, a digest), and
/// a shown line that is only `…` stands for any number of lines. Leading and trailing blank
/// lines do not count, and log times (RFC 3339, UTC) are equal whatever they say.
pub fn output_matches(shown: &str, actual: &str) -> bool {
    let norm = |t: &str| -> Vec<String> {
        let mut v: Vec<String> = t.lines().map(|l| without_times(l.trim_end())).collect();
        while v.last().is_some_and(|l| l.is_empty()) {
            v.pop();
        }
        let lead = v.iter().take_while(|l| l.is_empty()).count();
        v.drain(..lead);
        v
    };
    lines_match(&norm(shown), &norm(actual))
}

/// `line` with each UTC time (`2026-12-07T13:43:21.875611Z`) replaced by `TIME`.
fn without_times(line: &str) -> String {
    let shape = |b: &[u8]| -> Option<usize> {
        let digits =
            |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
        let ok = digits(0..4)
            && b.get(4) == Some(&b'-')
            && digits(5..7)
            && b.get(7) == Some(&b'-')
            && digits(8..10)
            && b.get(10) == Some(&b'T')
            && digits(11..13)
            && b.get(13) == Some(&b':')
            && digits(14..16)
            && b.get(16) == Some(&b':')
            && digits(17..19);
        if !ok {
            return None;
        }
        let mut end = 19;
        if b.get(end) == Some(&b'.') {
            end += 1;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
        }
        (b.get(end) == Some(&b'Z')).then_some(end + 1)
    };
    let mut out = String::new();
    let mut i = 0;
    let bytes = line.as_bytes();
    while i < bytes.len() {
        if let Some(len) = shape(&bytes[i..]) {
            out.push_str("TIME");
            i += len;
        } else {
            let ch = line[i..].chars().next().unwrap_or_default();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn lines_match(shown: &[String], actual: &[String]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "…" => {
            (0..=actual.len()).any(|k| lines_match(rest, &actual[k..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| line_matches(first, a) && lines_match(rest, more)),
    }
}

/// `line` against a `pattern` whose `…` stand for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_directives_and_problems() {
        let md = "text\n\n<!-- doc-test: skip needs the network -->\n<!-- doc-test: exit 2 -->\n\n```sh\nrunner x\n```\n\n- item\n\n  <!-- doc-test: setup\n  touch a\n  -->\n  ```console\n  $ ls \\\n    -1\n  a\n  ```\n\n<!-- doc-test: bogus -->\n```\nno language\n```\n<!-- doc-test: file a.yaml -->\nprose\n";
        let (blocks, problems) = parse(md);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0].skip(), Some("needs the network"));
        assert_eq!(blocks[0].exit(), 2);
        assert!(blocks[0].is_command());
        assert_eq!(blocks[1].lang, "console");
        assert_eq!(
            blocks[1].directives,
            vec![Directive::Setup("touch a".into())]
        );
        assert_eq!(
            console_commands(&blocks[1].body),
            vec![("ls \\\n  -1".to_string(), "a\n".to_string())]
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("unknown doc-test directive `bogus`"));
        assert!(problems[1].contains("without a language"));
        assert!(problems[2].contains("not directly above"));
    }

    #[test]
    fn output_matching_with_ellipses() {
        assert!(output_matches("a\nb\n", "a\nb   \n\n"));
        assert!(!output_matches("a\nb\n", "a\nc\n"));
        assert!(!output_matches("a\n", "a\nb\n"));
        assert!(output_matches(
            "error: …/task.yaml:4:3: x\n",
            "error: /tmp/x/task.yaml:4:3: x\n"
        ));
        assert!(!output_matches(
            "error: …/task.yaml:4:3\n",
            "error: /tmp/x/other.yaml:4:3\n"
        ));
        assert!(output_matches("head\n…\ntail\n", "head\n1\n2\ntail\n"));
        assert!(output_matches("head\n…\ntail\n", "head\ntail\n"));
        assert!(!output_matches("head\n…\ntail\n", "head\n1\n"));
        assert!(output_matches("a … b … c\n", "a 1 b 2 c\n"));
        assert!(!output_matches("a … b … c\n", "a 1 c 2 b\n"));
        assert!(output_matches(
            "2026-12-07T13:43:21.875611Z ERROR failed\n",
            "2027-01-01T00:00:00.1Z ERROR failed\n"
        ));
        assert!(!output_matches(
            "2026-12-07T13:43:21.875611Z ERROR failed\n",
            "2027-01-01T00:00:00Z WARN failed\n"
        ));
    }
}
