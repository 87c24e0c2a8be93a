//! The table of figures: every figure rshperf reports, declared once, and generated
//! into every format — the derived members of the JSON document (`model::report`),
//! the CSV columns and their decimals (`output::csv`), the `--fail-on` names, units,
//! aliases and value display (`model::threshold`, `output::threshold`), the timeline
//! columns (`output::timeline`), the compare rows (`model::compare`) and the HTML
//! chart labels (`output::html`). The Prometheus families are declared beside it
//! (`family`), each naming the figure it exports.
//!
//! Owns the vocabulary (`Unit`, `Val`, the template key sets `Keys` with `QUANTILES`),
//! the declarations' shape (`Figure`, built with `Figure::new` and its chained
//! methods), their expansion into concrete figures (`Spec`) and the lookups by name.
//! The declarations are in three tables, one per scope, each with the values a
//! figure is computed from: `run` (a run's figures, the document's top-level members;
//! its optional members `sessions`, `http2`, `http3`, `call_rate` in `optional`),
//! `server` (one element of `servers`), `second` (one element of `timeline`, a row of
//! `--timeline`). `compare` holds how a figure is compared, `family` the Prometheus
//! families. Computes only through the declared `value` functions; formats no text.
//!
//! # Adding a figure
//!
//! One entry in the table of its scope, at its place in the document (members are
//! only ever appended to an object, as CSV columns only ever get appended), with its
//! JSON path, unit, one-line description and how it is computed; chained methods say
//! where else it appears (`.listed()`: a CSV column and a `--fail-on` name;
//! `.fail_on()`; `.alias(…)`; `.html(label)`; `.compare(…)`; `.decimals(n)`):
//!
//! ```text
//! // optional.rs, last in call_rate() (a new counter PoolStats::abandoned):
//! f("abandoned", Unit::Count, "calls given up before they were sent",
//!     |r, _| int(r.stats.pool.abandoned)),
//! // run.rs, a new member of every run, before `sessions`, each figure a CSV column
//! // and a --fail-on name (the member's own name is the entry's path prefix):
//! f("validity.rate_held", Unit::Flag, "the arrival rate was held", |r, _| …)
//!     .listed().alias("rate_held"),
//! // run.rs, a member only some runs have: its figures in the JSON when it applies:
//! t.extend(group("streams", |r| r.stats.streams.opened > 0, vec![f(…), …]));
//! // second.rs, last: a timeline column, charted in the HTML page:
//! f("target", Unit::Rate("arrivals/s"), "arrivals asked for in this second",
//!     |s, _| real(…)).html("target arrivals/s"),
//! ```
//!
//! A `--fail-on` figure also gets its row in docs/json.md §2.8 (the test
//! `the_documentation_lists_every_figure_with_its_unit_and_meaning` prints the rows
//! the table wants), a timeline column its row in §5.1.
//!
//! A family repeated over a key set is one templated entry: `{kind}` (the error
//! counters, `ErrorKind`), `{class}` (status classes 1xx–5xx), `{hist}` (the latency
//! histograms, `Histograms::named`), `{q}` (`QUANTILES`) in the path, the description,
//! the aliases and the labels; the value function gets the key's index in `At`
//! (`|r, at| int(r.s.errors[at.kind])`). Consecutive entries that share a templated
//! member (`percentiles.{hist}.count`, `percentiles.{hist}.{q}`,
//! `percentiles.{hist}.max`) expand key by key, so each histogram's object holds its
//! members in table order. A new histogram in `Histograms::named` gets its
//! `percentiles` figures and their aliases from the existing entries. A new key set is
//! a `Keys` variant and a field of `At`.
//!
//! A compare row is `.compare(Compare { … })` on the figure it compares (its label,
//! the direction that is better, whom it is about (the verdict covers the server's),
//! how it is pooled and tested (`Method`), its rank in compare's table, gate
//! synonyms); a new way of pooling is a `Method` variant, its side's data in
//! `model::compare::sides` and its arm in `model::compare::row`. A Prometheus family is a `Family` in `family.rs`
//! naming the JSON leaf it exports and which runs serve it (`Served`), listed in
//! `FAMILIES`, plus its sample in `engine::metrics::text` (a live value, from the
//! engine's snapshot). The tests
//! (`tests.rs`, and `engine::metrics::text` for the samples) check that every name,
//! column, row and family maps to a JSON leaf of a fully populated report
//! (`every_field_set`, which must set any new raw counter), that no name is taken
//! twice, and `docs/json.md` against the table.

