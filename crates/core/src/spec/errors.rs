//! Spec errors: what is wrong, where (file:line:col, or the command-line flag it came from),
//! a "did you mean" when a close spelling exists, and a cargo-style rendering with the source
//! line and a caret under the offending token ([`SpecError::render`], through
//! `annotate-snippets`).

use std::path::{Path, PathBuf};

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::locate::locate;

/// A spec error that names the file, line and column (or the flag) and says what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}{}", self.origin(), self.help().map(|h| format!(" ({h})")).unwrap_or_default())]
pub struct SpecError {
    /// The spec file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
    /// What else is known (boxed: errors travel in `Result`s and should stay small).
    extra: Option<Box<Extra>>,
}

/// The optional parts of a [`SpecError`].
#[derive(Debug, Clone, Default, PartialEq)]
struct Extra {
    help: Option<String>,
    flag: Option<String>,
    key: Option<String>,
    source_line: Option<String>,
}

impl SpecError {
    /// An error at the place in `spec`'s source where `key_path` is written (e.g.
    /// `limits.max_cost_usd`, `tools[2]`, `models["gpt-4.1"]`); see
    /// [`super::LoadedSpec::locate`].
    pub fn at(
        spec: &super::loaded::LoadedSpec,
        key_path: &str,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError::in_source(&spec.path, &spec.source, key_path, message)
    }

    /// An error at `key_path` in `source`, the text of `file`.
    pub fn in_source(
        file: &Path,
        source: &str,
        key_path: &str,
        message: impl Into<String>,
    ) -> SpecError {
        let (line, column) = locate(source, key_path);
        let mut e = SpecError::at_position(file, line, column, message).with_source(source);
        e.extra_mut().key = Some(key_path.to_string());
        e
    }

