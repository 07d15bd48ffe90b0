//! A readable description of how a request differs from the recorded one (strict replay).
//!
//! Both sides are normalized requests ([`super::cassette::normalize_request`]): `model`,
//! `system_prompt`, `system_append`, `tools` and `messages`. The description names each section
//! that changed: the model, the spec's system prompt or its append, tools added, removed or
//! changed, and the first message
//! that differs, with both versions shown around the first differing character.

use serde_json::Value;

/// Characters of context shown before the first difference in a text.
const CONTEXT: usize = 60;
/// Longest excerpt shown per side.
const EXCERPT: usize = 240;

/// Describe what changed from `recorded` to `current`, one finding per line. Empty when the
/// sections runner compares are equal.
pub fn describe(recorded: &Value, current: &Value) -> String {
    let mut out: Vec<String> = Vec::new();
    if recorded.get("model") != current.get("model") {
        out.push(format!(
            "model: recorded {}, now {}",
            show(recorded.get("model")),
            show(current.get("model"))
        ));
    }
    for (key, field) in [
        ("system_prompt", "system_prompt"),
        ("system_append", "system_prompt_append"),
    ] {
        let sys = |v: &Value| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        if sys(recorded) != sys(current) {
            out.push(format!(
                "{field} changed:\n{}",
                text_diff(&sys(recorded), &sys(current))
            ));
        }
    }
    tools_diff(recorded.get("tools"), current.get("tools"), &mut out);
    messages_diff(recorded.get("messages"), current.get("messages"), &mut out);
    out.join("\n")
}

