use super::*;
use std::os::unix::fs::PermissionsExt;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fsarena-beneath-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn links_anywhere_on_the_way_are_never_followed() {
    let dir = scratch("links");
    let outside = dir.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), b"secret").unwrap();
    let held = dir.join("held");
    std::fs::create_dir_all(held.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), held.join("log")).unwrap();
    std::os::unix::fs::symlink(&outside, held.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), held.join("sub/log")).unwrap();
    let h = HeldDir::open(&held).unwrap();
    for rel in ["log", "linkdir/secret", "sub/log", "../outside/secret", "/etc/passwd"] {
        assert!(h.read_tail(Path::new(rel), None, 100).is_err(), "{rel} was read");
        assert!(h.open_file(Path::new(rel), OpenHow::APPEND).is_err(), "{rel} was opened for writing");
    }
    assert!(h.open_file(Path::new("linkdir/new"), OpenHow::NEW).is_err());
    assert!(!outside.join("new").exists());
    assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"secret");
    assert!(h.chown(Path::new("log"), 65534, 65534).is_ok() || !rustix::process::geteuid().is_root());
    // chown of the link itself, never its target.
    assert_ne!(std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(outside.join("secret")).unwrap()), 65534);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fifos_and_devices_neither_block_nor_are_read() {
    let dir = scratch("fifo");
    rustix::fs::mknodat(rustix::fs::CWD, dir.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    let h = HeldDir::open(&dir).unwrap();
    let e = h.read_tail(Path::new("fifo"), None, 100).unwrap_err().to_string();
    assert!(e.contains("a FIFO, not a regular file"), "{e}");
    let e = h.open_file(Path::new("fifo"), OpenHow::APPEND).unwrap_err().to_string();
    assert!(e.contains("FIFO") || e.contains("No such device"), "{e}");
    let e = read_input_file(&dir.join("fifo"), "replay= file", 1 << 20).unwrap_err().to_string();
    assert!(e.contains("is a FIFO: expected a regular file of at most 1 MiB"), "{e}");
    let e = read_input_file(Path::new("/dev/zero"), "replay= file", 1 << 20).unwrap_err().to_string();
    assert!(e.contains("/dev/zero is a character device"), "{e}");
    let e = read_input_file(&dir, "loadfile=", 1 << 20).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reads_are_capped_and_never_quote_the_file() {
    let dir = scratch("cap");
    let big = dir.join("big");
    std::fs::write(&big, vec![b'x'; 5000]).unwrap();
    let e = read_input_file(&big, "file=", 4096).unwrap_err().to_string();
    assert_eq!(e, format!("file= {} is larger than the 4 KiB accepted", big.display()));
    assert_eq!(read_input_file(&big, "file=", 5000).unwrap().len(), 5000);
    std::fs::write(&big, b"ok\n\xff secret\n").unwrap();
    let e = read_input_text(&big, "file=", 4096).unwrap_err().to_string();
    assert!(e.ends_with(":2 is not UTF-8 text") && !e.contains("secret"), "{e}");
    let log: Vec<u8> = (0..10_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
    std::fs::write(dir.join("log"), &log).unwrap();
    let h = HeldDir::open(&dir).unwrap();
    let tail = h.read_tail(Path::new("log"), None, 100).unwrap();
    assert_eq!(tail, log[log.len() - 100..]);
    let e = h.read_tail(Path::new("log"), Some(12345), 100).unwrap_err().to_string();
    assert!(e.contains("not uid 12345"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn created_things_are_new_and_exactly_as_asked() {
    let dir = scratch("create");
    let h = HeldDir::open(&dir).unwrap();
    let d = h.create_dir("d", 0o700, None).unwrap();
    assert_eq!(std::fs::metadata(dir.join("d")).unwrap().permissions().mode() & 0o7777, 0o700);
    assert!(h.create_dir("d", 0o700, None).is_err(), "an existing directory was adopted");
    assert!(h.create_dir("../x", 0o700, None).is_err());
    d.write_new(Path::new("f"), b"abc", 0o600).unwrap();
    assert!(d.write_new(Path::new("f"), b"abc", 0o600).is_err(), "an existing file was overwritten");
    assert_eq!(std::fs::read(dir.join("d/f")).unwrap(), b"abc");
    // Renamed away and replaced by a link: the held descriptor still reaches the directory.
    std::fs::rename(dir.join("d"), dir.join("moved")).unwrap();
    std::os::unix::fs::symlink("/etc", dir.join("d")).unwrap();
    d.write_new(Path::new("g"), b"g", 0o600).unwrap();
    assert!(dir.join("moved/g").exists() && !Path::new("/etc/g").exists());
    assert!(d.proc_path().join("g").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn directories_others_can_change_are_told_apart() {
    assert!(!others_can_write(0o755, 0));
    assert!(!others_can_write(0o1777, 0), "sticky: others cannot rename root's entries");
    assert!(others_can_write(0o777, 0));
    assert!(others_can_write(0o775, 0));
    assert!(others_can_write(0o755, 1000), "the owner can rename anything in it");
    assert!(first_writable_by_others(Path::new("/")).is_none());
}
