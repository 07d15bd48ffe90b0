//! Find where a key path (`limits.max_cost_usd`, `tools[2]`, `models["gpt-4.1"].context_window`)
//! is written in a spec's YAML text, so errors found after parsing can name `line:col`.
//!
//! This is a best-effort scanner for the YAML people write in task specs: block mappings and
//! sequences (any indentation, sequences indented or not under their key), and single-line flow
//! collections (`tools: [Read, Bash]`, `limits: {max_turns: 3}`). When the full path is not found
//! it returns the deepest part of it that is (e.g. the top-level key), else line 1, column 1.

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index (0-based).
    Index(usize),
}

/// One non-blank, non-comment line of the source, or the part of a line after `- `.
#[derive(Debug, Clone, Copy)]
struct Ln<'a> {
    /// 1-based line number.
    no: usize,
    /// 0-based column (in characters) where `rest` starts.
    col0: usize,
    /// The text from `col0` on.
    rest: &'a str,
}

/// The 1-based `(line, column)` of `key_path` in `source` (see the module docs for the syntax
/// and the fallbacks).
pub fn locate(source: &str, key_path: &str) -> (usize, usize) {
    let segs = parse_path(key_path);
    let lines = lines(source);
    let mut best = None;
    if !segs.is_empty() {
        find_in(&lines, &segs, &mut best);
    }
    best.unwrap_or((1, 1))
}

/// Split `a.b[2]["c.d"]` into segments.
fn parse_path(path: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut key = String::new();
    let mut chars = path.chars().peekable();
    let flush = |key: &mut String, segs: &mut Vec<Seg>| {
        if !key.is_empty() {
            segs.push(Seg::Key(std::mem::take(key)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => flush(&mut key, &mut segs),
            '[' => {
                flush(&mut key, &mut segs);
                if chars.peek() == Some(&'"') {
                    chars.next();
                    let mut quoted = String::new();
                    for q in chars.by_ref() {
                        if q == '"' {
                            break;
                        }
                        quoted.push(q);
                    }
                    if chars.peek() == Some(&']') {
                        chars.next();
                    }
                    segs.push(Seg::Key(quoted));
                } else {
                    let mut digits = String::new();
                    for d in chars.by_ref() {
                        if d == ']' {
                            break;
                        }
                        digits.push(d);
                    }
                    match digits.trim().parse() {
                        Ok(n) => segs.push(Seg::Index(n)),
                        Err(_) => segs.push(Seg::Key(digits)),
                    }
                }
            }
            c => key.push(c),
        }
    }
    flush(&mut key, &mut segs);
    segs
}

/// The source's meaningful lines (blank lines, comments and document markers dropped).
fn lines(source: &str) -> Vec<Ln<'_>> {
    source
        .split('\n')
        .enumerate()
        .filter_map(|(i, raw)| {
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let raw = if i == 0 {
                raw.strip_prefix('\u{feff}').unwrap_or(raw)
            } else {
                raw
            };
            let rest = raw.trim_start_matches(' ');
            let col0 = raw.len() - rest.len();
            let trimmed = rest.trim();
            if trimmed.is_empty()
                || trimmed.starts_with('#')
                || (col0 == 0 && (trimmed == "---" || trimmed == "..."))
            {
                return None;
            }
            Some(Ln {
                no: i + 1,
                col0,
                rest,
            })
        })
        .collect()
}

fn is_dash(rest: &str) -> bool {
    rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t")
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Whether `text` holds an inline value (not empty, not just a comment).
fn has_inline_value(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// If `rest` is `key:` (plain or quoted) followed by a space or the end, the byte offset just
/// after the colon.
fn match_key(rest: &str, key: &str) -> Option<usize> {
    let after_key = if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = &rest[1..];
        let close = inner.find(q)?;
        if &inner[..close] != key {
            return None;
        }
        1 + close + 1
    } else {
        if !rest.starts_with(key) {
            return None;
        }
        key.len()
    };
    let tail = &rest[after_key..];
    let spaces = tail.len() - tail.trim_start_matches(' ').len();
    let tail = &tail[spaces..];
    let after_colon = tail.strip_prefix(':')?;
    if after_colon.is_empty() || after_colon.starts_with([' ', '\t']) {
        Some(after_key + spaces + 1)
    } else {
        None
    }
}

/// Search a block region (its first line sets the indentation) for `segs`.
fn find_in(region: &[Ln<'_>], segs: &[Seg], best: &mut Option<(usize, usize)>) {
    let (Some(first), Some(seg)) = (region.first(), segs.first()) else {
        return;
    };
    let base = first.col0;
    match seg {
        Seg::Key(key) => {
            for (i, ln) in region.iter().enumerate() {
                if ln.col0 != base {
                    continue;
                }
                let Some(off) = match_key(ln.rest, key) else {
                    continue;
                };
                *best = Some((ln.no, ln.col0 + 1));
                if segs.len() == 1 {
                    return;
                }
                let after = &ln.rest[off..];
                if has_inline_value(after) {
                    let value = after.trim_start();
                    let col0 =
                        ln.col0 + char_len(&ln.rest[..off]) + char_len(after) - char_len(value);
                    find_flow(value, ln.no, col0, &segs[1..], best);
                    return;
                }
                let child: Vec<Ln<'_>> = region[i + 1..]
                    .iter()
                    .take_while(|l| l.col0 > base || (l.col0 == base && is_dash(l.rest)))
                    .copied()
                    .collect();
                find_in(&child, &segs[1..], best);
                return;
            }
        }
        Seg::Index(n) => {
            let Some(i) = region
                .iter()
                .enumerate()
                .filter(|(_, l)| l.col0 == base && is_dash(l.rest))
                .map(|(i, _)| i)
                .nth(*n)
            else {
                return;
            };
            let ln = region[i];
            let after = &ln.rest[1..];
            let content = after.trim_start();
            let col0 = ln.col0 + 1 + char_len(after) - char_len(content);
            let inline = has_inline_value(content);
            *best = Some(if inline {
                (ln.no, col0 + 1)
            } else {
                (ln.no, ln.col0 + 1)
            });
            if segs.len() == 1 {
                return;
            }
            if inline && (content.starts_with('[') || content.starts_with('{')) {
                find_flow(content, ln.no, col0, &segs[1..], best);
                return;
            }
            let mut sub = Vec::new();
            if inline {
                sub.push(Ln {
                    no: ln.no,
                    col0,
                    rest: content,
                });
            }
            sub.extend(
                region[i + 1..]
                    .iter()
                    .take_while(|l| l.col0 > base)
                    .copied(),
            );
            find_in(&sub, &segs[1..], best);
        }
    }
}

/// The items of a flow collection that starts at `text[0]` (`[` or `{`), as byte ranges of the
/// item text (leading spaces skipped). Stops at the end of the line if the collection does.
fn flow_items(text: &str) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut start = None;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '[' | '{' => {
                depth += 1;
                if depth == 1 {
                    start = Some(i + 1);
                    continue;
                }
            }
            ']' | '}' => {
                if depth == 1 {
                    if let Some(s) = start.take() {
                        items.push((s, i));
                    }
                    break;
                }
                depth = depth.saturating_sub(1);
            }
            ',' if depth == 1 => {
                if let Some(s) = start.replace(i + 1) {
                    items.push((s, i));
                }
                continue;
            }
            '"' | '\'' => quote = Some(c),
            _ => {}
        }
    }
    if let Some(s) = start {
        items.push((s, text.len()));
    }
    items
        .into_iter()
        .map(|(s, e)| {
            let item = &text[s..e];
            (s + item.len() - item.trim_start().len(), e)
        })
        .filter(|(s, e)| s < e && !text[*s..*e].trim().is_empty())
        .collect()
}

