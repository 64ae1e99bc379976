//! The command line: every flag defined once, here; clap derives help from it.

use clap::{Args, Parser, Subcommand};
use fsarena_report::OutputFormat::{self, Csv, FioJson, FioJsonPlus, Human, Json, Markdown};
use std::path::PathBuf;

/// Measured repetitions and warm-ups when neither the command line nor the file says.
pub const DEFAULT_REPEAT: u32 = 3;
/// Most measured repetitions (--repeat, `repeat =`): each is a run of every workload on every
/// target, with its results kept; a thousand is more than any interval needs.
pub const MAX_REPEAT: u32 = 1000;
/// Most warm-up repetitions (--warmup, `warmup =`).
pub const MAX_WARMUP: u32 = 100;
/// Discarded warm-up repetitions by default.
pub const DEFAULT_WARMUP: u32 = 1;

/// `--output-format` of `run` and `demo` (and a job file's `output_format`).
pub const RUN_FORMATS: &[OutputFormat] = &[Human, Json, FioJson, FioJsonPlus, Csv];
/// `results show --output-format`: one stored run, as `run` printed it, or as Markdown.
pub const SHOW_FORMATS: &[OutputFormat] = &[Human, Json, FioJson, FioJsonPlus, Csv, Markdown];
/// `results export --format`: the machine-readable forms of one run.
pub const EXPORT_FORMATS: &[OutputFormat] = &[Json, Csv, Markdown, FioJson, FioJsonPlus];
/// `results list` and `compare`: a table for people, or JSON.
pub const TABLE_FORMATS: &[OutputFormat] = &[Human, Json];

/// Benchmark filesystems and compare them side by side.
#[derive(Debug, Parser)]
// `help` is fsarena's own subcommand (kinds and their keys), so clap's is off; `help COMMAND`
// still prints that command's --help.
#[command(
    name = "fsarena",
    version,
    about = "Benchmark filesystems and compare them side by side.",
    long_about = None,
    disable_help_subcommand = true,
    after_help = "fsarena help lists the workload and target kinds; fsarena help KIND lists a kind's keys."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run workloads on targets and report the results.
    Run(Box<RunArgs>),
    /// The studies in miniature: every built-in suite at smoke scale on what this machine can
    /// provision, each stored as its own run, into one HTML report with Findings.
    Demo(DemoArgs),
    /// The five studies as built-in suites: list them, show one (its file, its plan at each
    /// scale), or run one with the study's report and Findings.
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// List, show, export or remove stored runs.
    #[command(subcommand)]
    Results(ResultsCommand),
    /// Compare two runs (A/B), or the targets of one run against a baseline target.
    Compare(CompareArgs),
    /// Write a report with tables and charts for stored runs: report.html or report.md.
    Report(ReportArgs),
    /// List every target kind: available here or not, and why not.
    Targets,
    /// Tear down what an interrupted (killed) run left in the work directory: mounts, loop
    /// devices, images, FUSE daemons it recorded, and nothing else.
    Cleanup(CleanupArgs),
    /// Provision targets and hold them for your own tools: prints each mount point (a line
    /// per target: its label, then its mount, then every other client's mount of a
    /// glusterfs:clients=N target, tab-separated), then waits for Ctrl-C (or SIGTERM) and
    /// tears down; --detach returns at once and leaves them for `fsarena down`.
    Up(UpArgs),
    /// Tear down the targets `fsarena up --detach` holds in the work directory (one run's,
    /// or all).
    Down(DownArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the main man page (roff) to stdout, or write one page per command to --dir.
    Man(ManArgs),
    /// The workload and target kinds; a kind's keys with type, default, unit and help
    /// (`fsarena help io`, `fsarena help ext4`); `workloads` or `targets` for every kind; a
    /// command's flags (`fsarena help run`).
    Help(HelpArgs),
}

/// `fsarena help`.
#[derive(Debug, Args)]
pub struct HelpArgs {
    /// A workload kind (io, meta, tree), a target kind (ext4, tmpfs, fuse, dir, ...),
    /// `workloads`, `targets`, or a command.
    #[arg(value_name = "TOPIC")]
    pub topic: Option<String>,
    /// Markdown, as in docs/workloads.md and docs/targets.md.
    #[arg(long)]
    pub markdown: bool,
}

/// `fsarena man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write fsarena.1, fsarena-run.1, ... (one page per command) to this existing directory.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

