//! The file-level crash oracle's rule: what a crash at a point of a `fuse:` daemon's log
//! ([`FileOp`], recorded by [`fsarena_target::recorder::files`]) keeps for certain, and what it
//! may lose. An fsync (or fdatasync) of a file makes its data durable, and with it its name,
//! the directories above it and the names it came by; an fsync of a directory makes its
//! entries durable; a barrier (fsarena's own, after the set-up) everything before it. Kept
//! here, with the crash states built from it ([`super::rec`]), not with the recorder: the
//! recorder logs what the daemon did, the crash workload decides what a crash may undo.

use fsarena_target::recorder::files::FileOp;
use std::path::Path;

/// Which operations a crash at point `p` (before `ops[p]`) keeps for certain: every name
/// operation before it (with `lossy`, only those a later fsync before `p` covered: of a
/// directory whose entries it changed, or of the name it made or a new directory above it, as
/// Linux filesystems persist a new file's name with its fsync), and every data operation whose file was fsynced after
/// it before `p`. The rest before `p` (data, and with `lossy` the uncovered name operations)
/// is what the crash may lose, in whole or in part: the second list, in log order.
pub(super) fn durable_at(ops: &[FileOp], p: usize, lossy: bool) -> (Vec<usize>, Vec<usize>) {
    let (mut sure, mut unsynced) = (Vec::new(), Vec::new());
    let barrier = ops[..p].iter().rposition(|o| *o == FileOp::Barrier);
    // The names each fsync's file had: an fsync reaches the inode, whichever name it came by.
    let aliases: Vec<Vec<&Path>> = ops[..p]
        .iter()
        .enumerate()
        .map(|(f, o)| if let FileOp::Fsync { path, .. } = o { names_of(ops, f, path) } else { Vec::new() })
        .collect();
    for (j, op) in ops[..p].iter().enumerate() {
        let later = (j + 1..p).map(|k| (k, &ops[k]));
        if barrier.is_some_and(|b| j < b) {
            if op.is_name() || op.is_data() {
                sure.push(j);
            }
        } else if op.is_name() {
            let dirs = op.dirs();
            let subject = op.subject();
            // What an fsync of the object itself covers beyond its name: its mode and xattrs,
            // and its link count, which a new hard link changes (fsync promises them: the
            // oracle holds an fsynced file's mode, links and xattrs at the posix level).
            let object = op.object();
            let mut covered = later.filter(|(k, o)| match o {
                FileOp::FsyncDir { path } => {
                    dirs.contains(path) || subject == Some(path.as_path()) || object == Some(path.as_path())
                }
                // The name it made, or a directory on the way to it (a new file's fsync
                // persists the new directories above it on Linux filesystems), under any of
                // the file's names.
                FileOp::Fsync { .. } => {
                    aliases[*k].iter().any(|a| subject.is_some_and(|s| a.starts_with(s)) || object == Some(*a))
                }
                _ => false,
            });
            // Uncovered, with `lossy`: the crash may lose it or keep it, like unsynced data.
            if !lossy || covered.next().is_some() {
                sure.push(j);
            } else {
                unsynced.push(j);
            }
        } else if op.is_data() {
            let id = match op {
                FileOp::Write { id, .. } | FileOp::Truncate { id, .. } | FileOp::Allocate { id, .. } => *id,
                _ => 0,
            };
            if later.into_iter().any(|(_, o)| matches!(o, FileOp::Fsync { id: f, .. } if *f == id)) {
                sure.push(j);
            } else {
                unsynced.push(j);
            }
        }
    }
    // What is kept keeps what it stands on: the operations that made the directories its
    // names lie in, and the name a link or rename starts from.
    let mut at = 0;
    while at < sure.len() {
        for k in makers(ops, sure[at]) {
            if let Some(u) = unsynced.iter().position(|&x| x == k) {
                unsynced.remove(u);
                sure.push(k);
            }
        }
        at += 1;
    }
    sure.sort_unstable();
    (sure, unsynced)
}

/// The names the file at `path` had up to operation `f`: `path`, and those a link or rename
/// before `f` joined to it.
fn names_of<'a>(ops: &'a [FileOp], f: usize, path: &'a Path) -> Vec<&'a Path> {
    let mut names = vec![path];
    for op in ops[..f].iter().rev() {
        match op {
            FileOp::Link { from, to } => {
                if names.contains(&to.as_path()) && !names.contains(&from.as_path()) {
                    names.push(from);
                } else if names.contains(&from.as_path()) && !names.contains(&to.as_path()) {
                    names.push(to);
                }
            }
            FileOp::Rename { from, to } if names.contains(&to.as_path()) && !names.contains(&from.as_path()) => {
                names.push(from);
            }
            _ => {}
        }
    }
    names
}

