//! Validation: command line and job files become a [`Plan`] before anything is created.

use crate::args::{PlanArgs, RunArgs, DEFAULT_REPEAT, DEFAULT_WARMUP, MAX_REPEAT, MAX_WARMUP};
use crate::experiment::{self, Scale, TomlJob};
use crate::failure::Failure;
use fsarena_core::{InputError, Spec};
use fsarena_io::io::{jobfile, IoWorkload};
use fsarena_report::experiment::{Experiment, Skipped};
use fsarena_report::OutputFormat;
use fsarena_target::Target;
use fsarena_workload::plain::cut;
use fsarena_workload::Workload;
use std::path::PathBuf;

/// What to run: targets × workloads, and how to report.
#[derive(Debug)]
pub struct Plan {
    /// Filesystems under test, in order.
    pub targets: Vec<Box<dyn Target>>,
    /// Workload × sweep point, run on each target in order.
    pub steps: Vec<Step>,
    /// How many workloads the steps come from (`--workload`, `[[workload]]`, a fio file).
    pub workload_count: usize,
    /// The experiment's description (TOML `description =`), shown by --dry-run.
    pub description: Option<String>,
    /// Output format.
    pub format: OutputFormat,
    /// Print the plan only.
    pub dry_run: bool,
    /// Where images, mount points and the state file go.
    pub workdir: PathBuf,
    /// Drop the page cache before each workload.
    pub drop_caches: bool,
    /// The plan as given: the command line and the text of every job file, stored verbatim.
    pub text: String,
    /// Measured repetitions.
    pub repeat: u32,
    /// Discarded warm-up repetitions.
    pub warmup: u32,
    /// The results database, or None with --no-store.
    pub db: Option<PathBuf>,
    /// The run's name (`--name`), by which later commands find it.
    pub name: Option<String>,
    /// The run's tags (`--tag`).
    pub tags: Vec<String>,
    /// Write an HTML report here at the end (the demo, `suite run -o`).
    pub report: Option<PathBuf>,
    /// Rows and targets skipped here, each with the reason (`row pg: workload ...`).
    pub skipped: Vec<String>,
    /// (target, step) pairs not run: the step's workload cannot run on that target's kind
    /// (listed in `skipped`).
    pub excluded: Vec<(usize, usize)>,
    /// The scale of an experiment file or suite.
    pub scale: Option<Scale>,
    /// `--strict-checks`: exit 3 when the results hold findings ([`fsarena_core::FINDINGS`]).
    pub strict_checks: bool,
}

/// An experiment file's text and where it came from.
#[derive(Debug)]
pub struct JobFile {
    /// The path or `suites/NAME.toml`, for messages.
    pub origin: String,
    /// Its text.
    pub text: String,
    /// The file read, when it was one (its text is stored again from it).
    pub path: Option<PathBuf>,
    /// The built-in suite's name, when it is one.
    pub suite: Option<&'static str>,
}

/// One workload at one sweep point: what the runner runs on each target.
#[derive(Debug)]
pub struct Step {
    /// The workload, parsed and checked, with one value per key.
    pub workload: Box<dyn Workload + Send + Sync>,
    /// The swept keys and their values here; empty when nothing is swept.
    pub point: Vec<fsarena_core::Param>,
    /// Which workload of the plan this is (0-based) and its point among `points`.
    pub workload_index: usize,
    /// This step's point, 0-based.
    pub point_index: usize,
    /// How many points its workload's sweep has.
    pub points: usize,
}

/// Sets `key` of a sweep to the one value `value` (`--posix-family` over a job file's
/// `family =`).
fn set_key(keys: &mut Vec<(String, Vec<String>)>, key: &str, value: &str) {
    keys.retain(|(k, _)| k != key);
    keys.push((key.to_string(), vec![value.to_string()]));
}

/// Expands a workload spec's lists into steps, each point parsed and checked; the error names
/// the point. `index` is the workload's place in the plan.
fn sweep_steps(spec: &Spec, index: usize) -> Result<Vec<Step>, InputError> {
    let kind = spec.kind.clone();
    let sweep = fsarena_core::sweep::Sweep::from_spec(spec, |key| fsarena_kinds::list_separators(&kind, key))?;
    steps_of(&sweep, index)
}

