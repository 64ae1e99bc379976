//! Bad inputs: hostile job and file names (command line, fio sections, TOML), option bombs
//! that would exhaust threads, memory or the target, and bad flag values. Each must exit 2
//! with one line naming the value, before anything is created. The one path a job file may
//! name outside the target, an absolute `filename=`, runs inside it and never reaches the path.

use super::harness::Arena;
use super::table::{fio, refuse_all, row, toml, wl, Row};

/// `n` copies of `c`.
fn many(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

#[test]
fn hostile_job_and_file_names_are_refused() {
    let f = Arena::new("names");
    let ten_k = many('a', 10 << 10);
    let long = many('b', 201);
    let forty_a = many('a', 40);
    let forty_b = many('b', 40);
    let ten_k_c = many('c', 10 << 10);
    let forty_c = many('c', 40);
    let name = |n: &str| format!("io:name={n},size=1m");
    let file = |n: &str| format!("io:filename={n},size=1m");
    let mut rows: Vec<Row> = vec![
        // --workload io:name=: paths out of the target, empty, dots, control characters, size.
        wl(&name("{S}/victim/x"), &["{S}/victim/x"]),
        wl(&name("../../victim/x"), &["../../victim/x"]),
        wl(&name("x/../../../victim/x"), &["x/../../../victim/x"]),
        wl(&name(".."), &["name"]),
        wl(&name("."), &["name"]),
        wl(&name("a/b"), &["a/b"]),
        wl(&name("x/.."), &["x/.."]),
        wl(&name("/"), &["name"]),
        wl(&name("trailing/"), &["trailing/"]),
        wl("io:name=,size=1m", &["name"]),
        wl(&name("\x1b[2J"), &["\\x1b[2J"]),
        wl(&name("a\nb"), &["a\\nb"]),
        wl(&name("tab\there"), &["tab\\there"]),
        wl(&name("cr\rx"), &["cr\\rx"]),
        wl(&name("del\x7f"), &["del\\x7f"]),
        wl(&name("bell\x07"), &["bell\\x07"]),
        wl(&name("\u{9b}31m"), &["\\x9b31m"]),
        wl(&name(&ten_k), &[&forty_a]),
        wl(&name(&long), &[&forty_b]),
        wl("io:name=../../victim/x,size=1m,numjobs=2,nrfiles=2", &["../../victim/x"]),
        // --workload io:filename=.
        wl(&file("{S}/victim/x"), &["{S}/victim/x"]),
        wl(&file("../../victim/x.0.0"), &["../../victim/x.0.0"]),
        wl(&file(".."), &["filename"]),
        wl(&file("."), &["filename"]),
        wl(&file("a/b"), &["a/b"]),
        wl(&file("/dev/null"), &["/dev/null"]),
        wl(&file("\x1b]0;pwned\x07"), &["\\x1b]0;pwned\\x07"]),
        wl("io:filename=,size=1m", &["filename"]),
        wl(&file(&ten_k_c), &[&forty_c]),
    ];
    // fio job files: section names and name=/filename= options.
    let fio_files: Vec<(&str, String, &str)> = vec![
        ("sec-up.fio", "[../../victim/x]\nsize=1m\n".into(), "../../victim/x"),
        ("sec-abs.fio", "[/var/tmp/fsarena-hostile-absent/x]\nsize=1m\n".into(), "/var/tmp/fsarena-hostile-absent/x"),
        ("sec-dotdot.fio", "[..]\nsize=1m\n".into(), "sec-dotdot.fio:1"),
        ("sec-dot.fio", "[.]\nsize=1m\n".into(), "sec-dot.fio:1"),
        ("sec-slash.fio", "[a/b]\nsize=1m\n".into(), "a/b"),
        ("sec-empty.fio", "[]\nsize=1m\n".into(), "sec-empty.fio:1"),
        ("sec-esc.fio", "[\x1b[2J]\nsize=1m\n".into(), "\\x1b[2J"),
        ("sec-nul.fio", "[a\0b]\nsize=1m\n".into(), "a\\x00b"),
        ("sec-tab.fio", "[a\tb]\nsize=1m\n".into(), "a\\tb"),
        ("sec-long.fio", format!("[{ten_k}]\nsize=1m\n"), &forty_a),
        ("opt-name.fio", "[j]\nsize=1m\nname=../../victim/x\n".into(), "opt-name.fio:"),
        ("opt-global-name.fio", "[global]\nname=../../victim/x\n[j]\nsize=1m\n".into(), "../../victim/x"),
        ("opt-filename.fio", "[j]\nsize=1m\nfilename=../../victim/x.0.0\n".into(), "opt-filename.fio:"),
        // An absolute filename= runs as its last component inside the target: see
        // an_absolute_filename_in_a_job_file_never_reaches_its_path below.
        ("opt-name-bel.fio", "[j]\nsize=1m\nname=x\x07y\n".into(), "x\\x07y"),
    ];
    for (n, text, want) in &fio_files {
        f.file(n, text);
        rows.push(fio(&format!("{{F}}/{n}"), &[want]));
    }
    // TOML job files.
    let toml_files: Vec<(&str, String, &str)> = vec![
        ("name-up.toml", "name = \"../../victim/x\"".into(), "../../victim/x"),
        ("name-abs.toml", "name = \"/var/tmp/fsarena-hostile-absent/x\"".into(), "/var/tmp/fsarena-hostile-absent/x"),
        ("name-nul.toml", "name = \"a\\u0000b\"".into(), "a\\x00b"),
        ("name-esc.toml", "name = \"\\u001b[2J\"".into(), "\\x1b[2J"),
        ("name-long.toml", format!("name = \"{ten_k}\""), &forty_a),
        ("name-dotdot.toml", "name = \"..\"".into(), "name-dotdot.toml"),
        ("filename-up.toml", "filename = \"../../victim/x.0.0\"".into(), "../../victim/x.0.0"),
    ];
    for (n, line, want) in &toml_files {
        f.file(n, format!("[[workload]]\nkind = \"io\"\nsize = \"1m\"\n{line}\n"));
        rows.push(toml(&format!("{{F}}/{n}"), &[want]));
    }
    refuse_all("names", &f, rows, 4);
}

#[test]
fn an_absolute_filename_in_a_job_file_never_reaches_its_path() {
    // A job file written for another machine names its scratch file by an absolute path:
    // fsarena runs it as that name inside the target and says so; the path itself is never
    // created, opened or removed (nor its directory).
    let absent = std::path::Path::new("/var/tmp/fsarena-hostile-absent");
    assert!(!absent.exists(), "{} exists before the test", absent.display());
    let work = crate::util::Scratch::new("hostile-filename-abs");
    let target = crate::util::Scratch::new("hostile-filename-abs-target");
    let job = "[j]\nrw=write\nsize=1m\nfilename=/var/tmp/fsarena-hostile-absent/f\n";
    let out = crate::util::run_fio_text(&work.path, &target.spec(), job, &[]);
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    assert!(!absent.exists(), "{} was created", absent.display());
    assert_eq!(crate::util::json(&out)["jobs"][0]["write"]["io_bytes"], 1 << 20);
    // The plan says where it runs.
    let file = work.path.join("job.fio");
    let plan =
        crate::util::run(&["run", "--dry-run", "--target", &target.spec(), "--fio", file.to_str().expect("utf-8")]);
    let said = String::from_utf8_lossy(&plan.stdout);
    assert!(said.contains("filename=/var/tmp/fsarena-hostile-absent/f: run as 'f' in the target"), "{said}");
    assert!(target.leftovers().is_empty(), "{:?}", target.leftovers());
}

#[test]
fn option_bombs_are_refused_before_anything_is_created() {
    let f = Arena::new("bombs");
    let rows = vec![
        // io: threads, files, queue depth, buffers, bytes on a 16 MiB target.
        wl("io:numjobs=100000,size=4k", &["100000"]),
        wl("io:numjobs=4294967295,size=4k", &["4294967295"]),
        wl("io:numjobs=5000,size=4k", &["5000"]),
        wl("io:nrfiles=1000000000,size=1m", &["1000000000"]),
        wl("io:nrfiles=4294967295,filesize=4k", &["4294967295"]),
        wl("io:bs=64g,size=64g", &["64.0GiB"]),
        wl("io:bs=1t,size=1t", &["1.0TiB"]),
        wl("io:size=1g", &["1.0GiB"]),
        wl("io:size=17m", &["17.0MiB"]),
        wl("io:size=1m,numjobs=64", &["64"]),
        wl("io:filesize=1g,nrfiles=2,size=2g", &["2.0GiB"]),
        wl("io:bssplit=1g/50:4k/50,size=1g", &["1.0GiB"]),
        wl("io:bs=16m,size=16m,numjobs=4096", &["4096"]),
        wl("io:rw=write,size=1p", &["1.0PiB"]),
        wl("io:rw=randrw,size=1t,time_based=1,runtime=1", &["1.0TiB"]),
        // meta: tasks, items, tree shape, bytes.
        wl("meta:tasks=100000", &["100000"]),
        wl("meta:tasks=5000", &["5000"]),
        wl("meta:items=1000000000000", &["1000000000000"]),
        wl("meta:items=4294967296000,files_only=1", &["4294967296000"]),
        wl("meta:items_per_dir=1000000000,branch=10,depth=5", &["1000000000"]),
        wl("meta:branch=1000,depth=10,items_per_dir=1", &["1000"]),
        wl("meta:branch=4294967295,depth=2,items_per_dir=1", &["4294967295"]),
        wl("meta:depth=1000,branch=2,items_per_dir=1", &["1000"]),
        wl("meta:write_bytes=1t,items=100,files_only=1", &["TiB"]),
        wl("meta:write_bytes=1m,items=100000,files_only=1", &["100000"]),
        wl("meta:tasks=4096,items=1000000000", &["1000000000"]),
        wl("meta:mdtest='-n 1000000000000'", &["1000000000000"]),
        wl("meta:mdtest='-b 100 -z 100 -I 10'", &["100"]),
        wl("meta:unique_dir=1,tasks=4096,items=100000000", &["100000000"]),
        // tree: threads, levels, files, sizes.
        wl("tree:threads=100000", &["100000"]),
        wl("tree:threads=5000", &["5000"]),
        wl("tree:levels=100,dirs_per_level=100", &["100"]),
        wl("tree:levels=1000", &["1000"]),
        wl("tree:dirs_per_level=4294967295", &["4294967295"]),
        wl("tree:files_per_dir=1000000000", &["1000000000"]),
        wl("tree:file_size=1t", &["TiB"]),
        wl("tree:file_size='1g,2g'", &["GiB"]),
        wl("tree:write_size=64g,file_size=64g", &["64.0GiB"]),
        wl("tree:threads=4096,file_size=1m", &["4096"]),
        wl("tree:files_per_dir=100000,dirs_per_level=100", &["100000"]),
        wl("tree:levels=20,dirs_per_level=20", &["20"]),
        // Targets fsarena provisions: refused before the image or mount exists.
        row(&["run", "--target", "ext4:size=64m", "--workload", "io:size=1g"], &["1.0GiB"]),
        row(&["run", "--target", "tmpfs:size=16m", "--workload", "io:size=64m"], &["64.0MiB"]),
        row(&["run", "--target", "fuse2fs:size=64m", "--workload", "io:size=1g"], &["1.0GiB"]),
        row(
            &["run", "--target", "ext4:size=64m", "--workload", "meta:write_bytes=1m,items=100000,files_only=1"],
            &["100000"],
        ),
        row(&["run", "--target", "tmpfs:size=16m", "--workload", "tree:file_size=1g"], &["GiB"]),
        // --dry-run plans too: the same bounds, fast.
        row(&["run", "--dry-run", "--target", "dir:path={T}", "--workload", "io:numjobs=100000,size=4k"], &["100000"]),
        row(
            &["run", "--dry-run", "--target", "dir:path={T}", "--workload", "io:nrfiles=1000000000,size=1m"],
            &["1000000000"],
        ),
        row(&["run", "--dry-run", "--target", "dir:path={T}", "--workload", "meta:tasks=100000"], &["100000"]),
    ];
    refuse_all("bombs", &f, rows, 3);
}

#[test]
fn bad_flag_values_are_refused() {
    let f = Arena::new("flags");
    let base = ["run", "--target", "dir:path={T}", "--workload", "io:size=1m"];
    let with = |extra: &[&str], wants: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        row(&args, wants)
    };
    let rows = vec![
        with(&["--output-format", "xml"], &["xml"]),
        with(&["--output-format", ""], &["output format"]),
        with(&["--output-format", "\x1b[31mjson"], &["\\x1b[31mjson"]),
        with(&["--output-format", "json,csv"], &["json,csv"]),
        with(&["--output-format", "fio-json+x"], &["fio-json+x"]),
        with(&["--output-format", "json\n"], &["json\\n"]),
        with(&["--repeat", "0"], &["--repeat 0"]),
        // Refused by the flag parser: still one line naming the value.
        with(&["--repeat", "abc"], &["abc"]),
        with(&["--repeat", "-1"], &["-1"]),
        with(&["--warmup", "many"], &["many"]),
        with(&["--colour"], &["--colour"]),
        row(&["completions", "tcsh"], &["tcsh"]),
        row(&["compare", "a", "b", "--fail-on-regression", "abc"], &["abc"]),
        row(&["results", "list", "--output-format", "yaml"], &["yaml"]),
        row(&["results", "list", "--output-format", "\x1b]0;t\x07"], &["\\x1b]0;t\\x07"]),
        row(&["demo", "--suite", "nosuch"], &["no suite 'nosuch'"]),
        row(&["demo", "--repeat", "0"], &["--repeat 0"]),
        // Workload spec syntax.
        row(&["run", "--target", "dir:path={T}", "--workload", ""], &["spec"]),
        row(&["run", "--workload", "io:size=1m"], &["no target"]),
        row(&["run", "--target", "dir:path={T}"], &["no workload"]),
        wl("io:size=1m,rw=\x1b[2J", &["\\x1b[2J"]),
        wl("zz:x=1", &["zz"]),
        wl("\x1b[2J:x=1", &["\\x1b[2J"]),
        wl("io:size=1m,=5", &["=5"]),
        wl("io:size='1m", &["'1m"]),
        wl("io:size=1m,runtime=-1", &["-1"]),
        wl("io:size=1m,rate=abc", &["abc"]),
        wl("meta:items=\u{202e}01", &["\\u{202e}01"]),
    ];
    refuse_all("flags", &f, rows, 4);
}
