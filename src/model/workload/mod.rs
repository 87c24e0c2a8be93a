//! Workload generators: when arrivals happen (`rate`, under a rate profile `profile`)
//! and what they request.
//!
//! `Workload` is built once per process from the `Config` (files read, every request
//! rendered into `call::Requests`) and shared read-only by the engines: the kind of
//! workload (request-oriented, `--wsess`, `--wsesslog`, `--wsesspage`) and the URI generator
//! (`--uri`, `--wlog`, `--wset`) as a function of a per-engine call cursor.

pub(crate) mod bodies;
pub(crate) mod closed;
pub(crate) mod error;
pub(crate) mod headers;
pub mod page;
pub(crate) mod rate;
pub mod sesslog;
pub(crate) mod target;
pub(crate) mod uri;

use std::sync::Arc;

use crate::model::call::{CallRef, Requests};
use crate::model::config::{Config, WsetSpec};
use crate::model::profile::TimeChange;
use crate::model::replay::feed::Replay;
use crate::model::workload::closed::ClosedLoop;
use crate::wire::tls::TlsSettings;
use error::WorkloadError;
use rate::{Period, Schedule};

/// One burst of a `--wsesslog` session template.
#[derive(Debug, Clone)]
pub(crate) struct BurstPlan {
    /// Its calls (the first goes alone, the rest once it is answered).
    pub(crate) calls: Vec<CallRef>,
    /// Think time after it (None: the option's default).
    pub(crate) think: Option<f64>,
}

/// What the arrivals are.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// One connection per arrival (`--num-conns`, `--num-calls`, `--burst-length`).
    Request,
    /// `--wsess=N1,N2,X` with `--burst-length`.
    Wsess {
        /// Calls per session.
        calls: u64,
        /// Burst length.
        burst: u64,
        /// Think time, seconds.
        think: f64,
    },
    /// `--wsesslog=N,X,F`: session templates, used round-robin.
    Wsesslog {
        /// Templates: bursts of calls.
        sessions: Vec<Vec<BurstPlan>>,
        /// Default think time, seconds.
        think: f64,
    },
    /// `--wsesspage=N1,N2,X`: each session views `--uri` N2 times, fetching the objects
    /// its replies embed (`page`).
    Wsesspage {
        /// Page views per session.
        pages: u64,
        /// Think time between views, seconds.
        think: f64,
        /// Which absolute URIs name each target (by target index).
        origins: Vec<page::Origin>,
    },
}

/// Where the URIs of calls come from.
#[derive(Debug, Clone)]
enum UriSource {
    /// `--uri`.
    Fixed,
    /// `--wlog`: `Requests::uris` in order, looping or not.
    Wlog { repeat: bool },
    /// One URI per target (`Requests::uris[target]`): ab and lb with several URLs.
    PerTarget,
    /// `--wset`: file numbers per docs/compatibility.md §1.4.3 (closed form of
    /// httperf's running sum).
    Wset {
        files: u64,
        miss_rate: f64,
        first: f64,
        client: u64,
        clients: u64,
    },
}

/// The shared, immutable description of what the engines send.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Every request of the run, renderable by `CallRef`.
    pub(crate) requests: Requests,
    /// Request-oriented or session workload.
    pub(crate) kind: Kind,
    uri: UriSource,
    /// TLS settings (`--ssl`).
    pub(crate) tls: Option<TlsSettings>,
    /// The servers, used round-robin by arrival.
    pub(crate) targets: Vec<target::Target>,
    /// `--myaddr`: source addresses, used round-robin.
    pub(crate) local: Vec<std::net::IpAddr>,
    /// The closed loop a front end chose (ab, lb); None: the one of the run's `Config`
    /// (`closed_loop`).
    pub(crate) closed: Option<ClosedLoop>,
    /// `--body-lines`: the fixed request's bodies, one per call.
    bodies: Option<bodies::BodyLines>,
    /// `--rate-profile`: its Λ and the run's arrivals, counted once.
    pub(crate) profile: Option<Profiled>,
    /// `rshperf replay`: the log, read by each engine as it runs (the schedule of
    /// the `--call-rate` pool instead of `--period`'s, and the request of each call).
    pub(crate) replay: Option<Replay>,
}

