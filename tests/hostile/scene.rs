//! The planted-object driver. A scene plants things in a work directory or target (before
//! the run, or while it runs), names its victims, runs fsarena and then `fsarena cleanup`,
//! and checks that every victim survived byte for byte and mount for mount, that no shell
//! injection fired, and that nothing of fsarena's is left. All scenes run, a few at a time,
//! and every failing one is reported.

use super::harness::{
    leftovers_under, play, quote, snapshot, speech_problems, workdir_leftovers, Arena, Victim, PWNED,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What a scene plants while fsarena runs: given the work directory, it returns more victims
/// and the paths it planted (foreign entries, not fsarena's leftovers).
pub type During = Box<dyn FnOnce(&Path) -> (Vec<Victim>, Vec<PathBuf>) + Send>;

/// A named attack: sets up its scene in a fresh arena.
pub type Attack = (&'static str, fn(&Arena) -> Scene);

/// One planted-object attack.
pub struct Scene {
    /// The work directory (created 0700 by [`Scene::new`] so that things can be planted in it).
    pub work: PathBuf,
    /// `--target` values.
    pub targets: Vec<String>,
    /// `--workload` value.
    pub workload: String,
    /// More arguments for `run`.
    pub args: Vec<String>,
    /// Things that must survive.
    pub victims: Vec<Victim>,
    /// Directories (dir: targets) whose new entries count as leftovers.
    pub watched: Vec<PathBuf>,
    /// Run fsarena run (else only cleanup).
    pub run: bool,
    /// The run must succeed (the planted objects are harmless to a correct fsarena).
    pub must_succeed: bool,
    /// Where cleanup runs.
    pub cleanup_cwd: PathBuf,
    /// Planting while the run runs.
    pub during: Option<During>,
}

impl Scene {
    /// A scene in `a` with a fresh work directory `a/work` (0700), a tmpfs target and a small
    /// write job.
    pub fn new(a: &Arena) -> Self {
        let work = a.path("work");
        Self::in_workdir(a, work)
    }

    /// A scene whose work directory is `work` (created 0700).
    pub fn in_workdir(a: &Arena, work: PathBuf) -> Self {
        std::fs::create_dir_all(&work).unwrap();
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o700)).unwrap();
        a.register_workdir(&work);
        Self {
            work,
            targets: vec!["tmpfs:size=16m".into()],
            workload: "io:rw=write,bs=64k,size=1m".into(),
            args: Vec::new(),
            victims: Vec::new(),
            watched: Vec::new(),
            run: true,
            must_succeed: false,
            cleanup_cwd: a.dir("cwd"),
            during: None,
        }
    }

    /// Uses `target`.
    pub fn target(mut self, target: &str) -> Self {
        self.targets = vec![target.to_string()];
        self
    }

    /// Only `fsarena cleanup` runs.
    pub fn cleanup_only(mut self) -> Self {
        self.run = false;
        self
    }
}

/// A file with content of its own.
pub fn victim_file(a: &Arena, rel: &str) -> (PathBuf, Victim) {
    let p = a.file(rel, format!("victim {rel}: every byte of this must survive\n").repeat(8));
    let v = Victim::tree(&p);
    (p, v)
}

/// A directory with files and a subdirectory.
pub fn victim_dir(a: &Arena, rel: &str) -> (PathBuf, Victim) {
    let p = a.dir(rel);
    a.file(&format!("{rel}/precious"), "precious\n");
    a.file(&format!("{rel}/sub/deeper"), "deeper\n");
    let v = Victim::tree(&p);
    (p, v)
}

/// A tmpfs of the test's own with a file in it.
pub fn victim_mount(a: &Arena, rel: &str) -> (PathBuf, Victim) {
    let p = a.tmpfs(rel, "4m");
    std::fs::write(p.join("precious"), "on a victim mount\n").unwrap();
    let v = Victim::mount(&p);
    (p, v)
}

/// Writes a planted state file `work/name` (mode 0600).
pub fn plant_state(work: &Path, name: &str, text: &str) -> PathBuf {
    let p = work.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

/// Plays every scene (`workers` at a time) and fails listing every one that damaged a
/// victim, hung, fired an injection or left something of fsarena's behind.
pub fn play_scenes(class: &str, scenes: Vec<Attack>, workers: usize) {
    let scenes = super::table::only(scenes, |s| s.0.to_string());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((name, make)) = scenes.get(i) else { break };
                let a = Arena::new(&format!("{class}-{i}"));
                let problems = play_scene(&a, make(&a));
                if !problems.is_empty() {
                    failures.lock().unwrap().push(format!("  {name}:\n      {}", problems.join("\n      ")));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "hostile {class}: {} of {} planted-object attacks withstood",
        scenes.len() - failures.len(),
        scenes.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} {class} attacks succeeded:\n{}",
        failures.len(),
        scenes.len(),
        failures.join("\n")
    );
}

