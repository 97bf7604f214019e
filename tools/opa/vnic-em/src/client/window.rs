// SPDX-License-Identifier: GPL-2.0

//! Many requests in flight: the pipelined sender behind `apply` and
//! `watch`.
//!
//! [`Client::run_batch`] sends a batch of requests with up to
//! [`Window::per_lid`] in flight to each node port and
//! [`Window::global`] in all, and matches the responses by TID (the low
//! half: umad puts its agent's id in the high one). A request that gets no
//! response is sent again, each attempt waiting twice as long as the one
//! before ([`Policy::attempt_timeout`](super::Policy::attempt_timeout)).
//!
//! Order: the requests of one chain, a (LID, vport) pair, or a node port's
//! ClassPortInfo, go one at a time, in the order given. They build on each
//! other (a MAC table Set needs the vport that the VESW port info Set
//! before it creates, and a retry must not overtake the Set after it), and
//! when one fails the rest of its chain is skipped. Requests of other
//! chains, to the same node port or not, are independent: the agent
//! answers each vport's attributes on their own.
//!
//! A node port whose request gets no response after every attempt is given
//! up for the rest of the batch: its requests in flight fail at once
//! ([`EmError::GaveUp`]) and those not sent yet are skipped, so a dead
//! node costs the batch one request's attempts, while the others go on. A
//! batch of requests to live node ports and N dead ones takes about the
//! time of one request's attempts, not N times that.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use opa_wire::mad::{MAD_STATUS_BUSY, MAD_STATUS_SUCCESS};

use super::{Client, EmError};
use crate::fabric::{Dest, Event, Fabric};
use crate::mad::{build_request, check_response, classify, tid_low, Incoming, Method, Target};

/// How many requests a batch keeps in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// To one node port (LID). The agent answers a port's MADs one after
    /// the other, so more in flight only queue there, and a response
    /// waits behind those before it: keep it small.
    pub per_lid: usize,
    /// In all: what the EM's port and its umad queue take at once.
    pub global: usize,
}

impl Window {
    /// One request at a time: the EM as it was before batches.
    pub const SEQUENTIAL: Window = Window {
        per_lid: 1,
        global: 1,
    };
}

impl Default for Window {
    fn default() -> Self {
        Window {
            per_lid: 4,
            global: 64,
        }
    }
}

/// One request of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// What, and where (`lid` and `vport` name its chain).
    pub target: Target,
    /// Attribute modifier.
    pub attr_mod: u32,
    /// The attribute data.
    pub data: Vec<u8>,
}

impl Request {
    /// The chain of the request: its requests go one at a time, in order.
    pub fn chain(&self) -> (u16, Option<u8>) {
        (self.target.lid, self.target.vport)
    }
}

/// What came of one request of a batch.
#[derive(Debug)]
pub enum Outcome {
    /// The response data, read as if zero-filled to a whole MAD.
    Done(Vec<u8>),
    /// It failed (or its response did not pass the batch's check).
    Failed(EmError),
    /// Not sent: an earlier request of its chain failed, or its node port
    /// was given up.
    Skipped,
}

impl Outcome {
    /// Whether the request got its response.
    pub fn is_done(&self) -> bool {
        matches!(self, Outcome::Done(_))
    }
}

/// A request in flight.
#[derive(Debug)]
struct Flight {
    /// Index in the batch.
    idx: usize,
    /// Low half of the TID of the current attempt.
    tid: u32,
    /// Attempt number, 0 for the first.
    attempt: u32,
    /// When the current attempt is given up.
    deadline: Instant,
}

/// What looks at each response of a batch: the index of its request and
/// its data.
type Check<'c> = dyn FnMut(usize, &[u8]) -> Result<(), EmError> + 'c;

/// The state of one batch.
struct Batch<'r> {
    reqs: &'r [Request],
    out: Vec<Option<Outcome>>,
    /// The first request not started: all before it are sent or settled.
    low: usize,
    /// Which requests were sent (the scan for the next one must not look
    /// through the flights for each).
    started: Vec<bool>,
    flights: Vec<Flight>,
    per_lid: BTreeMap<u16, usize>,
    busy: BTreeSet<(u16, Option<u8>)>,
    broken: BTreeSet<(u16, Option<u8>)>,
    dead: BTreeSet<u16>,
}

