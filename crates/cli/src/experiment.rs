//! TOML experiment files (`fsarena run exp.toml`, and the built-in suites, which are such
//! files): parsed and checked, at a scale, into target specs, workload tables, rows and claims,
//! before anything is created.
//!
//! ```toml
//! name = "roundup"                  # the run's name, as --name
//! description = "Phoronix round-up" # shown by --dry-run and in the report
//! repeat = 3                        # as --repeat
//! warmup = 1                        # as --warmup
//! drop_caches = "repetition"        # or "none", as --no-drop-caches
//! targets = ["ext4:size=4g", "xfs:size=4g"]
//! [scale.smoke]                     # the whole file at --scale smoke: fewer repetitions
//! reason = "a first look in seconds"
//! repeat = 2
//! targets = ["ext4:size=1g", "xfs:size=1g"]
//! [[target]]                        # a target as a table: kind = "...", its keys
//! kind = "btrfs"
//! [[workload]]                      # one experiment row
//! row = "sqlite"                    # its id (claims and docs name it)
//! title = "SQLite: 12,500 inserts"  # as the study names it
//! chart = "bars"                    # the study's chart: bars, sweep or grid
//! metrics = ["insert_time"]         # what Findings rank (default: its rates)
//! kind = "sqlite"
//! inserts = 12500
//! [workload.quick]                  # at quick (and smoke): these keys instead, and why
//! reason = "1,250 inserts show the same ordering in a tenth of the time"
//! inserts = 1250
//! [[claim]]                         # a claim of the study, checked in Findings
//! text = "ext3 finishes the SQLite inserts far sooner than ext4 and xfs"
//! row = "sqlite"
//! metric = "insert_time"
//! better = ["ext3"]
//! worse = ["ext4", "xfs"]
//! min_factor = 10
//! [[figure]]                        # a figure or table of the study, in its order
//! id = "fig3"                       # its id
//! caption = "Fig. 3: SQLite inserts" # as the study numbers it
//! kind = "bars"                     # bars (grouped), lines or table
//! rows = ["sqlite"]                 # the rows it draws from
//! x = "row"                         # a sweep key or parameter, part, target, row or metric
//! series = "target"                 # the same choice (default: target)
//! facet = "part"                    # optional: one small chart per value
//! metric = "insert_time"            # one quantity (or one per direction: ["write_bw", "read_bw"])
//! ```
//!
//! A row's `[workload.quick]` applies at quick and at smoke, its `[workload.smoke]` on top of
//! it at smoke; each needs its `reason`. (Not `[workload.scale.quick]`: `scale` is a key of
//! pgbench's.) `needs = "rocksdb"` marks a row that only a build with that cargo feature runs:
//! other builds list it as skipped.

pub mod figures;

use fsarena_core::{InputError, Spec};
use fsarena_report::experiment::{Claim, Scope};
use fsarena_workload::plain::cut;

/// How big an experiment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Seconds per row: the whole study in a few minutes.
    Smoke,
    /// Minutes per suite: the study's shape on a workstation.
    Quick,
    /// The study's own parameters.
    Full,
}

impl Scale {
    /// Every scale, smallest first.
    pub const ALL: [Scale; 3] = [Scale::Smoke, Scale::Quick, Scale::Full];

    /// `smoke`, `quick` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Smoke => "smoke",
            Scale::Quick => "quick",
            Scale::Full => "full",
        }
    }

    /// The scale called `name` (the flag's parser already checked it).
    pub fn parse(name: &str) -> Result<Self, InputError> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| InputError::new(format!("--scale {}: expected smoke, quick or full", cut(name))))
    }

    /// The `[scale.X]` tables that apply at this scale, in the order they apply.
    fn tables(self) -> &'static [&'static str] {
        match self {
            Scale::Smoke => &["quick", "smoke"],
            Scale::Quick => &["quick"],
            Scale::Full => &[],
        }
    }
}

