// SPDX-License-Identifier: GPL-2.0

//! `vema-fuzz`: the differential VEMA fuzzer. It sends generated VEMA MADs (valid, boundary
//! and malformed; see `opasim_tests::vema_gen`) through umad to a VNIC driver's agent and
//! records what comes back; two transcripts, one per driver from the same fresh state, are
//! then compared byte by byte.
//!
//! ```text
//! vema-fuzz run -d UMAD --dlid LID --seed S --count N [--timeout-ms T] [--pkey-index P]
//!               [--skip FILE] --out FILE
//! vema-fuzz compare A B [--allow FILE] [--max N]
//! vema-fuzz show --seed S --index I [--count N]
//! vema-fuzz dump FILE [--index I]
//! ```
//!
//! `run` sends request 0 to N-1 of seed S one at a time, each waiting up to T ms (default
//! 200) for its answer, and writes the transcript. Requests matching a rule of the skip file
//! (the allow file's syntax, conditions on requests only) are not sent: a known difference
//! that changes a driver's state would otherwise make every later request that reads the
//! state differ too, and hide the rest. `compare` prints each difference (the
//! request, what each side answered, the first differing byte), the differences grouped by
//! kind, and `vema-fuzz: N requests, D differences`; it exits 0 when every difference is
//! allowed by a rule of the allow file (see `transcript::parse_rules`), 1 otherwise. `show`
//! prints a request as the generator makes it, to reproduce one; `dump` prints a transcript.

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use opa_umad::{umad_dev_path, Device, Registration, SendHdr};
use opasim_tests::transcript::{self, Header, Outcome, Record, Rule};
use opasim_tests::vema_gen::{self, hex};

const USAGE: &str = "usage:
  vema-fuzz run -d UMAD --dlid LID --seed S --count N [--timeout-ms T] [--pkey-index P]
                [--skip FILE] --out FILE
  vema-fuzz compare A B [--allow FILE] [--max N]
  vema-fuzz show --seed S --index I [--count N]
  vema-fuzz dump FILE [--index I]";

/// How long past its time-out a request waits for umad's notice before it counts as lost.
const NOTICE_GRACE: Duration = Duration::from_secs(2);

fn num(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|_| format!("bad number '{s}'"))
}

/// Options `--name value` and positional arguments.
struct Args {
    pos: Vec<String>,
    opts: Vec<(String, String)>,
}

impl Args {
    fn parse(it: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut a = Args {
            pos: Vec::new(),
            opts: Vec::new(),
        };
        let mut it = it.peekable();
        while let Some(s) = it.next() {
            if s.starts_with('-') && s.len() > 1 {
                let v = it.next().ok_or_else(|| format!("{s} needs a value"))?;
                a.opts.push((s, v));
            } else {
                a.pos.push(s);
            }
        }
        Ok(a)
    }

    fn get(&self, names: &[&str]) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }

    fn need(&self, names: &[&str]) -> Result<&str, String> {
        self.get(names)
            .ok_or_else(|| format!("{} is required", names[0]))
    }

    fn num(&self, names: &[&str], default: Option<u64>) -> Result<u64, String> {
        match (self.get(names), default) {
            (Some(v), _) => num(v),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(format!("{} is required", names[0])),
        }
    }

    fn only(&self, known: &[&str], npos: usize) -> Result<(), String> {
        if let Some((k, _)) = self.opts.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            return Err(format!("unknown option {k}"));
        }
        if self.pos.len() != npos {
            return Err(USAGE.into());
        }
        Ok(())
    }
}

/// Sends request `index` as `hdr` says and waits for what comes of it.
fn one(
    agent: &mut Device,
    hdr: &SendHdr,
    seed: u64,
    index: u64,
    skip: &[Rule],
) -> io::Result<Outcome> {
    let req = vema_gen::generate(seed, index);
    if skip.iter().any(|r| r.matches(&req)) {
        return Ok(Outcome::Skipped);
    }
    let timeout_ms = hdr.timeout_ms;
    if let Err(e) = agent.send(hdr, &req.mad) {
        let e = io::Error::from(e);
        return match e.raw_os_error() {
            Some(errno) => Ok(Outcome::Refused(errno)),
            None => Err(e),
        };
    }
    let deadline = Instant::now() + Duration::from_millis(timeout_ms.into()) + NOTICE_GRACE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(r) = agent.recv(left).map_err(io::Error::from)? else {
            return Ok(Outcome::Lost);
        };
        // Only this request's answer or notice: the lower half of the TID is the index.
        // Anything else is late news of an earlier request.
        if r.tid() as u32 != index as u32 {
            continue;
        }
        return Ok(match r.status {
            0 => Outcome::answered(&r.mad),
            libc::ETIMEDOUT => Outcome::Unanswered,
            s => {
                return Err(io::Error::other(format!(
                    "request {index}: umad status {s}"
                )))
            }
        });
    }
}