fn steps_of(sweep: &fsarena_core::sweep::Sweep, index: usize) -> Result<Vec<Step>, InputError> {
    let points = sweep.points()?;
    let count = points.len();
    let mut steps = Vec::with_capacity(count);
    for (point_index, point) in points.into_iter().enumerate() {
        let workload = fsarena_kinds::parse(&point.spec).map_err(|e| {
            if point.varying.is_empty() {
                e
            } else {
                let at: Vec<String> = point.varying.iter().map(|(k, v)| format!("{k}={v}")).collect();
                InputError::new(format!("at {}: {}", at.join(" "), e.message))
            }
        })?;
        let params = point
            .varying
            .iter()
            .map(|(k, v)| fsarena_core::Param {
                key: k.clone(),
                given: v.clone(),
                number: fsarena_kinds::param_number(&sweep.kind, k, v),
            })
            .collect();
        steps.push(Step { workload, point: params, workload_index: index, point_index, points: count });
    }
    Ok(steps)
}

/// The command line, quoted where needed, then each job file's text.
fn plan_text(files: &[&std::path::Path]) -> String {
    let given = crate::ARGS.get().cloned().unwrap_or_else(|| std::env::args().collect());
    let args: Vec<String> = given
        .into_iter()
        .map(|a| if a.contains(|c: char| c.is_whitespace() || c == '\'') { format!("'{a}'") } else { a })
        .collect();
    let mut text = args.join(" ");
    for f in files {
        // Read again with the same bounds as when parsed: the file may have changed since.
        let body = fsarena_io::io::jobfile::read_job_text(f, "job file").unwrap_or_default();
        text.push_str(&format!("\n\n# {}\n{body}", f.display()));
    }
    text
}

fn parse_format(name: &str, origin: &str) -> Result<OutputFormat, InputError> {
    OutputFormat::parse(name, crate::args::RUN_FORMATS).map_err(|e| InputError::new(e.to_string()).at(origin))
}

impl Plan {
    /// From `fsarena run` arguments.
    pub fn from_run_args(run: &RunArgs) -> Result<Self, Failure> {
        let job = match &run.jobfile {
            // A regular file of at most 1 MiB in UTF-8, as a fio job file.
            Some(path) => Some(JobFile {
                origin: path.display().to_string(),
                text: jobfile::read_job_text(path, "job file")?,
                path: Some(path.clone()),
                suite: None,
            }),
            None => None,
        };
        Self::build(&run.plan, job, Scale::Full)
    }

