//! `fabricsim collective`: an NCCL collective over an nccl-tests size sweep, each size compiled
//! into a message DAG and run on the scenario's engine (`--engine`); nccl-tests' table and its closing
//! "Avg bus bandwidth" line, and with `--fit` the alpha-beta fit and its error at sizes the
//! fit did not use. The job is `workload::collective::job`'s, shared with the Python package.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fabricsim::workload::collective::job::{self, Event, Request};

use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output;
use crate::scenario_flags::{self, ScenarioFlags};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Flags override the scenario file's [cluster], [fabric] and [topology] sections.
#[derive(Args)]
pub struct CollectiveArgs {
    /// Scenario file: the cluster as for `plan`.
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Cluster>,
    /// Collective: all_reduce, all_gather, reduce_scatter, all_to_all (alltoall), broadcast,
    /// reduce, sendrecv, moe_dispatch, moe_combine (an all-to-all routed by --skew; the size is
    /// each rank's routed buffer, tokens x top-k x hidden x bytes per element).
    #[arg(long, default_value = job::DEFAULT_OP)]
    pub op: String,
    /// Smallest size (nccl-tests -b): 64K, 1M, 1G are powers of 1024 (as nccl-tests), 1MB is 10^6.
    #[arg(long, default_value = job::DEFAULT_MIN_BYTES)]
    pub min_bytes: String,
    /// Largest size (nccl-tests -e). Default: 64M on 16 GPUs, scaled by 16/GPUs (at least
    /// --min-bytes), so a default run takes seconds; packet runs grow with GPUs x size.
    #[arg(long)]
    pub max_bytes: Option<String>,
    /// Multiplication factor between sizes (nccl-tests -f).
    #[arg(long, default_value_t = 2)]
    pub step_factor: u64,
    /// Algorithm: ring, tree, hd (halving-doubling), hierarchical, chain, direct; default the
    /// op's first (ring; chain for broadcast/reduce; direct for all_to_all/sendrecv).
    #[arg(long)]
    pub algo: Option<String>,
    /// NCCL channels, each its own connection per peer (default NCCL's: 2 per NIC for ring and
    /// tree under [nccl] min/max_nchannels; for all-to-all and sendrecv one per NIC halved with
    /// the rank count as NCCL does, `collective::p2p_channels_per_peer`).
    #[arg(long)]
    pub channels: Option<u32>,
    /// Root rank of broadcast and reduce.
    #[arg(long, default_value_t = 0)]
    pub root: u32,
    /// Routing skew of moe_dispatch and moe_combine: uniform, zipf:S or histogram:FILE (one
    /// load per expert per line, expert 0 first).
    #[arg(long, default_value = job::DEFAULT_SKEW)]
    pub skew: String,
    /// Routed experts of moe_dispatch and moe_combine, a multiple of the GPU count (default:
    /// one per GPU).
    #[arg(long)]
    pub experts: Option<u64>,
    /// Experts per token of moe_dispatch and moe_combine (a token's top-k are distinct).
    #[arg(long, default_value_t = 1)]
    pub top_k: u64,
    /// Expert capacity of moe_dispatch and moe_combine as a multiple of the even share, the
    /// tokens over it dropped (Switch Transformer's capacity factor); default none dropped.
    #[arg(long)]
    pub capacity_factor: Option<f64>,
    /// Fit alpha-beta to every other size and report its error at the sizes left out.
    #[arg(long)]
    pub fit: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl CollectiveArgs {
    /// The job's request: these flags, field by field.
    fn request(&self) -> Request {
        Request {
            op: self.op.clone(),
            min_bytes: self.min_bytes.clone(),
            max_bytes: self.max_bytes.clone(),
            step_factor: self.step_factor,
            algo: self.algo.clone(),
            channels: self.channels,
            root: self.root,
            skew: self.skew.clone(),
            experts: self.experts,
            top_k: self.top_k,
            capacity_factor: self.capacity_factor,
            fit: self.fit,
        }
    }
}

pub fn run(a: CollectiveArgs) -> Outcome {
    outpath::check(&[("--out", a.out.as_deref())])?;
    let scenario = a.flags.load(a.scenario.as_deref())?;
    let tty = crate::progress::wanted();
    let on = |e: Event| match e {
        Event::PerMessage { bytes, why } => {
            eprintln!("[collective] {bytes} B runs per message: {why}")
        }
        Event::Size {
            size,
            total,
            messages,
            seeds,
        } if tty => {
            eprint!("\r[collective] size {size}/{total}: {messages} messages, {seeds} seeds   ")
        }
        Event::Seed {
            size,
            total,
            done,
            seeds,
        } if tty => eprint!("\r[collective] size {size}/{total}: {done}/{seeds} seeds run   "),
        _ => {}
    };
    let o = job::run(&scenario, &a.request(), &on)?;
    if tty {
        eprint!("\r{:60}\r", "");
    }
    let text = match a.format {
        Format::Text => o.to_text(),
        Format::Json => o.json_text()?,
    };
    output::emit(a.out.as_deref(), &text)?;
    let mark = o.interrupted_mark();
    unless_interrupted(|| mark.trim_start_matches("# interrupted: ").trim_end().into())
}