/// How the newest message of a lenient replay's request departs from the recording, when it
/// does: the tool results are compared by tool_use id. `recorded` and `current` are message
/// arrays ending with that message; the tool names come from the tool_use blocks before it,
/// so the message before it (the model's calls) is enough. The first element says whether a
/// result changed between success and error (a denial, a failed command), which explains a
/// drifting replay better than any difference in output text. `None` when they are equal.
pub fn tool_result_divergence(recorded: &Value, current: &Value) -> Option<(bool, String)> {
    let last = |v: &'_ Value| -> Option<Value> { v.as_array().and_then(|m| m.last()).cloned() };
    let (r_last, c_last) = (last(recorded), last(current));
    if r_last == c_last {
        return None;
    }
    let blocks = |m: &Option<Value>| -> Vec<Value> {
        m.as_ref()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (r, c) = (blocks(&r_last), blocks(&c_last));
    let is_error = |b: &Value| b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    let id = |b: &Value| {
        b.get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut text_change = None;
    for cb in c
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
    {
        let cid = id(cb);
        let Some(rb) = r.iter().find(|b| id(b) == cid) else {
            continue;
        };
        if rb == cb {
            continue;
        }
        let tool = tool_name(current, &cid);
        let (rt, ct) = (result_text(rb), result_text(cb));
        if is_error(rb) != is_error(cb) {
            let state = |e: bool| if e { "an error" } else { "a success" };
            return Some((
                true,
                format!(
                    "the result of {tool} call {cid} differs: recorded {}, now {}: {}",
                    state(is_error(rb)),
                    state(is_error(cb)),
                    excerpt(&ct)
                ),
            ));
        }
        text_change.get_or_insert_with(|| {
            format!(
                "the result of {tool} call {cid} differs:\n{}",
                text_diff(&rt, &ct)
            )
        });
    }
    let fallback = || {
        let render = |m: &Option<Value>| m.as_ref().map(render_message).unwrap_or_default();
        format!(
            "the newest message differs:\n{}",
            text_diff(&render(&r_last), &render(&c_last))
        )
    };
    Some((false, text_change.unwrap_or_else(fallback)))
}

/// The name of the tool the call `id` went to, from the conversation's tool_use blocks.
fn tool_name(messages: &Value, id: &str) -> String {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .find(|b| {
            b.get("type").and_then(Value::as_str) == Some("tool_use")
                && b.get("id").and_then(Value::as_str) == Some(id)
        })
        .and_then(|b| b.get("name").and_then(Value::as_str))
        .unwrap_or("a tool")
        .to_string()
}

fn result_text(b: &Value) -> String {
    match b.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The start of `text`, at most [`EXCERPT`] characters, quoted.
fn excerpt(text: &str) -> String {
    let mut s: String = text.chars().take(EXCERPT).collect();
    if text.chars().count() > EXCERPT {
        s.push('…');
    }
    format!("{s:?}")
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "(none)".into(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(other) => other.to_string(),
    }
}

fn tools_diff(recorded: Option<&Value>, current: Option<&Value>, out: &mut Vec<String>) {
    let list = |v: Option<&Value>| -> Vec<(String, Value)> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|t| {
                        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
                        (name.to_string(), t.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (r, c) = (list(recorded), list(current));
    if r == c {
        return;
    }
    let names = |l: &[(String, Value)]| l.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let added: Vec<String> = names(&c)
        .into_iter()
        .filter(|n| !r.iter().any(|(m, _)| m == n))
        .collect();
    let removed: Vec<String> = names(&r)
        .into_iter()
        .filter(|n| !c.iter().any(|(m, _)| m == n))
        .collect();
    if !added.is_empty() {
        out.push(format!("tools added: {}", added.join(", ")));
    }
    if !removed.is_empty() {
        out.push(format!("tools removed: {}", removed.join(", ")));
    }
    for (name, rv) in &r {
        if let Some((_, cv)) = c.iter().find(|(n, _)| n == name)
            && rv != cv
        {
            let parts: Vec<&str> = ["description", "input_schema"]
                .into_iter()
                .filter(|k| rv.get(*k) != cv.get(*k))
                .collect();
            out.push(format!("tool {name} changed: {}", parts.join(" and ")));
        }
    }
    if added.is_empty() && removed.is_empty() && out.iter().all(|l| !l.starts_with("tool ")) {
        out.push(format!(
            "tools reordered: recorded [{}], now [{}]",
            names(&r).join(", "),
            names(&c).join(", ")
        ));
    }
}

fn messages_diff(recorded: Option<&Value>, current: Option<&Value>, out: &mut Vec<String>) {
    let empty = Vec::new();
    let r = recorded.and_then(Value::as_array).unwrap_or(&empty);
    let c = current.and_then(Value::as_array).unwrap_or(&empty);
    if r == c {
        return;
    }
    let first = r.iter().zip(c.iter()).position(|(a, b)| a != b);
    match first {
        Some(i) => {
            let (a, b) = (render_message(&r[i]), render_message(&c[i]));
            out.push(format!(
                "messages[{i}] ({}) changed:\n{}",
                role(&c[i]),
                text_diff(&a, &b)
            ));
        }
        None => out.push(format!(
            "messages: recorded {} message(s), now {} (the first {} are equal)",
            r.len(),
            c.len(),
            r.len().min(c.len())
        )),
    }
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("?")
}

/// One line per block: `text: ...`, `tool_use Read {...}`, `tool_result id: ...`.
fn render_message(m: &Value) -> String {
    let blocks = m.get("content").and_then(Value::as_array);
    let Some(blocks) = blocks else {
        return m.get("content").map(Value::to_string).unwrap_or_default();
    };
    blocks
        .iter()
        .map(
            |b| match b.get("type").and_then(Value::as_str).unwrap_or("?") {
                "text" => format!(
                    "text: {}",
                    b.get("text").and_then(Value::as_str).unwrap_or("")
                ),
                "tool_use" => format!(
                    "tool_use {} {}",
                    b.get("name").and_then(Value::as_str).unwrap_or("?"),
                    b.get("input").map(Value::to_string).unwrap_or_default()
                ),
                "tool_result" => {
                    let content = match b.get("content") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    format!(
                        "tool_result {}: {content}",
                        b.get("tool_use_id").and_then(Value::as_str).unwrap_or("?")
                    )
                }
                other => format!("{other}: {b}"),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// `- recorded: ...` / `+ now: ...` excerpts starting a little before the first difference.
fn text_diff(a: &str, b: &str) -> String {
    let ac: Vec<char> = a.chars().collect();
    let bc: Vec<char> = b.chars().collect();
    let same = ac.iter().zip(bc.iter()).take_while(|(x, y)| x == y).count();
    let start = same.saturating_sub(CONTEXT);
    let excerpt = |cs: &[char]| {
        let end = (start + EXCERPT).min(cs.len());
        let mut s: String = cs.get(start..end).unwrap_or(&[]).iter().collect();
        if start > 0 {
            s.insert(0, '…');
        }
        if end < cs.len() {
            s.push('…');
        }
        format!("{s:?}")
    };
    format!(
        "  - recorded: {}\n  + now:      {}\n    (first difference at character {same})",
        excerpt(&ac),
        excerpt(&bc)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(result: &str, is_error: bool) -> Value {
        json!([
            {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "a"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"},
                {"type": "tool_result", "tool_use_id": "t2", "content": result, "is_error": is_error}
            ]}
        ])
    }

    #[test]
    fn tool_result_divergence_names_the_call_that_failed() {
        let recorded = turn("The file a has been updated.", false);
        assert_eq!(tool_result_divergence(&recorded, &recorded), None);
        let (status, why) = tool_result_divergence(
            &recorded,
            &turn(
                "Permission denied: Edit of a denied: `.runner` is a protected path",
                true,
            ),
        )
        .unwrap();
        assert!(status);
        assert!(
            why.starts_with("the result of Edit call t2 differs: recorded a success, now an error: \"Permission denied: Edit of a denied"),
            "{why}"
        );
        // Only the text changed: a weaker finding, still named.
        let (status, why) =
            tool_result_divergence(&recorded, &turn("The file a was updated.", false)).unwrap();
        assert!(!status);
        assert!(why.contains("the result of Edit call t2 differs"), "{why}");
    }

    fn req(prompt: &str, tools: Value, append: Option<&str>) -> Value {
        let mut v = json!({
            "model": "m",
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            "tools": tools,
        });
        if let Some(a) = append {
            v["system_append"] = json!(a);
        }
        v
    }

    #[test]
    fn names_each_changed_section() {
        let t1 = json!([{"name": "Read", "description": "d", "input_schema": {}}]);
        let t2 = json!([{"name": "Read", "description": "d2", "input_schema": {}}, {"name": "Bash", "description": "", "input_schema": {}}]);
        let a = req("fix the bug in parser.rs", t1.clone(), None);
        assert_eq!(describe(&a, &a), "");
        let b = req("fix the bugs in parser.rs", t2, Some("Be brief."));
        let d = describe(&a, &b);
        assert!(d.contains("system_prompt_append changed"), "{d}");
        assert!(!d.contains("system_prompt changed"), "{d}");
        let mut custom = a.clone();
        custom["system_prompt"] = json!("You review diffs.");
        let mut changed = a.clone();
        changed["system_prompt"] = json!("You review diffs strictly.");
        let e = describe(&custom, &changed);
        assert!(e.contains("system_prompt changed:"), "{e}");
        assert!(e.contains("\"You review diffs.\""), "{e}");
        assert!(describe(&a, &custom).contains("system_prompt changed:"));
        assert!(d.contains("tools added: Bash"), "{d}");
        assert!(d.contains("tool Read changed: description"), "{d}");
        assert!(d.contains("messages[0] (user) changed"), "{d}");
        assert!(d.contains("\"text: fix the bug in parser.rs\""), "{d}");
        assert!(d.contains("\"text: fix the bugs in parser.rs\""), "{d}");
        assert!(d.contains("first difference at character 17"), "{d}");
        let mut c = a.clone();
        c["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "assistant", "content": []}));
        assert!(describe(&a, &c).contains("recorded 1 message(s), now 2"));
    }
}