    /// The plan from the flags and an experiment file (or suite), at `default_scale` unless
    /// --scale says otherwise: the file's rows, the fio job file and the --workload flags
    /// become steps, the targets are parsed (and, for a menu, those this machine cannot
    /// provision skipped), then the repetitions, names and the machine's room are checked.
    pub fn build(args: &PlanArgs, job: Option<JobFile>, default_scale: Scale) -> Result<Self, Failure> {
        let scale = check_flags(args, job.as_ref(), default_scale)?;
        // A suite's targets and rows are a menu: what this machine or build cannot run is
        // skipped and listed, as --skip-unavailable does for a round-up.
        let skip_unavailable = args.skip_unavailable || job.as_ref().is_some_and(|j| j.suite.is_some());
        let mut draft = Draft {
            target_specs: args.targets.iter().map(|t| (t.clone(), "--target".to_string())).collect(),
            ..Draft::default()
        };
        if let Some(job_file) = &job {
            draft.read_file(job_file, args, scale, skip_unavailable)?;
        }
        if let Some(path) = &args.fio {
            draft.add_fio(path)?;
        }
        draft.add_workloads(args)?;
        check_distinct(&draft.steps)?;
        if args.posix_family.is_some() && !draft.steps.iter().any(|s| s.workload.kind() == "posix") {
            return Err(InputError::new(
                "--posix-family chooses the families of a posix workload: add --workload posix (or a [[workload]] of kind posix)",
            )
            .into());
        }
        if let Some(f) = &args.output_format {
            draft.format = Some(parse_format(f, "--output-format")?);
        }
        let targets = draft.targets(args, job.as_ref().and_then(|j| j.suite), skip_unavailable)?;
        if draft.steps.is_empty() {
            return Err(InputError::new(
                "no workload: give --workload SPEC (e.g. io:rw=read,size=1g), --fio JOBFILE or a TOML job file",
            )
            .into());
        }
        // The command line wins over the file, the file over the defaults.
        let origin = job.as_ref().map(|j| j.origin.clone()).unwrap_or_default();
        let (repeat, warmup) = draft.rounds(args, &origin)?;
        let file = draft.file.take();
        let drop_caches = drop_caches(args, file.as_ref(), &origin)?;
        let (name, tags) = names(args, file.as_ref(), &origin)?;
        let workdir = check_machine(&targets, &args.workdir.path)?;
        // Under MPI every rank puts its own share on the one target.
        let sharing = match args.mpi {
            true => crate::ranks::launcher_size().or_else(crate::ranks::ranks_of_job).unwrap_or(1),
            false => 1,
        };
        // Under fsarena's own launcher (`--hostfile`) the hosts are known here; under a
        // launcher of the user's only at run time, where the runner checks.
        let hosts = match args.mpi {
            true => crate::ranks::hosts_of_job(),
            false => Some(1),
        };
        // A workload that runs on some kinds only (crash): in a suite (or with
        // --skip-unavailable) the pairs it cannot run are skipped and listed, else refused.
        let excluded = check_footprints(&targets, &draft.steps, (sharing, hosts), skip_unavailable)?;
        check_workdir_room(&targets, &draft.steps, &excluded, &workdir)?;
        for (_, _, what, reason) in &excluded {
            let what = what.clone();
            if !draft.skipped.iter().any(|k| k.what == what) {
                draft.skipped.push(Skipped { what, reason: reason.clone() });
            }
        }
        let text = draft.text(job.as_ref(), args.fio.as_deref());
        Ok(Self {
            targets,
            steps: draft.steps,
            workload_count: draft.workload_count,
            skipped: draft.skipped.iter().map(|s| format!("{}: {}", s.what, s.reason)).collect(),
            excluded: excluded.into_iter().map(|(t, s, ..)| (t, s)).collect(),
            scale: job.as_ref().map(|_| scale),
            description: file.and_then(|f| f.description),
            format: draft.format.unwrap_or(OutputFormat::Human),
            dry_run: args.dry_run,
            workdir,
            drop_caches,
            text,
            repeat,
            warmup,
            db: (!args.no_store).then(|| args.db.path()),
            name,
            tags,
            report: args.output.clone(),
            strict_checks: args.strict_checks,
        })
    }
}

/// The scale, once the flags that need an experiment file have one and the report file can
/// be written (known now, not after the run).
fn check_flags(args: &PlanArgs, job: Option<&JobFile>, default_scale: Scale) -> Result<Scale, Failure> {
    let scale = match &args.scale {
        Some(s) => Scale::parse(s)?,
        None => default_scale,
    };
    if let Some(out) = &args.output {
        crate::report_file::check(out, &crate::report_file::ReportFile::ALL)?;
    }
    if args.scale.is_some() && job.is_none() {
        return Err(InputError::new(
            "--scale sizes an experiment file or a suite: give a job file (fsarena run exp.toml) or use fsarena suite run",
        )
        .into());
    }
    if !args.add_targets.is_empty() && job.is_none() {
        return Err(
            InputError::new("--add-target adds to an experiment file's targets: give one, or use --target").into()
        );
    }
    Ok(scale)
}

/// A plan while it is read: what the experiment file, the fio job file and the flags add.
#[derive(Default)]
struct Draft {
    /// Each target spec with where it came from, for messages.
    target_specs: Vec<(String, String)>,
    steps: Vec<Step>,
    workload_count: usize,
    format: Option<OutputFormat>,
    /// The experiment file, once read.
    file: Option<TomlJob>,
    /// The file's repetitions and warm-ups at the chosen scale.
    file_repeat: Option<u32>,
    file_warmup: Option<u32>,
    skipped: Vec<Skipped>,
    /// The study the file describes (a suite, or rows with titles), for the report.
    experiment: Option<Experiment>,
}