impl Batch<'_> {
    fn settle(&mut self, idx: usize, o: Outcome) {
        let chain = self.reqs[idx].chain();
        if !o.is_done() {
            self.broken.insert(chain);
        }
        self.out[idx] = Some(o);
    }

    /// Takes flight `i` off the wire.
    fn land(&mut self, i: usize) -> Flight {
        let f = self.flights.swap_remove(i);
        let chain = self.reqs[f.idx].chain();
        self.busy.remove(&chain);
        if let Some(n) = self.per_lid.get_mut(&chain.0) {
            *n = n.saturating_sub(1);
        }
        f
    }

    /// Gives up node port `lid`: its requests in flight fail.
    fn give_up(&mut self, lid: u16) {
        self.dead.insert(lid);
        while let Some(i) = self
            .flights
            .iter()
            .position(|f| self.reqs[f.idx].target.lid == lid)
        {
            let f = self.land(i);
            let target = self.reqs[f.idx].target;
            self.settle(f.idx, Outcome::Failed(EmError::GaveUp { target }));
        }
    }

    /// The next request that may be sent now, settling on the way those
    /// that are to be skipped.
    fn next(&mut self, w: Window) -> Option<usize> {
        if self.flights.len() >= w.global.max(1) {
            return None;
        }
        let mut seen_unstarted = false;
        for idx in self.low..self.reqs.len() {
            if self.out[idx].is_some() || self.started[idx] {
                if !seen_unstarted {
                    self.low = idx + 1;
                }
                continue;
            }
            let chain = self.reqs[idx].chain();
            if self.dead.contains(&chain.0) || self.broken.contains(&chain) {
                self.out[idx] = Some(Outcome::Skipped);
                if !seen_unstarted {
                    self.low = idx + 1;
                }
                continue;
            }
            seen_unstarted = true;
            let lid_full = self.per_lid.get(&chain.0).copied().unwrap_or(0) >= w.per_lid.max(1);
            if !lid_full && !self.busy.contains(&chain) {
                return Some(idx);
            }
        }
        None
    }
}

impl<F: Fabric> Client<F> {
    /// Sends the requests of a batch, as many at once as the policy's
    /// [`Window`] lets, and returns what came of each, in order. `check`
    /// looks at each response (the index of its request and its data)
    /// and may fail it, which ends its chain as any failure does.
    ///
    /// A transport failure fails the request it happened on and skips
    /// every request not settled yet: nothing more can be sent.
    pub fn run_batch(
        &mut self,
        reqs: &[Request],
        mut check: impl FnMut(usize, &[u8]) -> Result<(), EmError>,
    ) -> Vec<Outcome> {
        let mut b = Batch {
            reqs,
            out: (0..reqs.len()).map(|_| None).collect(),
            low: 0,
            started: vec![false; reqs.len()],
            flights: Vec::new(),
            per_lid: BTreeMap::new(),
            busy: BTreeSet::new(),
            broken: BTreeSet::new(),
            dead: BTreeSet::new(),
        };
        if let Err((idx, e)) = self.drive(&mut b, &mut check) {
            b.out[idx] = Some(Outcome::Failed(e));
        }
        b.out
            .into_iter()
            .map(|o| o.unwrap_or(Outcome::Skipped))
            .collect()
    }