pub(crate) mod compare;
pub(crate) mod family;
mod optional;
pub(crate) mod run;
pub(crate) mod second;
pub(crate) mod server;

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::model::stats::{ErrorKind, Histograms};

pub(crate) use crate::model::stats::quantile::{quantile_key, QUANTILES};

pub(crate) use compare::{About, Aspect, Better, Compare, Method};

/// What a figure measures: its kind and, where it has one, its unit. Decides the
/// JSON type of its value, its CSV decimals, the units `--fail-on` takes for it and
/// how a breach shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// A number of events (an integer).
    Count,
    /// Bytes (an integer: a total, or per reply truncated).
    Bytes,
    /// A ratio of counts (replies per connection); 3 decimals.
    Ratio,
    /// Per second; the label says of what (`conn/s`); 1 decimal.
    Rate(&'static str),
    /// A duration in milliseconds; 3 decimals (1 µs).
    Ms,
    /// A duration in seconds; 6 decimals (1 µs).
    S,
    /// A percentage; 1 decimal.
    Percent,
    /// Yes or no (`true`/`false`; 1 or 0 for `--fail-on`).
    Flag,
    /// A name (text).
    Name,
    /// A list of counts (a JSON array).
    Counts,
    /// One object per element of a scope (`servers`, `timeline`: a JSON array).
    Rows,
}

impl Unit {
    /// The unit as a table or the docs show it (`ms`, `conn/s`, `count`).
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::Bytes => "B",
            Unit::Ratio => "ratio",
            Unit::Rate(per) => per,
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::Percent => "%",
            Unit::Flag => "0 or 1",
            Unit::Name => "text",
            Unit::Counts => "counts",
            Unit::Rows => "objects",
        }
    }

    /// Decimals of a CSV cell: the figure's resolution (integers are written whole).
    fn decimals(self) -> u8 {
        match self {
            Unit::Ms | Unit::Ratio => 3,
            Unit::S => 6,
            Unit::Rate(_) | Unit::Percent => 1,
            _ => 0,
        }
    }
}

/// A figure's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    /// An integer (counts, bytes).
    Int(u64),
    /// A real number; JSON `null` when not finite.
    Real(f64),
    /// Yes or no.
    Flag(bool),
    /// A name.
    Text(String),
    /// JSON as it is (a list of counts, the objects of a nested scope).
    Json(Value),
}

impl Val {
    /// The value as a number (`--fail-on`): flags 0 or 1; None when not finite or not
    /// a number.
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Val::Int(n) => Some(*n as f64),
            Val::Real(x) => x.is_finite().then_some(*x),
            Val::Flag(b) => Some(f64::from(u8::from(*b))),
            Val::Text(_) | Val::Json(_) => None,
        }
    }

    /// The value as JSON.
    pub(crate) fn json(&self) -> Value {
        match self {
            Val::Int(n) => Value::from(*n),
            Val::Real(x) => Value::from(*x),
            Val::Flag(b) => Value::Bool(*b),
            Val::Text(s) => Value::String(s.clone()),
            Val::Json(v) => v.clone(),
        }
    }
}

/// An integer value.
pub(crate) fn int(n: u64) -> Val {
    Val::Int(n)
}

/// A real value.
pub(crate) fn real(x: f64) -> Val {
    Val::Real(x)
}

/// The keys of a templated figure: the index of each key set's key (0 where the
/// figure has no such placeholder).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct At {
    /// `{kind}`: `ErrorKind::index`.
    pub(crate) kind: usize,
    /// `{class}`: 0 for 1xx … 4 for 5xx.
    pub(crate) class: usize,
    /// `{hist}`: the position in `Histograms::named`.
    pub(crate) hist: usize,
    /// `{q}`: the position in `QUANTILES`.
    pub(crate) q: usize,
}

