//! Objects planted at every path fsarena uses or used in the work directory and the target
//! — before the run and while it runs, at names predicted from the run id in the state file's
//! name — and hostile work-directory names for FUSE commands. Every victim must survive and
//! nothing of fsarena's may be left after `fsarena cleanup`.

use super::harness::{Arena, Victim};
use super::scene::{play_scenes, victim_dir, victim_file, victim_mount, Attack, Scene};
use super::table::mkfifo;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FUSE_CMD: &str = "fuse:cmd='mkfs.ext4 -q -F {work}/i.img 64m && exec fuse2fs -f {work}/i.img {mnt}'";

/// A scene on `target` with a symlink planted at `work/name` pointing to a victim file.
fn link_to_file(a: &Arena, target: &str, name: &str) -> Scene {
    let mut s = Scene::new(a).target(target);
    let (v, vv) = victim_file(a, "victim");
    symlink(&v, s.work.join(name)).unwrap();
    s.victims.push(vv);
    s
}

/// A scene on `target` with a symlink planted at `work/name` pointing to a victim directory.
fn link_to_dir(a: &Arena, target: &str, name: &str) -> Scene {
    let mut s = Scene::new(a).target(target);
    let (v, vv) = victim_dir(a, "victim-dir");
    symlink(&v, s.work.join(name)).unwrap();
    s.victims.push(vv);
    s
}

/// A scene on `target` with a foreign directory holding files at `work/name`.
fn foreign_dir(a: &Arena, target: &str, name: &str) -> Scene {
    let mut s = Scene::new(a).target(target);
    let (_, vv) = victim_dir(a, &format!("work/{name}"));
    s.victims.push(vv);
    s
}

/// A scene on `target` with a foreign file at `work/name`.
fn foreign_file(a: &Arena, target: &str, name: &str) -> Scene {
    let mut s = Scene::new(a).target(target);
    let (_, vv) = victim_file(a, &format!("work/{name}"));
    s.victims.push(vv);
    s
}

/// The first regular file named `prefix*` at most four levels below `root`.
fn find_file(root: &Path, prefix: &str, depth: usize) -> Option<PathBuf> {
    for e in std::fs::read_dir(root).ok()?.flatten() {
        let ft = e.file_type().ok()?;
        if ft.is_file() && e.file_name().to_string_lossy().starts_with(prefix) {
            return Some(e.path());
        }
        if ft.is_dir() && depth > 0 {
            if let Some(f) = find_file(&e.path(), prefix, depth - 1) {
                return Some(f);
            }
        }
    }
    None
}

/// Polls `f` every 5 ms for up to 30 s.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// The run id, read from the name of the state file the run writes in `work`.
fn run_id(work: &Path) -> Option<String> {
    std::fs::read_dir(work).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().to_string();
        n.strip_prefix("state-").and_then(|r| r.strip_suffix(".jsonl")).map(str::to_string)
    })
}

