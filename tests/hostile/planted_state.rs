//! Planted state files: `fsarena cleanup` must act only on what a trusted state file of its
//! own recorded inside the work directory. Forged records naming files, directories, mounts,
//! loop devices and processes outside it (directly, through `..`, relative paths, symlinks),
//! state files that are symlinks, FIFOs, huge, writable by others or owned by someone else,
//! must all leave their victims intact and the planted files in place.

use super::harness::{process_start, Arena, Victim};
use super::scene::{plant_state, play_scenes, victim_dir, victim_file, victim_mount, Attack, Scene};
use super::table::mkfifo;
use serde_json::json;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;

fn file(p: &Path) -> String {
    json!({"resource": "file", "path": p}).to_string()
}
fn dir(p: &Path, recursive: bool) -> String {
    json!({"resource": "dir", "path": p, "recursive": recursive}).to_string()
}
fn mount(p: &Path) -> String {
    json!({"resource": "mount", "path": p, "fuse": false}).to_string()
}
fn loop_image(p: &Path) -> String {
    json!({"resource": "loop", "image": p}).to_string()
}
/// A header in the shape fsarena writes, naming `work`.
fn header(work: &Path) -> String {
    json!({"fsarena_state": 1, "run": "0123456789abcdef", "workdir": work}).to_string()
}
fn lines(l: &[String]) -> String {
    l.iter().map(|x| format!("{x}\n")).collect()
}

/// A cleanup-only scene with the state file `text` planted as `work/state-1.jsonl`.
fn with_state(a: &Arena, text: impl FnOnce(&Path) -> String) -> Scene {
    let s = Scene::new(a).cleanup_only();
    plant_state(&s.work, "state-1.jsonl", &text(&s.work));
    s
}