/// A rate profile as the engines use it.
#[derive(Debug, Clone)]
pub(crate) struct Profiled {
    /// Λ and its inverse, shared by every engine's schedule.
    pub(crate) change: Arc<TimeChange>,
    /// Arrivals of the whole run (all stripes): those of the schedule before the
    /// profile's end, at most `Config::profile_cap`.
    pub(crate) arrivals: u64,
}

impl Profiled {
    /// The profile of `cfg`, with its arrivals counted.
    fn of(cfg: &Config) -> Option<Profiled> {
        let change = Arc::new(TimeChange::new(cfg.load().rate_profile()?));
        let cap = cfg.profile_cap().unwrap_or(u64::MAX);
        let arrivals = match cfg.load().period() {
            // Arrivals at s = 0, 1, …: every integer below Λ(T).
            Period::Deterministic(_) => {
                let total = change.total();
                if total >= cap as f64 {
                    cap
                } else {
                    (total.ceil() as u64).min(cap)
                }
            }
            // Drawn once (the build bounded how many): the same draws as the engines'.
            period => {
                let mut s =
                    Schedule::new(period, cfg.load().client_id(), 0, 1).profiled(change.clone());
                let mut n = 0;
                while n < cap && s.next_offset().is_some() {
                    n += 1;
                }
                n
            }
        };
        Some(Profiled { change, arrivals })
    }

    /// This stripe's schedule under the profile.
    pub(crate) fn schedule(&self, cfg: &Config, stripe: u32, stripes: u32) -> Schedule {
        Schedule::new(cfg.load().period(), cfg.load().client_id(), stripe, stripes)
            .profiled(self.change.clone())
    }
}

impl Workload {
    /// Reads the files named by `cfg` and renders every request.
    pub fn from_config(cfg: &Config) -> Result<Workload, WorkloadError> {
        let extra = headers::from_config(cfg)?;
        let header_file = extra.lines.clone();
        let mut requests = match extra.body {
            Some((body, length)) => {
                Requests::with_body(cfg, &[&extra.lines[..], &length[..]].concat(), body)
            }
            None => Requests::new(cfg, &extra.lines),
        };
        let bodies = bodies::BodyLines::from_config(cfg, &extra.lines, &mut requests)?;
        let mut uri = UriSource::Fixed;
        if let Some(spec) = cfg.request().wlog() {
            // Read once without looping: every entry, in order.
            let once = crate::model::config::WlogSpec::new(false, spec.file());
            let mut log = uri::Wlog::from_file(&once)?;
            while let Some(u) = log.next() {
                requests.uris.push(u.to_string());
            }
            uri = UriSource::Wlog {
                repeat: spec.repeat(),
            };
        } else if let Some(spec) = cfg.request().wset() {
            requests.uris = wset_uris(cfg.target().uri(), spec);
            uri = UriSource::Wset {
                files: spec.files().max(1),
                miss_rate: spec.miss_rate(),
                first: uri::DRAND48_FIRST,
                client: u64::from(cfg.load().client_id()),
                clients: u64::from(cfg.load().num_clients().max(1)),
            };
        }
        let mut kind = if let Some(spec) = cfg.sessions().wsesslog() {
            let templates = sesslog::parse_file(spec.file())?;
            let mut sessions = Vec::with_capacity(templates.len());
            for t in &templates {
                let mut bursts = Vec::with_capacity(t.bursts.len());
                for b in &t.bursts {
                    let calls = b
                        .requests
                        .iter()
                        .map(|r| {
                            requests.add_template(cfg, &header_file, &r.method, &r.uri, &r.body)
                        })
                        .collect();
                    bursts.push(BurstPlan {
                        calls,
                        think: b.think,
                    });
                }
                sessions.push(bursts);
            }
            Kind::Wsesslog {
                sessions,
                think: spec.think(),
            }
        } else if let Some(spec) = cfg.sessions().wsesspage() {
            page::check_page_uri(cfg.target().uri())?;
            Kind::Wsesspage {
                pages: spec.pages(),
                think: spec.think(),
                origins: Vec::new(),
            }
        } else if let Some(spec) = cfg.sessions().wsess() {
            Kind::Wsess {
                calls: spec.calls(),
                burst: cfg.load().burst_length().max(1),
                think: spec.think(),
            }
        } else {
            Kind::Request
        };
        let tls = TlsSettings::from_options(cfg.tls())?;
        let targets = target::from_config(cfg)?;
        if let Kind::Wsesspage { origins, .. } = &mut kind {
            *origins = page::origins(cfg, &targets);
        }
        let local = cfg.target().local_addrs().to_vec();
        Ok(Workload {
            requests,
            kind,
            uri,
            tls,
            targets,
            local,
            closed: None,
            bodies,
            profile: Profiled::of(cfg),
            replay: None,
        })
    }

