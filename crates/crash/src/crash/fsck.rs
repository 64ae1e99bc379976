//! The checker's rule for a crash image: which filesystem checker judges a recovered image,
//! how it is run (read-only: it repairs nothing) and which of its exit codes say the image is
//! damaged. The recorder mounts and unmounts the image; whether the image is clean is the crash
//! workload's verdict, made here.

use std::path::Path;
use std::process::{Command, Stdio};

/// The checker of `fs`, its arguments before the image, and which of its exit codes are errors.
fn checker(fs: &str) -> (&'static str, &'static [&'static str], fn(i32) -> bool) {
    match fs {
        "xfs" => ("xfs_repair", &["-n", "-f"], |c| c != 0),
        "btrfs" => ("btrfs", &["check", "--readonly"], |c| c != 0),
        // e2fsck: 1 and 2 are "errors corrected" (with -n nothing is), 4 and up are errors left.
        _ => ("e2fsck", &["-fn"], |c| c >= 4),
    }
}

/// Runs the filesystem's checker on an unmounted image: None when it finds nothing wrong,
/// else its exit status and the end of its output.
pub(super) fn fsck(fs: &str, image: &Path) -> Option<String> {
    let img = image.to_string_lossy().to_string();
    let (program, flags, bad) = checker(fs);
    let args: Vec<&str> = flags.iter().copied().chain([img.as_str()]).collect();
    let out = match Command::new(program).args(&args).env("LC_ALL", "C").stdin(Stdio::null()).output() {
        Ok(o) => o,
        Err(e) => return Some(format!("cannot run {program}: {e}")),
    };
    let code = out.status.code().unwrap_or(-1);
    if !bad(code) {
        return None;
    }
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(12)..].join("\n");
    Some(format!("{program} {} exited {code}:\n{tail}", args.join(" ")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_filesystem_has_its_checker_run_read_only_and_its_own_error_codes() {
        let (program, flags, bad) = checker("ext4");
        assert_eq!((program, flags), ("e2fsck", &["-fn"][..]));
        // e2fsck's 1 and 2 say errors were corrected: with -n none are, so they are no finding.
        assert_eq!([0, 1, 2, 4, 8].map(bad), [false, false, false, true, true]);
        assert_eq!(checker("ext2").0, "e2fsck");
        let (program, flags, bad) = checker("xfs");
        assert_eq!((program, flags), ("xfs_repair", &["-n", "-f"][..]));
        assert_eq!([0, 1].map(bad), [false, true]);
        let (program, flags, bad) = checker("btrfs");
        assert_eq!((program, flags), ("btrfs", &["check", "--readonly"][..]));
        assert_eq!([0, 1].map(bad), [false, true]);
    }

    #[test]
    fn a_clean_image_passes_and_a_damaged_one_is_named_with_the_checkers_words() {
        let dir = std::env::temp_dir().join(format!("fsarena-crash-fsck-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("ext4.img");
        std::fs::File::create(&image).unwrap().set_len(16 << 20).unwrap();
        let made = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image).stderr(Stdio::null()).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: needs mkfs.ext4");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        assert_eq!(fsck("ext4", &image), None);
        // The primary superblock zeroed: e2fsck falls back on a backup and finds errors it
        // leaves (exit 4), named with its command line and its last words.
        let f = std::fs::OpenOptions::new().write(true).open(&image).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[0u8; 4096], 0).unwrap();
        let said = fsck("ext4", &image).unwrap();
        let head = format!("e2fsck -fn {} exited ", image.display());
        let code = said.strip_prefix(&head).and_then(|r| r.split(':').next()).and_then(|c| c.parse::<i32>().ok());
        assert!(code.is_some_and(|c| c >= 4), "{said}");
        std::fs::remove_dir_all(&dir).unwrap();
        // A checker that is not there is a finding too, never a clean image.
        let none = fsck("btrfs", Path::new("/nonexistent/image"));
        assert!(none.is_some(), "{none:?}");
    }
}
