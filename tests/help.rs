//! `fsarena help`, the generated docs, man pages and completions: everything a user reads
//! about the kinds and their keys comes from the option tables. The README's Status and
//! Repository layout are held to the registries and the tree, and every relative link of the
//! README and docs/ to a file that exists.

use crate::util::{run, stderr, stdout, TempDir};
use std::path::{Path, PathBuf};

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
    for kind in fsarena_kinds::WORKLOAD_KINDS {
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

/// The repository's root (this test binary is crates/cli's).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The file at `path` in the repository, as text.
fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `path` as the repository names it (`docs/manual/io.md`).
fn shown(path: &Path) -> String {
    path.strip_prefix(repo()).unwrap_or(path).display().to_string()
}

/// The lines of a Markdown text outside its fenced code blocks, numbered from 1.
fn prose(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(i, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((i + 1, line))
    })
}

/// The anchors of a Markdown text's headings, as GitHub makes them (`## The \`io\` workload`
/// is `the-io-workload`).
fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .filter(|(_, line)| line.starts_with('#'))
        .map(|(_, line)| {
            line.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// Every `.md` file under `dir`, at any depth.
fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn the_readme_status_names_every_workload_and_target_kind_and_nothing_else() {
    let readme = read(&repo().join("README.md"));
    let status = readme.split("\n\n").find(|p| p.starts_with("Status: ")).expect("README: no paragraph `Status: ...`");
    let kinds: Vec<&str> = fsarena_kinds::WORKLOAD_KINDS
        .iter()
        .map(|k| k.name)
        .chain(fsarena_target::TARGET_KINDS.iter().map(|k| k.name))
        .collect();
    let missing: Vec<&&str> = kinds.iter().filter(|k| !status.contains(&format!("`{k}`"))).collect();
    assert!(
        missing.is_empty(),
        "README's Status names no kind {missing:?} (as `KIND`): say what it is there\n{status}"
    );
    // What it quotes as code is kinds only, so a kind taken out of the registry is taken out of it too.
    let quoted: Vec<&str> = status.split('`').skip(1).step_by(2).filter(|q| !kinds.contains(q)).collect();
    assert!(quoted.is_empty(), "README's Status quotes {quoted:?}, which are not registered kinds\n{status}");
}

#[test]
fn the_readme_layout_is_the_repository() {
    let root = repo();
    let readme = read(&root.join("README.md"));
    let block = readme
        .split("\n## Repository layout\n")
        .nth(1)
        .and_then(|section| section.split("```").nth(1))
        .expect("README: no ``` block under ## Repository layout");
    // An entry is a line that starts with a path; the indented lines under it continue its text.
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        match entries.last_mut() {
            Some((_, text)) if line.starts_with(' ') => {
                text.push(' ');
                text.push_str(line.trim());
            }
            _ => {
                let (path, text) = line.split_once(' ').unwrap_or((line, ""));
                entries.push((path.trim_end_matches('/').to_string(), text.trim().to_string()));
            }
        }
    }
    let mut wrong = Vec::new();
    for (i, (path, _)) in entries.iter().enumerate() {
        if !root.join(path).is_dir() {
            wrong.push(format!("names {path}/, which is not a directory of the repository"));
        }
        if entries[..i].iter().any(|(p, _)| p == path) {
            wrong.push(format!("names {path}/ twice"));
        }
    }
    // Every crate, its line starting with the description in its Cargo.toml.
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let path = shown(&dir);
        let description = manifest
            .lines()
            .find_map(|l| l.strip_prefix("description = \""))
            .map(|d| d.trim_end_matches('"').trim_start_matches("fsarena: "));
        match (entries.iter().find(|(p, _)| *p == path), description) {
            (None, _) => wrong.push(format!("does not name {path}/")),
            (Some((_, text)), Some(d)) if !text.starts_with(d) => wrong
                .push(format!("says of {path}/ '{text}', which does not start with its Cargo.toml description '{d}'")),
            _ => {}
        }
    }
    // Every top-level directory but the hidden ones and those .gitignore names (target).
    let ignored = read(&root.join(".gitignore"));
    let ignored: Vec<&str> = ignored.lines().map(|l| l.trim().trim_matches('/')).filter(|l| !l.contains('/')).collect();
    for entry in std::fs::read_dir(&root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let named = entries.iter().any(|(p, _)| *p == name || p.starts_with(&format!("{name}/")));
        if entry.path().is_dir() && !name.starts_with('.') && !ignored.contains(&name.as_str()) && !named {
            wrong.push(format!("does not name {name}/ (or should .gitignore name it?)"));
        }
    }
    assert!(wrong.is_empty(), "README's Repository layout:\n  {}\n{block}", wrong.join("\n  "));
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves_and_the_docs_index_links_every_doc() {
    let root = repo();
    let mut docs = Vec::new();
    markdown_under(&root.join("docs"), &mut docs);
    docs.sort();
    let mut broken = Vec::new();
    for file in std::iter::once(root.join("README.md")).chain(docs.iter().cloned()) {
        let text = read(&file);
        for (n, line) in prose(&text) {
            for link in line.split("](").skip(1).map(|rest| rest.split(')').next().unwrap_or_default()) {
                if link.contains("://") || link.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
                let to = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
                let at = format!("{}:{n}: ({link})", shown(&file));
                if !to.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !anchor.is_empty()
                    && to.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&to)).iter().any(|a| a == anchor)
                {
                    broken.push(format!("{at}: no heading #{anchor} in {}", shown(&to)));
                }
            }
        }
    }
    let index = root.join("docs/README.md");
    let linked = read(&index);
    for doc in docs.iter().filter(|d| **d != index) {
        let name = doc.strip_prefix(root.join("docs")).unwrap().display().to_string();
        if !linked.contains(&format!("]({name})")) {
            broken.push(format!("docs/README.md: no link to {name}"));
        }
    }
    assert!(broken.is_empty(), "broken links:\n  {}", broken.join("\n  "));
}
