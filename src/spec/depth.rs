//! How deep a spec's YAML nests, measured before the spec is parsed.
//!
//! libyaml's scanner does work proportional to the flow nesting depth for every token, so a
//! spec of nested `[[[…` takes time quadratic in its size to parse (over a minute for 200 KB).
//! [`scan`] walks the parser's events, stops at the first mapping or sequence nested deeper
//! than [`MAX_DEPTH`], and reports where it starts; up to there the work is linear. It drives
//! the same libyaml that `yaml_serde` parses with, so it sees exactly the structure the real
//! parse sees. It also tells whether the text uses aliases (`*name`), so an error about
//! expansion limits blames aliases only when there are some.

use std::mem::MaybeUninit;

use libyaml_rs as sys;

/// The deepest a spec's mappings and sequences may nest. Real specs stay far below (an
/// `output.schema` is rarely ten levels deep); anything past this is a mistake or an attack.
pub const MAX_DEPTH: usize = 64;

/// What [`scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scan {
    /// The 1-based `(line, column)` of the first collection nested deeper than the limit.
    pub too_deep: Option<(usize, usize)>,
    /// Whether an alias (`*name`) was seen before the scan stopped.
    pub aliases: bool,
}

/// A libyaml parser reading one string; deleted on drop.
struct Parser<'a> {
    /// Boxed: libyaml keeps pointers into the parser's own buffers, so it must not move.
    sys: Box<MaybeUninit<sys::yaml_parser_t>>,
    initialized: bool,
    _input: &'a [u8],
}

impl<'a> Parser<'a> {
    fn new(input: &'a [u8]) -> Option<Parser<'a>> {
        let mut p = Parser {
            sys: Box::new(MaybeUninit::uninit()),
            initialized: false,
            _input: input,
        };
        // SAFETY: `yaml_parser_initialize` fully initializes the (boxed, never moved) parser,
        // or fails and leaves nothing to free. The input outlives the parser (`'a`).
        unsafe {
            let raw = p.sys.as_mut_ptr();
            if sys::yaml_parser_initialize(raw).fail {
                return None;
            }
            p.initialized = true;
            sys::yaml_parser_set_encoding(raw, sys::YAML_UTF8_ENCODING);
            sys::yaml_parser_set_input_string(raw, input.as_ptr(), input.len() as u64);
        }
        Some(p)
    }

    /// The next event's type and 0-based start `(line, column)`; `None` on a syntax error
    /// (the real parse reports it). After the end of the stream libyaml gives
    /// `YAML_NO_EVENT`.
    fn next(&mut self) -> Option<(sys::yaml_event_type_t, u64, u64)> {
        let mut event = MaybeUninit::<sys::yaml_event_t>::uninit();
        // SAFETY: the parser is initialized (`new`); on success `event` is initialized and is
        // deleted here once its type and mark are copied out; on failure it is left untouched.
        unsafe {
            let raw = self.sys.as_mut_ptr();
            if sys::yaml_parser_parse(raw, event.as_mut_ptr()).fail {
                return None;
            }
            let ev = event.as_mut_ptr();
            let out = ((*ev).type_, (*ev).start_mark.line, (*ev).start_mark.column);
            sys::yaml_event_delete(ev);
            Some(out)
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.initialized {
            // SAFETY: initialized in `new` and deleted exactly once.
            unsafe { sys::yaml_parser_delete(self.sys.as_mut_ptr()) }
        }
    }
}

/// Scan `source` for collections nested deeper than `limit` (see the module docs).
pub fn scan(source: &str, limit: usize) -> Scan {
    let mut out = Scan::default();
    let Some(mut parser) = Parser::new(source.as_bytes()) else {
        return out;
    };
    let mut depth = 0usize;
    while let Some((kind, line, column)) = parser.next() {
        match kind {
            sys::YAML_SEQUENCE_START_EVENT | sys::YAML_MAPPING_START_EVENT => {
                depth += 1;
                if depth > limit {
                    let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).saturating_add(1);
                    out.too_deep = Some((at(line), at(column)));
                    break;
                }
            }
            sys::YAML_SEQUENCE_END_EVENT | sys::YAML_MAPPING_END_EVENT => {
                depth = depth.saturating_sub(1);
            }
            sys::YAML_ALIAS_EVENT => out.aliases = true,
            sys::YAML_STREAM_END_EVENT | sys::YAML_NO_EVENT => break,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_collection_past_the_limit() {
        assert_eq!(scan("a: [[1]]\n", 3).too_deep, None);
        assert_eq!(scan("a: [[1]]\n", 2).too_deep, Some((1, 5)));
        // Block nesting counts the same.
        let block = "a:\n  b:\n    c:\n      - 1\n";
        assert_eq!(scan(block, 4).too_deep, None);
        assert_eq!(scan(block, 3).too_deep, Some((4, 7)));
        // Columns count characters, not bytes.
        assert_eq!(scan("é: [[1]]\n", 2).too_deep, Some((1, 5)));
    }

    #[test]
    fn notices_aliases() {
        assert!(scan("a: &x [1]\nb: *x\n", 8).aliases);
        assert!(!scan("a: '*x'\nb: \"&y\"\n", 8).aliases);
    }

    #[test]
    fn syntax_errors_end_the_scan_quietly() {
        assert_eq!(scan("a: [1\nb: {", 8), Scan::default());
        assert_eq!(scan("", 8), Scan::default());
    }

    #[test]
    fn deep_nesting_is_found_quickly() {
        let t = std::time::Instant::now();
        for text in [
            "[".repeat(500_000),
            format!("a: {}", "{b: ".repeat(200_000)),
            "- ".repeat(400_000),
        ] {
            assert!(scan(&text, MAX_DEPTH).too_deep.is_some(), "{}", &text[..20]);
        }
        assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    }
}