    /// An error at a known 1-based line and column of `file`.
    pub fn at_position(
        file: &Path,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError {
            file: file.to_path_buf(),
            line: Some(line),
            column: Some(column),
            message: message.into(),
            extra: None,
        }
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// A suggestion, e.g. "did you mean `max_turns`?".
    pub fn help(&self) -> Option<&str> {
        self.extra.as_ref()?.help.as_deref()
    }

    /// The command-line flag the error is about, when the value came from one (the error is
    /// then reported against the flag, not the spec's text).
    pub fn flag(&self) -> Option<&str> {
        self.extra.as_ref()?.flag.as_deref()
    }

    /// The key path the error is about (`limits.max_turns`), when known.
    pub fn key(&self) -> Option<&str> {
        self.extra.as_ref()?.key.as_deref()
    }

    /// The text of the error's line, for the rendered snippet.
    fn source_line(&self) -> Option<&str> {
        self.extra.as_ref()?.source_line.as_deref()
    }

    /// An error about `file` as a whole (not found, unreadable, …): no position.
    pub fn file(file: &Path, message: impl Into<String>) -> SpecError {
        SpecError {
            line: None,
            column: None,
            ..SpecError::at_position(file, 0, 0, message)
        }
    }

    /// Keep the text of the error's line from `source` (the file's text), for [`Self::render`].
    pub fn with_source(mut self, source: &str) -> SpecError {
        let line = self.line.and_then(|l| {
            source
                .split('\n')
                .nth(l.checked_sub(1)?)
                .map(|t| t.strip_suffix('\r').unwrap_or(t).to_string())
        });
        self.extra_mut().source_line = line;
        self
    }

    /// Add a suggestion ("did you mean `x`?").
    pub fn with_help(mut self, help: impl Into<String>) -> SpecError {
        self.extra_mut().help = Some(help.into());
        self
    }

    /// Report the error against the command-line `flag` the value came from.
    pub fn with_flag(mut self, flag: impl Into<String>) -> SpecError {
        self.extra_mut().flag = Some(flag.into());
        self
    }

    /// Where the error is, as the start of its one-line form: `file:line:col: `, or
    /// `--flag: ` (with the spec file named when it is a real file).
    fn origin(&self) -> String {
        match self.flag() {
            Some(flag) if self.file == Path::new(super::loaded::INLINE_PATH) => format!("{flag}: "),
            Some(flag) => format!("{flag} (applied to {}): ", self.file.display()),
            None => format!(
                "{}{}: ",
                self.file.display(),
                match (self.line, self.column) {
                    (Some(l), Some(c)) => format!(":{l}:{c}"),
                    (Some(l), None) => format!(":{l}"),
                    _ => String::new(),
                }
            ),
        }
    }

    /// The error as a compiler would show it: `error: FILE:LINE:COL: MESSAGE`, the source line
    /// with a caret under the offending token, and the suggestion. `color`: ANSI styles.
    pub fn render(&self, color: bool) -> String {
        let title = format!("{}{}", self.origin(), self.message);
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        let snippet_line = match (self.flag(), self.line, self.column, self.source_line()) {
            (None, Some(line), Some(column), Some(text)) => Some((line, column, text)),
            _ => None,
        };
        let group = match snippet_line {
            Some((line, column, text)) => Level::ERROR.primary_title(title.as_str()).element(
                Snippet::source(text)
                    .line_start(line)
                    .annotation(AnnotationKind::Primary.span(token_span(text, column))),
            ),
            None => Group::with_title(Level::ERROR.primary_title(title.as_str())),
        };
        let help = self.help().map(|h| format!("help: {h}"));
        let mut out = renderer.render(&[group]);
        if let Some(h) = help {
            out.push('\n');
            out.push_str(&h);
        }
        out.push('\n');
        out
    }
}

/// The byte range of the token that starts at 1-based character `column` of `line`: a key up
/// to its `:`, a quoted string, or a plain word; an empty range at the end of the line when the
/// column is past it.
fn token_span(line: &str, column: usize) -> std::ops::Range<usize> {
    let start = line
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line.len(), |(b, _)| b);
    let rest = &line[start..];
    let len = match rest.chars().next() {
        None => 0,
        Some(q @ ('"' | '\'')) => rest[1..].find(q).map_or(rest.len(), |e| e + 2),
        Some(_) => {
            let word_end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, ',' | ']' | '}' | '#'))
                .unwrap_or(rest.len());
            // `key: value` → the key; `key:` at the end of the word → the key too.
            match rest[..word_end].find(':') {
                Some(colon) if colon > 0 => colon,
                _ => word_end.max(rest.chars().next().map_or(0, char::len_utf8)),
            }
        }
    };
    start..start + len
}

/// The candidate closest to `word` when one is close enough to be a likely typo: "did you
/// mean …". Case differences alone always count (`dontask` → `dontAsk`).
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        if c.to_lowercase() == lower {
            return Some(c);
        }
        let score = strsim::jaro_winkler(&lower, &c.to_lowercase());
        if score >= 0.8 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_spellings_only() {
        let keys = ["max_turns", "max_total_tokens", "max_cost_usd", "timeout"];
        assert_eq!(did_you_mean("max_turn", keys), Some("max_turns"));
        assert_eq!(did_you_mean("maxturns", keys), Some("max_turns"));
        assert_eq!(did_you_mean("max_cost", keys), Some("max_cost_usd"));
        assert_eq!(did_you_mean("prompt", keys), None);
        assert_eq!(
            did_you_mean("dontask", ["default", "dontAsk", "plan"]),
            Some("dontAsk")
        );
    }

    #[test]
    fn token_spans() {
        assert_eq!(token_span("  max_turn: 3", 3), 2..10);
        assert_eq!(token_span("tools: [Read, Bashh]", 15), 14..19);
        assert_eq!(token_span("prompt: \"open", 9), 8..13);
        assert_eq!(token_span("a: b", 9), 4..4);
        assert_eq!(token_span("x: 'q' y", 4), 3..6);
    }
}
