//! Bad job files: devices, FIFOs, directories, huge files and lines, include bombs and
//! loops, includes of files that are not job files (a shadow-like secret whose content must
//! never be printed), empty includes, BOMs, non-UTF-8 and binary text; for fio and TOML.

use super::harness::{Arena, SECRET};
use super::table::{fio, mkfifo, refuse_all, row, toml, Row};
use crate::util::Bounded;

/// A shadow-like file: not shaped like a job file, with a secret on its first line.
fn shadow() -> String {
    format!("root:$6${SECRET}$Qx9e0r1:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
}

#[test]
fn job_file_bombs_and_non_job_files_are_refused() {
    let f = Arena::new("jobfiles");
    f.file("shadow", shadow());
    f.file("my.cnf", format!("[client]\npassword={SECRET}\n"));
    // A long file that is no job file: a problem on every line, the first 20 said and counted.
    f.file("passwd-like", format!("{SECRET}:x:0:0::/root:/bin/sh\n").repeat(5000));
    // 300 jobs, each with a bad bs and no size: 600 problems, said in one run.
    f.file("many-problems.fio", "[a]\nbs=4q\n".repeat(300));
    f.file("empty.fio", "");
    mkfifo(&f.path("fifo.fio"));
    mkfifo(&f.path("fifo.toml"));
    f.dir("adir.fio");
    f.dir("adir.toml");
    let padding = "# padding padding padding padding padding padding padding padding\n".repeat(2 << 20 >> 6);
    f.file("big.fio", format!("[j]\nsize=1m\n{padding}"));
    f.file("oneline.fio", format!("[j]\nsize=1m\n#{}\n", "x".repeat(2 << 20)));
    f.file("big.toml", format!("[[workload]]\nkind = \"io\"\nsize = \"1m\"\n{padding}"));
    // Include fan-out: ten files each including the next ten times (10^10 expansions).
    for i in 0..10 {
        f.file(&format!("fan{i}.fio"), format!("include fan{}.fio\n", i + 1).repeat(10));
    }
    f.file("fan10.fio", "[j]\nsize=4k\n");
    f.file("loop-a.fio", "[j]\nsize=1m\ninclude loop-b.fio\n");
    f.file("loop-b.fio", "include loop-a.fio\n");
    f.file("self.fio", "[j]\nsize=1m\ninclude self.fio\n");
    for i in 0..20 {
        f.file(&format!("chain{i}.fio"), format!("include chain{}.fio\n", i + 1));
    }
    f.file("chain20.fio", "[j]\nsize=4k\n");
    f.file("inc-shadow.fio", "[j]\nsize=1m\ninclude shadow\n");
    f.file("inc-abs-shadow.fio", format!("include {}\n[j]\nsize=1m\n", f.path("shadow").display()));
    f.file("inc-cnf.fio", "include my.cnf\n[j]\nsize=1m\n");
    f.file("inc-noname.fio", "[j]\nsize=1m\ninclude\n");
    f.file("inc-blank.fio", "[j]\nsize=1m\ninclude    \n");
    f.file("inc-empty.fio", "include empty.fio\n[j]\nsize=1m\n");
    f.file("inc-missing.fio", "include missing.fio\n[j]\nsize=1m\n");
    f.file("inc-zero.fio", "include /dev/zero\n[j]\nsize=1m\n");
    f.file("inc-fifo.fio", "include fifo.fio\n[j]\nsize=1m\n");
    f.file("inc-dir.fio", "include adir.fio\n[j]\nsize=1m\n");
    f.file("inc-big.fio", "include big.fio\n");
    f.file("bom-bad.fio", "\u{feff}[j]\nsize=1m\nbs=1q\n");
    f.file("latin1.fio", b"[j]\nsize=1m\nname=caf\xe9\n");
    f.file("inc-latin1.fio", "include latin1.fio\n");
    f.file("latin1.toml", b"[[workload]]\nkind = \"io\"\nsize = \"1m\"\nname = \"caf\xe9\"\n");
    std::os::unix::fs::symlink("/dev/zero", f.path("zerolink.fio")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", f.path("zerolink.toml")).unwrap();
    // 200,000 job sections in under 1 MiB: a thread bomb that passes the size bound.
    f.file("sections.fio", format!("[global]\nsize=4k\n{}", "[j]\n".repeat(200_000)));
    f.file("nul.fio", b"[j]\nsize=1m\0\x1b[2Jgarbage\n");
    let binary: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    f.file("binary.fio", binary);
    f.file("esc-key.fio", "[j]\nsize=1m\n\x1b[31mkey=1\n");
    f.file("env.fio", "[j]\nsize=${HOSTILE_UNSET_VARIABLE}\n");
    f.file("secret.toml", format!("password = \"{SECRET}\"\n"));
    f.file("bomb.toml", "[[workload]]\nkind = \"io\"\nsize = \"4k\"\nnumjobs = 100000\n");
    f.file("deep.toml", format!("a = {}\n", "[".repeat(100_000)));
    let fan_dry = row(&["run", "--dry-run", "--target", "dir:path={T}", "--fio", "{F}/fan0.fio"], &["include"]);
    let rows: Vec<Row> = vec![
        fio("/dev/zero", &["/dev/zero"]),
        fio("/dev/urandom", &["/dev/urandom"]),
        fio("/dev/null", &["/dev/null"]),
        fio("{F}/fifo.fio", &["fifo.fio"]),
        fio("{F}/adir.fio", &["adir.fio"]),
        fio("{F}/zerolink.fio", &["zerolink.fio"]),
        fio("{F}/big.fio", &["big.fio"]),
        fio("{F}/oneline.fio", &["oneline.fio"]),
        fio("{F}/empty.fio", &["empty.fio"]),
        fio("{F}/fan0.fio", &["include"]),
        fan_dry,
        fio("{F}/loop-a.fio", &["include"]),
        fio("{F}/self.fio", &["include"]),
        fio("{F}/chain0.fio", &["include"]),
        fio("{F}/shadow", &["shadow"]),
        fio("{F}/inc-shadow.fio", &["shadow"]),
        fio("{F}/inc-abs-shadow.fio", &["shadow"]),
        fio("{F}/my.cnf", &["my.cnf"]),
        fio("{F}/passwd-like", &["passwd-like:20:", "5000 problems in this job file (the first 20 shown)"]),
        fio("{F}/many-problems.fio", &["many-problems.fio:2: bs=4q", "600 problems in this job file"]),
        fio("{F}/inc-cnf.fio", &["my.cnf"]),
        fio("{F}/inc-noname.fio", &["include"]),
        fio("{F}/inc-blank.fio", &["include"]),
        fio("{F}/inc-empty.fio", &["empty.fio"]),
        fio("{F}/inc-missing.fio", &["missing.fio"]),
        fio("{F}/inc-zero.fio", &["/dev/zero"]),
        fio("{F}/inc-fifo.fio", &["fifo.fio"]),
        fio("{F}/inc-dir.fio", &["adir.fio"]),
        fio("{F}/inc-big.fio", &["big.fio"]),
        fio("{F}/bom-bad.fio", &["bom-bad.fio:3", "bs=1q"]),
        fio("{F}/latin1.fio", &["UTF-8"]),
        fio("{F}/inc-latin1.fio", &["UTF-8"]),
        fio("{F}/sections.fio", &["200000"]),
        fio("{F}/nul.fio", &["nul.fio"]),
        fio("{F}/binary.fio", &["binary.fio"]),
        fio("{F}/esc-key.fio", &["esc-key.fio:3"]),
        fio("{F}/env.fio", &["HOSTILE_UNSET_VARIABLE"]),
        // TOML job files.
        toml("/dev/zero", &["/dev/zero"]),
        toml("{F}/fifo.toml", &["fifo.toml"]),
        toml("{F}/adir.toml", &["adir.toml"]),
        toml("{F}/zerolink.toml", &["zerolink.toml"]),
        toml("{F}/big.toml", &["big.toml"]),
        toml("{F}/latin1.toml", &["UTF-8"]),
        toml("{F}/shadow", &["shadow"]),
        toml("{F}/secret.toml", &["password"]),
        toml("{F}/bomb.toml", &["100000"]),
        toml("{F}/deep.toml", &["deep.toml"]),
    ];
    refuse_all("jobfiles", &f, rows, 3);
}

/// A UTF-8 byte-order mark is not an error: the file reads as if it were not there.
#[test]
fn job_files_with_a_byte_order_mark_are_read() {
    let f = Arena::new("bom");
    let t = f.tmpfs("t", "16m");
    let fio_file = f.file("bom.fio", "\u{feff}[j]\nsize=1m\n");
    let inc = f.file("bom-inc.fio", "\u{feff}include bom.fio\n");
    let toml_file = f.file("bom.toml", "\u{feff}[[workload]]\nkind = \"io\"\nsize = \"1m\"\n");
    let target = format!("dir:path={}", t.display());
    let mut failures = Vec::new();
    for args in [
        vec!["run", "--dry-run", "--target", &target, "--fio", fio_file.to_str().unwrap()],
        vec!["run", "--dry-run", "--target", &target, "--fio", inc.to_str().unwrap()],
        vec!["run", "--dry-run", "--target", &target, toml_file.to_str().unwrap()],
    ] {
        let out = super::harness::fsarena().args(&args).arg("--workdir").arg(f.path("work")).bounded_output().unwrap();
        if !out.status.success() {
            failures.push(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    assert!(failures.is_empty(), "a BOM is refused: {failures:#?}");
}