fn run(a: &Args) -> Result<ExitCode, String> {
    a.only(
        &[
            "-d",
            "--dlid",
            "--seed",
            "--count",
            "--timeout-ms",
            "--pkey-index",
            "--skip",
            "--out",
        ],
        0,
    )?;
    let umad = a.need(&["-d"])?;
    let umad = umad.strip_prefix("/dev/infiniband/").unwrap_or(umad);
    let dlid = u16::try_from(a.num(&["--dlid"], None)?).map_err(|_| "bad --dlid")?;
    let seed = a.num(&["--seed"], None)?;
    let count = a.num(&["--count"], None)?;
    let timeout_ms = u32::try_from(a.num(&["--timeout-ms"], Some(200))?)
        .map_err(|_| "bad --timeout-ms")?
        .max(1);
    let pkey_index =
        u16::try_from(a.num(&["--pkey-index"], Some(0))?).map_err(|_| "bad --pkey-index")?;
    let out = a.need(&["--out"])?;
    let skip = match a.get(&["--skip"]) {
        Some(p) => rules_of(p)?,
        None => Vec::new(),
    };
    if let Some(r) = skip.iter().find(|r| !r.is_about_requests()) {
        return Err(format!("a skip rule names requests only: {}", r.text));
    }

    // A send-only agent: answers come back to it by TID whatever their class, and it
    // takes no method, so it stands in the way of no agent of the port (the VNIC driver
    // has one on this port too).
    let (mut agent, id) = Device::open_agent(umad_dev_path(umad), &Registration::default())
        .map_err(|e| format!("cannot register an agent on {umad}: {e}"))?;
    let file = File::create(out).map_err(|e| format!("{out}: {e}"))?;
    let mut w = BufWriter::new(file);
    let werr = |e: io::Error| format!("{out}: {e}");
    transcript::write_header(
        &mut w,
        &Header {
            seed,
            count,
            timeout_ms,
        },
    )
    .map_err(werr)?;

    let hdr = SendHdr {
        timeout_ms,
        ..SendHdr::gsi(id, dlid, pkey_index)
    };
    let start = Instant::now();
    let mut tally = [0u64; 5];
    for index in 0..count {
        let outcome = one(&mut agent, &hdr, seed, index, &skip)
            .map_err(|e| format!("request {index}: {e}"))?;
        tally[match outcome {
            Outcome::Answered { .. } => 0,
            Outcome::Unanswered => 1,
            Outcome::Refused(_) => 2,
            Outcome::Lost => 3,
            Outcome::Skipped => 4,
        }] += 1;
        transcript::write_record(&mut w, &Record { index, outcome }).map_err(werr)?;
        if (index + 1) % 1000 == 0 {
            // Flushed as it goes, so a run that dies still leaves what it did.
            w.flush().map_err(werr)?;
            eprintln!(
                "vema-fuzz: {}/{count} requests, {:.1} s",
                index + 1,
                start.elapsed().as_secs_f64()
            );
        }
    }
    w.flush().map_err(werr)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "vema-fuzz: seed {seed}: {count} requests in {secs:.1} s ({:.0}/s): {} answered, \
         {} not answered in {timeout_ms} ms, {} refused by umad, {} lost, {} skipped",
        count as f64 / secs.max(1e-9),
        tally[0],
        tally[1],
        tally[2],
        tally[3],
        tally[4]
    );
    Ok(ExitCode::SUCCESS)
}

fn rules_of(path: &str) -> Result<Vec<Rule>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    transcript::parse_rules(&text)
}

fn load(path: &str) -> Result<(Header, Vec<Record>), String> {
    let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    transcript::read(&mut BufReader::new(f)).map_err(|e| format!("{path}: {e}"))
}

fn compare(a: &Args) -> Result<ExitCode, String> {
    a.only(&["--allow", "--max"], 2)?;
    let rules = match a.get(&["--allow"]) {
        Some(p) => rules_of(p)?,
        None => Vec::new(),
    };
    let max = usize::try_from(a.num(&["--max"], Some(20))?).unwrap_or(usize::MAX);
    let ta = load(&a.pos[0])?;
    let tb = load(&a.pos[1])?;
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let (na, nb) = (name(&a.pos[0]), name(&a.pos[1]));
    let rep = transcript::compare(&ta, &tb, [&na, &nb], &rules, max)?;
    print!("{}", rep.text);
    for (n, t) in [(&na, &ta), (&nb, &tb)] {
        if (t.1.len() as u64) < t.0.count {
            println!(
                "vema-fuzz: {n} holds {} of its {} requests (its run stopped early)",
                t.1.len(),
                t.0.count
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(if rep.differences == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn show(a: &Args) -> Result<ExitCode, String> {
    a.only(&["--seed", "--index", "--count"], 0)?;
    let seed = a.num(&["--seed"], None)?;
    let index = a.num(&["--index"], None)?;
    let count = a.num(&["--count"], Some(1))?;
    for i in index..index.saturating_add(count) {
        let r = vema_gen::generate(seed, i);
        println!("request {i} of seed {seed}: {}", r.describe());
        println!("{}", hex(&r.mad));
    }
    Ok(ExitCode::SUCCESS)
}

fn dump(a: &Args) -> Result<ExitCode, String> {
    a.only(&["--index"], 1)?;
    let (h, recs) = load(&a.pos[0])?;
    let only = a.get(&["--index"]).map(num).transpose()?;
    println!(
        "seed {} count {} timeout {} ms, {} records",
        h.seed,
        h.count,
        h.timeout_ms,
        recs.len()
    );
    for r in recs.iter().filter(|r| only.map_or(true, |i| r.index == i)) {
        match &r.outcome {
            Outcome::Answered { bytes, .. } => {
                println!("{}: {}: {}", r.index, r.outcome.summary(), hex(bytes))
            }
            o => println!("{}: {}", r.index, o.summary()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().unwrap_or_default();
    let res = Args::parse(it).and_then(|a| match cmd.as_str() {
        "run" => run(&a),
        "compare" => compare(&a),
        "show" => show(&a),
        "dump" => dump(&a),
        _ => Err(USAGE.into()),
    });
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vema-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}
