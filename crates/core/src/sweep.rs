//! Sweeps: a workload spec whose keys may take lists of values, expanded into its points.
//!
//! `io:rw='read,randread',numjobs='1,4'` is four points, the product of the lists in the order
//! the keys were given (the first key varies slowest), each an ordinary spec with one value per
//! key. Which separators a key's list may use is the workload kind's business (fio's `bs=4k,64k`
//! already means read and write sizes, so its lists use `|`): the caller says.

use crate::{InputError, Spec};

/// Most points one sweep may expand to: beyond this a typo (`numjobs='1,...'` pasted twice)
/// is likelier than an intended plan.
pub const MAX_POINTS: usize = 10_000;

/// A workload spec with a list of values per key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sweep {
    /// The workload kind.
    pub kind: String,
    /// Each key with its values in order; one value when the key is not swept.
    pub keys: Vec<(String, Vec<String>)>,
}

/// One point of a sweep: the spec to run, and the swept keys with their values here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The spec with one value per key.
    pub spec: Spec,
    /// `(key, value)` of every key that has more than one value, in the order given.
    pub varying: Vec<(String, String)>,
}

impl Sweep {
    /// From a parsed spec: a value is split on the first of `separators(key)` it holds
    /// (none: the key is never swept, its value kept whole).
    pub fn from_spec(spec: &Spec, separators: impl Fn(&str) -> &'static [char]) -> Result<Self, InputError> {
        let mut keys = Vec::new();
        for (key, value) in &spec.params {
            let values = match separators(key).iter().find(|&&c| value.contains(c)) {
                Some(&sep) => {
                    let values: Vec<String> = value.split(sep).map(|v| v.trim().to_string()).collect();
                    if values.iter().any(String::is_empty) {
                        return Err(InputError::new(format!(
                            "{key}='{}': a list needs a value between every two '{sep}'",
                            crate::text::printable(value)
                        )));
                    }
                    values
                }
                None => vec![value.clone()],
            };
            keys.push((key.clone(), values));
        }
        Ok(Self { kind: spec.kind.clone(), keys })
    }

    /// How many points the sweep has, or an error naming the lists when there are too many.
    pub fn size(&self) -> Result<usize, InputError> {
        let mut n: usize = 1;
        for (_, values) in &self.keys {
            n = n.saturating_mul(values.len());
        }
        if n > MAX_POINTS {
            let lists: Vec<String> =
                self.keys.iter().filter(|(_, v)| v.len() > 1).map(|(k, v)| format!("{k} ({})", v.len())).collect();
            return Err(InputError::new(format!(
                "the sweep over {} has {n} points: at most {MAX_POINTS} are accepted",
                lists.join(" × ")
            )));
        }
        Ok(n)
    }

    /// The points, the first key varying slowest.
    pub fn points(&self) -> Result<Vec<Point>, InputError> {
        let n = self.size()?;
        let mut points = Vec::with_capacity(n);
        for mut index in 0..n {
            // Mixed-radix digits of `index`, the last key the fastest.
            let mut chosen = vec![0usize; self.keys.len()];
            for (slot, (_, values)) in chosen.iter_mut().zip(&self.keys).rev() {
                *slot = index % values.len();
                index /= values.len();
            }
            let mut spec = Spec { kind: self.kind.clone(), params: Vec::with_capacity(self.keys.len()) };
            let mut varying = Vec::new();
            for ((key, values), &i) in self.keys.iter().zip(&chosen) {
                spec.params.push((key.clone(), values[i].clone()));
                if values.len() > 1 {
                    varying.push((key.clone(), values[i].clone()));
                }
            }
            points.push(Point { spec, varying });
        }
        Ok(points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commas(_: &str) -> &'static [char] {
        &[',', '|']
    }

    #[test]
    fn product_in_the_order_given_first_key_slowest() {
        let spec = Spec::parse("io:rw='read,randread',bs=4k,numjobs='1,4,16'").unwrap();
        let points = Sweep::from_spec(&spec, commas).unwrap().points().unwrap();
        assert_eq!(points.len(), 6);
        let labels: Vec<String> = points
            .iter()
            .map(|p| p.varying.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(labels[0], "rw=read numjobs=1");
        assert_eq!(labels[2], "rw=read numjobs=16");
        assert_eq!(labels[3], "rw=randread numjobs=1");
        assert_eq!(points[4].spec.to_string(), "io:rw=randread,bs=4k,numjobs=4");
    }

    #[test]
    fn a_key_without_separators_keeps_its_commas() {
        let spec = Spec::parse("io:bs='4k,64k',numjobs='1|2'").unwrap();
        let sweep = Sweep::from_spec(&spec, |k| if k == "bs" { &['|'] } else { &[',', '|'] }).unwrap();
        let points = sweep.points().unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].spec.get("bs"), Some("4k,64k"));
        assert_eq!(points[1].varying, vec![("numjobs".to_string(), "2".to_string())]);
    }

    #[test]
    fn no_lists_is_one_point_with_nothing_varying() {
        let spec = Spec::parse("meta:items=10").unwrap();
        let points = Sweep::from_spec(&spec, commas).unwrap().points().unwrap();
        assert_eq!(points.len(), 1);
        assert!(points[0].varying.is_empty());
        assert_eq!(points[0].spec, spec);
    }

    #[test]
    fn empty_list_items_and_huge_products_are_refused() {
        let spec = Spec::parse("io:numjobs='1,,4'").unwrap();
        assert!(Sweep::from_spec(&spec, commas).unwrap_err().message.contains("between every two ','"));
        let many = (0..101).map(|i| i.to_string()).collect::<Vec<_>>().join("|");
        let spec = Spec::parse(&format!("io:a='{many}',b='{many}'")).unwrap();
        let err = Sweep::from_spec(&spec, commas).unwrap().size().unwrap_err();
        assert!(err.message.contains("10201 points"), "{}", err.message);
    }
}