/// Search a single-line flow collection starting at column `col0` of line `no`.
fn find_flow(text: &str, no: usize, col0: usize, segs: &[Seg], best: &mut Option<(usize, usize)>) {
    let Some(seg) = segs.first() else {
        return;
    };
    let open = text.chars().next();
    let items = flow_items(text);
    let found = match (seg, open) {
        (Seg::Index(n), Some('[')) => items.get(*n).map(|&(s, e)| (s, e, 0)),
        (Seg::Key(key), Some('{')) => items
            .iter()
            .find_map(|&(s, e)| match_key(&text[s..e], key).map(|off| (s, e, off))),
        _ => None,
    };
    let Some((s, e, off)) = found else {
        return;
    };
    *best = Some((no, col0 + char_len(&text[..s]) + 1));
    if segs.len() == 1 {
        return;
    }
    let value = &text[s + off..e];
    let trimmed = value.trim_start();
    let vstart = s + off + value.len() - trimmed.len();
    find_flow(
        trimmed,
        no,
        col0 + char_len(&text[..vstart]),
        &segs[1..],
        best,
    );
}

/// The position of the second `key:` in the mapping whose first key starts at 1-based
/// `(line, column)` — where a duplicate key error belongs (yaml_serde reports the mapping).
pub(crate) fn duplicate_key(
    source: &str,
    line: usize,
    column: usize,
    key: &str,
) -> Option<(usize, usize)> {
    let indent = column.checked_sub(1)?;
    let mut seen = 0;
    for (i, raw) in source.lines().enumerate().skip(line.checked_sub(1)?) {
        let rest: &str = if i + 1 == line {
            let byte = raw.char_indices().nth(indent).map_or(raw.len(), |(b, _)| b);
            &raw[byte..]
        } else {
            let rest = raw.trim_start_matches(' ');
            let trimmed = rest.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let this_indent = raw.len() - rest.len();
            if this_indent < indent {
                break;
            }
            if this_indent > indent {
                continue;
            }
            rest
        };
        if match_key(rest, key).is_some() {
            seen += 1;
            if seen == 2 {
                return Some((i + 1, indent + 1));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "\
# yaml-language-server: $schema=../schema/task.schema.json
name: fix-clippy
prompt: |
  limits: not a key
  tools: neither
model: claude-sonnet-4-5

tools: [Read, \"Write\", Bashh]
permissions:
  mode: dontAsk
  allow:
  - Edit
  -   \"Bash(cargo test:*)\"
limits:
    max_turns: 30   # comment
    max_cost_usd: 5.0
verify:
  - run: cargo test
    name: tests
  - name: fmt
    run: cargo fmt --check
models:
  \"gpt-4.1\": {input_usd_per_mtok: 2, output_usd_per_mtok: 8}
";

    #[test]
    fn finds_top_level_and_nested_keys() {
        assert_eq!(locate(SPEC, "name"), (2, 1));
        assert_eq!(locate(SPEC, "model"), (6, 1));
        assert_eq!(locate(SPEC, "limits"), (14, 1));
        assert_eq!(locate(SPEC, "limits.max_turns"), (15, 5));
        assert_eq!(locate(SPEC, "limits.max_cost_usd"), (16, 5));
        assert_eq!(locate(SPEC, "permissions.mode"), (10, 3));
    }

    #[test]
    fn finds_sequence_items_block_and_flow() {
        assert_eq!(locate(SPEC, "tools[0]"), (8, 9));
        assert_eq!(locate(SPEC, "tools[1]"), (8, 15));
        assert_eq!(locate(SPEC, "tools[2]"), (8, 24));
        assert_eq!(locate(SPEC, "permissions.allow[0]"), (12, 5));
        assert_eq!(locate(SPEC, "permissions.allow[1]"), (13, 7));
        assert_eq!(locate(SPEC, "verify[0]"), (18, 5));
        assert_eq!(locate(SPEC, "verify[0].run"), (18, 5));
        assert_eq!(locate(SPEC, "verify[0].name"), (19, 5));
        assert_eq!(locate(SPEC, "verify[1].run"), (21, 5));
    }

    #[test]
    fn finds_quoted_keys_and_flow_mappings() {
        assert_eq!(locate(SPEC, "models[\"gpt-4.1\"]"), (23, 3));
        assert_eq!(
            locate(SPEC, "models[\"gpt-4.1\"].output_usd_per_mtok"),
            (23, 38)
        );
    }

    #[test]
    fn falls_back_to_deepest_found_prefix() {
        // Keys inside the block scalar are not keys.
        assert_eq!(locate(SPEC, "limits.timeout"), (14, 1));
        assert_eq!(locate(SPEC, "tools[7]"), (8, 1));
        assert_eq!(locate(SPEC, "verify[5].run"), (17, 1));
        assert_eq!(locate(SPEC, "cassette"), (1, 1));
        assert_eq!(locate(SPEC, ""), (1, 1));
        assert_eq!(locate("", "name"), (1, 1));
    }

    #[test]
    fn flow_mapping_at_top_level_key() {
        let src = "name: x\nlimits: {max_turns: 3, max_cost_usd: -1}\n";
        assert_eq!(locate(src, "limits.max_cost_usd"), (2, 24));
        assert_eq!(locate(src, "limits.max_turns"), (2, 10));
    }

    #[test]
    fn unindented_sequence_under_key_and_crlf() {
        let src = "name: x\r\ntools:\r\n- Read\r\n- Nope\r\nattempts: 0\r\n";
        assert_eq!(locate(src, "tools[1]"), (4, 3));
        assert_eq!(locate(src, "attempts"), (5, 1));
    }

    #[test]
    fn key_prefix_is_not_a_match() {
        let src = "prompt_file: a.md\nprompt: hi\n";
        assert_eq!(locate(src, "prompt"), (2, 1));
        assert_eq!(locate(src, "prompt_file"), (1, 1));
    }

    #[test]
    fn finds_duplicate_keys() {
        let src = "name: x\nlimits:\n  max_turns: 1\n  # c\n  max_turns: 2\nname: y\n";
        assert_eq!(duplicate_key(src, 1, 1, "name"), Some((6, 1)));
        assert_eq!(duplicate_key(src, 3, 3, "max_turns"), Some((5, 3)));
        assert_eq!(duplicate_key(src, 3, 3, "name"), None);
        let seq = "verify:\n  - run: a\n    run: b\n";
        assert_eq!(duplicate_key(seq, 2, 5, "run"), Some((3, 5)));
    }

    #[test]
    fn parses_paths() {
        assert_eq!(
            parse_path("a.b[2][\"c.d\"].e"),
            vec![
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Index(2),
                Seg::Key("c.d".into()),
                Seg::Key("e".into()),
            ]
        );
    }
}
