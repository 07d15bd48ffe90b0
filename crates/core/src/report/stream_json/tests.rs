//! The exact bytes of every frame variant, pinned: a change to a frame's keys, their order or
//! their values shows here as a snapshot diff.

use std::sync::Arc;

use crate::contract::fixtures;
use crate::redact::Redactor;
use crate::report::shared_out;

use super::StreamJsonSink;

#[test]
fn every_frame_keeps_its_bytes() {
    let mut sink = StreamJsonSink::new(shared_out(std::io::sink()), Arc::new(Redactor::default()))
        .with_uuid_source(fixtures::counter());
    for (name, event) in fixtures::events() {
        let line = sink.frame(&event).map_or_else(
            || "(no frame)".to_string(),
            |f| serde_json::to_string(&f).unwrap(),
        );
        insta::assert_snapshot!(name, line);
    }
}

#[test]
fn the_sink_redacts_every_frame() {
    use std::io::Write;
    use std::sync::Mutex;

    use crate::events::Sink;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let written = |redactor: Redactor| {
        let buf = Buf::default();
        let mut sink = StreamJsonSink::new(shared_out(buf.clone()), Arc::new(redactor))
            .with_uuid_source(fixtures::counter());
        for (_, e) in &fixtures::events() {
            sink.emit(e).unwrap();
        }
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    };
    let plain = written(Redactor::default());
    // In tool inputs, answers and the result message.
    let redacted = written(Redactor::new(vec![("DOC".into(), "README".into())]));
    assert!(plain.matches("README").count() > 3);
    assert_eq!(redacted, plain.replace("README", "[REDACTED:DOC]"));
}
