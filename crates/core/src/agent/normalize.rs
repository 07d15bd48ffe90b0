//! Normalize the stored conversation for the API, without mutating it.
//!
//! The stored conversation keeps what the model and the tools produced, block for block (the
//! transcript holds one record per assistant block, which keeps prompt-cache bytes stable).
//! The API wants alternating roles, no empty content, every tool_result first in the user
//! message that follows its tool_use, and no trailing thinking in a final assistant message.
//! Each request is built from a normalized copy:
//!
//! 1. records that are not conversation are dropped ([`is_api_record`]: progress, system,
//!    attachment and summary records, `isVirtual`, synthetic API-error messages, sidechains);
//! 2. whitespace-only text blocks are dropped, and messages left empty with them (so a
//!    whitespace-only assistant message disappears);
//! 3. adjacent assistant messages with the same message id (per-block records) are merged
//!    into one. Claude Code also merges a message's blocks across the tool-result messages
//!    written between them while tools ran; runner does not: it stores each response whole,
//!    the split form is still a valid conversation (every tool_use is answered in the next
//!    user message), and servers and recordings that reuse one id for every response (mocks,
//!    some OpenAI-compatible servers) would have separate responses glued together;
//! 4. adjacent messages of the same role are merged; a text seam between two user texts gets
//!    a newline so `2 + 2` and `3 + 3` do not become `2 + 23 + 3`;
//! 5. assistant messages holding only thinking (orphaned, e.g. by an abandoned attempt or a
//!    compaction) are dropped, and step 4 runs again on what they separated;
//! 6. trailing thinking is stripped from the last message when it is an assistant message;
//! 7. in every user message, tool_result blocks come first (the API requires it), so extra
//!    user content of a turn (continuations, hook reasons) always follows all its results.
//!
//! Error tool results never carry images: [`ContentBlock::ToolResult`] holds text only, and a
//! stored result with image parts is read back as its text parts.

use serde_json::Value;

use crate::model::{ContentBlock, Message, Role};

/// Whether a transcript record belongs in the API conversation: a `user` or `assistant`
/// record that is not virtual, not a synthetic API-error message and not on a sidechain.
/// Progress, system, attachment and summary records never do.
pub(crate) fn is_api_record(record: &Value) -> bool {
    let flag = |k: &str| record.get(k).and_then(Value::as_bool).unwrap_or(false);
    matches!(
        record.get("type").and_then(Value::as_str),
        Some("user" | "assistant")
    ) && !flag("isVirtual")
        && !flag("isApiErrorMessage")
        && !flag("isSidechain")
}

/// Build the API view of `messages` (see the module docs for the rules, in order).
pub fn normalize(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for msg in messages {
        let content: Vec<ContentBlock> = msg
            .content
            .iter()
            .filter(|b| !is_blank_text(b))
            .cloned()
            .collect();
        if content.is_empty() {
            continue;
        }
        push_merged(
            &mut out,
            Message {
                role: msg.role,
                content,
                id: msg.id.clone(),
            },
        );
    }

    // Orphaned thinking-only assistant messages go; their neighbours may now be adjacent.
    if out.iter().any(is_thinking_only) {
        let kept: Vec<Message> = out.into_iter().filter(|m| !is_thinking_only(m)).collect();
        out = Vec::with_capacity(kept.len());
        for m in kept {
            push_merged(&mut out, m);
        }
    }

    if let Some(last) = out.last_mut()
        && last.role == Role::Assistant
    {
        while last.content.last().is_some_and(|b| {
            matches!(
                b,
                ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
            )
        }) {
            last.content.pop();
        }
        if last.content.is_empty() {
            out.pop();
        }
    }

    for m in &mut out {
        if m.role == Role::User
            && m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        {
            // Stable partition: tool results first, everything else after, order kept.
            let (mut results, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut m.content)
                .into_iter()
                .partition(|b| matches!(b, ContentBlock::ToolResult { .. }));
            results.extend(rest);
            m.content = results;
        }
    }
    out
}

