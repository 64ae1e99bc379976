//! The machine and software facts written next to the numbers.

use std::path::Path;

/// CPU model, cores, memory, kernel, distribution, fsarena version.
pub fn machine() -> Vec<(String, String)> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: u64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let kernel = rustix::system::uname();
    let kernel = format!("{} {}", kernel.sysname().to_string_lossy(), kernel.release().to_string_lossy());
    let distribution = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    vec![
        ("cpu".into(), cpu),
        ("cores".into(), cores.to_string()),
        ("memory".into(), fsarena_core::units::format_iec(mem_kib as f64 * 1024.0)),
        ("kernel".into(), kernel),
        ("distribution".into(), distribution),
        ("fsarena_version".into(), fsarena_core::VERSION.to_string()),
    ]
}

/// The filesystem, device and mount options under `path`, from /proc/self/mountinfo.
pub fn backing(path: &Path) -> Vec<(String, String)> {
    let Ok(canonical) = path.canonicalize() else { return Vec::new() };
    // The longest mount point that contains the path wins.
    let best = crate::sys::mounts()
        .into_iter()
        .filter(|m| canonical.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len());
    match best {
        Some(m) => vec![
            ("filesystem".into(), m.fstype),
            ("device".into(), m.source),
            ("mount_point".into(), m.mount_point.display().to_string()),
            ("mount_options".into(), format!("{},{}", m.mount_options, m.super_options)),
        ],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_facts_are_there() {
        let m = machine();
        let get = |k: &str| m.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
        assert!(get("kernel").starts_with("Linux "));
        assert!(get("cores").parse::<usize>().unwrap_or(0) >= 1);
        assert!(get("memory").ends_with("iB"));
    }

    #[test]
    fn root_is_on_some_filesystem() {
        let b = backing(Path::new("/"));
        assert_eq!(b.iter().find(|(k, _)| k == "mount_point").map(|(_, v)| v.as_str()), Some("/"));
        assert_eq!(crate::sys::unescape("/mnt/a\\040b"), "/mnt/a b");
    }
}
