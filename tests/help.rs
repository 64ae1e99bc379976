//! `fsarena help`, the generated docs, man pages and completions: everything a user reads
//! about the kinds and their keys comes from the option tables.

use crate::util::{run, stderr, stdout, TempDir};

/// `fsarena help TOPIC...`, which must succeed; its stdout.
fn help(args: &[&str]) -> String {
    let mut all = vec!["help"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "fsarena {all:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn help_lists_every_kind_and_each_kinds_keys() {
    let overview = help(&[]);
    for kind in fsarena_workload::WORKLOAD_KINDS {
        assert!(overview.contains(&format!("\n  {:<9} {}", kind.name, kind.summary)), "{overview}");
        let text = help(&[kind.name]);
        for key in (kind.options)() {
            assert!(text.contains(&format!("\n  {}", key.name)), "help {} lacks {}:\n{text}", kind.name, key.name);
            assert!(text.contains(key.doc.split_whitespace().next().unwrap_or_default()), "{}", key.name);
        }
    }
    for kind in &fsarena_target::TARGET_KINDS {
        assert!(overview.contains(&format!("\n  {:<9} {}", kind.name, kind.summary)), "{overview}");
        let text = help(&[kind.name]);
        for key in kind.keys {
            assert!(text.contains(&format!("\n  {}\n", key.name)), "help {} lacks {}:\n{text}", kind.name, key.name);
        }
    }
    // Type, default, unit and aliases, from the table.
    let io = help(&["io"]);
    assert!(
        io.contains("  numjobs (also processes_per_client)\n      count (jobs); default 1\n      clones of the job, each a process"),
        "{io}"
    );
    assert!(io.contains("  runtime (also timeout)\n      time (s); no default\n"), "{io}");
    assert!(help(&["meta"]).contains("  items (-n)\n      count (items); default 1000\n"));
    assert!(help(&["ext4"]).contains("  size\n      size (bytes); default 4g\n"));
    assert!(help(&["fuse"]).contains("  cmd\n      flags; no default\n"));
}

#[test]
fn help_on_a_command_is_its_flags_and_an_unknown_topic_is_bad_input() {
    let run_help = help(&["run"]);
    assert!(run_help.contains("--workload <SPEC>") && run_help.contains("fsarena help io"), "{run_help}");
    let o = run(&["help", "iox"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.starts_with("fsarena: fsarena help: no help on 'iox': did you mean 'io'?") && e.lines().count() == 1,
        "{e}"
    );
}

#[test]
fn the_docs_are_what_help_markdown_prints() {
    for (file, topic) in [("docs/workloads.md", "workloads"), ("docs/targets.md", "targets")] {
        let on_disk =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../").to_string() + file).unwrap();
        assert_eq!(
            help(&["--markdown", topic]),
            on_disk,
            "{file} is stale: run fsarena help --markdown {topic} > {file}"
        );
    }
    let readme = include_str!("../README.md");
    assert!(readme.contains("docs/workloads.md") && readme.contains("docs/targets.md"));
}

#[test]
fn man_writes_one_page_per_command_and_completions_offer_kinds() {
    let main = run(&["man"]);
    assert!(main.status.success() && stdout(&main).starts_with(".ie \\n(.g .ds Aq"), "{}", stderr(&main));
    assert!(stdout(&main).contains(".TH fsarena 1"));
    let dir = TempDir::new();
    std::fs::create_dir(&dir.0).unwrap();
    let o = run(&["man", "--dir", &dir.0]);
    assert!(o.status.success(), "{}", stderr(&o));
    for page in ["fsarena.1", "fsarena-run.1", "fsarena-help.1", "fsarena-man.1", "fsarena-results-show.1"] {
        let text = std::fs::read_to_string(format!("{}/{page}", dir.0)).unwrap_or_default();
        assert!(text.contains(".TH fsarena"), "{page}: {text}");
    }
    let missing = run(&["man", "--dir", &format!("{}/nope", dir.0)]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));

    let bash = stdout(&run(&["completions", "bash"]));
    let workload = bash.split("--workload)").nth(1).unwrap_or_default().split(";;").next().unwrap_or_default();
    // The kinds, as one quoted word list (every registered kind; these three at least).
    let words = workload.split('"').nth(1).unwrap_or_default();
    let kinds: Vec<&str> = words.split_whitespace().collect();
    assert!(["io", "meta", "tree"].iter().all(|k| kinds.contains(k)) && !workload.contains("compgen -f"), "{workload}");
    let fish = stdout(&run(&["completions", "fish"]));
    assert!(fish.contains("-l target -d") && fish.contains("ext4\\t'its mkfs on a sparse image"), "{fish}");
}
