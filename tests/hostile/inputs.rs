//! Files and counts a user (or a job file someone handed them) gives fsarena (issue 28): every
//! key naming a file fsarena reads (verify's `replay=`, dbench's `loadfile=`, filebench's
//! `file=`, on the command line and in a TOML job file) given a FIFO, /dev/zero, a directory,
//! a file over its limit, or a root-only secret that is no such file; `exec:assets=` given
//! special files, links out of it, too deep a tree; `--repeat`/`--warmup` and counts of 10^9
//! and more. Each must exit 2 within seconds with one line naming the key, the path, what it
//! is and the limit (never a byte of the secret), also with `--dry-run`, and create nothing.

use super::harness::{Arena, SECRET};
use super::table::{mkfifo, refuse_all, row, toml, wl, Row};

/// A file key, the limit its errors state, a secret's text that its parser refuses, and the
/// words its refusal of that secret says.
struct FileKey {
    spec: &'static str,
    key: &'static str,
    limit: u64,
    secret: String,
    refusal: &'static str,
}

fn file_keys() -> Vec<FileKey> {
    let shadow = format!("root:$6${SECRET}$Qx9e0r1:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n");
    vec![
        FileKey {
            spec: "verify",
            key: "replay",
            limit: 64 << 20,
            secret: shadow.clone(),
            refusal: "line 1: not an fsx operation",
        },
        FileKey {
            spec: "dbench",
            key: "loadfile",
            limit: 64 << 20,
            secret: format!("[client]\npassword = {SECRET}\n"),
            refusal: ":2: the last word must be the expected status",
        },
        FileKey { spec: "filebench", key: "file", limit: 1 << 20, secret: shadow, refusal: ":1: not a statement" },
    ]
}

