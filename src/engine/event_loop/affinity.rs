//! `rshperf replay --replay-connections per-client|per-request`: which connection a
//! replayed call takes, instead of the `--call-rate` pool's round-robin (`dispatch`).
//!
//! Per client, each client of the log (its address; HAR: its `connection`; a
//! request log: its `conn`) gets a connection of its own, opened when its first
//! call is due, and its calls go out on it one at a time (HTTP/1.1 keep-alive): a
//! call due while the client's connection is opening or busy waits for it. Per
//! request, every call is a client of its own: a new connection, closed after its
//! reply (the engine closes it). Connections are slots, at most `cap` of them: a
//! client without a connection takes a free slot, else the least recently used idle
//! connection is closed for it (LRU by the order calls were issued), else it waits,
//! oldest first. A connection the server closed cleanly puts its unanswered calls
//! back at the front of its client's queue, and a client with calls waiting gets a
//! new connection before the other waiting clients; one that failed loses its calls
//! and the calls waiting for it. A client with neither a connection nor a call
//! waiting is forgotten, so what is held is the connections and the calls waiting.
//!
//! Pure: the engine half (`pool`) tells it what happened (`call_due`, `set_conn`,
//! `connected`, `replied`, `closed`) and carries out what `next` decides (issue a
//! call, open a slot's connection, close an idle one first). Called by `pool` only.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::dispatch::Waiting;
use crate::model::call::{Call, CallRef};
use crate::wire::table::ConnId;

/// Where a slot's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No connection, no client.
    Free,
    /// Opened for its client, not yet connected.
    Opening,
    /// Connected, no call on it.
    Idle,
    /// A call on it.
    Busy,
    /// Its last reply came, and it is not to be used again (per request, or the
    /// server asked to close): it waits to be closed.
    Draining,
}

/// A connection slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    state: State,
    /// Its client (meaningless when free).
    client: usize,
    /// Its connection, once the engine has it.
    conn: Option<ConnId>,
    /// When it was last used (bound or issued a call), on the `clock`.
    used: u64,
}

/// A client with a connection or calls waiting.
#[derive(Debug, Default)]
struct Client {
    /// Its address (None per request, or free).
    name: Option<Box<str>>,
    /// Its connection's slot.
    slot: Option<usize>,
    /// Its calls due and not on a connection, oldest first.
    waiting: VecDeque<Waiting>,
    /// Its connection was closed cleanly with calls waiting: the next is a reconnect.
    reopen: bool,
}

/// What the engine does next (`Affinity::next`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Action {
    /// Issue `call` on `conn` (`late`: its lateness to count, None if counted when it
    /// was first taken).
    Issue {
        /// The client's idle connection.
        conn: ConnId,
        /// The call.
        call: Waiting,
        /// Its lateness from its scheduled time.
        late: Option<Duration>,
    },
    /// Open a connection for slot `slot` (`reopen`: its client's last one was closed
    /// by the server with calls waiting).
    Open {
        /// The slot.
        slot: usize,
        /// Whether it replaces a connection the server closed.
        reopen: bool,
    },
    /// Close the idle connection `old` (the least recently used), then open one for
    /// slot `slot`, which was its slot.
    Evict {
        /// The slot.
        slot: usize,
        /// The connection to close first.
        old: ConnId,
        /// As for `Open`.
        reopen: bool,
    },
}

/// One engine's connections per client or per request.
#[derive(Debug)]
pub(super) struct Affinity {
    per_request: bool,
    slots: Vec<Slot>,
    /// Free slots (the last is taken first).
    free_slots: Vec<usize>,
    clients: Vec<Client>,
    free_clients: Vec<usize>,
    /// Clients by address.
    names: HashMap<Box<str>, usize>,
    /// Idle slots by last use: the first is the least recently used.
    idle: BTreeSet<(u64, usize)>,
    /// Idle slots whose client has calls waiting (may hold stale entries).
    ready: VecDeque<usize>,
    /// Clients with calls waiting and no connection, oldest first (may hold stale
    /// entries).
    unbound: VecDeque<usize>,
    /// Calls waiting, all clients.
    waiting: usize,
    /// Counts uses, for the LRU order.
    clock: u64,
    /// The engine is carrying out `next`'s actions: a close or a connect inside one
    /// does not start another round.
    pub(super) dispatching: bool,
}