    /// Makes the calls of the run those of a replay: each engine reads `replay`'s
    /// log as it runs, and each call requests its entry (`engine::event_loop::replay`
    /// renders it) at its offset.
    pub(crate) fn set_replay(&mut self, replay: Replay) {
        self.replay = Some(replay);
    }

    /// Gives target i its own URI `uris[i]` (ab and lb with several URLs).
    pub(crate) fn set_target_uris(&mut self, uris: Vec<String>) {
        self.requests.uris = uris;
        self.uri = UriSource::PerTarget;
    }

    /// Whether arrivals are sessions.
    pub(crate) fn is_session(&self) -> bool {
        !matches!(self.kind, Kind::Request)
    }

    /// Number of arrivals of the whole run (all stripes): sessions or connections.
    pub(crate) fn arrivals(&self, cfg: &Config) -> u64 {
        if let Some(r) = &self.replay {
            return r.arrivals();
        }
        match (&self.closed, &self.profile) {
            (Some(c), _) => c.units(),
            (None, Some(p)) => p.arrivals,
            (None, None) => units_of(cfg),
        }
    }

    /// The closed loop of a run of this workload at `cfg`: the front end's, else
    /// `--concurrency` or httperf's sequential mode; None for the open loop.
    pub(crate) fn closed_loop(&self, cfg: &Config) -> Option<ClosedLoop> {
        self.closed
            .clone()
            .or_else(|| ClosedLoop::from_config(cfg, units_of(cfg)))
    }

    /// The request of call number `cursor` on a connection to `target`; None when a
    /// non-looping `--wlog` is exhausted.
    pub(crate) fn call_ref_to(&self, cursor: u64, target: usize) -> Option<CallRef> {
        match &self.uri {
            UriSource::PerTarget => u32::try_from(target).ok().map(CallRef::Uri),
            _ => self.call_ref(cursor),
        }
    }

    /// The request of call number `cursor` of an engine; None when a non-looping
    /// `--wlog` is exhausted.
    pub(crate) fn call_ref(&self, cursor: u64) -> Option<CallRef> {
        match &self.uri {
            UriSource::Fixed => Some(
                self.bodies
                    .as_ref()
                    .map_or(CallRef::Fixed, |b| b.call_ref(cursor)),
            ),
            UriSource::PerTarget => Some(CallRef::Fixed),
            UriSource::Wlog { repeat } => {
                let n = self.requests.uris.len() as u64;
                if n == 0 || (!repeat && cursor >= n) {
                    return None;
                }
                u32::try_from(cursor % n).ok().map(CallRef::Uri)
            }
            UriSource::Wset {
                files,
                miss_rate,
                first,
                client,
                clients,
            } => {
                // Call k adds the miss rate k+1 times; every whole unit moves to the
                // next file of this client's stride.
                let misses = (first + (cursor + 1) as f64 * miss_rate).floor() as u64;
                let file = (client + clients.wrapping_mul(misses)) % files;
                u32::try_from(file).ok().map(CallRef::Uri)
            }
        }
    }
}

