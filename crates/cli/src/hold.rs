//! `fsarena up` and `fsarena down`: the targets fsarena makes, held for the user's own tools.
//!
//! `up` provisions every target exactly as a run does (recorded in the work directory's state
//! file as it goes), prints each one's mount point and waits for Ctrl-C, SIGTERM or SIGHUP,
//! then tears them down. `up --detach` instead marks the run held (`held-RUNID` beside its
//! state file) and returns: the targets stay until `fsarena down` undoes what the state file
//! records, by the same identity checks as `fsarena cleanup`, which leaves held runs alone.

use crate::args::{DownArgs, UpArgs};
use crate::failure::Failure;
use crate::output::say;
use anyhow::anyhow;
use fsarena_core::{printable, InputError};
use fsarena_target::{Mounted, ProvisionCtx, RunId, Target, Workdir};
use std::process::ExitCode;

/// `fsarena up`.
pub fn up(args: &UpArgs) -> Result<ExitCode, Failure> {
    let targets = check(args)?;
    let run_id = RunId::generate().map_err(|e| Failure::Run(e.into()))?;
    // Signals are taken before anything is created: a Ctrl-C during provisioning tears down
    // what is up by then.
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]).map_err(|e| Failure::Run(e.into()))?;
    let workdir = Workdir::open(&args.workdir.path, &run_id).map_err(|e| Failure::Run(e.into()))?;
    let mut up: Vec<Box<dyn Mounted>> = Vec::new();
    let mut failure = None;
    for (index, target) in targets.iter().enumerate() {
        if signals.pending().next().is_some() {
            failure = Some("interrupted while provisioning".to_string());
            break;
        }
        say!("fsarena: provisioning {}", printable(target.label()));
        match target.provision(&ProvisionCtx { workdir: &workdir, index, mount_base: None }) {
            Ok(m) => up.push(m),
            Err(e) => {
                failure = Some(format!("{}: {e}", target.label()));
                break;
            }
        }
    }
    if failure.is_none() {
        let mut out = String::new();
        // One line per target, tab-separated: its label, then where to reach it; a target of
        // several clients (glusterfs:clients=N) lists every client's mount, the first being
        // its root.
        for (t, m) in targets.iter().zip(&up) {
            out.push_str(&printable(t.label()));
            for root in m.client_roots() {
                out.push('\t');
                out.push_str(&printable(&root.to_string_lossy()));
            }
            out.push('\n');
        }
        crate::output::print(out.as_bytes())?;
        if args.detach {
            // Nothing is undone: the state file keeps every resource for `fsarena down`.
            drop(up);
            let state = workdir.hold().map_err(|e| Failure::Run(e.into()))?;
            say!(
                "fsarena: held as run {run_id} (recorded in {}); `fsarena down {run_id}{}` tears it down",
                printable(&state.to_string_lossy()),
                workdir_flag(args)
            );
            return Ok(ExitCode::SUCCESS);
        }
        say!("fsarena: holding {} target(s); Ctrl-C (or SIGTERM) tears them down", up.len());
        let _ = signals.forever().next();
    }
    // Newest first, as the state file would be undone.
    for (t, m) in targets.iter().zip(up).rev() {
        say!("fsarena: tearing down {}", printable(t.label()));
        if let Err(e) = m.teardown() {
            failure.get_or_insert(format!("teardown of {}: {e}", t.label()));
        }
    }
    if let Some(state) = workdir.close() {
        failure.get_or_insert_with(|| "teardown did not finish".into());
        say!(
            "fsarena: kept {}: run `fsarena cleanup{}` once nothing holds the mount",
            printable(&state.to_string_lossy()),
            workdir_flag(args)
        );
    }
    match failure {
        Some(f) => Err(Failure::Run(anyhow!(f))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The targets, checked as `fsarena run` checks them, before anything is created: known kinds
/// and keys, what the kernel and tools must offer, a trusted work directory, and room for every
/// image at once (they are all up together).
fn check(args: &UpArgs) -> Result<Vec<Box<dyn Target>>, Failure> {
    let targets: Vec<Box<dyn Target>> = args
        .targets
        .iter()
        .map(|t| fsarena_target::parse(t, args.force).map_err(|e| e.at(format!("--target {}", printable(t)))))
        .collect::<Result<_, _>>()?;
    let mut labels: Vec<&str> = targets.iter().map(|t| t.label()).collect();
    labels.sort_unstable();
    if let Some(w) = labels.windows(2).find(|w| w[0] == w[1]) {
        return Err(InputError::new(format!("target '{}' is given twice: give each a label=", printable(w[0]))).into());
    }
    let workdir = Workdir::check(&args.workdir.path)?;
    for t in &targets {
        fsarena_target::requirements::check(&t.requirements())
            .map_err(|why| InputError::new(format!("target {} cannot be provisioned here: {why}", t.label())))?;
    }
    let images: u64 = targets.iter().map(|t| t.image_bytes()).sum();
    let existing = Workdir::nearest_existing(&workdir);
    if let Some(free) = fsarena_target::sys::free_bytes(&existing).filter(|&free| images > free) {
        return Err(InputError::new(format!(
            "the targets' images ({}) do not fit the {} free in {}: use smaller size= or another --workdir",
            fsarena_core::units::format_iec(images as f64),
            fsarena_core::units::format_iec(free as f64),
            existing.display()
        ))
        .into());
    }
    Ok(targets)
}

/// ` --workdir DIR` when not the default, for the commands fsarena suggests.
fn workdir_flag(args: &UpArgs) -> String {
    if args.workdir.path == std::path::Path::new(fsarena_target::DEFAULT_WORKDIR) {
        String::new()
    } else {
        format!(" --workdir {}", fsarena_target::shell_quote(&args.workdir.path.to_string_lossy()))
    }
}

/// `fsarena down`.
pub fn down(args: &DownArgs) -> Result<ExitCode, Failure> {
    let report = fsarena_target::down(&args.workdir.path, args.run.as_deref())?;
    let shown = printable(&report.workdir.to_string_lossy()).into_owned();
    if report.is_empty() {
        let what = args.run.as_deref().map_or("no target".to_string(), |r| format!("no run {}", printable(r)));
        say!("fsarena: {what} held by `fsarena up --detach` in {shown}");
    }
    for line in &report.done {
        say!("fsarena: {}", printable(line));
    }
    for warning in &report.warnings {
        say!("fsarena: warning: {}", printable(warning));
    }
    match report.error {
        Some(e) => Err(Failure::Run(anyhow!("down in {shown} is not finished: {e}"))),
        None => Ok(ExitCode::SUCCESS),
    }
}
