//! The compiled search of a [`Redactor`](super::Redactor): two Aho-Corasick automata, one for
//! the exact patterns (run on the text) and one for the anchors of the folded forms (run on
//! the text's normalized view), each one pass over the text whatever the number of secrets and
//! forms; an anchor found is extended along its form, and kept when the piece is long enough.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::{forms, normalize};

/// One automaton and the secret each of its patterns belongs to.
struct Search {
    /// Leftmost-longest: the earliest occurrence wins, and of two starting at the same place
    /// the longer one. `None` when it could not be built: [`Search::naive`] then searches
    /// pattern by pattern (the same matches, slower).
    ac: Option<AhoCorasick>,
    /// The patterns, by pattern id (for the naive search).
    patterns: Vec<Vec<u8>>,
    /// The secret (index) of each pattern.
    owner: Vec<usize>,
}

impl Search {
    /// A search for `patterns` ((bytes, secret) pairs; a pattern already seen keeps its first
    /// owner). `None` when there is none.
    fn build(pairs: Vec<(Vec<u8>, usize)>) -> Option<Search> {
        let mut seen: HashMap<Vec<u8>, ()> = HashMap::with_capacity(pairs.len());
        let mut patterns = Vec::with_capacity(pairs.len());
        let mut owner = Vec::with_capacity(pairs.len());
        for (p, o) in pairs {
            if !p.is_empty() && seen.insert(p.clone(), ()).is_none() {
                patterns.push(p);
                owner.push(o);
            }
        }
        if patterns.is_empty() {
            return None;
        }
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|e| tracing::warn!(error = %e, "secret matcher not built; searching pattern by pattern"))
            .ok();
        Some(Search {
            ac,
            patterns,
            owner,
        })
    }

    /// Every non-overlapping match in `hay`, leftmost-longest: (start, end, secret).
    fn find_all(&self, hay: &[u8], out: &mut Vec<(usize, usize, usize)>) {
        match &self.ac {
            Some(ac) => out.extend(
                ac.find_iter(hay)
                    .map(|m| (m.start(), m.end(), self.owner[m.pattern().as_usize()])),
            ),
            None => {
                let mut from = 0;
                while let Some((s, e, k)) = self.naive(hay, from) {
                    out.push((s, e, self.owner[k]));
                    from = e;
                }
            }
        }
    }

    /// Whether any pattern occurs in `hay`.
    fn is_match(&self, hay: &[u8]) -> bool {
        match &self.ac {
            Some(ac) => ac.is_match(hay),
            None => self.naive(hay, 0).is_some(),
        }
    }

    /// The leftmost-longest occurrence at or after `from`: (start, end, pattern).
    fn naive(&self, hay: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let rest = hay.get(from..)?;
        let mut best: Option<(usize, usize, usize)> = None;
        for (k, p) in self.patterns.iter().enumerate() {
            if let Some(off) = rest.windows(p.len()).position(|w| w == p.as_slice()) {
                let (s, e) = (from + off, from + off + p.len());
                if best.is_none_or(|(bs, be, _)| s < bs || (s == bs && e > be)) {
                    best = Some((s, e, k));
                }
            }
        }
        best
    }
}

/// Length of the anchors the folded search looks for: [`forms::MIN_ENCODED_LEN`].
const Q: usize = forms::MIN_ENCODED_LEN;

/// Anchor sets up to this many use a DFA (fastest; a few MB at most), larger ones an NFA.
const MAX_DFA_ANCHORS: usize = 3000;

/// The folded search: [`Q`]-byte anchors taken from every folded form so that every piece
/// of at least its minimum length holds one, found with one automaton (overlapping matches),
/// each hit then extended both ways along its form.
struct Anchored {
    /// Finds the anchors; `None` when it could not be built ([`Anchored::ids`] then finds
    /// them with one hash lookup per position).
    ac: Option<AhoCorasick>,
    /// Anchor bytes to anchor id (for the search without automaton).
    ids: HashMap<[u8; Q], usize>,
    /// Where each anchor sits: (form, offset in the form).
    sites: Vec<Vec<(usize, usize)>>,
    /// The forms: (normalized form, minimum piece, secret).
    forms: Vec<(Vec<u8>, usize, usize)>,
}

impl Anchored {
    /// The search for `forms` ((folded form, secret) pairs). `None` when there is none.
    fn build(forms: Vec<(forms::Folded, usize)>) -> Option<Anchored> {
        let mut ids: HashMap<[u8; Q], usize> = HashMap::new();
        let mut anchors: Vec<[u8; Q]> = Vec::new();
        let mut sites: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut kept = Vec::with_capacity(forms.len());
        for (f, owner) in forms {
            if f.form.len() < Q
                || kept
                    .iter()
                    .any(|(v, _, _): &(Vec<u8>, usize, usize)| *v == f.form)
            {
                continue;
            }
            let k = kept.len();
            // Anchors every `step` bytes: a piece of `min` bytes starting at x holds the one
            // at the first multiple of `step` from x, which ends by x + min.
            let step = f.min.saturating_sub(Q) + 1;
            let mut j = 0;
            while j + Q <= f.form.len() {
                let mut key = [0u8; Q];
                key.copy_from_slice(&f.form[j..j + Q]);
                let id = *ids.entry(key).or_insert_with(|| {
                    anchors.push(key);
                    sites.push(Vec::new());
                    anchors.len() - 1
                });
                sites[id].push((k, j));
                j += step;
            }
            kept.push((f.form, f.min, owner));
        }
        if kept.is_empty() {
            return None;
        }
        let kind = (anchors.len() <= MAX_DFA_ANCHORS).then_some(AhoCorasickKind::DFA);
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(kind)
            .build(&anchors)
            .map_err(|e| tracing::warn!(error = %e, "secret matcher not built; searching by hash"))
            .ok();
        Some(Anchored {
            ac,
            ids,
            sites,
            forms: kept,
        })
    }

