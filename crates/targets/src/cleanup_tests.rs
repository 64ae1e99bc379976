//! `cleanup` undoes what a killed run recorded, and nothing that a planted, foreign or
//! damaged state file names.

use super::*;
use crate::safefs::{create_new_dir, create_new_file, Identity};
use crate::workdir::LOCK;
use std::os::unix::fs::PermissionsExt;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = PathBuf::from(format!("/var/tmp/fsarena-h1-cleanup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A victim outside the work directory: a directory with a file, and a file.
fn victims(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("victim-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data"), b"precious").unwrap();
    let file = root.join("victim-file");
    std::fs::write(&file, b"precious").unwrap();
    (dir, file)
}

fn intact(dir: &Path, file: &Path) {
    assert_eq!(std::fs::read(dir.join("data")).unwrap(), b"precious");
    assert_eq!(std::fs::read(file).unwrap(), b"precious");
}

/// A state file as a run would write it, with `lines` after the header.
fn plant_state(work: &Path, run: &str, header_workdir: &Path, lines: &[String]) -> PathBuf {
    let path = work.join(format!("state-{run}.jsonl"));
    let header = Header { fsarena_state: 1, run: run.into(), workdir: header_workdir.into(), lock: None };
    let mut text = serde_json::to_string(&header).unwrap() + "\n";
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

#[test]
fn cleanup_undoes_a_killed_runs_records_and_nothing_else() {
    let s = Scratch::new("killed");
    let work = s.0.join("work");
    let user_dir = s.0.join("user");
    std::fs::create_dir(&user_dir).unwrap();
    let wd = Workdir::open(&work, &RunId::generate().unwrap()).unwrap();
    let run = wd.run_id().clone();
    // A dir: target's scratch directory with the files a workload wrote, and an image.
    let scratch = user_dir.join(format!("fsarena-{run}-0"));
    let id = create_new_dir(&scratch, 0o700).unwrap();
    wd.record(&Resource::Scratch { path: scratch.clone(), id }).unwrap();
    std::fs::create_dir(scratch.join("sub")).unwrap();
    std::fs::write(scratch.join("sub/job.0.0"), b"x").unwrap();
    let image = work.join(format!("{run}-image-0-ext4.img"));
    let (_, id) = create_new_file(&image).unwrap();
    wd.record(&Resource::File { path: image.clone(), id }).unwrap();
    let theirs = work.join("not-mine");
    std::fs::write(&theirs, b"keep").unwrap();
    std::fs::write(user_dir.join("users-own"), b"keep").unwrap();
    wd.simulate_kill();
    assert!(work.join(LOCK).exists(), "a killed run leaves its lock file");
    let report = cleanup(&work).unwrap();
    assert!(report.error.is_none() && report.warnings.is_empty(), "{report:?}");
    // The image, the scratch directory and, where cgroups can be made, the run's cgroup.
    let cgroup = report.done.iter().filter(|d| d.starts_with("removed cgroup ")).count();
    assert_eq!(report.done.len(), 2 + cgroup, "{report:?}");
    assert_eq!(cgroup, usize::from(crate::contain::cgroups_available()), "{report:?}");
    assert!(!scratch.exists() && !image.exists());
    assert_eq!(names(&work), vec!["not-mine"], "the killed run's state and lock go, the rest stays");
    assert_eq!(names(&user_dir), vec!["users-own"]);
    let again = cleanup(&work).unwrap();
    assert!(again.is_empty(), "{again:?}");
    assert!(cleanup(&s.0.join("missing")).unwrap().is_empty());
}

#[test]
fn planted_state_files_are_left_alone_and_reported() {
    let s = Scratch::new("planted");
    let work = s.0.join("work");
    Workdir::open(&work, &RunId::generate().unwrap()).unwrap().close();
    let (vdir, vfile) = victims(&s.0);
    let vdir_id = Identity::of_path(&vdir).unwrap();
    let vfile_id = Identity::of_path(&vfile).unwrap();
    let line = |r: Resource| serde_json::to_string(&r).unwrap();
    let mut planted = Vec::new();
    // Every path outside the work directory, or not a name the run makes, in a well-formed file.
    for (i, r) in [
        Resource::Dir { path: vdir.clone(), id: vdir_id, recursive: true },
        Resource::File { path: vfile.clone(), id: vfile_id },
        Resource::Mount { path: s.0.clone(), mount_id: 1, fuse: false },
        Resource::Scratch { path: vdir.clone(), id: vdir_id },
        Resource::Loop { device: "/dev/sda".into(), image: vfile.clone(), image_id: vfile_id },
        // One level down is allowed only in a directory the run made (the crash recorder's).
        Resource::Loop { device: "/dev/loop7".into(), image: work.join("someone/x.img"), image_id: vfile_id },
        Resource::Outside { path: vfile.clone(), id: vfile_id, dir: false },
        Resource::Outside { path: "/var/log/glusterfs/../../../etc".into(), id: vdir_id, dir: true },
        // Someone else's volume, through the host's own glusterd.
        Resource::GlusterVolume {
            name: "production".into(),
            socket: "/var/run/glusterd.socket".into(),
            log: vfile.clone(),
            started: true,
        },
    ]
    .into_iter()
    .enumerate()
    {
        let run = format!("{:016x}", i + 1);
        planted.push(plant_state(&work, &run, &work, &[line(r)]));
    }
    // Relative paths, `..`, another run's id in a name.
    for (i, make) in [
        |_: &Path, r: &str| PathBuf::from(format!("{r}-image.img")),
        |w: &Path, r: &str| w.join(format!("{r}-x/../../victim-file")),
        |w: &Path, _: &str| w.join("00000000000000bb-image.img"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = format!("{:016x}", 0x100 + i);
        let path = make(&work, &r);
        planted.push(plant_state(&work, &r, &work, &[line(Resource::File { path, id: vfile_id })]));
    }
    let run = "00000000000000aa";
    // A header naming another work directory (a run with a relative --workdir elsewhere).
    planted.push(plant_state(&work, run, &s.0.join("elsewhere"), &[]));
    // Not fsarena's: unparsable, a bad name, a symlink, group-writable, another owner.
    let junk = work.join("state-00000000000000cc.jsonl");
    std::fs::write(&junk, b"garbage\n{\"resource\":").unwrap();
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o600)).unwrap();
    planted.push(junk);
    let badname = work.join("state-1234.jsonl");
    std::fs::copy(&planted[0], &badname).unwrap();
    planted.push(badname);
    let link = work.join("state-00000000000000dd.jsonl");
    std::os::unix::fs::symlink(&planted[0], &link).unwrap();
    planted.push(link);
    let writable = plant_state(&work, "00000000000000ee", &work, &[]);
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o620)).unwrap();
    planted.push(writable);
    if rustix::process::geteuid().is_root() {
        let theirs = plant_state(&work, "00000000000000ff", &work, &[]);
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        planted.push(theirs);
    }
    let foreign_lock = work.join(LOCK);
    std::fs::write(&foreign_lock, b"someone's").unwrap();
    let report = cleanup(&work).unwrap();
    assert!(report.done.is_empty() && report.error.is_none(), "{report:?}");
    assert_eq!(report.warnings.len(), planted.len(), "{:#?}", report.warnings);
    for p in &planted {
        assert!(std::fs::symlink_metadata(p).is_ok(), "{} was deleted", p.display());
        assert!(report.warnings.iter().any(|w| w.contains(&p.display().to_string())), "{} not reported", p.display());
    }
    assert_eq!(std::fs::read(&foreign_lock).unwrap(), b"someone's", "a foreign lock file survives");
    intact(&vdir, &vfile);
}