impl Affinity {
    /// Per client (`per_request` false) or per request, with at most `cap`
    /// connections (at least one).
    pub(super) fn new(per_request: bool, cap: usize) -> Affinity {
        let cap = cap.max(1);
        Affinity {
            per_request,
            slots: vec![
                Slot {
                    state: State::Free,
                    client: 0,
                    conn: None,
                    used: 0,
                };
                cap
            ],
            free_slots: (0..cap).rev().collect(),
            clients: Vec::new(),
            free_clients: Vec::new(),
            names: HashMap::new(),
            idle: BTreeSet::new(),
            ready: VecDeque::new(),
            unbound: VecDeque::new(),
            waiting: 0,
            clock: 0,
            dispatching: false,
        }
    }

    /// The connections open or opening now.
    pub(super) fn open(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    /// Whether each connection carries one call.
    pub(super) fn per_request(&self) -> bool {
        self.per_request
    }

    /// Calls waiting for a connection.
    pub(super) fn waiting(&self) -> usize {
        self.waiting
    }

    /// Whether `next` may have something to do.
    pub(super) fn has_work(&self) -> bool {
        !self.ready.is_empty() || !self.unbound.is_empty()
    }

    /// A call of `client` (None: a client of its own) scheduled at `due` is due: it
    /// goes to the back of its client's queue.
    pub(super) fn call_due(&mut self, client: Option<&str>, due: Instant, what: CallRef) {
        let c = match client.filter(|_| !self.per_request) {
            Some(name) => match self.names.get(name) {
                Some(&c) => c,
                None => {
                    let c = self.new_client(Some(name.into()));
                    self.names.insert(name.into(), c);
                    c
                }
            },
            None => self.new_client(None),
        };
        let call = Waiting {
            due,
            what,
            again: false,
        };
        let cl = &mut self.clients[c];
        cl.waiting.push_back(call);
        self.waiting += 1;
        if cl.waiting.len() > 1 {
            // Already ready or unbound, or waiting for its busy connection.
            return;
        }
        match cl.slot {
            Some(s) if self.slots[s].state == State::Idle => self.ready.push_back(s),
            Some(_) => {}
            None => self.unbound.push_back(c),
        }
    }

    /// What the engine does next at `now` (None: nothing until something changes);
    /// `has_room(conn)` says whether an idle connection can take a call at once.
    /// Calls on idle connections first, then connections for the clients without
    /// one.
    pub(super) fn next(
        &mut self,
        now: Instant,
        mut has_room: impl FnMut(ConnId) -> bool,
    ) -> Option<Action> {
        for _ in 0..self.ready.len() {
            let Some(s) = self.ready.pop_front() else {
                break;
            };
            let slot = self.slots[s];
            if slot.state != State::Idle || self.clients[slot.client].waiting.is_empty() {
                continue;
            }
            let Some(conn) = slot.conn.filter(|&id| has_room(id)) else {
                // Not yet known or not yet able to take it: tried again later.
                self.ready.push_back(s);
                continue;
            };
            let Some(call) = self.clients[slot.client].waiting.pop_front() else {
                continue;
            };
            self.waiting -= 1;
            self.idle.remove(&(slot.used, s));
            self.clock += 1;
            self.slots[s].state = State::Busy;
            self.slots[s].used = self.clock;
            let late = (!call.again).then(|| now.saturating_duration_since(call.due));
            return Some(Action::Issue { conn, call, late });
        }
        while let Some(&c) = self.unbound.front() {
            if self.clients[c].slot.is_some() || self.clients[c].waiting.is_empty() {
                self.unbound.pop_front();
                continue;
            }
            if let Some(s) = self.free_slots.pop() {
                self.unbound.pop_front();
                let reopen = self.bind(s, c);
                return Some(Action::Open { slot: s, reopen });
            }
            // At the cap: the least recently used idle connection makes room.
            let &(used, s) = self.idle.iter().next()?;
            self.idle.remove(&(used, s));
            self.unbound.pop_front();
            let (old_client, old) = (self.slots[s].client, self.slots[s].conn);
            self.clients[old_client].slot = None;
            self.forget_or_queue(old_client);
            let reopen = self.bind(s, c);
            return Some(match old {
                Some(old) => Action::Evict {
                    slot: s,
                    old,
                    reopen,
                },
                None => Action::Open { slot: s, reopen },
            });
        }
        None
    }

    /// Slot `slot`'s new connection is `conn`.
    pub(super) fn set_conn(&mut self, slot: usize, conn: ConnId) {
        if let Some(s) = self.slots.get_mut(slot).filter(|s| s.state != State::Free) {
            s.conn = Some(conn);
        }
    }

    /// Slot `slot`'s connection is established: its client's calls may go.
    pub(super) fn connected(&mut self, slot: usize) {
        if self.slots.get(slot).map(|s| s.state) == Some(State::Opening) {
            self.become_idle(slot);
        }
    }

    /// The call on slot `slot`'s connection was answered; `reusable`: the connection
    /// can take another (the server did not ask to close).
    pub(super) fn replied(&mut self, slot: usize, reusable: bool) {
        if self.slots.get(slot).map(|s| s.state) != Some(State::Busy) {
            return;
        }
        if reusable && !self.per_request {
            self.become_idle(slot);
        } else {
            self.slots[slot].state = State::Draining;
        }
    }

    /// Slot `slot`'s connection is gone, `failed` or closed cleanly with `leftovers`
    /// unanswered (oldest first). Clean: they go back to the front of the client's
    /// queue, and a client with calls waiting gets the next connection. Failed: the
    /// client's waiting calls are lost with it, and returned (the leftovers are the
    /// engine's to count).
    pub(super) fn closed(&mut self, slot: usize, failed: bool, leftovers: &[Call]) -> Vec<Waiting> {
        let Some(s) = self
            .slots
            .get(slot)
            .copied()
            .filter(|s| s.state != State::Free)
        else {
            return Vec::new();
        };
        if s.state == State::Idle {
            self.idle.remove(&(s.used, slot));
        }
        self.slots[slot].state = State::Free;
        self.slots[slot].conn = None;
        self.free_slots.push(slot);
        let c = s.client;
        self.clients[c].slot = None;
        if failed {
            let lost: Vec<Waiting> = self.clients[c].waiting.drain(..).collect();
            self.waiting -= lost.len();
            self.forget(c);
            return lost;
        }
        let cl = &mut self.clients[c];
        for call in leftovers.iter().rev() {
            cl.waiting.push_front(Waiting {
                due: call.due,
                what: call.what,
                again: true,
            });
        }
        self.waiting += leftovers.len();
        if cl.waiting.is_empty() {
            self.forget(c);
        } else {
            cl.reopen = true;
            self.unbound.push_front(c);
        }
        Vec::new()
    }

    /// The connections open now.
    pub(super) fn conns(&self) -> impl Iterator<Item = ConnId> + '_ {
        self.slots.iter().filter_map(|s| s.conn)
    }