/// Replaces `file` (which fsarena made and keeps between rounds) by a symlink to `victim`.
fn swap_for_link(file: &Path, victim: &Path) {
    let tmp = file.with_file_name(".hostile-swap");
    symlink(victim, &tmp).unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

/// Between the warm-up and the measured round, the job's file becomes a symlink to a victim
/// outside the target: the measured round must not write through it.
fn between_rounds(a: &Arena, target: Option<&str>, rw: &str) -> Scene {
    let (victim, vv) = victim_file(a, "victim");
    let mut s = Scene::new(a);
    let search: PathBuf = match target {
        Some(t) => {
            s.targets = vec![t.to_string()];
            s.work.clone()
        }
        None => {
            let t = a.tmpfs("t", "64m");
            s.targets = vec![format!("dir:path={}", t.display())];
            s.watched.push(t.clone());
            t
        }
    };
    s.workload = format!("io:rw={rw},bs=4k,size=1m,time_based=1,runtime=2");
    s.args = ["--warmup", "1", "--repeat", "1"].map(String::from).to_vec();
    s.victims.push(vv);
    s.during = Some(Box::new(move |_work: &Path| {
        let mut planted = Vec::new();
        if let Some(f) = wait_for(|| find_file(&search, "io.", 4)) {
            std::thread::sleep(Duration::from_millis(300));
            swap_for_link(&f, &victim);
            planted.push(f);
        }
        (Vec::new(), planted)
    }));
    s
}

fn pwned_workdir(a: &Arena, name: &str) -> Scene {
    let work = a.path(name);
    let mut s = Scene::in_workdir(a, work).target(FUSE_CMD);
    s.must_succeed = true;
    s
}

/// Every attack of this file.
pub fn scenes() -> Vec<Attack> {
    vec![
        ("symlink at image-0-ext4.img", |a| link_to_file(a, "ext4:size=128m", "image-0-ext4.img")),
        ("foreign file at image-0-ext4.img", |a| foreign_file(a, "ext4:size=128m", "image-0-ext4.img")),
        ("symlink at mnt-0-ext4", |a| link_to_dir(a, "ext4:size=128m", "mnt-0-ext4")),
        ("foreign dir at mnt-0-ext4", |a| foreign_dir(a, "ext4:size=128m", "mnt-0-ext4")),
        ("symlink at mnt-0-tmpfs to a foreign mount", |a| {
            let mut s = Scene::new(a);
            let (m, vm) = victim_mount(a, "victim-mnt");
            symlink(&m, s.work.join("mnt-0-tmpfs")).unwrap();
            s.victims.push(vm);
            s
        }),
        ("foreign mount at mnt-0-tmpfs", |a| {
            let mut s = Scene::new(a);
            let (_, vm) = victim_mount(a, "work/mnt-0-tmpfs");
            s.victims.push(vm);
            s
        }),
        ("symlink at fuse-0.log", |a| link_to_file(a, "fuse2fs:size=128m", "fuse-0.log")),
        ("hard link at fuse-0.log", |a| {
            let mut s = Scene::new(a).target("fuse2fs:size=128m");
            let (v, vv) = victim_file(a, "victim");
            std::fs::hard_link(&v, s.work.join("fuse-0.log")).unwrap();
            s.victims.push(vv);
            s
        }),
        ("symlink at image-0-fuse2fs.img", |a| link_to_file(a, "fuse2fs:size=128m", "image-0-fuse2fs.img")),
        ("foreign dir at work-0-fuse", |a| foreign_dir(a, FUSE_CMD, "work-0-fuse")),
        ("symlink at work-0-fuse", |a| link_to_dir(a, FUSE_CMD, "work-0-fuse")),
        ("symlink at mnt-0-fuse", |a| link_to_dir(a, FUSE_CMD, "mnt-0-fuse")),
        ("symlink at .lock", |a| link_to_file(a, "tmpfs:size=16m", ".lock")),
        ("hard link at .lock", |a| {
            let mut s = Scene::new(a);
            let (v, vv) = victim_file(a, "victim");
            std::fs::hard_link(&v, s.work.join(".lock")).unwrap();
            s.victims.push(vv);
            s
        }),
        ("FIFO at .lock", |a| {
            let mut s = Scene::new(a);
            mkfifo(&s.work.join(".lock"));
            s.victims.push(Victim::tree(&s.work.join(".lock")));
            s
        }),
        ("foreign .lock file", |a| foreign_file(a, "tmpfs:size=16m", ".lock")),
        ("foreign unparsable state file", |a| {
            let mut s = Scene::new(a);
            let p = a.file("work/state-foreign.jsonl", "not json at all {{{\n\x1b[2Jforged line\n");
            s.victims.push(Victim::tree(&p));
            s
        }),
        ("symlink at a state file name", |a| link_to_file(a, "tmpfs:size=16m", "state-1.jsonl")),
        ("work dir named a b;touch PWNED;# for a fuse command", |a| pwned_workdir(a, "a b;touch PWNED;#")),
        ("work dir named with a quote and $(...) for a fuse command", |a| {
            pwned_workdir(a, "it's $(touch PWNED2) `touch PWNED3`")
        }),
        ("io file swapped for a symlink between rounds (dir: target, write)", |a| between_rounds(a, None, "write")),
        ("io file swapped for a symlink between rounds (tmpfs, read)", |a| {
            between_rounds(a, Some("tmpfs:size=64m"), "read")
        }),
        ("io file swapped for a symlink between rounds (ext4, randwrite)", |a| {
            between_rounds(a, Some("ext4:size=128m"), "randwrite")
        }),
        ("names of the next target planted from the run id", |a| {
            let mut s = Scene::new(a);
            s.targets = vec!["tmpfs:size=16m".into(), "fuse2fs:size=128m".into()];
            s.workload = "io:rw=write,bs=4k,size=1m,time_based=1,runtime=2".into();
            let (file, vf) = victim_file(a, "victim");
            let (dir, vd) = victim_dir(a, "victim-dir");
            s.victims.extend([vf, vd]);
            s.during = Some(Box::new(move |work: &Path| {
                let mut planted = Vec::new();
                if let Some(id) = wait_for(|| run_id(work)) {
                    for (name, to) in [
                        (format!("{id}-image-1-fuse2fs.img"), &file),
                        (format!("{id}-fuse-1.log"), &file),
                        (format!("{id}-mnt-1-fuse2fs"), &dir),
                        ("image-1-fuse2fs.img".to_string(), &file),
                        ("fuse-1.log".to_string(), &file),
                        ("mnt-1-fuse2fs".to_string(), &dir),
                    ] {
                        if symlink(to, work.join(&name)).is_ok() {
                            planted.push(work.join(name));
                        }
                    }
                }
                (Vec::new(), planted)
            }));
            s
        }),
        ("scratch name of the next dir: target planted from the run id", |a| {
            let t0 = a.tmpfs("t0", "16m");
            let t1 = a.tmpfs("t1", "16m");
            let mut s = Scene::new(a);
            s.targets = vec![format!("dir:path={}", t0.display()), format!("dir:path={}", t1.display())];
            s.workload = "io:rw=write,bs=4k,size=1m,time_based=1,runtime=2".into();
            s.watched = vec![t0, t1.clone()];
            let (dir, vd) = victim_dir(a, "victim-dir");
            s.victims.push(vd);
            s.during = Some(Box::new(move |work: &Path| {
                let mut planted = Vec::new();
                if let Some(id) = wait_for(|| run_id(work)) {
                    let p = t1.join(format!("fsarena-{id}-1"));
                    if symlink(&dir, &p).is_ok() {
                        planted.push(p);
                    }
                }
                (Vec::new(), planted)
            }));
            s
        }),
        ("foreign files where a dir: target works", |a| {
            let t = a.tmpfs("t", "16m");
            let (v, vv) = victim_file(a, "victim");
            symlink(&v, t.join("io.0.0")).unwrap();
            a.file("t/fsarena-1-0/precious", "precious\n");
            a.file("t/.lock", "foreign lock\n");
            a.file("t/state-1.jsonl", format!("{{\"resource\":\"file\",\"path\":\"{}\"}}\n", v.display()));
            let mut s = Scene::new(a).target(&format!("dir:path={}", t.display()));
            s.victims.extend([vv, Victim::tree(&t)]);
            s.must_succeed = true;
            s
        }),
    ]
}

#[test]
fn planted_objects_in_the_work_directory_and_target_survive() {
    play_scenes("planted", scenes(), 3);
}