impl Draft {
    /// Reads an experiment file or suite: its targets (unless --target), its rows as steps
    /// (a row this build or machine cannot run skipped when `skip_unavailable`), its claims
    /// and figures.
    fn read_file(
        &mut self,
        job_file: &JobFile,
        args: &PlanArgs,
        scale: Scale,
        skip_unavailable: bool,
    ) -> Result<(), Failure> {
        let origin = job_file.origin.clone();
        let job = experiment::parse(&job_file.text, &origin)?;
        let at_scale = experiment::file_scale(&job, scale, &origin)?;
        self.file_repeat = at_scale.repeat.or(job.repeat);
        self.file_warmup = at_scale.warmup.or(job.warmup);
        if args.targets.is_empty() {
            match &at_scale.targets {
                Some(specs) => {
                    let at = format!("{origin}: [scale.{}]", scale.name());
                    self.target_specs.extend(specs.iter().map(|t| (t.clone(), at.clone())));
                }
                None => {
                    self.target_specs.extend(job.targets.iter().map(|t| (t.clone(), origin.clone())));
                    for (i, table) in job.target.iter().enumerate() {
                        let at = format!("{origin}: [[target]] #{}", i + 1);
                        self.target_specs.push((experiment::table_to_target(table, &at)?, at));
                    }
                }
            }
        }
        self.target_specs.extend(args.add_targets.iter().map(|t| (t.clone(), "--add-target".to_string())));
        if let Some(f) = &job.output_format {
            self.format = Some(parse_format(f, &origin)?);
        }
        let rows = experiment::rows(&job, scale, &origin)?;
        let claims = experiment::claims(&job, &rows, &origin)?;
        let figures = experiment::figures::figures(&job, &rows, &origin)?;
        let mut described = Vec::new();
        for row in &rows {
            described.push(self.add_row(row, args, skip_unavailable)?);
        }
        if job_file.suite.is_some() || experiment::describes_rows(&job) {
            self.experiment = Some(Experiment {
                name: job_file.suite.map(String::from).or_else(|| job.name.clone()).unwrap_or_else(|| origin.clone()),
                title: job.description.clone(),
                scale: scale.name().to_string(),
                rows: described,
                claims,
                skipped: Vec::new(),
                figures,
            });
        }
        self.file = Some(job);
        Ok(())
    }

    /// One row of the file as steps, or skipped; the row as the report describes it.
    fn add_row(
        &mut self,
        row: &experiment::FileRow,
        args: &PlanArgs,
        skip_unavailable: bool,
    ) -> Result<fsarena_report::experiment::Row, Failure> {
        let mut sweep = experiment::table_to_sweep(&row.table, &row.origin)?;
        // A workload this build lacks (the servers and the crash checks come in their own
        // builds): the row is listed as skipped, the rest runs.
        let unavailable = match (&row.missing_feature, fsarena_kinds::kind(&sweep.kind)) {
            (_, None) => Some(format!("workload `{}` is not in this build", cut(&sweep.kind))),
            (Some(why), _) => Some(why.clone()),
            _ => None,
        };
        if let Some(reason) = unavailable.filter(|_| skip_unavailable) {
            self.skipped.push(Skipped { what: format!("row {}", row.id), reason });
            // Still a row of the report: its heading says it did not run here.
            return Ok(row.described(Vec::new()));
        }
        if let Some(why) = &row.missing_feature {
            return Err(InputError::new(format!("row {}: {why} (or --skip-unavailable)", cut(&row.id)))
                .at(row.origin.clone())
                .into());
        }
        if sweep.kind == "posix" {
            if let Some(families) = &args.posix_family {
                set_key(&mut sweep.keys, "family", families);
            }
        }
        let row_steps = steps_of(&sweep, self.workload_count).map_err(|e| e.at(row.origin.clone()))?;
        let workloads = row_steps
            .iter()
            .map(|s| {
                fsarena_report::ResultEntry {
                    workload_kind: s.workload.kind().to_string(),
                    workload_params: s.workload.params(),
                    ..Default::default()
                }
                .workload_title()
            })
            .collect();
        self.steps.extend(row_steps);
        self.workload_count += 1;
        Ok(row.described(workloads))
    }