    /// At the end of the run: the calls still waiting, now unsent, oldest first.
    pub(super) fn take_unsent(&mut self) -> Vec<Waiting> {
        let mut all: Vec<Waiting> = self
            .clients
            .iter_mut()
            .flat_map(|c| c.waiting.drain(..))
            .collect();
        all.sort_by_key(|w| w.due);
        self.waiting = 0;
        all
    }

    /// Binds free slot `s` to client `c` (opening); whether it is a reconnect.
    fn bind(&mut self, s: usize, c: usize) -> bool {
        self.clock += 1;
        self.slots[s] = Slot {
            state: State::Opening,
            client: c,
            conn: None,
            used: self.clock,
        };
        self.clients[c].slot = Some(s);
        std::mem::take(&mut self.clients[c].reopen)
    }

    /// Slot `s` has a connection with no call on it.
    fn become_idle(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        slot.state = State::Idle;
        self.idle.insert((slot.used, s));
        if !self.clients[slot.client].waiting.is_empty() {
            self.ready.push_back(s);
        }
    }

    /// A client whose connection went: forgotten, or back among the clients
    /// waiting for one if it has calls waiting.
    fn forget_or_queue(&mut self, c: usize) {
        if self.clients[c].waiting.is_empty() {
            self.forget(c);
        } else {
            self.unbound.push_back(c);
        }
    }