/// Every attack of this file.
pub fn scenes() -> Vec<Attack> {
    vec![
        ("state naming a file outside", |a| {
            let (v, vv) = victim_file(a, "victim");
            let mut s = with_state(a, |_| lines(&[file(&v)]));
            s.victims.push(vv);
            s
        }),
        ("state naming a directory outside, recursive", |a| {
            let (v, vv) = victim_dir(a, "victim-dir");
            let mut s = with_state(a, |_| lines(&[dir(&v, true)]));
            s.victims.push(vv);
            s
        }),
        ("state naming a mount outside", |a| {
            let (m, vm) = victim_mount(a, "victim-mnt");
            let mut s = with_state(a, |_| lines(&[mount(&m), dir(&m, true)]));
            s.victims.push(vm);
            s
        }),
        ("state naming a loop device on an image outside", |a| {
            let dev = a.loop_device("victim.img", 8 << 20);
            let image = a.path("victim.img");
            let mut s = with_state(a, |_| lines(&[loop_image(&image), file(&image)]));
            s.victims.extend([Victim::loop_device(&dev), Victim::tree(&image)]);
            s
        }),
        ("state naming a process of someone else", |a| {
            let pid = a.spawn(std::process::Command::new("sleep").arg("600"));
            let start: u64 = process_start(pid).unwrap().parse().unwrap();
            let mut s = with_state(a, |_| {
                lines(&[json!({"resource": "process", "pid": pid, "start_time": start}).to_string()])
            });
            s.victims.push(Victim::process(pid));
            s
        }),
        ("state whose header names another work directory", |a| {
            let (other, vo) = victim_dir(a, "other-work");
            let mut s = with_state(a, |_| {
                lines(&[header(&other), dir(&other.join("sub"), true), file(&other.join("precious"))])
            });
            s.victims.push(vo);
            s
        }),
        ("state with this work directory's header naming things outside", |a| {
            let (v, vv) = victim_file(a, "victim");
            let (d, vd) = victim_dir(a, "victim-dir");
            let mut s = with_state(a, |w| lines(&[header(w), file(&v), dir(&d, true)]));
            s.victims.extend([vv, vd]);
            s
        }),
        ("state writable by others", |a| {
            let (v, vv) = victim_file(a, "work/image-7-ext4.img");
            let mut s = with_state(a, |w| lines(&[header(w), file(&v)]));
            std::fs::set_permissions(s.work.join("state-1.jsonl"), std::fs::Permissions::from_mode(0o666)).unwrap();
            s.victims.push(vv);
            s
        }),
        ("state owned by nobody", |a| {
            let (v, vv) = victim_file(a, "work/image-7-ext4.img");
            let mut s = with_state(a, |w| lines(&[header(w), file(&v)]));
            std::os::unix::fs::chown(s.work.join("state-1.jsonl"), Some(65534), Some(65534)).unwrap();
            s.victims.push(vv);
            s
        }),
        ("state with relative paths, cleanup run from elsewhere", |a| {
            let elsewhere = a.dir("elsewhere");
            let (_, vf) = victim_file(a, "elsewhere/victim-rel");
            let (_, vd) = victim_dir(a, "elsewhere/victim-rel-dir");
            let (_, vm) = victim_mount(a, "elsewhere/mnt-rel");
            let mut s = with_state(a, |_| {
                let rel = Path::new;
                lines(&[file(rel("victim-rel")), dir(rel("victim-rel-dir"), true), mount(rel("mnt-rel"))])
            });
            s.cleanup_cwd = elsewhere;
            s.victims.extend([vf, vd, vm]);
            s
        }),
        ("state with paths escaping through ..", |a| {
            let (_, vv) = victim_file(a, "victim");
            let (_, vd) = victim_dir(a, "victim-dir");
            let mut s =
                with_state(a, |w| lines(&[header(w), file(&w.join("../victim")), dir(&w.join("../victim-dir"), true)]));
            s.victims.extend([vv, vd]);
            s
        }),
        ("state naming a mount point that is a symlink to a foreign mount", |a| {
            let (m, vm) = victim_mount(a, "victim-mnt");
            let mut s = Scene::new(a).cleanup_only();
            let link = s.work.join("mnt-9-ext4");
            symlink(&m, &link).unwrap();
            plant_state(&s.work, "state-1.jsonl", &lines(&[header(&s.work), mount(&link), dir(&link, false)]));
            s.victims.push(vm);
            s
        }),
        ("state naming an image that is a symlink to a foreign attached image", |a| {
            let dev = a.loop_device("victim.img", 8 << 20);
            let image = a.path("victim.img");
            let mut s = Scene::new(a).cleanup_only();
            let link = s.work.join("image-9-ext4.img");
            symlink(&image, &link).unwrap();
            plant_state(&s.work, "state-1.jsonl", &lines(&[header(&s.work), loop_image(&link), file(&link)]));
            s.victims.extend([Victim::loop_device(&dev), Victim::tree(&image)]);
            s
        }),
        ("state naming a foreign directory holding links to victims", |a| {
            let (d, vd) = victim_dir(a, "victim-dir");
            let (f, vf) = victim_file(a, "victim");
            let mut s = Scene::new(a).cleanup_only();
            let sub = a.dir("work/sub");
            symlink(&d, sub.join("link")).unwrap();
            std::fs::hard_link(&f, sub.join("hard")).unwrap();
            plant_state(&s.work, "state-1.jsonl", &lines(&[dir(&sub, true)]));
            s.victims.extend([vd, vf, Victim::tree(&sub)]);
            s
        }),
        ("state file that is a symlink to a state file outside", |a| {
            let (v, vv) = victim_file(a, "victim");
            let outside = a.file("elsewhere/state.jsonl", lines(&[file(&v)]));
            let mut s = Scene::new(a).cleanup_only();
            symlink(&outside, s.work.join("state-2.jsonl")).unwrap();
            s.victims.extend([vv, Victim::tree(&outside)]);
            s
        }),
        ("state file that is a FIFO", |a| {
            let mut s = Scene::new(a).cleanup_only();
            let p = s.work.join("state-fifo.jsonl");
            mkfifo(&p);
            s.victims.push(Victim::tree(&p));
            s
        }),
        ("huge state file", |a| {
            let (v, vv) = victim_file(a, "victim");
            let mut s = with_state(a, |_| format!("{}\n", file(&v)).repeat((8 << 20) / 200));
            let planted = s.work.join("state-1.jsonl");
            s.victims.extend([vv, Victim::tree(&planted)]);
            s
        }),
        ("state naming the work directory itself, recursive", |a| {
            let (_, vv) = victim_file(a, "work/foreign");
            let mut s = with_state(a, |w| lines(&[dir(w, true)]));
            s.victims.push(vv);
            s
        }),
        ("state naming an empty directory outside", |a| {
            let empty = a.dir("empty");
            let mut s = with_state(a, |_| lines(&[dir(&empty, false)]));
            s.victims.push(Victim::tree(&empty));
            s
        }),
        ("state with forged identities for things outside", |a| {
            let (v, vv) = victim_file(a, "victim");
            let (d, vd) = victim_dir(a, "victim-dir");
            let (fm, dm) = (std::fs::metadata(&v).unwrap(), std::fs::metadata(&d).unwrap());
            let mut s = with_state(a, |w| {
                lines(&[
                    header(w),
                    json!({"resource": "file", "path": v, "dev": fm.dev(), "ino": fm.ino()}).to_string(),
                    json!({"resource": "dir", "path": d, "recursive": true, "dev": dm.dev(), "ino": dm.ino()})
                        .to_string(),
                ])
            });
            s.victims.extend([vv, vd]);
            s
        }),
        ("foreign .lock and unparsable state, cleanup only", |a| {
            let mut s = Scene::new(a).cleanup_only();
            let lock = a.file("work/.lock", "someone else's lock\n");
            let state = a.file("work/state-zz.jsonl", "\u{0}\u{1}garbage\n");
            s.victims.extend([Victim::tree(&lock), Victim::tree(&state)]);
            s
        }),
    ]
}

#[test]
fn planted_state_files_make_cleanup_touch_nothing_foreign() {
    play_scenes("planted-state", scenes(), 4);
}