/// Sessions (`--wsess`, `--wsesslog`, `--wsesspage`) or connections (`--num-conns`)
/// of `cfg`; unbounded (`u64::MAX`) for `--runtime` without `--num-conns`, which
/// `--runtime` ends (`Config::until_runtime`). With `--call-rate` the arrivals are
/// calls: `--num-conns` × `--num-calls`, or unbounded until `--runtime`.
fn units_of(cfg: &Config) -> u64 {
    if cfg.load().call_rate() > 0.0 {
        return if cfg.load().calls_until_runtime() {
            u64::MAX
        } else {
            cfg.load()
                .num_conns()
                .saturating_mul(cfg.load().num_calls())
        };
    }
    match (
        &cfg.sessions().wsess(),
        &cfg.sessions().wsesslog(),
        &cfg.sessions().wsesspage(),
    ) {
        (Some(w), _, _) => w.sessions(),
        (_, Some(w), _) => w.sessions(),
        (_, _, Some(w)) => w.sessions(),
        _ if cfg.load().until_runtime() => u64::MAX,
        _ => cfg.load().num_conns(),
    }
}

/// The URI of every `--wset` file, indexed by file number (`uri::Wset` naming).
fn wset_uris(prefix: &str, spec: &WsetSpec) -> Vec<String> {
    let mut names = uri::Wset::new(prefix, spec);
    (0..spec.files().max(1))
        .map(|f| names.uri_of(f).to_string())
        .collect()
}

/// Arrivals engine `stripe` of `stripes` makes: its share of `arrivals`, or, for
/// a replay, the calls of the log its stripe takes.
pub(crate) fn stripe_arrivals(work: &Workload, cfg: &Config, stripe: u32, stripes: u32) -> u64 {
    match &work.replay {
        Some(r) => r.stripe_arrivals(stripe, stripes),
        None => stripe_share(work.arrivals(cfg), stripe, stripes),
    }
}