#[test]
fn a_scratch_directory_is_removed_only_while_it_is_the_one_created() {
    let s = Scratch::new("identity");
    let work = s.0.join("work");
    let wd = Workdir::open(&work, &RunId::generate().unwrap()).unwrap();
    let run = wd.run_id().clone();
    let scratch = s.0.join(format!("fsarena-{run}-0"));
    let id = create_new_dir(&scratch, 0o700).unwrap();
    wd.record(&Resource::Scratch { path: scratch.clone(), id }).unwrap();
    wd.simulate_kill();
    // Someone replaced it with a symlink to their precious directory.
    std::fs::remove_dir(&scratch).unwrap();
    let (vdir, vfile) = victims(&s.0);
    std::os::unix::fs::symlink(&vdir, &scratch).unwrap();
    let report = cleanup(&work).unwrap();
    assert!(report.error.is_none(), "{report:?}");
    intact(&vdir, &vfile);
    assert!(std::fs::symlink_metadata(&scratch).is_ok(), "the symlink is not ours either");
}

#[test]
fn an_untrusted_work_directory_is_refused() {
    let s = Scratch::new("untrusted");
    let work = s.0.join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (vdir, vfile) = victims(&s.0);
    let id = Identity::of_path(&vdir).unwrap();
    let r = serde_json::to_string(&Resource::Dir { path: vdir.clone(), id, recursive: true }).unwrap();
    plant_state(&work, "0000000000000001", &work, &[r]);
    let e = cleanup(&work).unwrap_err();
    assert!(e.to_string().contains("writable by group or others"), "{e}");
    intact(&vdir, &vfile);
    let link = s.0.join("link");
    std::os::unix::fs::symlink(&work, &link).unwrap();
    assert!(cleanup(&link).is_err());
}

#[test]
fn a_server_run_may_name_its_run_directory_under_run_fsarena_and_nothing_else_there() {
    let run = RunId::parse("00000000000000dd").unwrap();
    let other = "00000000000000ee";
    let work = Path::new("/var/tmp/w");
    let id = Identity { dev: 1, ino: 2 };
    let base = Path::new(crate::workdir::RUN_BASE);
    let run_dir = crate::workdir::run_dir_of(&run);
    for ok in [
        Resource::Dir { path: base.to_path_buf(), id, recursive: false },
        Resource::Dir { path: run_dir.clone(), id, recursive: false },
        Resource::Dir { path: run_dir.join(format!("{run}-pgbench-0")), id, recursive: true },
        Resource::Mount { path: run_dir.join(format!("{run}-mnt-0-ext4")), mount_id: 1, fuse: false },
        Resource::Server { pid: 1, start_time: 2, stop_signal: 2, cgroup: None },
    ] {
        assert!(confined(&ok, work, &run).is_ok(), "{ok:?}");
    }
    for bad in [
        // Recursive removal of the shared base or the run's own directory is never recorded.
        Resource::Dir { path: base.to_path_buf(), id, recursive: true },
        Resource::Dir { path: run_dir.clone(), id, recursive: true },
        // Another run's directory, or a name of another run's in ours.
        Resource::Dir { path: base.join(other), id, recursive: false },
        Resource::Dir { path: run_dir.join(format!("{other}-pgbench-0")), id, recursive: true },
        Resource::Mount { path: base.join(format!("{run}-mnt-0-ext4")), mount_id: 1, fuse: false },
    ] {
        assert!(confined(&bad, work, &run).is_err(), "{bad:?}");
    }
}