    /// A new client entry.
    fn new_client(&mut self, name: Option<Box<str>>) -> usize {
        let client = Client {
            name,
            ..Client::default()
        };
        match self.free_clients.pop() {
            Some(c) => {
                let waiting = std::mem::take(&mut self.clients[c].waiting);
                self.clients[c] = Client { waiting, ..client };
                c
            }
            None => {
                self.clients.push(client);
                self.clients.len() - 1
            }
        }
    }

    /// Client `c` has no connection and no call waiting: its entry is freed.
    fn forget(&mut self, c: usize) {
        let cl = &mut self.clients[c];
        if let Some(name) = cl.name.take() {
            self.names.remove(&name);
        }
        cl.reopen = false;
        self.free_clients.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::table::Table;

    /// A connection table that hands out ids.
    struct Net {
        table: Table<()>,
    }

    impl Net {
        fn new() -> Net {
            Net {
                table: Table::new(64),
            }
        }

        fn open(&mut self) -> ConnId {
            self.table.alloc(|| ()).expect("room").0
        }
    }

    /// Carries out every action at `now` as a quick server would: opens connect at
    /// once. Returns what happened, as text: `open S`, `evict S`, `issue /U on S`.
    fn run(a: &mut Affinity, net: &mut Net, now: Instant) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(action) = a.next(now, |_| true) {
            match action {
                Action::Issue { conn, call, .. } => {
                    let s = slot_of(a, conn);
                    out.push(format!("issue {} on {s}", uri(call.what)));
                }
                Action::Open { slot, .. } => {
                    let id = net.open();
                    a.set_conn(slot, id);
                    a.connected(slot);
                    out.push(format!("open {slot}"));
                }
                Action::Evict { slot, old, .. } => {
                    net.table.free(old);
                    let id = net.open();
                    a.set_conn(slot, id);
                    a.connected(slot);
                    out.push(format!("evict {slot}"));
                }
            }
        }
        out
    }

    fn slot_of(a: &Affinity, conn: ConnId) -> usize {
        a.slots
            .iter()
            .position(|s| s.conn == Some(conn))
            .expect("a slot's connection")
    }

    /// Calls are told apart by their template number.
    fn call(k: u32) -> CallRef {
        CallRef::Template(k)
    }