/// `--db PATH`, shared by every command that reads or writes the store.
#[derive(Debug, Args, Clone)]
pub struct DbArg {
    /// The results database [default: $XDG_DATA_HOME/fsarena/results.db]
    #[arg(long = "db", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl DbArg {
    /// The path given, or the default in the user's data directory.
    pub fn path(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(fsarena_store::default_path)
    }
}

/// `--workdir DIR`, shared by every command that provisions or cleans up: defined once.
#[derive(Debug, Args, Clone)]
pub struct WorkdirArg {
    /// Where images, mount points, logs and the state file go. Created 0700 if missing; refused
    /// if it (or a directory above it) is a symlink, owned by another user, or writable by
    /// others (a sticky directory such as /var/tmp is fine above it). A relative path is taken
    /// against the current directory.
    #[arg(id = "workdir", long = "workdir", value_name = "DIR", default_value = fsarena_target::DEFAULT_WORKDIR)]
    pub path: PathBuf,
}

/// `fsarena suite ...`.
#[derive(Debug, Subcommand)]
pub enum SuiteCommand {
    /// The built-in suites: name, study, rows.
    List,
    /// A suite's file (copy it as a starting point: `fsarena run my.toml`), then its plan and
    /// estimated duration at each scale.
    Show {
        /// The suite.
        name: String,
        /// The work directory the plans are checked against.
        #[command(flatten)]
        workdir: WorkdirArg,
    },
    /// Run a suite: every row of its study on its targets (those this machine cannot
    /// provision, and rows whose workload this build lacks, are skipped and listed), then the
    /// report with the Findings.
    Run(Box<SuiteRunArgs>),
}

/// `fsarena suite run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fsarena suite run roundup --scale smoke\n  fsarena suite run dbfs --add-target 'fuse:cmd=mydbfs {mnt},label=dbfs' --name before\n  fsarena suite run kv --target xfs --target ext4 --scale full"
)]
pub struct SuiteRunArgs {
    /// The suite (`fsarena suite list`).
    #[arg(value_name = "NAME")]
    pub suite: String,
    /// The flags `run` takes.
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// `fsarena results ...`. RUN is an id, a unique prefix of one, `last` or `last~N`.
#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// Stored runs, newest first.
    List {
        /// human or json (`{"runs": [...]}`).
        #[arg(
            long,
            value_name = "FORMAT",
            value_parser = crate::offer::format_names(TABLE_FORMATS),
            hide_possible_values = true,
            default_value = "human",
        )]
        output_format: String,
        /// The results database.
        #[command(flatten)]
        db: DbArg,
    },
    /// One run, as `fsarena run` printed it.
    Show {
        /// The run.
        run: String,
        /// human, json, fio-json, fio-json+, csv or md.
        #[arg(
            long,
            value_name = "FORMAT",
            value_parser = crate::offer::format_names(SHOW_FORMATS),
            hide_possible_values = true,
            default_value = "human",
        )]
        output_format: String,
        /// The results database.
        #[command(flatten)]
        db: DbArg,
    },
    /// One run as json, csv, md (Markdown tables), fio-json or fio-json+ on stdout.
    Export {
        /// The run.
        run: String,
        /// json, csv, md, fio-json or fio-json+.
        #[arg(
            long,
            value_name = "FORMAT",
            value_parser = crate::offer::format_names(EXPORT_FORMATS),
            hide_possible_values = true,
        )]
        format: String,
        /// The results database.
        #[command(flatten)]
        db: DbArg,
    },
    /// Remove a run.
    Rm {
        /// The run.
        run: String,
        /// The results database.
        #[command(flatten)]
        db: DbArg,
    },
}

/// `fsarena compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run A (the baseline), or the one run whose targets are compared with --baseline.
    pub run_a: String,
    /// Run B (the candidate).
    pub run_b: Option<String>,
    /// Compare every target of RUN_A against this target label.
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    /// Exit 1 when a significant regression is larger than PCT percent, or when a posix
    /// case newly fails.
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// human or json.
    #[arg(
        long,
        value_name = "FORMAT",
        value_parser = crate::offer::format_names(TABLE_FORMATS),
        hide_possible_values = true,
        default_value = "human",
    )]
    pub output_format: String,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
}

/// `fsarena report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The runs to report.
    #[arg(required = true)]
    pub runs: Vec<String>,
    /// Output file: *.html (one self-contained file) or *.md (with SVG charts beside it).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
}

/// `fsarena cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// The work directory of the runs to clean up.
    #[command(flatten)]
    pub workdir: WorkdirArg,
}

