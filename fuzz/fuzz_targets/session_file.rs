//! Fuzz target: the `--wsesslog` session-file parser (`rshperf::model::workload::sesslog`).
//!
//! Any bytes either parse into templates (every session has at least one burst, every
//! burst at least one request, think times finite and >= 0) or give one error line
//! naming the file (`NAME:LINE: …` or `NAME: …`). Nothing may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::model::workload::sesslog;

fuzz_target!(|input: &[u8]| {
    match sesslog::parse("fuzz.log", input) {
        Ok(templates) => {
            assert!(!templates.is_empty());
            for t in &templates {
                assert!(!t.bursts.is_empty());
                for b in &t.bursts {
                    assert!(!b.requests.is_empty());
                    if let Some(think) = b.think {
                        assert!(think.is_finite() && think >= 0.0);
                    }
                }
            }
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with("rshperf: fuzz.log"), "{text}");
        }
    }
});
