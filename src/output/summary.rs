//! The classic report's figures, for the outputs: `Summary` and `RateSummary` live in
//! the model layer (`model::summary`), beside the table of figures they feed; re-exported
//! here so the outputs keep their short paths.

pub(crate) use crate::model::summary::Summary;