    /// A fio job file (`--fio`) as one workload; its jobs' one `directory=` is the target
    /// when none is given.
    fn add_fio(&mut self, path: &std::path::Path) -> Result<(), Failure> {
        let parsed = jobfile::parse_file(path)?;
        let directories: Vec<String> = parsed.jobs.iter().filter_map(|j| j.options.directory.clone()).collect();
        if self.target_specs.is_empty() && !directories.is_empty() {
            if directories.iter().any(|d| d != &directories[0]) {
                return Err(InputError::new(
                    "jobs name different directory= values: give one --target per directory instead",
                )
                .at(path.display().to_string())
                .into());
            }
            self.target_specs.push((directory_spec(&directories[0], path)?, path.display().to_string()));
        }
        let workload: Box<dyn Workload + Send + Sync> = Box::new(IoWorkload::from_job_file(parsed));
        self.steps.push(Step {
            workload,
            point: Vec::new(),
            workload_index: self.workload_count,
            point_index: 0,
            points: 1,
        });
        self.workload_count += 1;
        Ok(())
    }

    /// The --workload specs, each swept into steps.
    fn add_workloads(&mut self, args: &PlanArgs) -> Result<(), Failure> {
        for w in &args.workloads {
            let mut spec = Spec::parse(w).map_err(|e| e.at("--workload"))?;
            if spec.kind == "posix" {
                if let Some(families) = &args.posix_family {
                    spec.params.retain(|(k, _)| k != "family");
                    spec.params.push(("family".into(), families.clone()));
                }
            }
            // The origin names the spec, cut: the message itself quotes the bad value.
            self.steps
                .extend(sweep_steps(&spec, self.workload_count).map_err(|e| e.at(format!("--workload {}", cut(w))))?);
            self.workload_count += 1;
        }
        Ok(())
    }

    /// The targets, parsed; with `skip_unavailable` those this machine cannot provision are
    /// skipped and listed (none left is bad input naming them). `suite`: the suite's name.
    fn targets(
        &mut self,
        args: &PlanArgs,
        suite: Option<&str>,
        skip_unavailable: bool,
    ) -> Result<Vec<Box<dyn Target>>, Failure> {
        let mut targets = self
            .target_specs
            .iter()
            .map(|(t, origin)| fsarena_target::parse(t, args.force).map_err(|e| e.at(format!("{origin} {}", cut(t)))))
            .collect::<Result<Vec<_>, _>>()?;
        if skip_unavailable {
            // A round-up over every kind runs what this machine can provision and says what it
            // skipped; without the flag an unavailable kind is bad input (exit 2).
            let mut missing = Vec::new();
            targets.retain(|t| match fsarena_target::requirements::check(&t.requirements()) {
                Ok(()) => true,
                Err(why) => {
                    missing.push(format!("{}: {why}", t.label()));
                    self.skipped.push(Skipped { what: format!("target {}", t.label()), reason: why });
                    false
                }
            });
            if targets.is_empty() && !missing.is_empty() {
                let head = match suite {
                    Some(name) => format!("suite {name}: none of its targets can be provisioned here"),
                    None => "--skip-unavailable: no target can be provisioned here".to_string(),
                };
                return Err(InputError::new(format!("{head} (skipped: {})", missing.join("; "))).into());
            }
        }
        if targets.is_empty() {
            return Err(InputError::new(
                "no target: give --target SPEC, e.g. --target ext4 or --target dir:path=/mnt/x",
            )
            .into());
        }
        Ok(targets)
    }