/// The limit as the errors say it.
fn limit_words(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// `run` with `--dry-run` added after `run`.
fn dry(r: &Row) -> Row {
    let mut args = r.args.clone();
    args.insert(1, "--dry-run".into());
    Row { args, wants: r.wants.clone() }
}

#[test]
fn files_named_by_keys_are_bounded_checked_and_never_echoed() {
    let f = Arena::new("inputs");
    mkfifo(&f.path("fifo"));
    f.dir("adir");
    let mut rows: Vec<Row> = Vec::new();
    for k in file_keys() {
        let secret = f.file(&format!("{}-secret", k.key), &k.secret);
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        // Sparse: over the limit by one byte, at no cost.
        let big = f.file(&format!("{}-big", k.key), "");
        std::fs::OpenOptions::new().write(true).open(&big).unwrap().set_len(k.limit + 1).unwrap();
        let limit = limit_words(k.limit);
        let key = format!("{}=", k.key);
        let cases: Vec<(String, Vec<String>)> = vec![
            ("{F}/fifo".into(), vec!["a FIFO".into(), limit.clone()]),
            ("/dev/zero".into(), vec!["a character device".into(), limit.clone()]),
            ("/dev/urandom".into(), vec!["a character device".into()]),
            ("{F}/adir".into(), vec!["a directory".into(), limit.clone()]),
            (format!("{{F}}/{}-big", k.key), vec![format!("larger than the {limit} accepted")]),
            (format!("{{F}}/{}-secret", k.key), vec![k.refusal.into()]),
        ];
        for (path, says) in cases {
            let mut wants = vec![key.clone(), path.clone()];
            wants.extend(says);
            let wants: Vec<&str> = wants.iter().map(String::as_str).collect();
            let spec = format!("{}:{}={path}", k.spec, k.key);
            let command_line = wl(&spec, &wants);
            rows.push(dry(&command_line));
            rows.push(command_line);
            // The same key in a TOML job file someone handed over.
            let n = rows.len();
            let filled = path.replace("{F}", &f.root.display().to_string());
            f.file(
                &format!("job-{n}.toml"),
                format!("[[workload]]\nkind = \"{}\"\n{} = \"{filled}\"\n", k.spec, k.key),
            );
            rows.push(toml(&format!("{{F}}/job-{n}.toml"), &wants));
        }
    }
    refuse_all("inputs", &f, rows, 3);
}

#[test]
fn assets_directories_are_bounded_and_stay_inside() {
    let f = Arena::new("assets");
    f.file("fifo-in/a.txt", "a\n");
    mkfifo(&f.path("fifo-in/pipe"));
    f.file("link-out/a.txt", "a\n");
    std::os::unix::fs::symlink("/etc", f.path("link-out/etc")).unwrap();
    f.file("up-out/sub/a.txt", "a\n");
    std::os::unix::fs::symlink("../../..", f.path("up-out/sub/up")).unwrap();
    f.dir("real");
    std::os::unix::fs::symlink(f.path("real"), f.path("link-top")).unwrap();
    let deep: String = (0..70).map(|i| format!("d{i}/")).collect();
    f.file(&format!("deep/{deep}x"), "x\n");
    let exec = |dir: &str| format!("exec:cmd='ls {{assets}}',assets={dir}");
    let base = [
        wl(&exec("{F}/fifo-in"), &["assets={F}/fifo-in", "{F}/fifo-in/pipe is a FIFO"]),
        wl(&exec("{F}/link-out"), &["{F}/link-out/etc is a symbolic link out of the directory"]),
        wl(&exec("{F}/up-out"), &["{F}/up-out/sub/up is a symbolic link out of the directory"]),
        wl(&exec("{F}/link-top"), &["assets={F}/link-top", "a symbolic link"]),
        wl(&exec("/dev/zero"), &["assets=/dev/zero", "not a directory"]),
        wl(&exec("{F}/deep"), &["deeper than 64"]),
    ];
    let rows: Vec<Row> = base.iter().flat_map(|r| [dry(r), r.clone()]).collect();
    refuse_all("assets", &f, rows, 3);
}

#[test]
fn repetition_and_count_bombs_are_refused_at_once() {
    let f = Arena::new("counts");
    f.file("repeat.toml", "repeat = 1000000000\n[[workload]]\nkind = \"io\"\nsize = \"4k\"\n");
    f.file("warmup.toml", "warmup = 1000000000\n[[workload]]\nkind = \"io\"\nsize = \"4k\"\n");
    let run = |extra: &[&str], wants: &[&str]| {
        let mut args = vec!["run", "--target", "dir:path={T}", "--workload", "io:size=4k"];
        args.extend_from_slice(extra);
        row(&args, wants)
    };
    let base = vec![
        run(&["--repeat", "1000000000", "--warmup", "0"], &["--repeat", "1000000000", "1000"]),
        run(&["--repeat", "1", "--warmup", "1000000000"], &["--warmup", "1000000000", "100"]),
        run(&["--repeat", "4294967295", "--warmup", "0"], &["4294967295"]),
        run(&["--repeat", "1001", "--warmup", "0"], &["1001", "1000"]),
        row(
            &["run", "{F}/repeat.toml", "--target", "dir:path={T}", "--warmup", "0"],
            &["repeat = 1000000000", "at most 1000"],
        ),
        row(
            &["run", "{F}/warmup.toml", "--target", "dir:path={T}", "--repeat", "1"],
            &["warmup = 1000000000", "at most 100"],
        ),
        // Every operation of fsx stays in its log: 10^12 of them do not fit memory.
        wl("verify:numops=1000000000000", &["verify workload", "of memory"]),
        wl("verify:numops=100000000000,file_length=4k,max_op_len=4k", &["of memory"]),
        // make -j: compilers at once, held to the thread limit.
        wl("exec:builtin=build,jobs=100000", &["100002 threads"]),
    ];
    let mut rows: Vec<Row> = base.iter().map(dry).collect();
    rows.extend(base);
    rows.push(row(&["demo", "--repeat", "1000000000"], &["--repeat", "1000000000"]));
    refuse_all("counts", &f, rows, 3);
}