/// The operations before `j` that made what `ops[j]` needs: the directories above each path
/// it names, and the existing name a link or rename acts on (each the latest to make it).
fn makers(ops: &[FileOp], j: usize) -> Vec<usize> {
    let made_by = |path: &Path| (0..j).rev().find(|&k| ops[k].subject() == Some(path));
    let op = &ops[j];
    let mut needs: Vec<&Path> = Vec::new();
    for path in op.paths() {
        needs.extend(path.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()));
    }
    match op {
        FileOp::Link { from, .. } | FileOp::Rename { from, .. } => needs.push(from),
        FileOp::Write { path, .. } | FileOp::Truncate { path, .. } | FileOp::Allocate { path, .. } => needs.push(path),
        _ => {}
    }
    needs.into_iter().filter_map(made_by).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: u64, path: &str, offset: u64, byte: u8) -> FileOp {
        FileOp::Write { id, path: path.into(), offset, data: vec![byte; 4] }
    }

    #[test]
    fn a_crash_keeps_names_and_synced_data_and_may_lose_the_rest() {
        let ops = vec![
            FileOp::Create { path: "a".into(), mode: 0o644 },
            w(2, "a", 0, b'x'),
            FileOp::Fsync { id: 2, path: "a".into() },
            FileOp::Mark(1),
            w(2, "a", 4, b'y'),
            FileOp::Create { path: "b".into(), mode: 0o644 },
            FileOp::Mkdir { path: "d".into(), mode: 0o755 },
            FileOp::FsyncDir { path: "".into() },
            FileOp::Create { path: "d/c".into(), mode: 0o600 },
        ];
        let (sure, unsynced) = durable_at(&ops, ops.len(), false);
        assert_eq!(sure, vec![0, 1, 5, 6, 8]);
        assert_eq!(unsynced, vec![4]);
        // Lossy: the names in the root were fsynced after them; d/c's directory never was.
        // d/c's name may be lost or kept, as unsynced data may, in log order with it.
        let (sure, unsynced) = durable_at(&ops, ops.len(), true);
        assert_eq!(sure, vec![0, 1, 5, 6]);
        assert_eq!(unsynced, vec![4, 8]);
        // A rename is covered by the fsync of the name it made, or of either directory; what
        // a barrier precedes is durable; a name no fsync covered is not.
        let lossy = vec![
            FileOp::Create { path: "f".into(), mode: 0o644 },
            FileOp::Barrier,
            FileOp::Rename { from: "f".into(), to: "A/g".into() },
            FileOp::Fsync { id: 9, path: "A/g".into() },
            FileOp::Rename { from: "A/g".into(), to: "h".into() },
            FileOp::FsyncDir { path: "A".into() },
            FileOp::Create { path: "x".into(), mode: 0o644 },
        ];
        assert_eq!(durable_at(&lossy, lossy.len(), true), (vec![0, 2, 4], vec![6]));
        // An fsync of a file covers its mode, its xattrs and a new hard link of it (its link
        // count), as the oracle holds them: with names=lossy none of them may be lost after
        // it. Those of a file not fsynced may.
        let meta = vec![
            FileOp::Barrier,
            FileOp::Chmod { path: "foo".into(), mode: 0o600 },
            FileOp::Xattr { path: "foo".into(), name: b"user.a".to_vec(), value: Some(b"1".to_vec()) },
            FileOp::Link { from: "foo".into(), to: "A/ln".into() },
            FileOp::Xattr { path: "bar".into(), name: b"user.b".to_vec(), value: None },
            FileOp::Fsync { id: 4, path: "foo".into() },
        ];
        assert_eq!(durable_at(&meta, meta.len(), true), (vec![1, 2, 3], vec![4]));
        assert_eq!(durable_at(&lossy, lossy.len(), false).0, vec![0, 2, 4, 6]);
    }

    #[test]
    fn an_fsync_keeps_the_directories_above_its_file_and_the_names_it_came_by() {
        let fsync = |id: u64, path: &str| FileOp::Fsync { id, path: path.into() };
        // mkdir A, mkdir A/C, create foo, link foo A/C/bar, fsync foo: the link's count is
        // promised, so its directories are kept with it (a crash cannot keep a name whose
        // directory it lost).
        let ops = vec![
            FileOp::Mkdir { path: "A".into(), mode: 0o755 },
            FileOp::Mkdir { path: "A/C".into(), mode: 0o755 },
            FileOp::Create { path: "foo".into(), mode: 0o644 },
            FileOp::Link { from: "foo".into(), to: "A/C/bar".into() },
            fsync(7, "foo"),
            FileOp::Create { path: "other".into(), mode: 0o644 },
        ];
        assert_eq!(durable_at(&ops, ops.len(), true), (vec![0, 1, 2, 3], vec![5]));
        // create foo, link foo bar, fsync of the file through bar: the file's creation is
        // covered too (an fsync reaches the inode, whichever name it came by).
        let ops = vec![
            FileOp::Create { path: "foo".into(), mode: 0o644 },
            FileOp::Link { from: "foo".into(), to: "bar".into() },
            fsync(7, "bar"),
        ];
        assert_eq!(durable_at(&ops, ops.len(), true), (vec![0, 1], vec![]));
        // mkdir A, create A/foo, fsync A/foo: Linux keeps the new directory with the file.
        let ops = vec![
            FileOp::Mkdir { path: "A".into(), mode: 0o755 },
            FileOp::Create { path: "A/foo".into(), mode: 0o644 },
            fsync(3, "A/foo"),
            FileOp::Mkdir { path: "B".into(), mode: 0o755 },
        ];
        assert_eq!(durable_at(&ops, ops.len(), true), (vec![0, 1], vec![3]));
    }
}
