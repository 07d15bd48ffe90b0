//! `runner report merge a.xml b.xml … -o all.xml`: merge JUnit reports (e.g. one per shard)
//! into one `<testsuites>` document.
//!
//! Every `<testsuite>` of every input (the root of a file, or the children of its
//! `<testsuites>` root) is copied unchanged, in input order. The root's `tests`, `failures`,
//! `errors` and `time` are recomputed from the copied suites: counts by looking at their
//! `<testcase>` elements (a testcase with `<failure>` is a failure, with `<error>` an error),
//! time as the sum of the suites' `time`. No `skipped` on the root: junit-10.xsd does not allow
//! it there.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use quick_xml::events::{BytesDecl, BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// An input cannot be read or the output cannot be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// An input is not well-formed XML.
    #[error("{}: not a well-formed JUnit XML file (at byte {position}): {message}", path.display())]
    Xml {
        /// The file.
        path: PathBuf,
        /// Byte offset of the error.
        position: u64,
        /// What was wrong.
        message: String,
    },
    /// An input's root is neither `<testsuites>` nor `<testsuite>`.
    #[error(
        "{}: no <testsuites> or <testsuite> element found; expected a JUnit report",
        path.display()
    )]
    NoSuites {
        /// The file.
        path: PathBuf,
    },
}

/// Totals over the merged suites.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Totals {
    /// Testcases.
    pub tests: u64,
    /// Testcases with `<failure>`.
    pub failures: u64,
    /// Testcases with `<error>`.
    pub errors: u64,
    /// Testcases with `<skipped>`.
    pub skipped: u64,
    /// Summed suite time in seconds.
    pub time: f64,
    /// Suites copied.
    pub suites: u64,
}

/// Merge the JUnit files `inputs` and write the result to `output` (temp file + rename).
pub fn merge_files(inputs: &[PathBuf], output: &Path) -> Result<Totals, MergeError> {
    let mut docs = Vec::with_capacity(inputs.len());
    for p in inputs {
        let text = std::fs::read_to_string(p).map_err(|source| MergeError::Io {
            path: p.clone(),
            source,
        })?;
        docs.push((p.clone(), text));
    }
    let (xml, totals) = merge(&docs)?;
    let io_err = |source| MergeError::Io {
        path: output.to_path_buf(),
        source,
    };
    crate::atomic_file::write(output, xml.as_bytes()).map_err(io_err)?;
    Ok(totals)
}

/// Merge `(path, text)` documents into one; returns the XML and its totals.
pub fn merge(docs: &[(PathBuf, String)]) -> Result<(String, Totals), MergeError> {
    let mut body = Writer::new(Vec::new());
    let mut totals = Totals::default();
    for (path, text) in docs {
        // An empty <testsuites/> (e.g. a shard with no tasks) is fine.
        if !copy_suites(path, text, &mut body, &mut totals)? {
            return Err(MergeError::NoSuites { path: path.clone() });
        }
    }
    let mut w = Writer::new(Vec::new());
    let io = |e: io::Error| MergeError::Io {
        path: PathBuf::from("<merged report>"),
        source: e,
    };
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .map_err(io)?;
    w.get_mut().write_all(b"\n").map_err(io)?;
    let mut root = BytesStart::new("testsuites");
    root.push_attribute(("name", "runner"));
    root.push_attribute(("tests", totals.tests.to_string().as_str()));
    root.push_attribute(("failures", totals.failures.to_string().as_str()));
    root.push_attribute(("errors", totals.errors.to_string().as_str()));
    root.push_attribute(("time", format!("{:.3}", totals.time).as_str()));
    w.write_event(Event::Start(root)).map_err(io)?;
    w.get_mut().write_all(&body.into_inner()).map_err(io)?;
    w.write_event(Event::Text(BytesText::new("\n")))
        .map_err(io)?;
    w.write_event(Event::End(quick_xml::events::BytesEnd::new("testsuites")))
        .map_err(io)?;
    let mut out = w.into_inner();
    out.push(b'\n');
    Ok((String::from_utf8_lossy(&out).into_owned(), totals))
}

/// What the testcase being copied holds.
#[derive(Default)]
struct Case {
    failure: bool,
    error: bool,
    skipped: bool,
}

