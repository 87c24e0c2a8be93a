//! A run of a comparison whose document says it is invalid (its `validity` block):
//! which side it is on, its file and its reasons, and the one line that says so,
//! which `compare` refuses with (without `--force`) and marks every output with
//! (with it). Pure. Made by `front::compare` from the documents' blocks
//! (`validity::doc::from_document`); printed by `output::compare` and the JUnit cases
//! of `front::compare`.

use crate::model::validity::Validity;

/// The side of a comparison a run is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The base runs.
    Base,
    /// The new runs.
    New,
}

impl Side {
    /// Its name in lines and JSON.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::New => "new",
        }
    }
}

/// A compared run that is not valid.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Invalid {
    /// Its side.
    pub(crate) side: Side,
    /// Its file, as named on the command line.
    pub(crate) file: String,
    /// Its document's judgement (at least one reason).
    pub(crate) validity: Validity,
}

impl Invalid {
    /// The run of `file` on `side` when its judgement says it is invalid; None when
    /// it is valid or was not judged (a document without the block).
    pub(crate) fn of(side: Side, file: &str, validity: Option<&Validity>) -> Option<Invalid> {
        let v = validity.filter(|v| !v.valid())?;
        Some(Invalid {
            side,
            file: file.to_string(),
            validity: v.clone(),
        })
    }

    /// `engine_cpu, interrupted`: its causes, each once.
    pub(crate) fn causes(&self) -> String {
        let mut keys: Vec<&str> = self
            .validity
            .reasons
            .iter()
            .map(|r| r.cause.key())
            .collect();
        keys.dedup();
        keys.join(", ")
    }

    /// The line that says it: `base a.json is invalid (interrupted): interrupted
    /// (SIGINT or SIGTERM) after 3.0 s: …`, each reason's text after its part's name
    /// in a merged document, the reasons separated by `; `.
    pub(crate) fn text(&self) -> String {
        let reasons: Vec<String> = self
            .validity
            .reasons
            .iter()
            .map(|r| match &r.part {
                Some(p) => format!("{p}: {}", r.text),
                None => r.text.clone(),
            })
            .collect();
        format!(
            "{} {} is invalid ({}): {}",
            self.side.key(),
            self.file,
            self.causes(),
            reasons.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::validity::{Cause, Reason};

    fn reason(cause: Cause, part: Option<&str>, text: &str) -> Reason {
        Reason {
            cause,
            part: part.map(String::from),
            text: text.into(),
            measured: Vec::new(),
        }
    }

    #[test]
    fn the_line_names_side_file_causes_and_reasons() {
        assert_eq!(Invalid::of(Side::Base, "a.json", None), None);
        let valid = Validity::default();
        assert_eq!(Invalid::of(Side::Base, "a.json", Some(&valid)), None);
        let v = Validity {
            reasons: vec![
                reason(
                    Cause::EngineCpu,
                    None,
                    "an engine thread used 97 % of a core",
                ),
                reason(Cause::EngineCpu, None, "a CPU quota throttled the process"),
                reason(
                    Cause::Interrupted,
                    Some("partition 2/2 (b.json)"),
                    "interrupted",
                ),
            ],
            measured: Vec::new(),
        };
        let i = Invalid::of(Side::New, "m.json", Some(&v)).expect("invalid");
        assert_eq!(i.causes(), "engine_cpu, interrupted");
        assert_eq!(
            i.text(),
            "new m.json is invalid (engine_cpu, interrupted): an engine thread used 97 % of a \
             core; a CPU quota throttled the process; partition 2/2 (b.json): interrupted"
        );
    }
}
