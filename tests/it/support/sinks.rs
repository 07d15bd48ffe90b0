//! Helpers for the output-sink tests: a shared in-memory writer, a sink driver and a
//! deterministic uuid source.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use runner::events::{RunEvent, Sink};
use runner::report::SharedOut;
use serde_json::Value;

/// A `Write` whose bytes can be read after the sink is done.
#[derive(Clone, Default)]
pub struct Buf(pub Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Buf {
    pub fn shared(&self) -> SharedOut {
        runner::report::shared_out(self.clone())
    }
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
    pub fn lines(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub fn feed(sink: &mut dyn Sink, events: &[RunEvent]) {
    for e in events {
        sink.emit(e).unwrap();
    }
}

/// A counter-based uuid source: "gen-1", "gen-2", ...
pub fn counter(prefix: &'static str) -> impl FnMut() -> String + Send + 'static {
    let mut n = 0;
    move || {
        n += 1;
        format!("{prefix}-{n}")
    }
}
