//! The command line: every flag defined once, here; clap derives help from it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Benchmark filesystems and compare them side by side.
#[derive(Debug, Parser)]
#[command(name = "fsarena", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run workloads on targets and report the results.
    Run(RunArgs),
    /// Run the standard io jobs on the filesystems this machine offers and compare them.
    Demo(DemoArgs),
    /// List every target kind: available here or not, and why not.
    Targets,
    /// Tear down what an interrupted (killed) run left in the work directory: mounts, loop
    /// devices, images, FUSE daemons it recorded, and nothing else.
    Cleanup(CleanupArgs),
}

/// `fsarena cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// The work directory of the runs to clean up.
    #[arg(long, value_name = "DIR", default_value = fsarena_target::DEFAULT_WORKDIR)]
    pub workdir: PathBuf,
}

/// `fsarena run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fsarena run --target dir:path=/mnt/x --workload io:rw=randread,bs=4k,size=1g,runtime=10s,time_based=1\n  fsarena run --fio job.fio --target dir:path=/mnt/x --output-format fio-json\n  fsarena run job.toml\n\nio options (fio's names and defaults): see `docs/workloads.md` or the README."
)]
pub struct RunArgs {
    /// A TOML job file with targets and workloads.
    pub jobfile: Option<PathBuf>,
    /// A fio job file ([global] and job sections); its jobs become one io workload.
    #[arg(long, value_name = "JOBFILE")]
    pub fio: Option<PathBuf>,
    /// A filesystem under test: KIND[:key=value,...], e.g. dir:path=/mnt/x. Repeatable.
    #[arg(long = "target", value_name = "SPEC")]
    pub targets: Vec<String>,
    /// A workload: KIND[:key=value,...], e.g. io:rw=randread,bs=4k,size=1g. Repeatable.
    #[arg(long = "workload", value_name = "SPEC")]
    pub workloads: Vec<String>,
    /// human, json or fio-json. Machine-readable output goes to stdout alone.
    #[arg(long, value_name = "FORMAT")]
    pub output_format: Option<String>,
    /// Print the plan and exit without creating anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not store the results (nothing is stored yet either way).
    #[arg(long)]
    pub no_store: bool,
    /// Where images, mount points and the state file go.
    #[arg(long, value_name = "DIR", default_value = fsarena_target::DEFAULT_WORKDIR)]
    pub workdir: PathBuf,
    /// Allow formatting a real block device (device: targets).
    #[arg(long)]
    pub force: bool,
    /// Keep the page cache between workloads (by default: sync, then drop caches when root).
    #[arg(long)]
    pub no_drop_caches: bool,
}

/// `fsarena demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Seconds per job.
    #[arg(long, default_value_t = 3)]
    pub seconds: u32,
    /// human, json or fio-json.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub output_format: String,
    /// Where images, mount points and the state file go.
    #[arg(long, value_name = "DIR", default_value = fsarena_target::DEFAULT_WORKDIR)]
    pub workdir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn flag_table_is_consistent() {
        Cli::command().debug_assert();
    }
}