    fn uri(what: CallRef) -> String {
        match what {
            CallRef::Template(k) => format!("/{k}"),
            other => format!("{other:?}"),
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The calls of `clients` (one letter each) at 100 ms apart, each answered
    /// before the next: the actions, and how many connections were opened.
    fn replay(cap: usize, clients: &str) -> (Vec<String>, usize) {
        let mut a = Affinity::new(false, cap);
        let mut net = Net::new();
        let t = Instant::now();
        let mut log = Vec::new();
        for (k, name) in clients.chars().enumerate() {
            let at = t + ms(100 * k as u64);
            a.call_due(Some(&name.to_string()), at, call(k as u32));
            log.extend(run(&mut a, &mut net, at));
            // The reply.
            let busy: Vec<usize> = (0..a.slots.len())
                .filter(|&s| a.slots[s].state == State::Busy)
                .collect();
            for s in busy {
                a.replied(s, true);
            }
        }
        let opened = log.iter().filter(|l| !l.starts_with("issue")).count();
        (log, opened)
    }

    #[test]
    fn each_client_keeps_its_connection() {
        let (log, opened) = replay(1000, "abcabcabcabc");
        assert_eq!(opened, 3);
        assert_eq!(log.len(), 15);
        assert_eq!(
            &log[..4],
            ["open 0", "issue /0 on 0", "open 1", "issue /1 on 1"]
        );
        // Client a's fourth call on its first connection.
        assert!(log.contains(&"issue /9 on 0".to_string()), "{log:?}");
    }

    #[test]
    fn at_the_cap_the_least_recently_used_idle_connection_is_closed() {
        // a b c open three; a is used again, so d closes b's (not a's, the oldest
        // opened); a again reuses; e closes c's, b d's, f e's, d b's; a's is never
        // closed: 8 connections for 12 calls (closing the oldest opened: 10).
        let (log, opened) = replay(3, "abcadaebafda");
        assert_eq!(opened, 8, "{log:?}");
        let evicted: Vec<&String> = log.iter().filter(|l| l.starts_with("evict")).collect();
        assert_eq!(evicted.len(), 5);
        assert_eq!(log.iter().filter(|l| l.starts_with("issue")).count(), 12);
        // a keeps slot 0 throughout.
        for k in [0, 3, 5, 8, 11] {
            assert!(log.contains(&format!("issue /{k} on 0")), "{k}: {log:?}");
        }
    }

    #[test]
    fn a_call_waits_for_its_clients_busy_connection_late_from_its_own_time() {
        let mut a = Affinity::new(false, 10);
        let mut net = Net::new();
        let t = Instant::now();
        a.call_due(Some("a"), t, call(0));
        assert_eq!(run(&mut a, &mut net, t), ["open 0", "issue /0 on 0"]);
        a.call_due(Some("a"), t + ms(1), call(1));
        a.call_due(Some("a"), t + ms(2), call(2));
        // Busy: both wait, and no second connection opens.
        assert!(run(&mut a, &mut net, t + ms(3)).is_empty());
        assert_eq!(a.waiting(), 2);
        a.replied(0, true);
        match a.next(t + ms(10), |_| true) {
            Some(Action::Issue { call, late, .. }) => {
                assert_eq!(uri(call.what), "/1");
                assert_eq!(late, Some(ms(9)));
            }
            other => panic!("{other:?}"),
        }
        assert!(a.next(t + ms(10), |_| true).is_none());
        // A connection that cannot take a call yet keeps it waiting.
        a.replied(0, true);
        assert!(a.next(t + ms(11), |_| false).is_none());
        assert_eq!(a.waiting(), 1);
        assert!(a.has_work());
        assert_eq!(run(&mut a, &mut net, t + ms(12)), ["issue /2 on 0"]);
    }

    #[test]
    fn at_the_cap_with_nothing_idle_a_new_client_waits_its_turn() {
        let mut a = Affinity::new(false, 1);
        let mut net = Net::new();
        let t = Instant::now();
        a.call_due(Some("a"), t, call(0));
        a.call_due(Some("b"), t, call(1));
        a.call_due(Some("c"), t, call(2));
        assert_eq!(run(&mut a, &mut net, t), ["open 0", "issue /0 on 0"]);
        // a answered: b, the oldest waiting client, takes its connection's place.
        a.replied(0, true);
        assert_eq!(run(&mut a, &mut net, t), ["evict 0", "issue /1 on 0"]);
        a.replied(0, true);
        assert_eq!(run(&mut a, &mut net, t), ["evict 0", "issue /2 on 0"]);
        assert_eq!(a.waiting(), 0);
    }

    #[test]
    fn a_clean_close_puts_the_calls_back_and_reopens_first() {
        let mut a = Affinity::new(false, 1);
        let mut net = Net::new();
        let t = Instant::now();
        a.call_due(Some("a"), t, call(0));
        run(&mut a, &mut net, t);
        a.call_due(Some("b"), t + ms(1), call(1));
        a.call_due(Some("a"), t + ms(2), call(2));
        // The server closes a's connection with /0 unanswered (cleanly).
        let left = [Call {
            id: 0,
            what: call(0),
            len: 0,
            head_len: 0,
            head: false,
            send_start: t,
            written: None,
            due: t,
            retries: 0,
            stream: 0,
            sent: 0,
            begun: false,
        }];
        assert!(a.closed(0, false, &left).is_empty());
        assert_eq!(a.waiting(), 3);
        // a reconnects before b, and its calls go in order, /0 not counted late again.
        match a.next(t + ms(5), |_| true) {
            Some(Action::Open { slot: 0, reopen }) => assert!(reopen),
            other => panic!("{other:?}"),
        }
        let id = net.open();
        a.set_conn(0, id);
        a.connected(0);
        match a.next(t + ms(6), |_| true) {
            Some(Action::Issue { call, late, .. }) => {
                assert_eq!((uri(call.what).as_str(), late), ("/0", None));
            }
            other => panic!("{other:?}"),
        }
        a.replied(0, true);
        assert_eq!(run(&mut a, &mut net, t + ms(7)), ["issue /2 on 0"]);
        a.replied(0, true);
        assert_eq!(
            run(&mut a, &mut net, t + ms(8)),
            ["evict 0", "issue /1 on 0"]
        );
    }

    #[test]
    fn a_failure_loses_the_calls_waiting_for_the_connection() {
        let mut a = Affinity::new(false, 4);
        let t = Instant::now();
        a.call_due(Some("a"), t, call(0));
        a.call_due(Some("a"), t + ms(1), call(1));
        assert!(matches!(
            a.next(t, |_| true),
            Some(Action::Open {
                slot: 0,
                reopen: false
            })
        ));
        // The connect is refused: both calls are lost, the client forgotten.
        let lost = a.closed(0, true, &[]);
        let uris: Vec<String> = lost.iter().map(|w| uri(w.what)).collect();
        assert_eq!(uris, ["/0", "/1"]);
        assert_eq!(a.waiting(), 0);
        assert!(a.next(t, |_| true).is_none());
        assert!(a.names.is_empty());
        // Its next call opens a new connection, not a reconnect.
        a.call_due(Some("a"), t + ms(2), call(2));
        assert!(matches!(
            a.next(t, |_| true),
            Some(Action::Open { reopen: false, .. })
        ));
        // A close of a free slot is nobody's.
        assert!(a.closed(3, true, &[]).is_empty());
    }

    #[test]
    fn per_request_every_call_opens_a_connection_and_never_reuses_it() {
        let mut a = Affinity::new(true, 2);
        let mut net = Net::new();
        let t = Instant::now();
        for k in 0..3 {
            a.call_due(Some("a"), t, call(k));
        }
        // Two connections (the cap); the third call waits for one to close.
        assert_eq!(
            run(&mut a, &mut net, t),
            ["open 0", "issue /0 on 0", "open 1", "issue /1 on 1"]
        );
        a.replied(0, true);
        // Answered, but not reused nor closed by the LRU rule: it drains.
        assert!(run(&mut a, &mut net, t).is_empty());
        assert!(a.closed(0, false, &[]).is_empty());
        assert_eq!(run(&mut a, &mut net, t), ["open 0", "issue /2 on 0"]);
        assert!(a.names.is_empty());
    }

    #[test]
    fn the_server_asking_to_close_keeps_the_connection_from_new_calls() {
        let mut a = Affinity::new(false, 2);
        let mut net = Net::new();
        let t = Instant::now();
        a.call_due(Some("a"), t, call(0));
        run(&mut a, &mut net, t);
        a.call_due(Some("a"), t, call(1));
        a.replied(0, false);
        assert!(run(&mut a, &mut net, t).is_empty());
        assert!(a.closed(0, false, &[]).is_empty());
        assert_eq!(run(&mut a, &mut net, t), ["open 0", "issue /1 on 0"]);
    }

    #[test]
    fn unsent_calls_come_out_oldest_first() {
        let mut a = Affinity::new(false, 1);
        let t = Instant::now();
        a.call_due(Some("b"), t + ms(2), call(1));
        a.call_due(Some("a"), t + ms(1), call(0));
        a.call_due(Some("b"), t + ms(3), call(2));
        let got: Vec<String> = a.take_unsent().iter().map(|w| uri(w.what)).collect();
        assert_eq!(got, ["/0", "/1", "/2"]);
        assert_eq!(a.waiting(), 0);
    }
}
