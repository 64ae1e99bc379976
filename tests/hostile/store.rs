//! Store attacks: --db naming a directory, a file that is not a database (left byte for byte
//! as it was, with no `.lock` beside it), databases with a corrupted page, a flipped header
//! byte, a foreign application id or a damaged schema; comparing a run with itself; unknown
//! runs and bad formats for the read-only commands.

use super::harness::{play, Arena};
use super::table::{refuse_all, row, Row};
use std::time::Duration;

/// A database holding one small run, made by fsarena itself; returns its path and the run id.
fn good_db(f: &Arena) -> (std::path::PathBuf, String) {
    let t = f.tmpfs("t", "16m");
    let db = f.path("good.db");
    let mut cmd = super::harness::fsarena();
    cmd.args(["run", "--repeat", "1", "--warmup", "0", "--output-format", "json", "--workload", "io:size=1m"])
        .arg("--target")
        .arg(format!("dir:path={}", t.display()))
        .arg("--workdir")
        .arg(f.workdir("work"))
        .arg("--db")
        .arg(&db);
    let out = play(cmd, Duration::from_secs(60));
    assert_eq!(out.code(), Ok(0), "the fixture run failed: {}", out.err());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["run"]["id"].as_str().unwrap().to_string();
    for extra in ["-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{extra}", db.display()));
    }
    (db, id)
}

/// A copy of `db` at `f/name` with `edit` applied to its bytes.
fn damaged(f: &Arena, db: &std::path::Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(db).unwrap();
    edit(&mut bytes);
    f.file(name, bytes);
}

#[test]
fn databases_that_are_not_ours_or_are_damaged_are_refused_untouched() {
    let f = Arena::new("store");
    let (db, id) = good_db(&f);
    f.dir("adir.db");
    f.file("notdb.txt", "this is not a database\nkeep me exactly as I am\n");
    let page_size = |b: &[u8]| match u16::from_be_bytes([b[16], b[17]]) {
        1 => 65536,
        n => n as usize,
    };
    damaged(&f, &db, "corrupt.db", |b| {
        // Page 2 onward (a b-tree page of the schema's tables) becomes garbage.
        let ps = page_size(b);
        let end = b.len().min(ps * 3);
        for (i, byte) in b[ps..end].iter_mut().enumerate() {
            *byte = (i as u8).wrapping_mul(37) ^ 0xa5;
        }
    });
    damaged(&f, &db, "magic.db", |b| b[0] ^= 0x20);
    damaged(&f, &db, "appid.db", |b| b[68] ^= 0x01);
    damaged(&f, &db, "schema.db", |b| {
        let ps = page_size(b);
        let at = b[..ps].windows(12).position(|w| w == b"CREATE TABLE").expect("schema text on page 1");
        b[at + 7] = b'X';
    });
    let run = |db: &str, wants: &[&str]| {
        row(&["run", "--target", "dir:path={T}", "--workload", "io:size=1m", "--db", db], wants)
    };
    let list = |db: &str, wants: &[&str]| row(&["results", "list", "--db", db], wants);
    let good = "{F}/good.db";
    let prefix = &id[..6];
    let rows: Vec<Row> = vec![
        run("{F}/adir.db", &["{F}/adir.db"]),
        run("{F}/notdb.txt", &["{F}/notdb.txt"]),
        run("{F}/corrupt.db", &["{F}/corrupt.db"]),
        run("{F}/magic.db", &["{F}/magic.db"]),
        run("{F}/appid.db", &["{F}/appid.db"]),
        run("{F}/schema.db", &["{F}/schema.db"]),
        list("{F}/adir.db", &["{F}/adir.db"]),
        list("{F}/notdb.txt", &["{F}/notdb.txt"]),
        list("{F}/corrupt.db", &["{F}/corrupt.db"]),
        list("{F}/magic.db", &["{F}/magic.db"]),
        list("{F}/appid.db", &["{F}/appid.db"]),
        list("{F}/schema.db", &["{F}/schema.db"]),
        row(&["results", "show", "last", "--db", "{F}/corrupt.db"], &["{F}/corrupt.db"]),
        row(&["results", "export", "last", "--format", "json", "--db", "{F}/schema.db"], &["{F}/schema.db"]),
        row(&["report", "last", "-o", "{S}/r.html", "--db", "{F}/corrupt.db"], &["{F}/corrupt.db"]),
        row(&["compare", "last", "last~1", "--db", "{F}/notdb.txt"], &["{F}/notdb.txt"]),
        // The same run twice, however it is spelled.
        row(&["compare", &id, &id, "--db", good], &[id.as_str()]),
        row(&["compare", "last", "last", "--db", good], &["last"]),
        row(&["compare", prefix, "last", "--db", good], &[prefix]),
        // Runs that do not exist; formats that do not exist.
        row(&["results", "show", "nosuchrun", "--db", good], &["nosuchrun"]),
        row(&["compare", "last~99", "last", "--db", good], &["last~99"]),
        row(&["compare", "last", "--baseline", "nosuchlabel", "--db", good], &["nosuchlabel"]),
        row(&["results", "list", "--output-format", "yaml", "--db", good], &["yaml"]),
        row(&["results", "show", "last", "--output-format", "xml", "--db", good], &["xml"]),
        row(&["results", "export", "last", "--format", "pdf", "--db", good], &["pdf"]),
        row(&["report", "last", "-o", "{S}/r.pdf", "--db", good], &["r.pdf"]),
        row(&["compare", "last", "--baseline", "\x1b[2J", "--db", good], &["\\x1b[2J"]),
    ];
    refuse_all("store", &f, rows, 1);
}