    /// The loop of a batch: fill the window, wait for an event, settle.
    /// Fails with the request a transport error happened on.
    fn drive(&mut self, b: &mut Batch<'_>, check: &mut Check<'_>) -> Result<(), (usize, EmError)> {
        let w = self.policy.window;
        loop {
            while let Some(idx) = b.next(w) {
                self.launch(b, idx, 0)?;
            }
            let Some(first) = b.flights.iter().map(|f| f.deadline).min() else {
                return Ok(());
            };
            let now = Instant::now();
            let at = b.flights.first().map_or(0, |f| f.idx);
            let ev = self
                .fabric
                .recv(first.saturating_duration_since(now))
                .map_err(|e| (at, EmError::Transport(e)))?;
            match ev {
                // Nothing came in time: at least the first deadline is
                // past (the fake fabric answers at once or never).
                None => {
                    let now = Instant::now().max(first);
                    while let Some(i) = b.flights.iter().position(|f| f.deadline <= now) {
                        self.expire(b, i)?;
                    }
                }
                Some(Event::SendTimeout { tid }) => {
                    if let Some(i) = b.flights.iter().position(|f| f.tid == tid_low(tid)) {
                        self.expire(b, i)?;
                    }
                }
                Some(Event::Mad { src_lid, data }) => match classify(&data) {
                    Incoming::Response(rsp) => {
                        let t = tid_low(rsp.hdr.mad_hdr.tid);
                        // None: a late answer to an attempt retried or given up.
                        if let Some(i) = b.flights.iter().position(|f| f.tid == t) {
                            let status = rsp.hdr.mad_hdr.status;
                            if status == MAD_STATUS_BUSY {
                                self.expire(b, i)?;
                            } else {
                                let f = b.land(i);
                                let r = &b.reqs[f.idx];
                                let res = if status != MAD_STATUS_SUCCESS {
                                    Err(EmError::Status {
                                        target: r.target,
                                        status,
                                    })
                                } else {
                                    check_response(&rsp, r.target.attr_id, r.attr_mod)
                                        .map_err(|e| EmError::BadResponse {
                                            target: r.target,
                                            reason: e.to_string(),
                                        })
                                        .and_then(|()| check(f.idx, &rsp.data))
                                };
                                if res.is_ok() && r.target.method == Method::Set {
                                    self.stats.sets_ok = self.stats.sets_ok.saturating_add(1);
                                }
                                let o = match res {
                                    Ok(()) => Outcome::Done(rsp.data),
                                    Err(e) => Outcome::Failed(e),
                                };
                                b.settle(f.idx, o);
                            }
                        }
                    }
                    Incoming::Trap => self.note_trap(src_lid, &data),
                    // With many requests out, nothing tells whose a runt
                    // is: its owner times out and is sent again.
                    Incoming::Runt(_) | Incoming::Other => {}
                },
            }
            // Deadlines pass while a chatty fabric keeps recv busy.
            let now = Instant::now();
            while let Some(i) = b.flights.iter().position(|f| f.deadline < now) {
                self.expire(b, i)?;
            }
        }
    }

    /// Sends attempt `attempt` of request `idx` and puts it in flight.
    fn launch(
        &mut self,
        b: &mut Batch<'_>,
        idx: usize,
        attempt: u32,
    ) -> Result<(), (usize, EmError)> {
        let r = &b.reqs[idx];
        let t = r.target;
        let len = self
            .policy
            .mad_size
            .request_len(t.method, t.attr_id, &r.data);
        let tid = self.alloc_tid();
        let buf = match build_request(tid, t.method, t.attr_id, r.attr_mod, &r.data) {
            Ok(buf) => buf,
            Err(e) => {
                b.settle(
                    idx,
                    Outcome::Failed(EmError::Encode {
                        target: t,
                        reason: format!("{e:?}"),
                    }),
                );
                return Ok(());
            }
        };
        let dest = Dest::gsi(t.lid, self.policy.pkey_index, self.policy.sl);
        let wait = self.policy.attempt_timeout(attempt);
        self.fabric
            .send(&dest, &buf[..len.min(buf.len())], wait)
            .map_err(|e| (idx, EmError::Transport(e)))?;
        self.stats.sent = self.stats.sent.saturating_add(1);
        if attempt > 0 {
            self.stats.retries = self.stats.retries.saturating_add(1);
        }
        b.flights.push(Flight {
            idx,
            tid: tid_low(tid),
            attempt,
            deadline: Instant::now() + wait + self.policy.grace,
        });
        b.started[idx] = true;
        *b.per_lid.entry(t.lid).or_insert(0) += 1;
        b.busy.insert(r.chain());
        let n = u32::try_from(b.flights.len()).unwrap_or(u32::MAX);
        self.stats.max_in_flight = self.stats.max_in_flight.max(n);
        Ok(())
    }

    /// Flight `i` got no response (or a busy one): sends it again, or,
    /// when its attempts are spent, fails it and gives its node port up.
    fn expire(&mut self, b: &mut Batch<'_>, i: usize) -> Result<(), (usize, EmError)> {
        self.stats.timeouts = self.stats.timeouts.saturating_add(1);
        let f = b.land(i);
        let next = f.attempt + 1;
        if next < self.policy.attempts() {
            return self.launch(b, f.idx, next);
        }
        let target = b.reqs[f.idx].target;
        b.settle(
            f.idx,
            Outcome::Failed(EmError::Timeout {
                target,
                attempts: self.policy.attempts(),
                timeout: self.policy.timeout,
                last: self.policy.attempt_timeout(f.attempt),
            }),
        );
        b.give_up(target.lid);
        Ok(())
    }
}
