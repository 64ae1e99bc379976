//! `fsarena help [TOPIC]`: the kinds, and each kind's keys (type, default, unit, help, aliases)
//! read from its option table; `--markdown` renders the same for docs/workloads.md and
//! docs/targets.md, which a test keeps equal to the tables.

use crate::args::HelpArgs;
use crate::failure::Failure;
use fsarena_core::option::{DefaultValue, ListSyntax, OptionDoc, ValueKind};
use fsarena_core::InputError;
use fsarena_kinds::WORKLOAD_KINDS;
use fsarena_target::table::Kind as TargetKind;
use fsarena_target::TARGET_KINDS;
use fsarena_workload::WorkloadKind;
use std::fmt::Write as _;
use std::process::ExitCode;

/// What `fsarena help` was asked about.
enum Topic {
    /// No topic: the kinds, one line each.
    Overview,
    /// Every workload kind's keys.
    Workloads,
    /// Every target kind's keys.
    Targets,
    /// One workload kind.
    Workload(&'static WorkloadKind),
    /// One target kind.
    Target(&'static TargetKind),
    /// A subcommand: its --help.
    Command(String),
}

fn topic(name: Option<&str>) -> Result<Topic, InputError> {
    use clap::CommandFactory;
    let Some(name) = name else { return Ok(Topic::Overview) };
    if let Some(k) = fsarena_kinds::kind(name) {
        return Ok(Topic::Workload(k));
    }
    if let Some(k) = fsarena_target::table::kind(name) {
        return Ok(Topic::Target(k));
    }
    let command = crate::args::Cli::command();
    let commands: Vec<String> = command.get_subcommands().map(|c| c.get_name().to_string()).collect();
    match name {
        "workloads" => Ok(Topic::Workloads),
        "targets" => Ok(Topic::Targets),
        _ if commands.iter().any(|c| c == name) => Ok(Topic::Command(name.to_string())),
        _ => {
            let kinds: Vec<&str> =
                WORKLOAD_KINDS.iter().map(|k| k.name).chain(TARGET_KINDS.iter().map(|k| k.name)).collect();
            let all = kinds.iter().copied().chain(["workloads", "targets"]).chain(commands.iter().map(String::as_str));
            Err(InputError::new(format!(
                "no help on '{}':{} give a workload kind ({}), a target kind ({}), workloads, targets, or a command",
                fsarena_core::printable(name),
                fsarena_core::did_you_mean(name, all),
                fsarena_kinds::kind_names(),
                fsarena_target::table::kind_names(),
            ))
            .at("fsarena help"))
        }
    }
}

/// `fsarena help [TOPIC] [--markdown]`.
pub fn help(args: &HelpArgs) -> Result<ExitCode, Failure> {
    let text = match (topic(args.topic.as_deref())?, args.markdown) {
        (Topic::Command(name), _) => {
            use clap::CommandFactory;
            let mut command = crate::args::Cli::command();
            command.build();
            let sub = command.find_subcommand_mut(&name).map(|c| c.render_long_help().to_string());
            sub.unwrap_or_default()
        }
        (Topic::Overview, _) => overview(),
        (Topic::Workloads, false) => WORKLOAD_KINDS.iter().map(workload_text).collect::<Vec<_>>().join("\n"),
        (Topic::Targets, false) => TARGET_KINDS.iter().map(target_text).collect::<Vec<_>>().join("\n"),
        (Topic::Workload(k), false) => workload_text(k),
        (Topic::Target(k), false) => target_text(k),
        (Topic::Workloads, true) => workloads_markdown(),
        (Topic::Targets, true) => targets_markdown(),
        (Topic::Workload(k), true) => workload_section(k),
        (Topic::Target(k), true) => target_section(&[k]),
    };
    crate::output::print(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn overview() -> String {
    let mut out = String::from("Workload kinds (--workload KIND:key=value,...):\n");
    for k in WORKLOAD_KINDS {
        let _ = writeln!(out, "  {:<9} {}", k.name, k.summary);
    }
    out.push_str("\nTarget kinds (--target KIND:key=value,...):\n");
    for k in &TARGET_KINDS {
        let _ = writeln!(out, "  {:<9} {}", k.name, k.summary);
    }
    out.push_str(
        "\nfsarena help KIND          a kind's keys: type, default, unit, help, aliases\n\
         fsarena help workloads     every workload kind's keys (targets: every target kind's)\n\
         fsarena help COMMAND       a command's flags, as fsarena COMMAND --help\n\
         fsarena targets            which target kinds this machine can provision\n\
         \nThe same, generated from the same tables: docs/workloads.md and docs/targets.md.\n",
    );
    out
}

/// `word` and its aliases and flag: `bs (also blocksize)`, `items (-n)`.
fn title(doc: &OptionDoc) -> String {
    let mut t = doc.name.to_string();
    if !doc.aliases.is_empty() {
        let _ = write!(t, " (also {})", doc.aliases.join(", "));
    }
    if let Some(flag) = doc.flag {
        let _ = write!(t, " (-{flag})");
    }
    t
}

/// The type of a key with its unit: `one of read, write`, `size or READ,WRITE (bytes)`.
fn kind_and_unit(doc: &OptionDoc, word: impl Fn(&str) -> String) -> String {
    let mut f = match doc.value {
        ValueKind::Choice(words) => format!("one of {}", words.iter().map(|w| word(w)).collect::<Vec<_>>().join(", ")),
        ValueKind::PerDirection(inner) => format!("{} or READ,WRITE", inner.name()),
        ValueKind::File(cap) => format!("file of at most {}", fsarena_core::units::limit_text(cap)),
        _ => doc.value.name(),
    };
    // A percentage's unit is its name.
    if !doc.unit.is_empty() && doc.value != ValueKind::Percent {
        let _ = write!(f, " ({})", doc.unit);
    }
    f
}

/// The type, unit, default and list syntax of a key on one line.
fn facts(doc: &OptionDoc, sweeps: bool) -> String {
    let mut f = kind_and_unit(doc, str::to_string);
    match doc.default {
        DefaultValue::Is(v) => {
            let _ = write!(f, "; default {v}");
        }
        DefaultValue::Derived(v) => {
            let _ = write!(f, "; default: {v}");
        }
        DefaultValue::Unset => f.push_str("; no default"),
    }
    match doc.list {
        _ if !sweeps => {}
        ListSyntax::CommaOrBar => {}
        ListSyntax::Bar => f.push_str("; a list takes | only (a|b)"),
        ListSyntax::None => f.push_str("; no lists"),
    }
    f
}

/// `text` wrapped at 88 columns, each line indented by `indent`.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > 88 {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

/// The keys for the terminal; `sweeps` when they can take lists (workloads, not targets).
fn keys_text(keys: &[&OptionDoc], sweeps: bool) -> String {
    let mut out = String::new();
    for doc in keys {
        let _ = writeln!(out, "  {}", title(doc));
        out.push_str(&wrap(&facts(doc, sweeps), "      "));
        out.push_str(&wrap(doc.doc, "      "));
    }
    out
}

fn workload_text(kind: &WorkloadKind) -> String {
    let mut out = format!("{} — {}\n\n", kind.name, kind.summary);
    let _ = writeln!(out, "  --workload {}:KEY=VALUE,...  (a value with commas in single quotes)", kind.name);
    out.push_str(&wrap(
        &format!(
            "A list sweeps a key: numjobs='1,4,16' or '1|4|16' (keys marked so take | only); several lists \
             give their product. In a TOML [[workload]] table: kind = \"{}\", KEY = VALUE or [VALUE, ...].",
            kind.name
        ),
        "  ",
    ));
    out.push_str("\nKeys:\n");
    out.push_str(&keys_text(&(kind.options)(), true));
    out
}

fn target_text(kind: &TargetKind) -> String {
    let mut out = format!("{} — {}\n\n", kind.name, kind.summary);
    let _ = writeln!(out, "  --target {}[:KEY=VALUE,...]  (a value with commas in single quotes)", kind.name);
    out.push_str("\nKeys:\n");
    out.push_str(&keys_text(&kind.keys.iter().collect::<Vec<_>>(), false));
    out
}

/// A markdown table cell: `|` escaped, lines joined.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The keys as a Markdown table; `sweeps` when they can take lists (workloads, not targets).
fn keys_markdown(keys: &[&OptionDoc], sweeps: bool) -> String {
    let mut out = String::from("| key | also | type | default | meaning |\n|---|---|---|---|---|\n");
    for doc in keys {
        let also: Vec<String> =
            doc.aliases.iter().map(|a| format!("`{a}`")).chain(doc.flag.map(|f| format!("`-{f}`"))).collect();
        let kind = kind_and_unit(doc, |w| format!("`{w}`"));
        let sweep = match doc.list {
            _ if !sweeps => "",
            ListSyntax::CommaOrBar => "",
            ListSyntax::Bar => ". A list takes `\\|` only.",
            ListSyntax::None => ". No lists.",
        };
        let default = match doc.default {
            DefaultValue::Is(v) => format!("`{}`", cell(v)),
            DefaultValue::Derived(v) => cell(v),
            DefaultValue::Unset => String::new(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {}{} |",
            doc.name,
            also.join(" "),
            cell(&kind),
            default,
            cell(doc.doc),
            sweep
        );
    }
    out
}

fn workload_section(kind: &WorkloadKind) -> String {
    format!("## `{}`\n\n{}.\n\n{}", kind.name, sentence(kind.summary), keys_markdown(&(kind.options)(), true))
}

/// One section for kinds that share their keys and summary (the loop filesystems).
fn target_section(kinds: &[&TargetKind]) -> String {
    let names: Vec<String> = kinds.iter().map(|k| format!("`{}`", k.name)).collect();
    let keys: Vec<&OptionDoc> = kinds.first().map(|k| k.keys.iter().collect()).unwrap_or_default();
    let summary = kinds.first().map_or("", |k| k.summary);
    format!("## {}\n\n{}.\n\n{}", names.join(", "), sentence(summary), keys_markdown(&keys, false))
}

/// `text` with its first letter upper-case.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

const GENERATED: &str =
    "<!-- Generated from the option tables by `fsarena help --markdown {topic}`; do not edit.\n     \
                         `cargo test -p fsarena-cli` fails when this file is stale. -->\n";

/// How each type of value the `keys` use is written.
fn value_types(keys: &[&OptionDoc]) -> String {
    let mut out = String::from("| type | written as |\n|---|---|\n");
    let mut seen: Vec<String> = Vec::new();
    for doc in keys {
        let (name, syntax) = match doc.value {
            ValueKind::Choice(_) => ("word".to_string(), "one of the words listed".to_string()),
            kind => (kind.name(), kind.syntax()),
        };
        if !seen.contains(&name) {
            let _ = writeln!(out, "| {} | {} |", cell(&name), cell(&syntax));
            seen.push(name);
        }
    }
    out
}

/// docs/workloads.md.
pub fn workloads_markdown() -> String {
    let mut out = format!("# Workload kinds\n\n{}\n", GENERATED.replace("{topic}", "workloads"));
    out.push_str(
        "A workload is `--workload KIND:key=value,...` (a value holding commas in single quotes), or a \
         `[[workload]]` table with `kind = \"KIND\"` in a TOML experiment file. `fsarena help KIND` prints \
         the same tables on the terminal.\n\n\
         A list sweeps a key: `numjobs='1,4,16,64'` (or `1|4|16|64`) runs one point per value, and several \
         lists give their product; in TOML, an array. Keys whose own values hold commas (fio's \
         `bs=4k,64k` is a read and a write size) take `|` only: `bs='4k|64k'`. A swept value is stored \
         typed: sizes in bytes, times in nanoseconds, counts as numbers.\n\n",
    );
    let keys: Vec<&OptionDoc> = WORKLOAD_KINDS.iter().flat_map(|k| (k.options)()).collect();
    out.push_str(&value_types(&keys));
    for kind in WORKLOAD_KINDS {
        out.push('\n');
        out.push_str(&workload_section(kind));
    }
    out
}

/// docs/targets.md.
pub fn targets_markdown() -> String {
    let mut out = format!("# Target kinds\n\n{}\n", GENERATED.replace("{topic}", "targets"));
    out.push_str(
        "A target is `--target KIND[:key=value,...]` (a value holding commas in single quotes), or an \
         entry of `targets` / a `[[target]]` table in a TOML experiment file. `fsarena help KIND` prints \
         the same tables on the terminal; `fsarena targets` says which kinds this machine can provision \
         and why not.\n\n",
    );
    let keys: Vec<&OptionDoc> = TARGET_KINDS.iter().flat_map(|k| k.keys).collect();
    out.push_str(&value_types(&keys));
    let mut i = 0;
    while i < TARGET_KINDS.len() {
        let first = &TARGET_KINDS[i];
        let group: Vec<&TargetKind> =
            TARGET_KINDS[i..].iter().take_while(|k| k.keys == first.keys && k.summary == first.summary).collect();
        i += group.len();
        out.push('\n');
        out.push_str(&target_section(&group));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Where the generated documentation lives in the repository, and the topic that makes it.
    const DOCS: [(&str, &str); 2] = [("docs/workloads.md", "workloads"), ("docs/targets.md", "targets")];

    /// docs/*.md equal what the tables render; `FSARENA_UPDATE_DOCS=1` rewrites them.
    #[test]
    fn docs_are_generated_from_the_tables() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (file, topic) in DOCS {
            let want = if topic == "workloads" { workloads_markdown() } else { targets_markdown() };
            let path = root.join(file);
            if std::env::var_os("FSARENA_UPDATE_DOCS").is_some() {
                std::fs::write(&path, &want).unwrap();
            }
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                have == want,
                "{file} is stale: run `cargo run -q -p fsarena-cli -- help --markdown {topic} > {file}` \
                 (or FSARENA_UPDATE_DOCS=1 cargo test -p fsarena-cli docs_are_generated)"
            );
        }
    }

    #[test]
    fn every_key_of_every_kind_is_in_its_help() {
        for kind in WORKLOAD_KINDS {
            let text = workload_text(kind);
            for doc in (kind.options)() {
                assert!(text.contains(&format!("\n  {}", doc.name)), "{}: {}", kind.name, doc.name);
                assert!(workloads_markdown().contains(&format!("| `{}` |", doc.name)));
            }
        }
        let io = workload_text(fsarena_kinds::kind("io").unwrap());
        assert!(
            io.contains("  bs (also blocksize)\n      size or READ,WRITE (bytes); default 4k; a list takes | only"),
            "{io}"
        );
        let targets = targets_markdown();
        assert!(targets.contains("## `ext2`, `ext3`, `ext4`, `xfs`, `btrfs`, `f2fs`, `nilfs2`\n"), "{targets}");
        assert!(target_text(fsarena_target::table::kind("fuse").unwrap())
            .contains("  timeout\n      time (s); default 30s"));
    }

    #[test]
    fn an_unknown_topic_gets_a_suggestion() {
        let e = topic(Some("metaa")).err().unwrap().to_string();
        assert!(e.contains("did you mean 'meta'?") && e.contains("io, meta, tree"), "{e}");
        assert!(matches!(topic(Some("run")), Ok(Topic::Command(_))));
    }
}
