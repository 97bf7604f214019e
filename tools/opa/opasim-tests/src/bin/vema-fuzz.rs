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

use clap::{Args, Parser, Subcommand};
use opa_umad::{umad_dev_path, Device, Registration, SendHdr};
use opasim_tests::cli::num;
use opasim_tests::transcript::{self, Header, Outcome, Record, Rule};
use opasim_tests::vema_gen::{self, hex};

/// How long past its time-out a request waits for umad's notice before it counts as lost.
const NOTICE_GRACE: Duration = Duration::from_secs(2);

/// The differential VEMA fuzzer.
#[derive(Parser)]
#[command(name = "vema-fuzz")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Send requests 0 to N-1 of a seed one at a time and write the transcript
    Run(RunArgs),
    /// Compare two transcripts; exit 0 when every difference is allowed
    Compare(CompareArgs),
    /// Print requests as the generator makes them
    Show(ShowArgs),
    /// Print a transcript
    Dump(DumpArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The umad device to send from (umad0 or /dev/infiniband/umad0)
    #[arg(short = 'd', value_name = "UMAD")]
    umad: String,
    /// LID of the driver's agent
    #[arg(long, value_name = "LID", value_parser = num::<u16>)]
    dlid: u16,
    /// The generator's seed
    #[arg(long, value_name = "S", value_parser = num::<u64>)]
    seed: u64,
    /// Requests to send
    #[arg(long, value_name = "N", value_parser = num::<u64>)]
    count: u64,
    /// How long each request waits for its answer, in ms
    #[arg(long, value_name = "T", default_value = "200", value_parser = num::<u32>)]
    timeout_ms: u32,
    /// Index of the P_Key to send with
    #[arg(long, value_name = "P", default_value = "0", value_parser = num::<u16>)]
    pkey_index: u16,
    /// Rules (the allow file's syntax, on requests only) of requests not to send
    #[arg(long, value_name = "FILE")]
    skip: Option<String>,
    /// The transcript to write
    #[arg(long, value_name = "FILE")]
    out: String,
}

#[derive(Args)]
struct CompareArgs {
    /// The first transcript
    #[arg(value_name = "A")]
    a: String,
    /// The second transcript
    #[arg(value_name = "B")]
    b: String,
    /// Rules of the differences allowed
    #[arg(long, value_name = "FILE")]
    allow: Option<String>,
    /// Differences printed in full
    #[arg(long, value_name = "N", default_value = "20", value_parser = num::<u64>)]
    max: u64,
}

#[derive(Args)]
struct ShowArgs {
    /// The generator's seed
    #[arg(long, value_name = "S", value_parser = num::<u64>)]
    seed: u64,
    /// The first request to print
    #[arg(long, value_name = "I", value_parser = num::<u64>)]
    index: u64,
    /// Requests to print
    #[arg(long, value_name = "N", default_value = "1", value_parser = num::<u64>)]
    count: u64,
}

#[derive(Args)]
struct DumpArgs {
    /// The transcript
    #[arg(value_name = "FILE")]
    file: String,
    /// Print only the record of this request
    #[arg(long, value_name = "I", value_parser = num::<u64>)]
    index: Option<u64>,
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

fn run(a: &RunArgs) -> Result<ExitCode, String> {
    let umad = a.umad.strip_prefix("/dev/infiniband/").unwrap_or(&a.umad);
    let (dlid, seed, count, pkey_index) = (a.dlid, a.seed, a.count, a.pkey_index);
    let timeout_ms = a.timeout_ms.max(1);
    let out = a.out.as_str();
    let skip = match &a.skip {
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

fn compare(a: &CompareArgs) -> Result<ExitCode, String> {
    let rules = match &a.allow {
        Some(p) => rules_of(p)?,
        None => Vec::new(),
    };
    let max = usize::try_from(a.max).unwrap_or(usize::MAX);
    let ta = load(&a.a)?;
    let tb = load(&a.b)?;
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let (na, nb) = (name(&a.a), name(&a.b));
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

fn show(a: &ShowArgs) -> Result<ExitCode, String> {
    let (seed, index, count) = (a.seed, a.index, a.count);
    for i in index..index.saturating_add(count) {
        let r = vema_gen::generate(seed, i);
        println!("request {i} of seed {seed}: {}", r.describe());
        println!("{}", hex(&r.mad));
    }
    Ok(ExitCode::SUCCESS)
}

fn dump(a: &DumpArgs) -> Result<ExitCode, String> {
    let (h, recs) = load(&a.file)?;
    let only = a.index;
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
    let res = match &Cli::parse().cmd {
        Cmd::Run(a) => run(a),
        Cmd::Compare(a) => compare(a),
        Cmd::Show(a) => show(a),
        Cmd::Dump(a) => dump(a),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vema-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}