/// A key set a figure can be repeated over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keys {
    /// `{kind}`: the error counters (`ErrorKind::ALL`; key `client_timo`, label
    /// `client-timo`).
    Kind,
    /// `{class}`: the status classes `1xx` … `5xx`.
    Class,
    /// `{hist}`: the latency histograms (`Histograms::named`).
    Hist,
    /// `{q}`: `QUANTILES` (key `p99_9`, label `p99.9`).
    Q,
}

/// Every key set.
const KEY_SETS: [Keys; 4] = [Keys::Kind, Keys::Class, Keys::Hist, Keys::Q];

impl Keys {
    /// Its placeholder in paths, descriptions and aliases.
    pub(crate) fn placeholder(self) -> &'static str {
        match self {
            Keys::Kind => "{kind}",
            Keys::Class => "{class}",
            Keys::Hist => "{hist}",
            Keys::Q => "{q}",
        }
    }

    /// The keys, in order: (JSON key, label).
    pub(crate) fn keys(self) -> &'static [(String, String)] {
        static KEYS: [OnceLock<Vec<(String, String)>>; 4] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        KEYS[self as usize].get_or_init(|| self.list())
    }

    /// The keys, made.
    fn list(self) -> Vec<(String, String)> {
        match self {
            Keys::Kind => ErrorKind::ALL
                .iter()
                .map(|k| (k.key(), k.name().to_string()))
                .collect(),
            Keys::Class => (1..=5)
                .map(|d| (format!("{d}xx"), format!("{d}xx")))
                .collect(),
            Keys::Hist => hist_names()
                .iter()
                .map(|n| (n.to_string(), n.to_string()))
                .collect(),
            Keys::Q => QUANTILES
                .iter()
                .map(|(_, l)| (quantile_key(l), l.to_string()))
                .collect(),
        }
    }

    /// `at` with this set's index `i`.
    fn set(self, mut at: At, i: usize) -> At {
        match self {
            Keys::Kind => at.kind = i,
            Keys::Class => at.class = i,
            Keys::Hist => at.hist = i,
            Keys::Q => at.q = i,
        }
        at
    }
}

/// The names of the latency histograms, in `Histograms::named` order.
pub(crate) fn hist_names() -> &'static [&'static str] {
    &Histograms::NAMES
}

/// The scope of a table: what its figures are computed from.
pub(crate) trait Scope: 'static {
    /// How a value is computed: `fn(&Inputs, At) -> Val`.
    type Value: Copy;
    /// Whether a figure is in the JSON: `fn(&Inputs) -> bool`.
    type When: Copy;
}

/// A `--fail-on` alias of a figure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Alias {
    /// The alias (templated; `_` for `-` and `.`).
    pub(crate) name: &'static str,
    /// Only for the keys where this holds.
    pub(crate) only: Option<fn(At) -> bool>,
    /// `(count, other)`: use figure `other` when figure `count` is 0.
    pub(crate) unless_none: Option<(&'static str, &'static str)>,
}

/// One declaration of the table: a figure, or a templated family of figures.
pub(crate) struct Figure<S: Scope> {
    /// The JSON path below the scope, `.`-separated, with placeholders.
    pub(crate) path: String,
    /// What it measures.
    pub(crate) unit: Unit,
    /// One line saying what it is (placeholders read as the keys' labels).
    pub(crate) about: &'static str,
    /// How it is computed.
    pub(crate) value: S::Value,
    /// In the JSON only when this holds (always without).
    pub(crate) when: Option<S::When>,
    /// CSV decimals instead of the unit's.
    pub(crate) decimals: Option<u8>,
    /// A column of `--csv`.
    pub(crate) csv: bool,
    /// A `--fail-on` metric.
    pub(crate) fail_on: bool,
    /// Its `--fail-on` aliases.
    pub(crate) aliases: Vec<Alias>,
    /// Its compare row.
    pub(crate) compare: Option<Compare>,
    /// Its label in the HTML charts (templated).
    pub(crate) html: Option<&'static str>,
}