/// The file as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TomlJob {
    /// The run's name.
    pub name: Option<String>,
    /// What the experiment compares.
    pub description: Option<String>,
    /// The run's tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Measured repetitions.
    pub repeat: Option<u32>,
    /// Discarded warm-ups.
    pub warmup: Option<u32>,
    /// `repetition` or `none`.
    pub drop_caches: Option<String>,
    /// Target specs.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Targets as tables.
    #[serde(default)]
    pub target: Vec<toml::Table>,
    /// The output format.
    pub output_format: Option<String>,
    /// The rows.
    #[serde(default)]
    pub workload: Vec<toml::Table>,
    /// The study's claims.
    #[serde(default)]
    pub claim: Vec<ClaimTable>,
    /// `[scale.quick]`, `[scale.smoke]` for the whole file.
    #[serde(default)]
    pub scale: toml::Table,
    /// The study's figures and tables.
    #[serde(default)]
    pub figure: Vec<figures::FigureTable>,
}

/// One label or several.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub enum Labels {
    /// `better = "ext3"`.
    One(String),
    /// `better = ["ext3", "nilfs2"]`.
    Many(Vec<String>),
}

impl Labels {
    /// The labels, one or several.
    pub(crate) fn list(&self) -> Vec<String> {
        match self {
            Labels::One(l) => vec![l.clone()],
            Labels::Many(l) => l.clone(),
        }
    }
}

/// A `[[claim]]` as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimTable {
    id: Option<String>,
    text: String,
    metric: String,
    better: Option<Labels>,
    worse: Option<Labels>,
    order: Option<Vec<String>>,
    targets: Option<Labels>,
    from: Option<ScopeTable>,
    #[serde(alias = "at_least")]
    min_factor: Option<f64>,
    at_most: Option<f64>,
    about: Option<f64>,
    tolerance: Option<f64>,
    study: Option<f64>,
    row: Option<String>,
    point: Option<String>,
    part: Option<String>,
}

/// A claim's `from = { row = "...", point = "...", part = "..." }`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeTable {
    row: Option<String>,
    point: Option<String>,
    part: Option<String>,
}

/// The tolerance of `about = F` when none is given: the claim holds for [F / 1.5, F × 1.5]
/// ("about 3×" is 2–4.5×).
const ABOUT_TOLERANCE: f64 = 1.5;

/// The keys of a `[[workload]]` table that describe the row rather than the workload.
const ROW_KEYS: &[&str] = &["row", "title", "chart", "metrics", "needs", "chosen", "quick", "smoke"];
/// The cargo features a row may need, and whether this build has each.
const FEATURES: &[(&str, bool)] = &[("rocksdb", cfg!(feature = "rocksdb")), ("mpi", cfg!(feature = "mpi"))];
/// The charts a row may name.
const CHARTS: &[&str] = &["bars", "sweep", "grid"];

/// One row at its scale.
#[derive(Debug)]
pub struct FileRow {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its chart.
    pub chart: Option<String>,
    /// The metrics its Findings rank.
    pub metrics: Vec<String>,
    /// What is reduced at this scale, and why.
    pub reduced: Option<String>,
    /// The values chosen here where the study gives none, and why (`chosen = "..."`).
    pub chosen: Option<String>,
    /// The workload table at this scale, without the row's own keys.
    pub table: toml::Table,
    /// Where it was given, for messages.
    pub origin: String,
    /// Why this build cannot run it (`needs =` a cargo feature it lacks).
    pub missing_feature: Option<String>,
}

impl FileRow {
    /// The row as a report describes it, with the titles of its sweep points' `workloads`.
    pub fn described(&self, workloads: Vec<String>) -> fsarena_report::experiment::Row {
        fsarena_report::experiment::Row {
            id: self.id.clone(),
            title: self.title.clone(),
            chart: self.chart.clone(),
            metrics: self.metrics.clone(),
            workloads,
            reduced: self.reduced.clone(),
            chosen: self.chosen.clone(),
        }
    }
}

/// The file's own `[scale.X]` settings at a scale.
#[derive(Debug, Default)]
pub struct FileScale {
    /// Repetitions instead of the file's.
    pub repeat: Option<u32>,
    /// Warm-ups instead of the file's.
    pub warmup: Option<u32>,
    /// Targets instead of the file's.
    pub targets: Option<Vec<String>>,
    /// Why.
    pub reason: Option<String>,
    /// How long the whole file may take at this scale here (`budget = "45s"`): `fsarena demo`
    /// runs every suite at smoke within the sum of their budgets.
    pub budget: Option<std::time::Duration>,
}

/// Parses `text` (from `origin`) as an experiment file.
pub fn parse(text: &str, origin: &str) -> Result<TomlJob, InputError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| text[..s.start].matches('\n').count() + 1);
        InputError::new(format!("not a valid job file: {}", e.message().trim().replace('\n', "; ")))
            .at(format!("{origin}:{line}"))
    })
}