    /// The measured repetitions and warm-ups: the flags', else the file's (`origin`), else
    /// the defaults, each within its bounds.
    fn rounds(&self, args: &PlanArgs, origin: &str) -> Result<(u32, u32), Failure> {
        // Checks whose verdicts do not vary (posix) need no repetitions to average, nor a
        // warm-up to discard: a plan of only those runs once unless told otherwise.
        let deterministic = self.steps.iter().all(|s| s.workload.deterministic());
        let (default_repeat, default_warmup) = if deterministic { (1, 0) } else { (DEFAULT_REPEAT, DEFAULT_WARMUP) };
        let repeat = args.repeat.or(self.file_repeat).unwrap_or(default_repeat);
        let warmup = args.warmup.or(self.file_warmup).unwrap_or(default_warmup);
        // The flags are bounded by their parser too; a job file's values only here.
        let refuse = |message: String, flag: bool| {
            let error = InputError::new(message);
            Err(if flag { error } else { error.at(origin) }.into())
        };
        let (repeat_flag, warmup_flag) = (args.repeat.is_some(), args.warmup.is_some());
        let repeat_name = if repeat_flag { "--repeat " } else { "repeat = " };
        let warmup_name = if warmup_flag { "--warmup " } else { "warmup = " };
        if repeat == 0 {
            return refuse(format!("{repeat_name}0: expected at least 1 measured repetition"), repeat_flag);
        }
        if repeat > MAX_REPEAT {
            return refuse(
                format!("{repeat_name}{repeat}: expected at most {MAX_REPEAT} measured repetitions"),
                repeat_flag,
            );
        }
        if warmup > MAX_WARMUP {
            return refuse(
                format!("{warmup_name}{warmup}: expected at most {MAX_WARMUP} warm-up repetitions"),
                warmup_flag,
            );
        }
        Ok((repeat, warmup))
    }

    /// The plan as stored: the command line, every file read, a built-in suite's text and
    /// the experiment's description.
    fn text(&mut self, job: Option<&JobFile>, fio: Option<&std::path::Path>) -> String {
        let files: Vec<&std::path::Path> = [job.and_then(|j| j.path.as_deref()), fio].into_iter().flatten().collect();
        let mut text = plan_text(&files);
        if let Some(j) = job.filter(|j| j.path.is_none()) {
            // A built-in suite: its text as it was in this build.
            text.push_str(&format!("\n\n# {}\n{}", j.origin, j.text));
        }
        if let Some(mut e) = self.experiment.take() {
            e.skipped.clone_from(&self.skipped);
            text.push_str(&e.plan_suffix());
        }
        text
    }
}

/// Whether to drop the page cache before each measured repetition: the file's `drop_caches`
/// unless --no-drop-caches.
fn drop_caches(args: &PlanArgs, file: Option<&TomlJob>, origin: &str) -> Result<bool, Failure> {
    match file.and_then(|f| f.drop_caches.as_deref()) {
        _ if args.no_drop_caches => Ok(false),
        None | Some("repetition") => Ok(true),
        Some("none") => Ok(false),
        Some(other) => Err(InputError::new(format!(
            "drop_caches = \"{}\": expected \"repetition\" (sync and drop before each measured repetition) or \"none\"",
            cut(other)
        ))
        .at(origin)
        .into()),
    }
}

/// The run's name and tags: the flags' and the file's, each checked.
fn names(args: &PlanArgs, file: Option<&TomlJob>, origin: &str) -> Result<(Option<String>, Vec<String>), Failure> {
    let name = match (&args.name, file.and_then(|f| f.name.as_ref())) {
        (Some(n), _) => Some(run_name(n, "--name")?),
        (None, Some(n)) => Some(run_name(n, &format!("{origin}: name"))?),
        (None, None) => None,
    };
    let mut tags: Vec<String> = args.tags.iter().map(|t| run_name(t, "--tag")).collect::<Result<_, _>>()?;
    for t in file.map(|f| f.tags.as_slice()).unwrap_or_default() {
        tags.push(run_name(t, &format!("{origin}: tags"))?);
    }
    Ok((name, tags))
}

impl Plan {
    /// The warm-ups and measured repetitions of `step`: the plan's, except that a check whose
    /// verdicts do not vary (posix) beside measurements runs once: repeating it would only
    /// repeat its verdicts (and its fixtures are made for one run in a fresh directory).
    pub fn rounds_of(&self, step: &Step) -> (u32, u32) {
        if step.workload.deterministic() && self.steps.iter().any(|s| !s.workload.deterministic()) {
            (0, 1)
        } else {
            (self.warmup, self.repeat)
        }
    }
}