impl<S: Scope> Figure<S> {
    /// A figure at `path` of `unit`, described by `about`, computed by `value`; in the
    /// JSON only.
    pub(crate) fn new(path: &str, unit: Unit, about: &'static str, value: S::Value) -> Self {
        Figure {
            path: path.to_string(),
            unit,
            about,
            value,
            when: None,
            decimals: None,
            csv: false,
            fail_on: false,
            aliases: Vec::new(),
            compare: None,
            html: None,
        }
    }

    /// Also a CSV column and a `--fail-on` metric (the figures every run has).
    pub(crate) fn listed(mut self) -> Self {
        self.csv = true;
        self.fail_on = true;
        self
    }

    /// Also a `--fail-on` metric.
    pub(crate) fn fail_on(mut self) -> Self {
        self.fail_on = true;
        self
    }

    /// CSV decimals `d` instead of the unit's.
    pub(crate) fn decimals(mut self, d: u8) -> Self {
        self.decimals = Some(d);
        self
    }

    /// A `--fail-on` alias.
    pub(crate) fn alias(mut self, name: &'static str) -> Self {
        self.aliases.push(Alias {
            name,
            only: None,
            unless_none: None,
        });
        self
    }

    /// A `--fail-on` alias for the keys where `only` holds.
    pub(crate) fn alias_for(mut self, name: &'static str, only: fn(At) -> bool) -> Self {
        self.aliases.push(Alias {
            name,
            only: Some(only),
            unless_none: None,
        });
        self
    }

    /// A `--fail-on` alias that names figure `other` instead when figure `count` is 0.
    pub(crate) fn alias_unless(
        mut self,
        name: &'static str,
        count: &'static str,
        other: &'static str,
    ) -> Self {
        self.aliases.push(Alias {
            name,
            only: None,
            unless_none: Some((count, other)),
        });
        self
    }

    /// Its row in `rshperf compare`.
    pub(crate) fn compare(mut self, c: Compare) -> Self {
        self.compare = Some(c);
        self
    }

    /// Its label in the HTML charts.
    pub(crate) fn html(mut self, label: &'static str) -> Self {
        self.html = Some(label);
        self
    }

    /// In the JSON only when `when` holds.
    pub(crate) fn when(mut self, when: S::When) -> Self {
        self.when = Some(when);
        self
    }

    /// Under member `prefix`.
    pub(crate) fn under(mut self, prefix: &str) -> Self {
        self.path = format!("{prefix}.{}", self.path);
        self
    }
}

/// One concrete figure: a declaration with its keys filled in.
pub(crate) struct Spec<S: Scope> {
    /// Its name: the JSON path with `_` for `.` (`connections_rate`).
    pub(crate) name: String,
    /// Its JSON path below the scope (`connections.rate`).
    pub(crate) path: String,
    /// What it is (read by the tests that check the documentation).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) about: String,
    /// Its keys.
    pub(crate) at: At,
    /// Its `--fail-on` aliases (keys filled in).
    pub(crate) aliases: Vec<(String, Option<(&'static str, &'static str)>)>,
    /// Its HTML label.
    pub(crate) html: Option<String>,
    /// Its compare row's label.
    pub(crate) compare_label: Option<String>,
    /// The declaration.
    pub(crate) figure: &'static Figure<S>,
}

impl<S: Scope> Spec<S> {
    /// What it measures.
    pub(crate) fn unit(&self) -> Unit {
        self.figure.unit
    }

    /// Its CSV decimals.
    pub(crate) fn decimals(&self) -> usize {
        usize::from(self.figure.decimals.unwrap_or(self.figure.unit.decimals()))
    }
}

/// The first placeholder in `text` and its key set.
fn first_placeholder(text: &str) -> Option<(usize, Keys)> {
    KEY_SETS
        .iter()
        .filter_map(|k| text.find(k.placeholder()).map(|at| (at, *k)))
        .min_by_key(|(at, _)| *at)
}

/// A declaration on its way to a `Spec`: path, description, aliases and HTML label
/// with some placeholders filled in.
struct Partial<S: Scope> {
    path: String,
    about: String,
    aliases: Vec<(String, Alias)>,
    html: Option<String>,
    compare_label: Option<String>,
    at: At,
    figure: &'static Figure<S>,
}

