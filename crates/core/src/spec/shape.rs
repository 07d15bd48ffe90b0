//! The shape of a spec's YAML (how deep it nests, how many values it holds), measured before
//! the spec is parsed, so that any spec up to the size limit loads in a fraction of a second.
//!
//! libyaml's scanner does work proportional to the flow nesting depth for every token, so a
//! spec of nested `[[[…` takes time quadratic in its size to parse (over a minute for 200 KB);
//! and `yaml_serde` keeps every event of a document in memory before it deserializes, so a
//! megabyte of `[1,1,1,…]` costs over a hundred megabytes and a second per parse. [`scan`]
//! walks the parser's events without keeping them, stops at the first mapping or sequence
//! nested deeper than [`MAX_DEPTH`] or at the value past [`MAX_VALUES`], and reports where it
//! is; up to there the work is linear and small. It drives the same libyaml that `yaml_serde`
//! parses with, so it sees exactly the structure the real parse sees. It also tells whether
//! the text uses aliases (`*name`), so an error about expansion limits blames aliases only
//! when there are some.

use std::mem::MaybeUninit;

use libyaml_rs as sys;

/// The deepest a spec's mappings and sequences may nest. Real specs stay far below (an
/// `output.schema` is rarely ten levels deep); anything past this is a mistake or an attack.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most values (scalars, mappings, sequences and aliases, keys included) a spec may hold.
/// A large spec (a long prompt, a schema of a few thousand properties, a matrix of hundreds
/// of entries) holds a few thousand.
pub(crate) const MAX_VALUES: usize = 100_000;

/// Why [`scan`] stopped before the end of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Excess {
    /// A collection nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A value past the first [`MAX_VALUES`].
    TooMany,
}

/// What [`scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Scan {
    /// What went past a limit, and the 1-based `(line, column)` where it starts.
    pub excess: Option<(Excess, usize, usize)>,
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

/// Scan `source` for collections nested deeper than `max_depth` and for more than
/// `max_values` values (see the module docs).
pub(crate) fn scan(source: &str, max_depth: usize, max_values: usize) -> Scan {
    let mut out = Scan::default();
    let Some(mut parser) = Parser::new(source.as_bytes()) else {
        return out;
    };
    let mut depth = 0usize;
    let mut values = 0usize;
    while let Some((kind, line, column)) = parser.next() {
        let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).saturating_add(1);
        let excess = match kind {
            sys::YAML_SEQUENCE_START_EVENT | sys::YAML_MAPPING_START_EVENT => {
                depth += 1;
                values += 1;
                (depth > max_depth).then_some(Excess::TooDeep)
            }
            sys::YAML_SEQUENCE_END_EVENT | sys::YAML_MAPPING_END_EVENT => {
                depth = depth.saturating_sub(1);
                None
            }
            sys::YAML_SCALAR_EVENT => {
                values += 1;
                None
            }
            sys::YAML_ALIAS_EVENT => {
                out.aliases = true;
                values += 1;
                None
            }
            sys::YAML_STREAM_END_EVENT | sys::YAML_NO_EVENT => break,
            _ => None,
        };
        let excess = excess.or((values > max_values).then_some(Excess::TooMany));
        if let Some(e) = excess {
            out.excess = Some((e, at(line), at(column)));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(source: &str, max_depth: usize) -> Option<(usize, usize)> {
        match scan(source, max_depth, MAX_VALUES).excess {
            Some((Excess::TooDeep, line, column)) => Some((line, column)),
            None => None,
            Some(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn finds_the_first_collection_past_the_depth_limit() {
        assert_eq!(deep("a: [[1]]\n", 3), None);
        assert_eq!(deep("a: [[1]]\n", 2), Some((1, 5)));
        // Block nesting counts the same.
        let block = "a:\n  b:\n    c:\n      - 1\n";
        assert_eq!(deep(block, 4), None);
        assert_eq!(deep(block, 3), Some((4, 7)));
        // Columns count characters, not bytes.
        assert_eq!(deep("é: [[1]]\n", 2), Some((1, 5)));
    }

    #[test]
    fn finds_the_first_value_past_the_count_limit() {
        // The document's mapping, a, [, 1, 2, b, 3: the seventh value is `3`.
        let src = "a: [1, 2]\nb: 3\n";
        assert_eq!(scan(src, 8, 7).excess, None);
        assert_eq!(scan(src, 8, 6).excess, Some((Excess::TooMany, 2, 4)));
        assert_eq!(scan(src, 8, 5).excess, Some((Excess::TooMany, 2, 1)));
    }

    #[test]
    fn notices_aliases() {
        assert!(scan("a: &x [1]\nb: *x\n", 8, 99).aliases);
        assert!(!scan("a: '*x'\nb: \"&y\"\n", 8, 99).aliases);
    }

    #[test]
    fn syntax_errors_end_the_scan_quietly() {
        assert_eq!(scan("a: [1\nb: {", 8, 99), Scan::default());
        assert_eq!(scan("", 8, 99), Scan::default());
    }

    #[test]
    fn excess_is_found_quickly() {
        let t = std::time::Instant::now();
        for text in [
            "[".repeat(500_000),
            format!("a: {}", "{b: ".repeat(200_000)),
            "- ".repeat(400_000),
            format!("a: [{}]", "1,".repeat(500_000)),
        ] {
            let s = scan(&text, MAX_DEPTH, MAX_VALUES);
            assert!(s.excess.is_some(), "{}", &text[..20]);
        }
        assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    }
}