/// `fsarena up`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fsarena up --target ext4:size=8g --target xfs:size=8g\n  fsarena up --target fuse2fs --detach && fio --directory=... && fsarena down"
)]
pub struct UpArgs {
    /// A filesystem to provision: KIND[:key=value,...], as for `fsarena run`. Repeatable.
    #[arg(long = "target", value_name = "SPEC", required = true, value_parser = crate::offer::target_specs(), hide_possible_values = true)]
    pub targets: Vec<String>,
    /// Return once the targets are up; `fsarena down` tears them down.
    #[arg(long)]
    pub detach: bool,
    /// Allow formatting a real block device (device: targets).
    #[arg(long)]
    pub force: bool,
    /// The work directory.
    #[command(flatten)]
    pub workdir: WorkdirArg,
}

/// `fsarena down`.
#[derive(Debug, Args)]
pub struct DownArgs {
    /// The run id `fsarena up --detach` printed; every held run of the work directory when
    /// left out.
    pub run: Option<String>,
    /// The work directory.
    #[command(flatten)]
    pub workdir: WorkdirArg,
}

/// `fsarena run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fsarena run --target dir:path=/mnt/x --workload io:rw=randread,bs=4k,size=1g,runtime=10s,time_based=1\n  fsarena run --fio job.fio --target dir:path=/mnt/x --output-format fio-json\n  fsarena run job.toml\n\nWorkload and target keys (fio's, mdtest's and fs_mark's names and defaults): `fsarena help` lists the kinds, `fsarena help io` (or meta, tree, ext4, fuse, ...) a kind's keys with type, default and unit; the same in docs/workloads.md and docs/targets.md. An unknown key is answered with the accepted ones."
)]
pub struct RunArgs {
    /// A TOML experiment file: name, description, targets, workloads with sweeps, repeat,
    /// warmup, drop_caches; rows with [workload.quick] and [workload.smoke] reductions, claims.
    pub jobfile: Option<PathBuf>,
    /// Everything else `run` takes, shared with `suite run`.
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// The flags of `run` that `suite run` takes too: defined once, here.
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    /// A fio job file ([global] and job sections); its jobs become one io workload.
    #[arg(long, value_name = "JOBFILE")]
    pub fio: Option<PathBuf>,
    /// A filesystem under test: KIND[:key=value,...], e.g. dir:path=/mnt/x. Repeatable; it
    /// replaces the targets of an experiment file or suite.
    #[arg(long = "target", value_name = "SPEC", value_parser = crate::offer::target_specs(), hide_possible_values = true)]
    pub targets: Vec<String>,
    /// A filesystem to add to the targets of an experiment file or suite (your own FUSE
    /// filesystem, a real device with --force). Repeatable.
    #[arg(long = "add-target", value_name = "SPEC", value_parser = crate::offer::target_specs(), hide_possible_values = true)]
    pub add_targets: Vec<String>,
    /// The size an experiment file or suite runs at: smoke, quick or full (the study's own
    /// parameters); each row's [workload.quick] and [workload.smoke] tables say what is reduced
    /// and why [default: full for `run`, quick for `suite run`]
    #[arg(long, value_name = "SCALE", value_parser = ["smoke", "quick", "full"])]
    pub scale: Option<String>,
    /// A workload: KIND[:key=value,...], e.g. io:rw=randread,bs=4k,size=1g. Repeatable. A
    /// list sweeps the key: numjobs='1,4,16' (fio's comma-valued bs, rate and bssplit take
    /// bs='4k|64k'); several lists give their product.
    #[arg(
        long = "workload",
        value_name = "SPEC",
        value_parser = crate::offer::workload_specs(),
        hide_possible_values = true
    )]
    pub workloads: Vec<String>,
    /// Only these syscall families of every posix workload, comma-separated (chmod,rename):
    /// sets its `family=`. Refused without a posix workload.
    #[arg(long, value_name = "FAMILIES")]
    pub posix_family: Option<String>,
    /// human, json, fio-json, fio-json+ (alias json+) or csv. Machine-readable output goes to
    /// stdout alone.
    #[arg(
        long,
        value_name = "FORMAT",
        value_parser = crate::offer::format_names(RUN_FORMATS),
        hide_possible_values = true,
    )]
    pub output_format: Option<String>,
    /// Also write the report here at the end: FILE.html (one self-contained file) or FILE.md
    /// (Markdown, its SVG charts beside it). Checked before anything runs.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the plan and exit without creating anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Measured repetitions of every workload on every target, at most 1000 [default: 3, or
    /// the job file's `repeat`; 1 when every workload is a check such as posix]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_REPEAT)))]
    pub repeat: Option<u32>,
    /// Discarded warm-up repetitions before the measured ones, at most 100 [default: 1, or the
    /// job file's `warmup`; 0 when every workload is a check such as posix]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_WARMUP)))]
    pub warmup: Option<u32>,
    /// The results database (SQLite).
    #[command(flatten)]
    pub db: DbArg,
    /// Do not store the results.
    #[arg(long)]
    pub no_store: bool,
    /// Name the run (`before`, `after`): later commands take the name where they take a run
    /// id, and find the newest run of that name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Tag the run (repeatable); tags show in `results list`.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Where images, mount points and the state file go.
    #[command(flatten)]
    pub workdir: WorkdirArg,
    /// Run the targets this machine can provision and name the ones it cannot (kernel or
    /// tool missing), instead of refusing the whole plan.
    #[arg(long)]
    pub skip_unavailable: bool,
    /// For CI: a check that finds something (a failed posix case, a verify mismatch, a crash
    /// violation) makes the run exit 3 with "N findings (--strict-checks)", its complete
    /// results stored; without it a finding is a result and the run exits 0.
    #[arg(long)]
    pub strict_checks: bool,
    /// Allow formatting a real block device (device: targets).
    #[arg(long)]
    pub force: bool,
    /// Keep the page cache between workloads (by default: sync, then drop caches when root).
    #[arg(long)]
    pub no_drop_caches: bool,
    /// Run as one rank of an MPI job (`mpirun -np N fsarena run --mpi ...`): rank 0
    /// provisions, every rank runs the workloads in its own directory rank-K (meta's ranks
    /// share one test directory, as mdtest's), rank 0 merges
    /// the measurements, prints and stores. Needs a build with `--features mpi`.
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi, outside mpirun: fsarena starts the MPI job itself on the hosts of this
    /// Open MPI hostfile (`HOST slots=N` lines), `--ranks-per-host` ranks on each, and
    /// watches it: a host that goes down mid-run is named, the other hosts' figures are
    /// stored as incomplete, and the exit status is 1.
    #[arg(long, value_name = "FILE", requires = "mpi")]
    pub hostfile: Option<PathBuf>,
    /// With --hostfile: ranks on each host [default: each host's slots= for `run`, 1 for
    /// `suite run`, whose clients are hosts and processes numjobs=].
    #[arg(long, value_name = "N", requires = "hostfile", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub ranks_per_host: Option<u32>,
    /// How progress shows on stderr (-q, --log).
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// `-q` and `--log`, shared by the commands that run a plan: defined once.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct ProgressArgs {
    /// Quiet: nothing on stderr but errors and the warnings at the end; the results still go
    /// to stdout. Wins over --log.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// One plain line per event instead of the live status line (the default when stderr is
    /// not a terminal).
    #[arg(long)]
    pub log: bool,
}

