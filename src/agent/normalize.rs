//! Normalize the stored conversation for the API, without mutating it.
//!
//! The API wants alternating roles, no empty content, and every tool_result first in the user
//! message that follows its tool_use. Stored conversations can break that (per-block assistant
//! records after resume, several user records in a row), so each request is built from a
//! normalized copy.

use crate::model::{ContentBlock, Message, Role};

/// Build the API view of `messages`:
/// - assistant messages that share a message id are merged into one;
/// - adjacent messages of the same role are merged (user text seams get a newline);
/// - in user messages, tool_result blocks come first;
/// - empty text blocks and messages left empty are dropped.
pub fn normalize(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for msg in messages {
        let content: Vec<ContentBlock> = msg
            .content
            .iter()
            .filter(|b| !matches!(b, ContentBlock::Text { text, .. } if text.trim().is_empty()))
            .cloned()
            .collect();
        if content.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(prev) if prev.role == msg.role => merge_into(prev, content),
            _ => out.push(Message {
                role: msg.role,
                content,
                id: msg.id.clone(),
            }),
        }
    }
    for m in &mut out {
        if m.role == Role::User {
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

    fn tool_result(id: &str) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    #[test]
    fn merges_assistant_blocks_of_one_message_and_user_runs() {
        let stored = vec![
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("a")],
                id: Some("m1".into()),
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "Read".into(),
                    input: json!({}),
                }],
                id: Some("m1".into()),
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::text("note")],
                id: None,
            },
            Message {
                role: Role::User,
                content: vec![tool_result("t1")],
                id: None,
            },
        ];
        let before = stored.clone();
        let n = normalize(&stored);
        assert_eq!(stored, before, "stored messages are not mutated");
        assert_eq!(n.len(), 3);
        assert_eq!(n[1].content.len(), 2);
        assert!(matches!(n[2].content[0], ContentBlock::ToolResult { .. }));
        assert!(matches!(&n[2].content[1], ContentBlock::Text { text, .. } if text == "note"));
    }

    #[test]
    fn user_text_seams_get_a_newline_and_empty_text_is_dropped() {
        let stored = vec![
            Message::user_text("one"),
            Message::user_text("  "),
            Message::user_text("two"),
        ];
        let n = normalize(&stored);
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].text(), "one\ntwo");
    }
}