/// Copy the suites of one document; returns whether it was a JUnit document at all (its root
/// is `<testsuites>` or `<testsuite>`).
fn copy_suites(
    path: &Path,
    text: &str,
    out: &mut Writer<Vec<u8>>,
    totals: &mut Totals,
) -> Result<bool, MergeError> {
    let mut reader = Reader::from_str(text);
    let xml_err = |reader: &Reader<&[u8]>, message: String| MergeError::Xml {
        path: path.to_path_buf(),
        position: reader.buffer_position(),
        message,
    };
    let write_err = |e: io::Error| MergeError::Io {
        path: PathBuf::from("<merged report>"),
        source: e,
    };
    // Depth of elements outside a copied suite, and inside the suite being copied.
    let mut depth = 0usize;
    let mut in_suite: Option<usize> = None;
    let mut case: Option<(usize, Case)> = None;
    let mut junit_root = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| xml_err(&reader, e.to_string()))?;
        match &event {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = e.local_name();
                let name = name.as_ref();
                if depth == 0 && matches!(name, "testsuites" | "testsuite") {
                    junit_root = true;
                }
                if in_suite.is_none() && name == "testsuite" {
                    in_suite = Some(depth);
                    totals.suites += 1;
                    totals.time += attr_f64(e, "time");
                    out.get_mut().write_all(b"\n  ").map_err(write_err)?;
                } else if let Some(suite_depth) = in_suite {
                    if name == "testcase" && depth == suite_depth + 1 {
                        totals.tests += 1;
                        if !empty {
                            case = Some((depth, Case::default()));
                        }
                    } else if let Some((case_depth, c)) = case.as_mut()
                        && depth == *case_depth + 1
                    {
                        match name {
                            "failure" => c.failure = true,
                            "error" => c.error = true,
                            "skipped" => c.skipped = true,
                            _ => {}
                        }
                    }
                }
                if in_suite.is_some() {
                    out.write_event(event.borrow()).map_err(write_err)?;
                }
                if !empty {
                    depth += 1;
                } else if in_suite == Some(depth) {
                    // An empty <testsuite/>.
                    in_suite = None;
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if in_suite.is_some() {
                    out.write_event(event.borrow()).map_err(write_err)?;
                }
                if let Some((case_depth, c)) = &case
                    && *case_depth == depth
                {
                    if c.error {
                        totals.errors += 1;
                    } else if c.failure {
                        totals.failures += 1;
                    } else if c.skipped {
                        totals.skipped += 1;
                    }
                    case = None;
                }
                if in_suite == Some(depth) && e.local_name().as_ref() == "testsuite" {
                    in_suite = None;
                }
            }
            Event::Decl(_) | Event::DocType(_) | Event::PI(_) => {}
            _ => {
                if in_suite.is_some() {
                    out.write_event(event.borrow()).map_err(write_err)?;
                }
            }
        }
    }
    if depth != 0 {
        return Err(xml_err(
            &reader,
            "the document ends inside an element".into(),
        ));
    }
    Ok(junit_root)
}

fn attr_f64(e: &BytesStart<'_>, key: &str) -> f64 {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| a.value.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t >= 0.0)
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="runner" tests="2" failures="1" errors="0" time="1.500">
  <testsuite name="a" tests="2" failures="1" errors="0" skipped="0" time="1.500">
    <testcase name="agent" classname="a" time="1.0"/>
    <testcase name="cargo test &amp; more" classname="a" time="0.5"><failure type="checks_failed" message="x">out &lt;1&gt;</failure></testcase>
  </testsuite>
</testsuites>
"#;
    const B: &str = r#"<?xml version="1.0"?>
<testsuite name="b" tests="2" failures="0" errors="1" skipped="1" time="2.25">
  <properties><property name="runner_outcome" value="api_error"/></properties>
  <testcase name="agent" classname="b"><error type="api_error">boom</error></testcase>
  <testcase name="other" classname="b"><skipped/></testcase>
</testsuite>
"#;

    #[test]
    fn merges_suites_and_recomputes_totals() {
        let (xml, t) = merge(&[("a.xml".into(), A.into()), ("b.xml".into(), B.into())]).unwrap();
        assert_eq!(
            t,
            Totals {
                tests: 4,
                failures: 1,
                errors: 1,
                skipped: 1,
                time: 3.75,
                suites: 2
            }
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        assert_eq!(root.attribute("tests"), Some("4"));
        assert_eq!(root.attribute("failures"), Some("1"));
        assert_eq!(root.attribute("errors"), Some("1"));
        assert_eq!(root.attribute("time"), Some("3.750"));
        let suites: Vec<&str> = root
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.attribute("name").unwrap())
            .collect();
        assert_eq!(suites, ["a", "b"]);
        // Content is copied unchanged, entities included.
        assert!(xml.contains("cargo test &amp; more"), "{xml}");
        assert!(xml.contains("out &lt;1&gt;"), "{xml}");
        assert!(xml.contains(r#"<property name="runner_outcome" value="api_error"/>"#));
    }

    #[test]
    fn rejects_non_junit_and_broken_xml() {
        let e = merge(&[("x.xml".into(), "<html><body/></html>".into())]).unwrap_err();
        assert!(
            e.to_string()
                .contains("no <testsuites> or <testsuite> element"),
            "{e}"
        );
        // An empty report (a shard without tasks) merges as nothing.
        let empty = r#"<?xml version="1.0"?><testsuites name="runner" tests="0"></testsuites>"#;
        let (_, t) = merge(&[("e.xml".into(), empty.into()), ("b.xml".into(), B.into())]).unwrap();
        assert_eq!((t.suites, t.tests), (1, 2));
        let e = merge(&[("y.xml".into(), "<testsuites><testsuite name='a'>".into())])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("y.xml: not a well-formed JUnit XML file"),
            "{e}"
        );
    }
}
