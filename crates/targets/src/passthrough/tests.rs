//! The passthrough on a real FUSE mount (root), with hooks that leave links and xattrs out,
//! serve only directories and regular files, answer reads themselves and see every change.

use super::*;
use crate::recorder::files::FileOp;
use std::ffi::OsStr;
use std::sync::{Arc, Mutex};

/// Hooks that keep to files and directories, shout what is read, and keep what is done.
#[derive(Debug)]
struct Narrow {
    done: Arc<Mutex<Vec<FileOp>>>,
}

impl Hooks for Narrow {
    fn supports(&self, _feature: Feature) -> bool {
        false
    }

    fn serves(&self, kind: FileType) -> bool {
        matches!(kind, FileType::Directory | FileType::RegularFile)
    }

    fn done(&mut self, op: FileOp) {
        self.done.lock().unwrap().push(op);
    }

    fn read(&mut self, backing: &Backing, _ino: u64, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, i32> {
        Ok(backing.read(fh, offset, size)?.to_ascii_uppercase())
    }
}

#[test]
fn hooks_see_every_change_answer_reads_and_leave_out_what_they_do_not_serve() {
    if !crate::sys::is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (backing, mnt) = (dir.path().join("backing"), dir.path().join("mnt"));
    std::fs::create_dir(&backing).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    // Made beside the passthrough, not through it: neither listed nor found.
    std::os::unix::fs::symlink("/etc/passwd", backing.join("planted")).unwrap();
    let done = Arc::new(Mutex::new(Vec::new()));
    let fs = Passthrough::new(HeldDir::open(&backing).unwrap(), Narrow { done: Arc::clone(&done) });
    let options = [fuser::MountOption::FSName("fsarena-passthrough-test".into())];
    let session = fuser::spawn_mount2(fs, &mnt, &options).unwrap();
    let checks = std::panic::catch_unwind(|| {
        std::fs::write(mnt.join("a"), b"data").unwrap();
        assert_eq!(std::fs::read(mnt.join("a")).unwrap(), b"DATA");
        assert_eq!(std::fs::read(backing.join("a")).unwrap(), b"data", "written through");
        std::fs::rename(mnt.join("a"), mnt.join("b")).unwrap();
        std::fs::File::open(mnt.join("b")).unwrap().sync_all().unwrap();
        let refused = std::os::unix::fs::symlink("b", mnt.join("l")).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::ENOSYS));
        assert!(std::fs::symlink_metadata(mnt.join("planted")).is_err());
        let names: Vec<_> = std::fs::read_dir(&mnt).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [OsStr::new("b")]);
        std::fs::remove_file(mnt.join("b")).unwrap();
    });
    session.join();
    if let Err(panic) = checks {
        std::panic::resume_unwind(panic);
    }
    let done = done.lock().unwrap();
    let what: Vec<String> = done.iter().map(|op| format!("{op:?}").split(' ').next().unwrap().to_string()).collect();
    assert_eq!(what, ["Create", "Rename", "Fsync", "Unlink"], "{done:?}");
    assert!(std::fs::symlink_metadata(backing.join("planted")).unwrap().file_type().is_symlink());
}