/// Connections engine `stripe` of `stripes` makes out of `total`: arrivals
/// k < total with k mod stripes == stripe.
pub(crate) fn stripe_share(total: u64, stripe: u32, stripes: u32) -> u64 {
    let (s, n) = (u64::from(stripe), u64::from(stripes.max(1)));
    if total > s {
        (total - s).div_ceil(n)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The profiled run's arrivals: the closed form for deterministic spacing and
    /// the drawn count for the others equal the schedule's own offsets (what the
    /// engines issue), and the stripes of any split add up to them.
    #[test]
    fn a_profiles_arrivals_are_counted_exactly_and_split_exactly() {
        use crate::model::config::parse_rate_profile;
        /// (profile, spacing, cap, arrivals when they are known exactly, else a range)
        type Case = (&'static str, Option<Period>, Option<u64>, (u64, u64));
        let cases: [Case; 6] = [
            ("ramp:100..300/2s,hold:200/1s", None, None, (600, 600)),
            ("ramp:0..10/1s", None, None, (5, 5)),
            ("hold:0.5/3s", None, None, (2, 2)),
            // Λ = 100 + 60, up to the rounding of cos(4π).
            ("sine:50~50/1s/2s,step:10..30+10/1s", None, None, (160, 161)),
            ("hold:100/1s", None, Some(40), (40, 40)),
            (
                "ramp:100..300/1s",
                Some(Period::Exponential(1.0)),
                None,
                (150, 250),
            ),
        ];
        for (text, period, cap, want) in cases {
            let cfg = Config::local(|b| {
                b.rate_profile(parse_rate_profile(text).expect("valid"));
                if let Some(p) = period.clone() {
                    b.period(p);
                }
                if let Some(n) = cap {
                    b.num_conns(n);
                }
            });
            let p = Profiled::of(&cfg).expect("profiled");
            let mut all = p.schedule(&cfg, 0, 1);
            let drawn = std::iter::from_fn(|| all.next_offset()).count() as u64;
            assert_eq!(p.arrivals, drawn.min(cap.unwrap_or(u64::MAX)), "{text}");
            assert!(
                (want.0..=want.1).contains(&p.arrivals),
                "{text}: {}",
                p.arrivals
            );
            for stripes in [2, 3, 7] {
                let shares: u64 = (0..stripes)
                    .map(|j| stripe_share(p.arrivals, j, stripes))
                    .sum();
                assert_eq!(shares, p.arrivals, "{text} over {stripes}");
            }
        }
    }

    #[test]
    fn wset_names_and_sequence() {
        let spec = WsetSpec::new(1000, 0.5);
        let uris = wset_uris("/wset/", &spec);
        assert_eq!(uris[1], "/wset/0/0/1.html");
        assert_eq!(wset_uris("/", &spec)[1], "/0/0/1.html");
        assert_eq!(wset_uris("/wset", &spec)[999], "/wset/9/9/9.html");
        let w = Workload {
            requests: Requests::new(&Config::local(|_| {}), b""),
            kind: Kind::Request,
            tls: None,
            targets: Vec::new(),
            local: Vec::new(),
            closed: None,
            bodies: None,
            profile: None,
            replay: None,
            uri: UriSource::Wset {
                files: 1000,
                miss_rate: 0.5,
                first: uri::DRAND48_FIRST,
                client: 0,
                clients: 1,
            },
        };
        // ~0 + 0.5 → 0.5 (file 0), 1.0 (1), 1.5 (1), 2.0 (2), 2.5 (2) … as httperf.
        let files: Vec<CallRef> = (0..5).filter_map(|k| w.call_ref(k)).collect();
        assert_eq!(files, [0, 1, 1, 2, 2].map(CallRef::Uri));
    }

    #[test]
    fn wset_closed_form_equals_the_running_generator() {
        // The engine computes call k's file directly (so stripes and partitions agree);
        // it must be httperf's running sum, as `uri::Wset::next` implements it.
        let cfg = Config::local(|_| {});
        for (files, miss_rate, client, clients) in [
            (1000, 0.5, 0, 1),
            (10, 1.0, 0, 1),
            (100, 0.25, 1, 3),
            (7, 0.7, 2, 4),
        ] {
            let spec = WsetSpec::new(files, miss_rate);
            let mut running = uri::Walk::new("/w", &spec, client, clients);
            let mut w = Workload {
                requests: Requests::new(&cfg, b""),
                kind: Kind::Request,
                tls: None,
                targets: Vec::new(),
                local: Vec::new(),
                closed: None,
                bodies: None,
                profile: None,
                replay: None,
                uri: UriSource::Wset {
                    files,
                    miss_rate,
                    first: uri::DRAND48_FIRST,
                    client: u64::from(client),
                    clients: u64::from(clients),
                },
            };
            w.requests.uris = wset_uris("/w", &spec);
            for k in 0..200 {
                let Some(CallRef::Uri(i)) = w.call_ref(k) else {
                    panic!("a file")
                };
                assert_eq!(
                    w.requests.uris[i as usize],
                    running.next(),
                    "call {k} of {files},{miss_rate}"
                );
            }
        }
    }

    #[test]
    fn stripes_partition_the_connections() {
        for total in [0u64, 1, 2, 7, 12000, 12001] {
            for n in 1..=5u32 {
                let sum: u64 = (0..n).map(|j| stripe_share(total, j, n)).sum();
                assert_eq!(sum, total, "total {total} stripes {n}");
            }
        }
        assert_eq!(stripe_share(7, 0, 3), 3);
        assert_eq!(stripe_share(7, 1, 3), 2);
        assert_eq!(stripe_share(7, 2, 3), 2);
        assert_eq!(stripe_share(1, 3, 4), 0);
    }
}