/// Two steps that would give results with the same key (the same kind and parameters, the
/// same sweep point) are refused: the table would show one of them twice or hide one.
fn check_distinct(steps: &[Step]) -> Result<(), InputError> {
    let mut seen = std::collections::HashSet::new();
    for step in steps {
        let key = (step.workload.kind(), step.workload.params());
        if !seen.insert(key) {
            let title: Vec<String> = step.workload.params().iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Err(InputError::new(format!(
                "workload {}:{} is given twice: each workload and sweep point may appear once",
                step.workload.kind(),
                cut(&title.join(","))
            )));
        }
    }
    Ok(())
}

/// Checks a run name or tag: later commands take it where they take a run id (`compare before
/// after`), so it is a short word that cannot be mistaken for `last~N` or an option.
fn run_name(value: &str, flag: &str) -> Result<String, InputError> {
    let accepted = "1 to 64 letters, digits, '.', '_' or '-', not starting with '-', and not 'last' or 'last~N'";
    let shaped = (1..=64).contains(&value.len())
        && !value.starts_with('-')
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !shaped || value == "last" {
        return Err(InputError::new(format!("{flag} '{}': expected {accepted}", fsarena_workload::plain::cut(value))));
    }
    Ok(value.to_string())
}

/// fio's `directory=` as a `dir:` target spec. The value is quoted, so that a comma in it
/// cannot add keys to the spec; a value a quote cannot hold is refused.
fn directory_spec(directory: &str, job_file: &std::path::Path) -> Result<String, InputError> {
    if directory.contains('\'') || directory.chars().any(char::is_control) {
        return Err(InputError::new(format!(
            "directory='{}': expected a path without single quotes or control characters",
            fsarena_workload::plain::cut(directory)
        ))
        .at(job_file.display().to_string()));
    }
    Ok(format!("dir:path='{directory}'"))
}

/// Threads, memory, descriptors and bytes each workload needs, against what this machine
/// allows and what each target holds: `numjobs=100000` is refused here in milliseconds
/// (also for --dry-run), before anything is created.
/// `sharing` processes (MPI ranks) each run every step on the same target: the target must
/// hold all their files. A step whose workload cannot run on a target's kind is refused, or
/// with `lenient` returned as (target, step, what is skipped, why) to skip.
fn check_footprints(
    targets: &[Box<dyn Target>],
    steps: &[Step],
    (sharing, hosts): (u64, Option<u64>),
    lenient: bool,
) -> Result<Vec<(usize, usize, String, String)>, InputError> {
    let mut excluded = Vec::new();
    let limits = fsarena_workload::MachineLimits::detect();
    for (si, step) in steps.iter().enumerate() {
        let mut footprint = step.workload.footprint();
        footprint.check(&limits, None).map_err(InputError::new)?;
        if sharing > 1 {
            footprint.bytes_on_target = footprint.bytes_on_target.saturating_mul(sharing);
            footprint.files = footprint.files.saturating_mul(sharing);
            footprint.source = format!("{} on each of {sharing} MPI ranks", footprint.source);
        }
        let clients = step.workload.clients();
        for (ti, target) in targets.iter().enumerate() {
            let what = || format!("{} on target {}", step.workload.kind(), target.label());
            if let Some(kinds) = step.workload.target_kinds() {
                if !kinds.contains(&target.kind()) {
                    let why = format!(
                        "workload {} cannot run on target {} (kind {}): the kinds it runs on are {}",
                        step.workload.kind(),
                        target.label(),
                        target.kind(),
                        kinds.join(", ")
                    );
                    if !lenient {
                        return Err(InputError::new(why));
                    }
                    excluded.push((ti, si, what(), why));
                    continue;
                }
            }
            if let Err(e) = step.workload.check_target(target.kind(), &target.options()) {
                let why = format!("workload {} cannot run on target {}: {e}", step.workload.kind(), target.label());
                if !lenient {
                    return Err(InputError::new(why));
                }
                excluded.push((ti, si, what(), why));
                continue;
            }
            // More clients than the target mounts: known here for every kind (the runner
            // checks again against the mounted target). Under MPI on several hosts the clients
            // are hosts: more than the job has is refused here when they are known. A suite's
            // grid runs the clients this machine (or cluster) has and lists the rest.
            let too_many = match (hosts, target.clients()) {
                (Some(h), _) if h > 1 && u64::from(clients) > h => Some(format!(
                    "clients={clients}: the job runs on {h} hosts, and under MPI on several hosts each client is a host: at most clients={h}, or a hostfile of more hosts"
                )),
                (Some(h), _) if h > 1 => None,
                (None, _) => None,
                (_, Some(have)) if clients > have => Some(format!(
                    "target {}: clients={clients} but it has {have} client mount(s); a shared filesystem \
                     mounted once per client runs more (glusterfs:clients={clients})",
                    target.label()
                )),
                _ => None,
            };
            if let Some(why) = too_many {
                if !lenient {
                    return Err(InputError::new(why));
                }
                // Only the grid's points of that many clients are skipped: named so.
                let what = format!("{} with clients={clients} on target {}", step.workload.kind(), target.label());
                excluded.push((ti, si, what, why));
                continue;
            }
            // 0 is what statfs says for filesystems without a size (ramfs, some FUSE ones):
            // no limit known, rather than no room.
            let capacity = target.capacity_bytes().filter(|&c| c > 0);
            footprint
                .check(&limits, capacity)
                .and_then(|()| footprint.check_files(target.capacity_files()))
                .map_err(|m| InputError::new(format!("target {}: {m}", target.label())))?;
        }
    }
    Ok(excluded)
}