/// A `[scale]` table's `smoke` and `quick` tables, each needing a `reason`; anything else
/// is refused.
fn scale_tables<'t>(scale: &'t toml::Table, origin: &str) -> Result<Vec<(&'t str, &'t toml::Table)>, InputError> {
    let mut out = Vec::new();
    for (name, value) in scale {
        let Some(table) = value.as_table().filter(|_| name == "smoke" || name == "quick") else {
            return Err(InputError::new(format!(
                "[scale.{}]: expected [scale.quick] or [scale.smoke] tables (full is the file as written)",
                cut(name)
            ))
            .at(origin));
        };
        if !matches!(table.get("reason"), Some(toml::Value::String(r)) if !r.trim().is_empty()) {
            return Err(InputError::new(format!(
                "[scale.{name}] needs reason = \"...\": say why the row is smaller at this scale"
            ))
            .at(origin));
        }
        out.push((name.as_str(), table));
    }
    Ok(out)
}

/// The file's `[scale.X]` settings at `scale`.
pub fn file_scale(job: &TomlJob, scale: Scale, origin: &str) -> Result<FileScale, InputError> {
    let mut out = FileScale::default();
    let tables = scale_tables(&job.scale, origin)?;
    for wanted in scale.tables() {
        for (_, table) in tables.iter().filter(|(n, _)| n == wanted) {
            for (key, value) in *table {
                let at = || format!("{origin}: [scale.{wanted}] {key}");
                match (key.as_str(), value) {
                    ("reason", toml::Value::String(r)) => out.reason = Some(r.clone()),
                    ("repeat", toml::Value::Integer(n)) => {
                        out.repeat =
                            Some(u32::try_from(*n).map_err(|_| InputError::new("expected 1 to 2^32-1").at(at()))?)
                    }
                    ("warmup", toml::Value::Integer(n)) => {
                        out.warmup =
                            Some(u32::try_from(*n).map_err(|_| InputError::new("expected 0 to 2^32-1").at(at()))?)
                    }
                    ("budget", toml::Value::String(t)) => {
                        let ns = fsarena_core::units::parse_time(t, 1_000_000_000)
                            .map_err(|e| InputError::new(format!("{e}: expected a duration such as \"45s\"")).at(at()))?;
                        out.budget = Some(std::time::Duration::from_nanos(ns.0));
                    }
                    ("targets", toml::Value::Array(items)) => {
                        let specs: Option<Vec<String>> = items.iter().map(|i| i.as_str().map(String::from)).collect();
                        out.targets =
                            Some(specs.ok_or_else(|| InputError::new("expected an array of target specs").at(at()))?);
                    }
                    _ => {
                        return Err(InputError::new(format!(
                            "[scale.{wanted}] {} = ...: a file's scale table takes reason, repeat, warmup, targets and budget",
                            cut(key)
                        ))
                        .at(origin))
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Every `[[workload]]` of `job` as a row at `scale`: its row keys taken out, its scale's
/// keys put in.
pub fn rows(job: &TomlJob, scale: Scale, origin: &str) -> Result<Vec<FileRow>, InputError> {
    let mut rows: Vec<FileRow> = Vec::new();
    for (i, table) in job.workload.iter().enumerate() {
        let at = format!("{origin}: [[workload]] #{}", i + 1);
        let text = |key: &str| -> Result<Option<String>, InputError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(InputError::new(format!("{key} = ...: expected a string")).at(at.clone())),
            }
        };
        let kind = text("kind")?.unwrap_or_default();
        let id = text("row")?.unwrap_or_else(|| format!("{}-{}", kind, i + 1));
        if rows.iter().any(|r| r.id == id) {
            return Err(
                InputError::new(format!("row = \"{}\" is given twice: each row needs its own id", cut(&id))).at(at)
            );
        }
        let chart = text("chart")?;
        if let Some(c) = chart.as_deref().filter(|c| !CHARTS.contains(c)) {
            return Err(InputError::new(format!("chart = \"{}\": expected {}", cut(c), CHARTS.join(", "))).at(at));
        }
        let metrics = match table.get("metrics") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|m| m.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| InputError::new("metrics = [...]: expected metric names").at(at.clone()))?,
            Some(_) => return Err(InputError::new("metrics = ...: expected an array of metric names").at(at)),
        };
        let mut workload: toml::Table = table
            .iter()
            .filter(|(k, _)| !ROW_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut scales = Vec::new();
        for name in ["quick", "smoke"] {
            match table.get(name) {
                None => {}
                Some(toml::Value::Table(t)) => {
                    if !matches!(t.get("reason"), Some(toml::Value::String(r)) if !r.trim().is_empty()) {
                        return Err(InputError::new(format!(
                            "[workload.{name}] needs reason = \"...\": say why the row is smaller at this scale"
                        ))
                        .at(at));
                    }
                    scales.push((name, t));
                }
                Some(_) => {
                    return Err(InputError::new(format!("{name} = ...: expected a [workload.{name}] table")).at(at))
                }
            }
        }
        let missing_feature = match text("needs")? {
            None => None,
            Some(f) => match FEATURES.iter().find(|(name, _)| *name == f) {
                Some((_, true)) => None,
                Some((_, false)) => Some(format!("it needs a build with --features {f}")),
                None => {
                    let names: Vec<&str> = FEATURES.iter().map(|(n, _)| *n).collect();
                    return Err(
                        InputError::new(format!("needs = \"{}\": expected {}", cut(&f), names.join(" or "))).at(at)
                    );
                }
            },
        };
        let mut reasons = Vec::new();
        for wanted in scale.tables() {
            for (_, overrides) in scales.iter().filter(|(n, _)| n == wanted) {
                for (key, value) in overrides.iter() {
                    if key == "reason" {
                        reasons.push(value.as_str().unwrap_or_default().to_string());
                    } else if key == "kind" || ROW_KEYS.contains(&key.as_str()) {
                        return Err(InputError::new(format!(
                            "[workload.{wanted}] {key} = ...: a scale changes the workload's keys, not its kind or row"
                        ))
                        .at(at));
                    } else {
                        workload.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        let title = text("title")?.unwrap_or_else(|| id.clone());
        let chosen = text("chosen")?;
        if chosen.as_deref().is_some_and(|c| c.trim().is_empty()) {
            return Err(InputError::new("chosen = \"\": say which values were chosen here and why").at(at));
        }
        rows.push(FileRow {
            id,
            title,
            chart,
            metrics,
            reduced: (!reasons.is_empty()).then(|| reasons.join("; ")),
            chosen,
            table: workload,
            origin: at,
            missing_feature,
        });
    }
    Ok(rows)
}

/// The `[[claim]]`s, checked: one kind (better and worse, an order, or targets with `from`),
/// labels on one side only, bounds that make sense, rows that exist, ids that are unique.
pub fn claims(job: &TomlJob, rows: &[FileRow], origin: &str) -> Result<Vec<Claim>, InputError> {
    let mut out: Vec<Claim> = Vec::new();
    for (i, c) in job.claim.iter().enumerate() {
        let at = format!("{origin}: [[claim]] #{}", i + 1);
        let list = |l: &Option<Labels>| l.as_ref().map(Labels::list).unwrap_or_default();
        let (better, worse, targets) = (list(&c.better), list(&c.worse), list(&c.targets));
        let order = c.order.clone().unwrap_or_default();
        let kinds = [!better.is_empty() || !worse.is_empty(), !order.is_empty(), !targets.is_empty()];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(
                InputError::new("expected one of: better and worse, order (best first), or targets with from").at(at)
            );
        }
        if kinds[0] && (better.is_empty() || worse.is_empty()) {
            return Err(InputError::new("better and worse each need at least one target label").at(at));
        }
        if let Some(both) = better.iter().find(|b| worse.contains(b)) {
            return Err(InputError::new(format!("'{}' is both better and worse", cut(both))).at(at));
        }
        if kinds[1] && order.len() < 2 {
            return Err(InputError::new("order needs at least two target labels, best first").at(at));
        }
        if let Some(twice) = order.iter().enumerate().find(|(j, l)| order[..*j].contains(l)) {
            return Err(InputError::new(format!("order names '{}' twice", cut(twice.1))).at(at));
        }
        if kinds[2] && c.from.is_none() {
            return Err(InputError::new(
                "targets = [...] needs from = { row = ..., point = ... }: a gain is from somewhere",
            )
            .at(at));
        }
        let number = |key: &str, v: Option<f64>, least: f64| -> Result<Option<f64>, InputError> {
            match v {
                Some(f) if !(f.is_finite() && f >= least && f > 0.0) => Err(InputError::new(format!(
                    "{key} = {f}: expected a number of {} or more",
                    if least > 0.0 { least.to_string() } else { "above 0".to_string() }
                ))
                .at(at.clone())),
                v => Ok(v),
            }
        };
        // A claim that one target beats another asserts a factor of at least 1; a gain may be
        // anything above 0 ("none" is about 1×).
        let least = if kinds[2] { 0.0 } else { 1.0 };
        let min = number("min_factor", c.min_factor, least)?;
        let most = number("at_most", c.at_most, 0.0)?;
        let about = number("about", c.about, least)?;
        let tolerance = number("tolerance", c.tolerance, 1.0)?;
        let study = number("study", c.study, 0.0)?;
        if about.is_some() && (min.is_some() || most.is_some()) {
            return Err(InputError::new("about = F says both bounds: not with min_factor, at_least or at_most").at(at));
        }
        if tolerance.is_some() && about.is_none() {
            return Err(InputError::new("tolerance is the margin of about = F: give about").at(at));
        }
        let (min_factor, at_most) = match about {
            Some(f) => {
                let t = tolerance.unwrap_or(ABOUT_TOLERANCE);
                (f / t, Some(f * t))
            }
            None => (min.unwrap_or(1.0), most),
        };
        if let Some(hi) = at_most.filter(|hi| *hi <= min_factor) {
            return Err(
                InputError::new(format!("at_most = {hi}: expected more than the lower bound {min_factor}")).at(at)
            );
        }
        let known = |row: &Option<String>| -> Result<(), InputError> {
            match row.as_deref().filter(|r| !rows.iter().any(|x| x.id == *r)) {
                Some(row) => {
                    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
                    Err(InputError::new(format!("row = \"{}\": the rows are {}", cut(row), ids.join(", ")))
                        .at(at.clone()))
                }
                None => Ok(()),
            }
        };
        known(&c.row)?;
        let from = match &c.from {
            Some(f) => {
                known(&f.row)?;
                if f.row.is_none() && f.point.is_none() && f.part.is_none() {
                    return Err(InputError::new("from = {}: name its row, point or part").at(at));
                }
                Some(Scope { row: f.row.clone(), point: f.point.clone(), part: f.part.clone() })
            }
            None => None,
        };
        let id = c.id.clone().unwrap_or_else(|| format!("claim-{}", i + 1));
        if out.iter().any(|o| o.id == id) {
            return Err(InputError::new(format!("id = \"{}\" is given twice", cut(&id))).at(at));
        }
        out.push(Claim {
            id,
            text: c.text.clone(),
            row: c.row.clone(),
            point: c.point.clone(),
            part: c.part.clone(),
            metric: c.metric.clone(),
            better,
            worse,
            order,
            targets,
            from,
            min_factor,
            at_most,
            study,
        });
    }
    Ok(out)
}

/// One TOML value as the text a spec would hold (`true` → `1`).
fn toml_scalar(key: &str, v: &toml::Value, origin: &str) -> Result<String, InputError> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => if *b { "1" } else { "0" }.to_string(),
        other => {
            let (k, other) = (cut(key), other.to_string());
            let other = cut(&other);
            return Err(InputError::new(format!(
                "{k} = {other}: expected a string, number, boolean or an array of them"
            ))
            .at(origin));
        }
    })
}

/// Each key of a table with its values in order (one unless the value is an array).
type KeyValues = Vec<(String, Vec<String>)>;

/// A TOML table's `kind` and its other keys, each with its values (an array is a list).
fn table_values(table: &toml::Table, what: &str, origin: &str) -> Result<(String, KeyValues), InputError> {
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.clone(),
        _ => return Err(InputError::new(format!("a [[{what}]] table needs kind = \"...\"")).at(origin)),
    };
    let mut keys = Vec::new();
    for (k, v) in table.iter().filter(|(k, _)| *k != "kind") {
        let values = match v {
            toml::Value::Array(items) if items.is_empty() => {
                return Err(InputError::new(format!("{} = []: a list needs at least one value", cut(k))).at(origin))
            }
            toml::Value::Array(items) => items.iter().map(|i| toml_scalar(k, i, origin)).collect::<Result<_, _>>()?,
            other => vec![toml_scalar(k, other, origin)?],
        };
        keys.push((k.clone(), values));
    }
    Ok((kind, keys))
}

/// A `[[workload]]` table as a sweep: arrays are lists whatever the key; a string value is
/// split on the key's list separators as on the command line.
pub fn table_to_sweep(table: &toml::Table, origin: &str) -> Result<fsarena_core::sweep::Sweep, InputError> {
    let (kind, keys) = table_values(table, "workload", origin)?;
    let mut out = Vec::new();
    for (key, values) in keys {
        if values.len() > 1 {
            out.push((key, values));
            continue;
        }
        let one = Spec { kind: kind.clone(), params: vec![(key.clone(), values[0].clone())] };
        let split = fsarena_core::sweep::Sweep::from_spec(&one, |k| fsarena_kinds::list_separators(&kind, k))
            .map_err(|e| e.at(origin))?;
        out.extend(split.keys);
    }
    Ok(fsarena_core::sweep::Sweep { kind, keys: out })
}

/// A `[[target]]` table as a target spec (`kind = "ext4"`, `size = "1g"` → `ext4:size=1g`).
pub fn table_to_target(table: &toml::Table, origin: &str) -> Result<String, InputError> {
    let (kind, keys) = table_values(table, "target", origin)?;
    let mut spec = Spec { kind, params: Vec::new() };
    for (key, values) in keys {
        if values.len() > 1 {
            return Err(InputError::new(format!("{} = [...]: a target key takes one value", cut(&key))).at(origin));
        }
        spec.params.push((key, values.into_iter().next().unwrap_or_default()));
    }
    Ok(spec.to_string())
}

/// Whether the file says more than workloads and targets: rows, claims or scales, which the
/// run then records for its report (rows heading their results, Findings).
pub fn describes_rows(job: &TomlJob) -> bool {
    !job.claim.is_empty()
        || !job.figure.is_empty()
        || !job.scale.is_empty()
        || job.workload.iter().any(|t| ROW_KEYS.iter().any(|k| t.contains_key(*k)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FILE: &str = r#"
targets = ["ext4:size=4g"]
[scale.smoke]
reason = "seconds"
repeat = 2
[[workload]]
row = "sqlite"
title = "SQLite inserts"
chart = "bars"
kind = "sqlite"
inserts = 12500
[workload.quick]
reason = "a tenth"
inserts = 1250
[workload.smoke]
reason = "a hundredth"
inserts = 125
[[claim]]
text = "ext3 first"
row = "sqlite"
metric = "insert_time"
better = "ext3"
worse = ["ext4", "xfs"]
min_factor = 10
"#;

    #[test]
    fn each_scale_takes_its_rows_keys_and_says_why() {
        let job = parse(FILE, "f.toml").unwrap();
        let inserts = |s| {
            let r = rows(&job, s, "f.toml").unwrap();
            (r[0].table["inserts"].as_integer().unwrap(), r[0].reduced.clone())
        };
        assert_eq!(inserts(Scale::Full), (12500, None));
        assert_eq!(inserts(Scale::Quick), (1250, Some("a tenth".into())));
        assert_eq!(inserts(Scale::Smoke), (125, Some("a tenth; a hundredth".into())));
        let r = rows(&job, Scale::Full, "f.toml").unwrap();
        assert!(!r[0].table.contains_key("row") && !r[0].table.contains_key("quick"));
        assert_eq!(file_scale(&job, Scale::Smoke, "f").unwrap().repeat, Some(2));
        assert_eq!(file_scale(&job, Scale::Quick, "f").unwrap().repeat, None);
        let c = claims(&job, &r, "f").unwrap();
        assert_eq!((c[0].better.clone(), c[0].worse.len(), c[0].min_factor), (vec!["ext3".to_string()], 2, 10.0));
        assert!(describes_rows(&job));
    }

    #[test]
    fn bad_rows_scales_and_claims_are_refused_by_name() {
        let bad = |text: &str| {
            let job = parse(text, "f.toml").unwrap();
            let r = rows(&job, Scale::Smoke, "f.toml").and_then(|r| claims(&job, &r, "f.toml").map(|_| ()));
            let s = file_scale(&job, Scale::Smoke, "f.toml").map(|_| ());
            r.and(s).unwrap_err().to_string()
        };
        let e = bad("[[workload]]\nkind = \"io\"\n[workload.quick]\nsize = \"1m\"\n");
        assert!(e.contains("needs reason"), "{e}");
        let e = bad("[[workload]]\nkind = \"io\"\nchart = \"pie\"\n");
        assert!(e.contains("chart = \"pie\": expected bars, sweep, grid"), "{e}");
        let e = bad("[scale.huge]\nreason = \"x\"\n");
        assert!(e.contains("[scale.huge]"), "{e}");
        let e = bad("[[workload]]\nkind = \"kv\"\nneeds = \"gpu\"\n");
        assert!(e.contains("needs = \"gpu\": expected rocksdb or mpi"), "{e}");
        let e = bad(
            "[[workload]]\nkind = \"io\"\n[[claim]]\ntext = \"t\"\nmetric = \"m\"\nbetter = \"a\"\nworse = \"a\"\n",
        );
        assert!(e.contains("'a' is both better and worse"), "{e}");
        let e = bad("[[workload]]\nkind = \"io\"\n[[claim]]\ntext = \"t\"\nmetric = \"m\"\nbetter = \"a\"\nworse = \"b\"\nrow = \"nope\"\n");
        assert!(e.contains("row = \"nope\": the rows are io-1"), "{e}");
        let e = bad("[[workload]]\nkind = \"io\"\n[[claim]]\ntext = \"t\"\nmetric = \"m\"\nbetter = \"a\"\nworse = \"b\"\nmin_factor = 0.5\n");
        assert!(e.contains("min_factor = 0.5"), "{e}");
        let claim = |keys: &str| {
            bad(&format!("[[workload]]\nkind = \"io\"\n[[claim]]\ntext = \"t\"\nmetric = \"m\"\n{keys}\n"))
        };
        for (keys, says) in [
            ("better = \"a\"\nworse = \"b\"\norder = [\"a\", \"b\"]", "expected one of"),
            ("order = [\"a\"]", "order needs at least two"),
            ("order = [\"a\", \"b\", \"a\"]", "order names 'a' twice"),
            ("targets = \"a\"\nabout = 1", "needs from"),
            ("better = \"a\"\nworse = \"b\"\nabout = 3\nat_most = 5", "about = F says both bounds"),
            ("better = \"a\"\nworse = \"b\"\nat_least = 3\nat_most = 2", "at_most = 2: expected more than"),
            ("better = \"a\"\nworse = \"b\"\ntolerance = 2", "tolerance is the margin"),
            ("targets = \"a\"\nabout = 1\nfrom = { row = \"nope\" }", "row = \"nope\""),
            ("better = \"a\"\nworse = \"b\"\nstudy = -1", "study = -1"),
        ] {
            let e = claim(keys);
            assert!(e.contains(says) && e.contains("[[claim]] #1"), "{keys}: {e}");
        }
    }

    #[test]
    fn claims_take_an_order_bounds_and_a_gain() {
        let text = r#"
[[workload]]
row = "one"
kind = "io"
[[workload]]
row = "four"
kind = "io"
[[claim]]
id = "order"
text = "btrfs > ext4 > xfs"
row = "one"
metric = "write_bw"
order = ["btrfs", "ext4", "xfs"]
[[claim]]
id = "about"
text = "about three times"
row = "one"
part = "readrandom"
metric = "write_bw"
better = "a"
worse = "b"
about = 3
study = 3.1
[[claim]]
id = "gain"
text = "ext3 gains up to 1.4x from 1 to 4 jobs"
row = "four"
metric = "write_bw"
targets = ["ext3"]
from = { row = "one" }
at_most = 1.4
"#;
        let job = parse(text, "f.toml").unwrap();
        let r = rows(&job, Scale::Full, "f.toml").unwrap();
        let c = claims(&job, &r, "f.toml").unwrap();
        assert_eq!(c[0].order, ["btrfs", "ext4", "xfs"]);
        assert_eq!((c[1].min_factor, c[1].at_most, c[1].study), (2.0, Some(4.5), Some(3.1)));
        assert_eq!(c[1].part.as_deref(), Some("readrandom"));
        assert_eq!(c[2].from.as_ref().unwrap().row.as_deref(), Some("one"));
        assert_eq!((c[2].min_factor, c[2].at_most), (1.0, Some(1.4)));
        assert_eq!(c[2].bounds_text(), "> 1× and ≤ 1.4×");
        assert_eq!(c[1].bounds_text(), "2–4.5×");
    }
}