impl ProgressArgs {
    /// The display these flags ask for, on this stderr.
    pub fn mode(self) -> crate::progress::Mode {
        crate::progress::Mode::choose(self.quiet, self.log)
    }
}

/// `fsarena demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Measured repetitions of every row (so that Findings have intervals), at most 1000.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_REPEAT)))]
    pub repeat: u32,
    /// Discarded warm-up repetitions of every row, at most 100.
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_WARMUP)))]
    pub warmup: u32,
    /// Only these suites (`fsarena suite list`), in the studies' order; all by default.
    #[arg(long = "suite", value_name = "NAME")]
    pub suites: Vec<String>,
    /// Where the HTML report goes.
    #[arg(short = 'o', long = "output", value_name = "FILE", default_value = "fsarena-demo.html")]
    pub output: PathBuf,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
    /// Where images, mount points and the state file go.
    #[command(flatten)]
    pub workdir: WorkdirArg,
    /// How progress shows on stderr (-q, --log).
    #[command(flatten)]
    pub progress: ProgressArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn flag_table_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The bounds of --repeat and --warmup are said where the flags are documented (--help,
    /// the man page), with the numbers the plan enforces.
    #[test]
    fn repetition_bounds_are_documented() {
        let run = Cli::command().find_subcommand("run").map(|c| c.clone().render_long_help().to_string()).unwrap();
        assert!(
            run.contains(&format!("at most {MAX_REPEAT}")) && run.contains(&format!("at most {MAX_WARMUP}")),
            "{run}"
        );
        assert!(Cli::try_parse_from(["fsarena", "run", "--repeat", "1000000000"]).is_err());
        assert!(Cli::try_parse_from(["fsarena", "demo", "--warmup", "101"]).is_err());
    }
}