/// A work directory fsarena may not trust, what the kernel or the tools lack, and images that
/// do not fit, refused before anything is created. Returns the work directory, absolute.
fn check_machine(targets: &[Box<dyn Target>], workdir: &std::path::Path) -> Result<PathBuf, InputError> {
    let workdir = fsarena_target::Workdir::check(workdir)?;
    for t in targets {
        fsarena_target::requirements::check(&t.requirements())
            .map_err(|why| InputError::new(format!("target {} cannot be provisioned here: {why}", t.label())))?;
    }
    // Targets are provisioned one after another, so the largest image must fit.
    if let Some(t) = targets.iter().max_by_key(|t| t.image_bytes()).filter(|t| t.image_bytes() > 0) {
        if let Some((free, place)) = free_in(&workdir) {
            if t.image_bytes() > free {
                return Err(InputError::new(format!(
                    "target {}: its {} image does not fit the {} free in {place}: use a smaller size= or another --workdir",
                    t.label(),
                    fsarena_core::units::format_iec(t.image_bytes() as f64),
                    fsarena_core::units::format_iec(free as f64),
                )));
            }
        }
    }
    Ok(workdir)
}

/// The bytes free where the work directory `workdir` (absolute) is or would be made (its
/// nearest existing ancestor), and that place in words.
fn free_in(workdir: &std::path::Path) -> Option<(u64, String)> {
    let existing = fsarena_target::Workdir::nearest_existing(workdir);
    let free = fsarena_target::sys::free_bytes(&existing)?;
    let place = if existing == workdir {
        format!("the work directory {}", workdir.display())
    } else {
        format!("{}, where the work directory {} would be created", existing.display(), workdir.display())
    };
    Some((free, place))
}

/// What a workload writes in the work directory itself (crash's write log) on each target it
/// runs on, against the free space there: refused before anything is created.
fn check_workdir_room(
    targets: &[Box<dyn Target>],
    steps: &[Step],
    excluded: &[(usize, usize, String, String)],
    workdir: &std::path::Path,
) -> Result<(), InputError> {
    for (si, step) in steps.iter().enumerate() {
        for (ti, target) in targets.iter().enumerate() {
            if excluded.iter().any(|(t, s, ..)| (*t, *s) == (ti, si)) {
                continue;
            }
            let Some((bytes, what)) = step.workload.workdir_bytes(target.kind(), &target.options()) else { continue };
            if let Some((free, place)) = free_in(workdir).filter(|(free, _)| bytes > *free) {
                return Err(InputError::new(format!(
                    "workload {} on target {}: {what} ({}) does not fit the {} free in {place}: use a smaller value or another --workdir",
                    step.workload.kind(),
                    target.label(),
                    fsarena_core::units::format_iec(bytes as f64),
                    fsarena_core::units::format_iec(free as f64),
                )));
            }
        }
    }
    Ok(())
}