fn play_scene(a: &Arena, mut scene: Scene) -> Vec<String> {
    let mut problems = Vec::new();
    let mut foreign: Vec<PathBuf> =
        std::fs::read_dir(&scene.work).into_iter().flatten().flatten().map(|e| e.path()).collect();
    // A state file the test planted is foreign: cleanup must leave it alone, byte for byte.
    for p in foreign.iter().filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("state-"))) {
        scene.victims.push(Victim::tree(p));
    }
    let watched_before: Vec<_> = scene.watched.iter().map(|w| snapshot(w)).collect();
    let baseline = leftovers_under(&a.root);
    let cwd = a.dir("run-cwd");
    let mut run_err = String::new();
    if scene.run {
        let mut cmd = super::harness::fsarena();
        cmd.arg("run").arg("--workdir").arg(&scene.work).current_dir(&cwd);
        for t in &scene.targets {
            cmd.args(["--target", t]);
        }
        cmd.args(["--workload", &scene.workload, "--no-store"]);
        if !scene.args.iter().any(|x| x == "--repeat") {
            cmd.args(["--repeat", "1", "--warmup", "0"]);
        }
        cmd.args(&scene.args);
        let during = scene.during.take();
        let work = scene.work.clone();
        let planted = Mutex::new((Vec::new(), Vec::new()));
        let played = std::thread::scope(|s| {
            let handle = during.map(|d| s.spawn(move || d(&work)));
            let played = play(cmd, Duration::from_secs(90));
            if let Some(h) = handle {
                *planted.lock().unwrap() = h.join().unwrap_or_default();
            }
            played
        });
        let (victims, paths) = planted.into_inner().unwrap();
        scene.victims.extend(victims);
        foreign.extend(paths);
        match played.code() {
            Ok(0) => {}
            Ok(c) if scene.must_succeed => problems.push(format!("the run exited {c}: {}", quote(&played.err()))),
            Ok(0..=2) => {}
            Ok(c) => problems.push(format!("the run exited {c}")),
            Err(how) => problems.push(format!("the run {how}")),
        }
        problems.extend(speech_problems(&played));
        run_err = played.err();
    }
    let mut cleanup = super::harness::fsarena();
    cleanup.arg("cleanup").arg("--workdir").arg(&scene.work).current_dir(&scene.cleanup_cwd);
    let cleaned = play(cleanup, Duration::from_secs(60));
    match cleaned.code() {
        Ok(0..=2) => {}
        Ok(c) => problems.push(format!("cleanup exited {c}")),
        Err(how) => problems.push(format!("cleanup {how}")),
    }
    problems.extend(speech_problems(&cleaned).into_iter().map(|p| format!("cleanup: {p}")));
    for v in &scene.victims {
        problems.extend(v.damage());
    }
    let leftovers = || -> Vec<String> {
        workdir_leftovers(&scene.work, &foreign)
            .into_iter()
            .chain(leftovers_under(&a.root).into_iter().filter(|l| !baseline.contains(l)))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    // A loop device detached while the kernel still holds it goes a moment later.
    let _ = super::harness::wait_until(Duration::from_secs(3), || leftovers().is_empty());
    let left = leftovers();
    if !left.is_empty() {
        problems.push(format!("left after cleanup: {left:?}"));
    }
    for (dir, before) in scene.watched.iter().zip(&watched_before) {
        let changed = super::harness::diff_with(before, &snapshot(dir), false);
        // A planted object (and the directory of fsarena's that holds it: fsarena rightly does
        // not delete what it did not create) is not a leftover.
        let changed: Vec<_> = changed
            .into_iter()
            .filter(|c| {
                let path = Path::new(c.strip_prefix("created ").unwrap_or(c));
                !foreign.iter().any(|f| f.starts_with(path) || c.ends_with(&*f.to_string_lossy()))
            })
            .collect();
        if !changed.is_empty() {
            problems.push(format!("left in the target {}: {changed:?}", dir.display()));
        }
    }
    let pwned: Vec<_> = snapshot(&a.root)
        .into_keys()
        .chain(snapshot(&cwd).into_keys())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(PWNED)))
        .collect();
    if !pwned.is_empty() || Path::new("/PWNED").exists() {
        problems.push(format!("a shell injection ran: {pwned:?}"));
    }
    if !problems.is_empty() {
        problems.push(format!("run stderr: {}", quote(&run_err)));
        problems.push(format!("cleanup stderr: {}", quote(&cleaned.err())));
    }
    problems
}