    /// Every piece of a form in `norm` at least as long as the form's minimum, maximal
    /// (extended both ways): (start, end, secret), in `norm`'s offsets, unsorted, possibly
    /// overlapping. With `first`, stops at the first one.
    fn find(&self, norm: &[u8], first: bool, out: &mut Vec<(usize, usize, usize)>) {
        // The last piece found of each form: (diagonal, end), so the other anchors of the
        // same occurrence are not extended again.
        let mut last: Vec<(usize, usize)> = vec![(usize::MAX, 0); self.forms.len()];
        let mut hit = |p: usize, id: usize, out: &mut Vec<(usize, usize, usize)>| -> bool {
            for &(k, j) in &self.sites[id] {
                let (form, min, owner) = &self.forms[k];
                let diag = p.wrapping_sub(j);
                if last[k].0 == diag && p < last[k].1 {
                    continue;
                }
                let mut a = 0;
                while a < j && a < p && norm[p - a - 1] == form[j - a - 1] {
                    a += 1;
                }
                let mut b = 0;
                while j + Q + b < form.len()
                    && p + Q + b < norm.len()
                    && norm[p + Q + b] == form[j + Q + b]
                {
                    b += 1;
                }
                if a + Q + b >= *min {
                    out.push((p - a, p + Q + b, *owner));
                    last[k] = (diag, p + Q + b);
                    if first {
                        return true;
                    }
                }
            }
            false
        };
        match &self.ac {
            Some(ac) => {
                for m in ac.find_overlapping_iter(norm) {
                    if hit(m.start(), m.pattern().as_usize(), out) {
                        return;
                    }
                }
            }
            None => {
                for (p, w) in norm.windows(Q).enumerate() {
                    let mut key = [0u8; Q];
                    key.copy_from_slice(w);
                    if let Some(&id) = self.ids.get(&key)
                        && hit(p, id, out)
                    {
                        return;
                    }
                }
            }
        }
    }
}

/// The compiled patterns of a set of secrets.
pub(super) struct Matcher {
    /// The exact patterns, searched in the text.
    exact: Option<Search>,
    /// The folded forms, searched in the text's normalized view.
    folded: Option<Anchored>,
}

impl Matcher {
    /// The matcher of `values` (secret index = position).
    pub(super) fn build<'a>(values: impl Iterator<Item = &'a str>) -> Matcher {
        let mut exact = Vec::new();
        let mut folded = Vec::new();
        for (k, v) in values.enumerate() {
            exact.extend(forms::exact(v).into_iter().map(|p| (p, k)));
            folded.extend(forms::folded(v).into_iter().map(|f| (f, k)));
        }
        Matcher {
            exact: Search::build(exact),
            folded: Anchored::build(folded),
        }
    }

    /// The byte spans of `hay` to replace, sorted, disjoint (overlapping matches merged; the
    /// first one's secret names the whole): (start, end, secret).
    pub(super) fn spans(&self, hay: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut spans = Vec::new();
        if let Some(exact) = &self.exact {
            exact.find_all(hay, &mut spans);
        }
        if let Some(folded) = &self.folded {
            let norm = normalize::text(hay);
            let mut hits = Vec::new();
            folded.find(&norm, false, &mut hits);
            if !hits.is_empty() {
                map_back(hay, merge(hits), &mut spans);
            }
        }
        merge(spans)
    }

    /// Whether any pattern occurs in `hay`.
    pub(super) fn occurs_in(&self, hay: &[u8]) -> bool {
        if self.exact.as_ref().is_some_and(|s| s.is_match(hay)) {
            return true;
        }
        let Some(folded) = &self.folded else {
            return false;
        };
        let mut hits = Vec::new();
        folded.find(&normalize::text(hay), true, &mut hits);
        !hits.is_empty()
    }
}

/// Map matches in the normalized view of `hay` (sorted, disjoint) to spans of `hay`: from the
/// original offset of a match's first byte to just after its last byte's. One more walk over
/// `hay`, recording only the offsets wanted.
fn map_back(hay: &[u8], hits: Vec<(usize, usize, usize)>, spans: &mut Vec<(usize, usize, usize)>) {
    // The normalized indexes wanted, ascending: each hit's first and last byte.
    let want: Vec<usize> = hits.iter().flat_map(|&(s, e, _)| [s, e - 1]).collect();
    let mut orig = Vec::with_capacity(want.len());
    let mut k = 0;
    normalize::walk(hay, true, |_, i| {
        while orig.len() < want.len() && want[orig.len()] == k {
            orig.push(i);
        }
        k += 1;
    });
    for (n, &(_, _, secret)) in hits.iter().enumerate() {
        if let (Some(&a), Some(&b)) = (orig.get(2 * n), orig.get(2 * n + 1)) {
            spans.push((a, b + 1, secret));
        }
    }
}

/// `spans` sorted by start (the longer first on a tie), overlapping ones merged.
pub(super) fn merge(mut spans: Vec<(usize, usize, usize)>) -> Vec<(usize, usize, usize)> {
    spans.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    let mut out: Vec<(usize, usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e, k) in spans {
        match out.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e, k)),
        }
    }
    out
}