impl<S: Scope> Partial<S> {
    fn fill(&self, keys: Keys, i: usize, key: &str, label: &str) -> Partial<S> {
        let p = keys.placeholder();
        Partial {
            path: self.path.replace(p, key),
            about: self.about.replace(p, label),
            aliases: self
                .aliases
                .iter()
                .map(|(n, a)| (n.replace(p, key), *a))
                .collect(),
            html: self.html.as_ref().map(|h| h.replace(p, label)),
            compare_label: self.compare_label.as_ref().map(|c| c.replace(p, label)),
            at: keys.set(self.at, i),
            figure: self.figure,
        }
    }
}

/// Expands `parts` in order: a run of consecutive parts sharing the path up to (and
/// including) the first templated member is expanded key by key.
fn expand<S: Scope>(parts: Vec<Partial<S>>, out: &mut Vec<Spec<S>>) {
    let mut parts = parts.into_iter().peekable();
    while let Some(first) = parts.next() {
        let Some((at, keys)) = first_placeholder(&first.path) else {
            let aliases = first
                .aliases
                .iter()
                .filter(|(_, a)| a.only.is_none_or(|only| only(first.at)))
                .map(|(n, a)| (n.clone(), a.unless_none))
                .collect();
            out.push(Spec {
                name: first.path.replace('.', "_"),
                path: first.path,
                about: first.about,
                at: first.at,
                aliases,
                html: first.html,
                compare_label: first.compare_label,
                figure: first.figure,
            });
            continue;
        };
        let member = first.path[..at + keys.placeholder().len()].to_string();
        let mut group = vec![first];
        while let Some(next) =
            parts.next_if(|p| p.path == member || p.path.starts_with(&format!("{member}.")))
        {
            group.push(next);
        }
        for (i, (key, label)) in keys.keys().iter().enumerate() {
            let filled = group.iter().map(|p| p.fill(keys, i, key, label)).collect();
            expand(filled, out);
        }
    }
}

/// The concrete figures of a table's declarations, in table order.
pub(crate) fn specs<S: Scope>(figures: &'static [Figure<S>]) -> Vec<Spec<S>> {
    let parts = figures
        .iter()
        .map(|f| Partial {
            path: f.path.clone(),
            about: f.about.to_string(),
            aliases: f.aliases.iter().map(|a| (a.name.to_string(), *a)).collect(),
            html: f.html.map(str::to_string),
            compare_label: f.compare.map(|c| c.label.to_string()),
            at: At::default(),
            figure: f,
        })
        .collect();
    let mut out = Vec::new();
    expand(parts, &mut out);
    out
}

/// A table: its declarations and their concrete figures.
pub(crate) struct Table<S: Scope> {
    /// The concrete figures, in table order.
    pub(crate) specs: Vec<Spec<S>>,
}

impl<S: Scope> Table<S> {
    /// The table of `figures` (leaked: a table lives as long as the program).
    pub(crate) fn of(figures: Vec<Figure<S>>) -> Table<S> {
        let declared: &'static [Figure<S>] = Box::leak(figures.into_boxed_slice());
        Table {
            specs: specs(declared),
        }
    }

    /// The position of the figure called `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name)
    }

    /// The figure called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Spec<S>> {
        self.specs.iter().find(|s| s.name == name)
    }
}

/// The JSON object of `members` (JSON path, value), in order: paths with a common
/// prefix nest into one object, as the document's members.
pub(crate) fn object<'a>(members: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    let mut root = Map::new();
    for (path, v) in members {
        insert(&mut root, path, v);
    }
    Value::Object(root)
}

/// Puts `v` at `path` below `map`, making the objects on the way.
fn insert(map: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            map.insert(path.to_string(), v);
        }
        Some((head, rest)) => {
            let child = map
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            // A leaf and an object of one name cannot both be declared (the tests
            // check every path), so `child` is an object.
            if let Value::Object(m) = child {
                insert(m, rest, v);
            }
        }
    }
}