fn is_blank_text(b: &ContentBlock) -> bool {
    matches!(b, ContentBlock::Text { text, .. } if text.trim().is_empty())
}

fn is_thinking_only(m: &Message) -> bool {
    m.role == Role::Assistant
        && m.content.iter().all(|b| {
            matches!(
                b,
                ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
            )
        })
}

/// Append `msg`, merging it into the last message when the roles match.
fn push_merged(out: &mut Vec<Message>, msg: Message) {
    match out.last_mut() {
        Some(prev) if prev.role == msg.role => merge_into(prev, msg.content),
        _ => out.push(msg),
    }
}

fn merge_into(prev: &mut Message, content: Vec<ContentBlock>) {
    let mut iter = content.into_iter().peekable();
    if prev.role == Role::User {
        // Join a text seam with a newline so two prompts don't run together. (The next block
        // is only taken when it is text, so nothing is lost after a tool_result.)
        if let (Some(ContentBlock::Text { text: last, .. }), Some(ContentBlock::Text { .. })) =
            (prev.content.last_mut(), iter.peek())
            && let Some(ContentBlock::Text { text, .. }) = iter.next()
        {
            last.push('\n');
            last.push_str(&text);
        }
    }
    prev.content.extend(iter);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn u(text: &str) -> Message {
        Message::user_text(text)
    }

    fn user(content: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::User,
            content,
            id: None,
        }
    }

    fn a(id: &str, content: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::Assistant,
            content,
            id: Some(id.into()),
        }
    }

    fn t(text: &str) -> ContentBlock {
        ContentBlock::text(text)
    }

    fn th(x: &str) -> ContentBlock {
        ContentBlock::Thinking {
            thinking: x.into(),
            signature: "sig".into(),
        }
    }

    fn tu(id: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "Read".into(),
            input: json!({}),
        }
    }

    fn tr(id: &str) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    /// (rule, stored conversation, expected API view)
    fn cases() -> Vec<(&'static str, Vec<Message>, Vec<Message>)> {
        vec![
            (
                "adjacent user messages merge with a newline at the text seam",
                vec![u("2 + 2"), u("3 + 3")],
                vec![u("2 + 2\n3 + 3")],
            ),
            (
                "user merge keeps non-text blocks as they are",
                vec![user(vec![tr("t1")]), u("note")],
                vec![user(vec![tr("t1"), t("note")])],
            ),
            (
                "tool_result blocks are hoisted before other user content",
                vec![
                    u("go"),
                    a("m1", vec![tu("t1"), tu("t2")]),
                    u("continue please"),
                    user(vec![tr("t1")]),
                    user(vec![tr("t2")]),
                ],
                vec![
                    u("go"),
                    a("m1", vec![tu("t1"), tu("t2")]),
                    user(vec![tr("t1"), tr("t2"), t("continue please")]),
                ],
            ),
            (
                "per-block assistant messages of one id merge",
                vec![u("go"), a("m1", vec![t("a")]), a("m1", vec![tu("t1")])],
                vec![u("go"), a("m1", vec![t("a"), tu("t1")])],
            ),
            (
                "responses that reuse one id across tool results stay apart",
                vec![
                    u("go"),
                    a("m1", vec![tu("t1")]),
                    user(vec![tr("t1")]),
                    a("m1", vec![tu("t2")]),
                    user(vec![tr("t2")]),
                ],
                vec![
                    u("go"),
                    a("m1", vec![tu("t1")]),
                    user(vec![tr("t1")]),
                    a("m1", vec![tu("t2")]),
                    user(vec![tr("t2")]),
                ],
            ),
            (
                "different ids across a tool-result message stay apart",
                vec![
                    u("go"),
                    a("m1", vec![tu("t1")]),
                    user(vec![tr("t1")]),
                    a("m2", vec![t("done")]),
                ],
                vec![
                    u("go"),
                    a("m1", vec![tu("t1")]),
                    user(vec![tr("t1")]),
                    a("m2", vec![t("done")]),
                ],
            ),
            (
                "a user text between blocks of one id stops the merge",
                vec![
                    u("go"),
                    a("m1", vec![t("x")]),
                    u("hook says no"),
                    a("m1", vec![t("y")]),
                ],
                vec![
                    u("go"),
                    a("m1", vec![t("x")]),
                    u("hook says no"),
                    a("m1", vec![t("y")]),
                ],
            ),
            (
                "orphaned thinking-only assistant messages are dropped",
                vec![
                    u("go"),
                    a("m0", vec![th("hmm")]),
                    u("again"),
                    a("m1", vec![t("ok")]),
                ],
                vec![u("go\nagain"), a("m1", vec![t("ok")])],
            ),
            (
                "thinking before other blocks of the same message is kept",
                vec![u("go"), a("m1", vec![th("hmm")]), a("m1", vec![tu("t1")])],
                vec![u("go"), a("m1", vec![th("hmm"), tu("t1")])],
            ),
            (
                "trailing thinking is stripped from the last assistant message",
                vec![u("go"), a("m1", vec![th("a"), t("x"), th("b")])],
                vec![u("go"), a("m1", vec![th("a"), t("x")])],
            ),
            (
                "trailing thinking stays on an assistant message that is not last",
                vec![
                    u("go"),
                    a("m1", vec![tu("t1"), th("b")]),
                    user(vec![tr("t1")]),
                ],
                vec![
                    u("go"),
                    a("m1", vec![tu("t1"), th("b")]),
                    user(vec![tr("t1")]),
                ],
            ),
            (
                "whitespace-only assistant messages are dropped",
                vec![u("go"), a("m1", vec![t("  \n ")]), u("more")],
                vec![u("go\nmore")],
            ),
            (
                "whitespace-only text blocks go, the rest of the message stays",
                vec![u("go"), a("m1", vec![t(" "), tu("t1")])],
                vec![u("go"), a("m1", vec![tu("t1")])],
            ),
            (
                "empty user text is dropped",
                vec![u("one"), u("  "), u("two")],
                vec![u("one\ntwo")],
            ),
        ]
    }

    #[test]
    fn table() {
        for (rule, stored, expected) in cases() {
            let before = stored.clone();
            let got = normalize(&stored);
            assert_eq!(got, expected, "rule: {rule}");
            assert_eq!(
                stored, before,
                "rule: {rule}: stored messages are not mutated"
            );
            assert_eq!(
                normalize(&got),
                got,
                "rule: {rule}: normalizing twice changes nothing"
            );
        }
    }

    #[test]
    fn non_conversation_records_are_dropped() {
        let cases = [
            (json!({"type": "user", "message": {}}), true),
            (json!({"type": "assistant", "message": {}}), true),
            (json!({"type": "progress"}), false),
            (
                json!({"type": "system", "subtype": "compact_boundary"}),
                false,
            ),
            (json!({"type": "attachment"}), false),
            (json!({"type": "summary"}), false),
            (json!({"type": "user", "isVirtual": true}), false),
            (
                json!({"type": "assistant", "isApiErrorMessage": true}),
                false,
            ),
            (json!({"type": "user", "isSidechain": true}), false),
            (json!({"type": "user", "isCompactSummary": true}), true),
            (json!({"type": "user", "isMeta": true}), true),
        ];
        for (record, keep) in cases {
            assert_eq!(is_api_record(&record), keep, "{record}");
        }
    }

    #[test]
    fn error_tool_results_hold_no_images() {
        let stored = json!({
            "type": "tool_result", "tool_use_id": "t1", "is_error": true,
            "content": [
                {"type": "text", "text": "failed"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
            ]
        });
        let b = ContentBlock::from_value(stored).unwrap();
        let sent = normalize(&[user(vec![b])]);
        assert_eq!(
            sent[0].content[0].to_value(),
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "failed", "is_error": true})
        );
    }
}
