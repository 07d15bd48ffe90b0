//! The redactor's unit tests: exact values, every encoded form, JSON, registration.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use proptest::prelude::*;
use serde_json::json;

use super::forms::{base32, hex, rot13};
use super::*;

fn r(pairs: &[(&str, &str)]) -> Redactor {
    Redactor::new(
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn replaces_every_occurrence_with_marker() {
    let red = r(&[("API_KEY", "sk-ant-123456")]);
    assert_eq!(
        red.redact("key=sk-ant-123456 again sk-ant-123456."),
        "key=[REDACTED:API_KEY] again [REDACTED:API_KEY]."
    );
}

#[test]
fn borrows_when_nothing_matches() {
    let red = r(&[("API_KEY", "sk-ant-123456")]);
    assert!(matches!(red.redact("harmless"), Cow::Borrowed(_)));
    assert!(matches!(Redactor::default().redact("x"), Cow::Borrowed(_)));
}

#[test]
fn longest_value_wins_when_one_contains_another() {
    let red = r(&[("SHORT", "abcd"), ("LONG", "abcdefgh")]);
    assert_eq!(
        red.redact("abcdefgh abcd"),
        "[REDACTED:LONG] [REDACTED:SHORT]"
    );
}

#[test]
fn markers_are_not_re_redacted() {
    // A secret whose value appears inside another secret's marker must not corrupt it.
    let red = r(&[("TOKEN", "REDACTED"), ("KEY", "hunter22")]);
    assert_eq!(red.redact("hunter22"), "[REDACTED:KEY]");
    assert_eq!(red.redact("REDACTED"), "[REDACTED:TOKEN]");
}

#[test]
fn short_and_empty_values_are_ignored() {
    let red = r(&[("A", ""), ("B", "abc"), ("C", "abcd")]);
    assert_eq!(red.redact("abc abcd"), "abc [REDACTED:C]");
}

#[test]
fn multibyte_text_around_secret() {
    let red = r(&[("K", "秘密の値です")]);
    assert_eq!(red.redact("é秘密の値ですü"), "é[REDACTED:K]ü");
}

#[test]
fn from_env_reads_values_and_skips_unset() {
    // SAFETY: the variable name is unique to this test.
    unsafe { std::env::set_var("RUNNER_REDACT_TEST_SECRET", "s3cr3t-value") };
    let red = Redactor::from_env(&[
        "RUNNER_REDACT_TEST_SECRET".to_string(),
        "RUNNER_REDACT_TEST_UNSET_XYZ".to_string(),
    ]);
    assert_eq!(
        red.redact("v=s3cr3t-value"),
        "v=[REDACTED:RUNNER_REDACT_TEST_SECRET]"
    );
}

#[test]
fn to_redacted_json_equals_redact_value_then_to_vec() {
    let v =
        json!({"a": ["x topsecret", 1, null, {"b": "topsecret"}], "topsecret": true, "c": "clean"});
    let clean = json!({"a": "nothing to see", "n": [1, 2]});
    let quoted = json!({"q": "say \"hi\" top\\secret", "t": "tab\there"});
    for red in [
        r(&[("K", "topsecret")]),
        r(&[
            ("K", "topsecret"),
            ("Q", "\"hi\""),
            ("B", "top\\secret"),
            ("T", "tab\there"),
        ]),
        Redactor::default(),
    ] {
        for val in [&v, &clean, &quoted] {
            let mut expected = val.clone();
            red.redact_value(&mut expected);
            assert_eq!(
                red.to_redacted_json(val).unwrap(),
                serde_json::to_vec(&expected).unwrap(),
                "{val}"
            );
        }
    }
    // Secrets JSON escapes are still found (through the slow path).
    let red = r(&[("Q", "\"hi\"")]);
    let out = String::from_utf8(red.to_redacted_json(&quoted).unwrap()).unwrap();
    assert!(out.contains("[REDACTED:Q]") && !out.contains("hi"), "{out}");
}

#[test]
fn many_secrets_match_like_one_by_one() {
    // Overlapping values: earliest occurrence first, the longest at one position.
    let red = r(&[
        ("A", "abcd"),
        ("B", "bcdefg"),
        ("C", "abcdefgh"),
        ("D", "cdef"),
    ]);
    assert_eq!(
        red.redact("xabcdefgh bcdefg abcdz cdefab"),
        "x[REDACTED:C] [REDACTED:B] [REDACTED:A]z [REDACTED:D]ab"
    );
    assert_eq!(red.redact("zbcdefgh"), "z[REDACTED:B]h");
}

#[test]
fn every_line_and_common_encoding_is_redacted() {
    let secret = "first-line-secret\nsecond-line-secret";
    let red = r(&[("PEM", secret)]);
    assert_eq!(
        red.redact("only second-line-secret here"),
        "only [REDACTED:PEM] here"
    );
    let token = "tok/en+val=ue-1234";
    let red = r(&[("T", token)]);
    for prefix in ["", "a", "ab", "abc", "x-access-token:", "user:"] {
        let encoded = STANDARD.encode(format!("{prefix}{token}"));
        let out = red.redact(&encoded);
        assert!(out.contains("[REDACTED:T]"), "{prefix:?}: {out}");
        let url_safe = URL_SAFE.encode(format!("{prefix}{token}"));
        assert!(red.redact(&url_safe).contains("[REDACTED:T]"), "{prefix:?}");
    }
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    assert_eq!(red.redact(&hex), "[REDACTED:T]");
    assert_eq!(red.redact(&hex.to_uppercase()), "[REDACTED:T]");
    assert_eq!(red.redact("tok%2Fen%2Bval%3Due-1234"), "[REDACTED:T]");
}

#[test]
fn redact_value_walks_strings_and_keys() {
    let red = r(&[("K", "topsecret")]);
    let mut v = json!({"a": ["x topsecret", 1, null, {"b": "topsecret"}], "topsecret": true});
    red.redact_value(&mut v);
    assert_eq!(
        v,
        json!({"a": ["x [REDACTED:K]", 1, null, {"b": "[REDACTED:K]"}], "[REDACTED:K]": true})
    );
}

/// The secret of the forms table: 25 bytes, so its halves are 13 bytes.
const S: &str = "hunter2-Sesame-0pen-42xyz";

/// `s`'s characters joined by `sep`.
fn joined(s: &str, sep: &str) -> String {
    s.chars().map(String::from).collect::<Vec<_>>().join(sep)
}

/// What `od -c` prints for `s` (printable ASCII): 7-digit octal offsets, 16 characters a
/// line, each in a 4-column field.
fn od_c(s: &str) -> String {
    let mut out = String::new();
    for (i, chunk) in s.as_bytes().chunks(16).enumerate() {
        out.push_str(&format!("{:07o}", i * 16));
        for &b in chunk {
            out.push_str(&format!("{:>4}", b as char));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:07o}\n", s.len()));
    out
}

/// Every form of `s` the redactor must find, by name.
fn forms_of(s: &str) -> Vec<(String, String)> {
    let b = s.as_bytes();
    let mut v: Vec<(String, String)> = vec![
        ("raw".into(), s.to_string()),
        ("spaced".into(), joined(s, " ")),
        ("one per line".into(), joined(s, "\n")),
        ("comma quoted".into(), format!("'{}'", joined(s, "', '"))),
        (
            "fold -w 12".into(),
            b.chunks(12)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ("upper".into(), s.to_uppercase()),
        ("reversed".into(), s.chars().rev().collect()),
        ("rot13".into(), rot13(s)),
        ("hex".into(), hex(b)),
        ("HEX".into(), hex(b).to_uppercase()),
        ("xxd -p".into(), {
            let h = hex(b);
            format!("{}\n{}", &h[..30], &h[30..])
        }),
        ("od -An -tx1".into(), {
            b.iter().map(|x| format!(" {x:02x}")).collect::<String>()
        }),
        (
            "decimal bytes".into(),
            joined(&b.iter().map(|x| format!("{x} ")).collect::<String>(), ""),
        ),
        (
            "octal escapes".into(),
            b.iter().map(|x| format!("\\{x:03o}")).collect(),
        ),
        ("od -c".into(), od_c(s)),
        (
            "url (every byte)".into(),
            b.iter().map(|x| format!("%{x:02X}")).collect(),
        ),
        (
            "url".into(),
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                .to_string(),
        ),
        ("base32".into(), base32(b, true)),
    ];
    for prefix in ["", "a", "ab", "abc", "abcd"] {
        let data = [prefix.as_bytes(), b].concat();
        v.push((format!("base32 after {prefix:?}"), base32(&data, true)));
    }
    for prefix in ["", "a", "ab"] {
        let data = [prefix.as_bytes(), b].concat();
        v.push((format!("base64 after {prefix:?}"), STANDARD.encode(&data)));
        v.push((
            format!("base64url after {prefix:?}"),
            URL_SAFE.encode(&data),
        ));
        // `base64` wraps at 76 columns; the secret's encoding wraps too at 12.
        let wrapped = STANDARD
            .encode(&data)
            .as_bytes()
            .chunks(12)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        v.push((format!("base64 wrapped after {prefix:?}"), wrapped));
    }
    let h = s.len().div_ceil(2);
    v.push(("first half".into(), s[..h].to_string()));
    v.push(("second half".into(), s[s.len() - h..].to_string()));
    v.push(("middle half".into(), s[3..3 + h].to_string()));
    v.push((
        "upper half reversed".into(),
        s[..h].to_uppercase().chars().rev().collect(),
    ));
    v.push(("half in hex".into(), hex(&b[5..5 + h])));
    v
}

#[test]
fn every_form_in_the_table_is_redacted() {
    let red = r(&[("S", S)]);
    for (name, form) in forms_of(S) {
        let text = format!("### {form} ###");
        let out = red.redact(&text);
        assert!(out.contains("[REDACTED:S]"), "{name}: {out}");
        assert!(!out.contains(&form), "{name}: {out}");
        assert!(
            out.starts_with("### ") && out.ends_with(" ###"),
            "{name}: {out}"
        );
        // The same through bytes and JSON.
        assert_eq!(
            red.redact_bytes(text.as_bytes()).as_ref(),
            out.as_bytes(),
            "{name}"
        );
        let json = String::from_utf8(red.to_redacted_json(&json!({ "t": text })).unwrap()).unwrap();
        assert!(json.contains("[REDACTED:S]"), "{name}: {json}");
    }
}

#[test]
fn the_whole_span_goes_separators_included() {
    let red = r(&[("S", "abcdefgh12")]);
    assert_eq!(red.redact("x a b c d e f g h 1 2 y"), "x [REDACTED:S] y");
    assert_eq!(red.redact("x\nABCDEF\nGH12\ny"), "x\n[REDACTED:S]\ny");
    assert_eq!(red.redact("é21hgfedcbaü"), "é[REDACTED:S]ü");
}

#[test]
fn short_values_match_only_exactly() {
    // Below MIN_ENCODED_LEN: no case folding, spacing or reversal (they would match words).
    let red = r(&[("P", "hunter2")]);
    assert_eq!(
        red.redact("hunter2 HUNTER2 2retnuh h u n t e r 2"),
        "[REDACTED:P] HUNTER2 2retnuh h u n t e r 2"
    );
    // Today's exact encodings of a short value stay.
    assert_eq!(red.redact(&STANDARD.encode("hunter2")), "[REDACTED:P]");
}

#[test]
fn text_without_secrets_is_unchanged() {
    let red = r(&[("A", S), ("B", "another-secret-value-9"), ("C", "abcd")]);
    let text = "fn main() {\n    println!(\"hello, world\");\n}\n0000000   h   e   l   l   o\n\
                68656c6c6f 104 101 108 \\150\\145 aGVsbG8= NBSWY3DP %68%65 ĳ€😀\n";
    assert!(matches!(red.redact(text), Cow::Borrowed(_)));
    assert!(matches!(
        red.redact_bytes(b"\xff\xfe bytes \x00"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn redaction_is_idempotent() {
    let red = r(&[("A", S), ("B", "another-secret-value-9")]);
    for (_, form) in forms_of(S) {
        let once = red
            .redact(&format!("x {form} y another-secret-value-9"))
            .into_owned();
        assert_eq!(red.redact(&once), once);
    }
}

#[test]
fn non_utf8_bytes_around_a_secret_are_kept() {
    let red = r(&[("S", S)]);
    let mut text = b"\xff\xfe ".to_vec();
    text.extend_from_slice(S.to_uppercase().as_bytes());
    text.extend_from_slice(b" \xc3");
    assert_eq!(
        red.redact_bytes(&text).as_ref(),
        b"\xff\xfe [REDACTED:S] \xc3"
    );
}

#[test]
fn each_line_of_a_multi_line_secret_in_each_form() {
    let pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END KEY-----";
    let red = r(&[("PEM", pem)]);
    for line in ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7"] {
        for form in [
            line.to_string(),
            line.chars().rev().collect(),
            hex(line.as_bytes()),
        ] {
            let out = red.redact(&format!("x {form} y")).into_owned();
            assert_eq!(out, "x [REDACTED:PEM] y", "{form}");
        }
    }
}

/// The forms the property test checks, as (name, form of `s`).
fn checked_forms(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    vec![
        s.to_string(),
        joined(s, " "),
        joined(s, "\n"),
        s.to_uppercase(),
        s.chars().rev().collect(),
        rot13(s),
        STANDARD.encode(b),
        URL_SAFE_NO_PAD.encode(b),
        base32(b, false),
        hex(b),
        hex(b).to_uppercase(),
        b.iter().map(|x| format!("{x} ")).collect(),
        b.iter().map(|x| format!("\\{x:03o}")).collect(),
        b.iter().map(|x| format!("%{x:02x}")).collect(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever text surrounds it, no checked form of a secret survives redaction.
    #[test]
    fn no_form_survives(
        secret in "[A-Za-z0-9_.+/-]{8,40}",
        before in "[ -~\n]{0,30}",
        after in "[ -~\n]{0,30}",
        which in 0usize..14,
    ) {
        let red = r(&[("S", &secret)]);
        let form = checked_forms(&secret)[which].clone();
        let out = red.redact(&format!("{before}{form}{after}")).into_owned();
        for f in checked_forms(&secret) {
            prop_assert!(!out.contains(&f), "{:?} survived in {:?}", f, out);
        }
        prop_assert_eq!(red.redact(&out).into_owned(), out.clone());
    }
}
