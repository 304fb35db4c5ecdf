//! Shuffle prediction: each job's ShuffleInputRatio, map-output bytes per map-input byte.
//!
//! ShuffleWatcher (§1.2 of our notes) starts every job at 1.0 and refines the ratio as maps
//! complete; the user may state it, and recurring jobs keep what earlier runs taught. The
//! estimate therefore comes, best first, from the job's own report (its maps' counters, or no
//! reduces at all), a user hint given as the application tag `rackwise.shuffle-ratio=<ratio>`,
//! the learned history of the job's name, or the prior.

use crate::protocol::LearnedRatio;
use std::collections::BTreeMap;

/// The ratio assumed for a job nothing is known about (ShuffleWatcher: 1.0).
pub const PRIOR_RATIO: f64 = 1.0;

/// Application tag through which a user states the expected ratio. YARN lower-cases tags, so
/// the key is lower-case.
pub const HINT_TAG: &str = "rackwise.shuffle-ratio";

/// The application tag stating `ratio` as a hint, as a user writes it.
pub fn hint_tag(ratio: f64) -> String {
    format!("{HINT_TAG}={ratio}")
}

/// Learned history weighs a new run at least this much (1/N), so a job whose data changes
/// shape is re-learned within a few runs instead of being anchored by its first hundred.
const HISTORY_WINDOW_RUNS: u32 = 10;

/// Where a job's current ratio came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatioSource {
    Prior,
    History,
    Hint,
    /// The job's own report: its finished maps' counters, or a reduce count of zero.
    Counters,
}

/// A job's shuffle/input ratio and its provenance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShuffleEstimate {
    pub ratio: f64,
    pub source: RatioSource,
}

impl ShuffleEstimate {
    /// The estimate a job starts with, before any of its maps completed.
    pub fn initial(
        app: &str,
        job_name: &str,
        tags: &[String],
        history: &LearnedHistory,
        max_hint_ratio: f64,
    ) -> ShuffleEstimate {
        if let Some(ratio) = hint_from_tags(app, tags, max_hint_ratio) {
            return ShuffleEstimate {
                ratio,
                source: RatioSource::Hint,
            };
        }
        if let Some(ratio) = history.ratio(job_name) {
            return ShuffleEstimate {
                ratio,
                source: RatioSource::History,
            };
        }
        ShuffleEstimate {
            ratio: PRIOR_RATIO,
            source: RatioSource::Prior,
        }
    }

    /// Refines the estimate from counters of completed maps; counters always win, because they
    /// measure this very run.
    pub fn observe(&mut self, map_input_bytes: u64, map_output_bytes: u64) {
        if map_input_bytes > 0 {
            self.ratio = map_output_bytes as f64 / map_input_bytes as f64;
            self.source = RatioSource::Counters;
        }
    }

    /// A job whose ApplicationMaster reports no reduces (a map-only job: its maps write
    /// straight to its output) shuffles nothing, whatever a hint, its history or the prior say.
    /// The AM reports its reduce count as soon as the job is set up (the shim's poller reads
    /// `reducesTotal`), long before a map's counters could tell. At the prior such a job looked
    /// as shuffle-heavy as any: ShuffleWatcher pulled its maps onto one rack, reading their
    /// splits from others, for a shuffle that never comes.
    pub fn observe_no_reduces(&mut self) {
        self.ratio = 0.0;
        self.source = RatioSource::Counters;
    }
}

/// Reads the user's hint tag; an invalid hint is logged (naming app, tag, value and reason)
/// and ignored, so a typo in a tag never fails a job.
fn hint_from_tags(app: &str, tags: &[String], max_hint_ratio: f64) -> Option<f64> {
    let prefix = format!("{HINT_TAG}=");
    let raw = tags
        .iter()
        .find_map(|tag| tag.trim().strip_prefix(&prefix))?;
    match raw.trim().parse::<f64>() {
        Ok(ratio) if ratio.is_finite() && ratio >= 0.0 && ratio <= max_hint_ratio => Some(ratio),
        Ok(_) => {
            log::warn!(
                "{app}: tag {HINT_TAG} value '{raw}' is ignored: must be between 0 and \
                 {max_hint_ratio} (yarn.scheduler.rackwise.predictor.max-hint-ratio)"
            );
            None
        }
        Err(_) => {
            log::warn!("{app}: tag {HINT_TAG} value '{raw}' is ignored: not a number");
            None
        }
    }
}

/// Ratios learned per recurring job name, at most `max_entries` names: a cluster whose job
/// names never recur (generated query names) must not grow the ResourceManager's memory
/// without bound. At the bound, the name learned from longest ago is dropped, as the shim's
/// store drops it from the persisted file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LearnedHistory {
    by_name: BTreeMap<String, Learned>,
    /// Bumped at every update; an entry's stamp tells which name was learned from longest ago.
    updates: u64,
    /// `None`: no bound.
    max_entries: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
struct Learned {
    entry: LearnedRatio,
    updated: u64,
}

impl LearnedHistory {
    /// Rebuilds the history from what the shim persisted, newest first, keeping at most
    /// `max_entries` names (`None`: all); entries that cannot be right (a negative or
    /// non-finite ratio or task time, from a hand-edited file) are dropped with a warning.
    pub fn from_entries(entries: &[LearnedRatio], max_entries: Option<usize>) -> LearnedHistory {
        let mut history = LearnedHistory {
            max_entries,
            ..LearnedHistory::default()
        };
        // Oldest first, so that each insert is the newest so far.
        for entry in entries.iter().rev() {
            let valid = |value: f64| value.is_finite() && value >= 0.0;
            let times_valid = [entry.map_ms, entry.reduce_ms]
                .into_iter()
                .flatten()
                .all(valid);
            if valid(entry.ratio) && times_valid {
                *history.entry(&entry.job_name) = entry.clone();
            } else {
                log::warn!(
                    "learned history entry for job '{}' has ratio {}, map time {:?} ms and \
                     reduce time {:?} ms and is dropped: each must be a finite number >= 0",
                    entry.job_name,
                    entry.ratio,
                    entry.map_ms,
                    entry.reduce_ms
                );
            }
        }
        history
    }

    /// How many job names the history holds.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The name's learned ratio, if any run with counters contributed one.
    pub fn ratio(&self, job_name: &str) -> Option<f64> {
        self.by_name
            .get(job_name)
            .map(|learned| &learned.entry)
            .filter(|entry| entry.runs > 0)
            .map(|entry| entry.ratio)
    }

    /// The name's learned mean map and reduce task times (ms), each if known.
    pub fn task_times(&self, job_name: &str) -> (Option<f64>, Option<f64>) {
        self.by_name.get(job_name).map_or((None, None), |learned| {
            (learned.entry.map_ms, learned.entry.reduce_ms)
        })
    }

    /// Folds one finished run's ratio into the history and returns the updated entry.
    pub fn learn(&mut self, job_name: &str, observed_ratio: f64) -> LearnedRatio {
        let entry = self.entry(job_name);
        entry.runs = entry.runs.saturating_add(1);
        entry.ratio = fold(entry.ratio, observed_ratio, entry.runs);
        entry.clone()
    }

    /// Folds one finished run's mean task times (ms; `None` where it ran no task of that
    /// kind) into the history and returns the updated entry.
    pub fn learn_task_times(
        &mut self,
        job_name: &str,
        map_ms: Option<f64>,
        reduce_ms: Option<f64>,
    ) -> LearnedRatio {
        let entry = self.entry(job_name);
        entry.profile_runs = entry.profile_runs.saturating_add(1);
        let runs = entry.profile_runs;
        for (learned, observed) in [
            (&mut entry.map_ms, map_ms),
            (&mut entry.reduce_ms, reduce_ms),
        ] {
            if let Some(observed) = observed {
                *learned = Some(learned.map_or(observed, |old| fold(old, observed, runs)));
            }
        }
        entry.clone()
    }

    /// The name's entry, created if new (dropping the name learned from longest ago when the
    /// history is full), and stamped as the newest.
    fn entry(&mut self, job_name: &str) -> &mut LearnedRatio {
        let full = self
            .max_entries
            .is_some_and(|max| self.by_name.len() >= max);
        if full && !self.by_name.contains_key(job_name) {
            let oldest = self
                .by_name
                .iter()
                .min_by_key(|(_, learned)| learned.updated)
                .map(|(name, _)| name.clone());
            if let Some(oldest) = oldest {
                self.by_name.remove(&oldest);
            }
        }
        self.updates += 1;
        let updated = self.updates;
        let learned = self
            .by_name
            .entry(job_name.to_string())
            .or_insert_with(|| Learned {
                entry: LearnedRatio {
                    job_name: job_name.to_string(),
                    ..LearnedRatio::default()
                },
                updated,
            });
        learned.updated = updated;
        &mut learned.entry
    }
}

/// A running mean over the last `HISTORY_WINDOW_RUNS` runs: the `runs`-th observation weighs
/// `1 / min(runs, window)`.
fn fold(learned: f64, observed: f64, runs: u32) -> f64 {
    learned + (observed - learned) / runs.min(HISTORY_WINDOW_RUNS) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn a_new_job_starts_at_the_prior() {
        let estimate = ShuffleEstimate::initial("a", "wc", &[], &LearnedHistory::default(), 100.0);
        assert_eq!(estimate.ratio, 1.0);
        assert_eq!(estimate.source, RatioSource::Prior);
    }

    #[test]
    fn a_valid_hint_beats_history_and_an_invalid_one_is_ignored() {
        let mut history = LearnedHistory::default();
        history.learn("sort", 3.0);
        let hinted = ShuffleEstimate::initial(
            "a",
            "sort",
            &tags(&["team-x", "rackwise.shuffle-ratio=2.5"]),
            &history,
            100.0,
        );
        assert_eq!((hinted.ratio, hinted.source), (2.5, RatioSource::Hint));
        for bad in [
            "rackwise.shuffle-ratio=lots",
            "rackwise.shuffle-ratio=-1",
            "rackwise.shuffle-ratio=1e9",
        ] {
            let estimate = ShuffleEstimate::initial("a", "sort", &tags(&[bad]), &history, 100.0);
            assert_eq!(
                (estimate.ratio, estimate.source),
                (3.0, RatioSource::History),
                "{bad}"
            );
        }
    }

    /// The estimate of a job with no history whose user stated `ratio`.
    fn hinted(ratio: f64) -> ShuffleEstimate {
        ShuffleEstimate::initial(
            "a",
            "x",
            &[hint_tag(ratio)],
            &LearnedHistory::default(),
            100.0,
        )
    }

    #[test]
    fn counters_replace_any_earlier_estimate() {
        let mut estimate = hinted(0.1);
        estimate.observe(0, 10);
        assert_eq!(
            estimate.source,
            RatioSource::Hint,
            "no input read yet: nothing to learn"
        );
        estimate.observe(1000, 2500);
        assert_eq!(
            (estimate.ratio, estimate.source),
            (2.5, RatioSource::Counters)
        );
    }

    #[test]
    fn a_job_without_reduces_shuffles_nothing_whatever_its_hint_said() {
        let mut estimate = hinted(2.5);
        estimate.observe_no_reduces();
        assert_eq!(
            (estimate.ratio, estimate.source),
            (0.0, RatioSource::Counters)
        );
    }

    #[test]
    fn history_is_a_running_mean_that_keeps_adapting() {
        let mut history = LearnedHistory::default();
        assert_eq!(history.learn("j", 2.0).ratio, 2.0);
        assert_eq!(history.learn("j", 4.0).ratio, 3.0);
        for _ in 0..50 {
            history.learn("j", 1.0);
        }
        let after = history.learn("j", 11.0);
        assert_eq!(after.runs, 53);
        assert!(
            (after.ratio - 2.0).abs() < 0.01,
            "a new run still weighs 1/10: {}",
            after.ratio
        );
    }

    #[test]
    fn history_keeps_the_names_learned_most_recently_up_to_its_bound() {
        let persisted: Vec<LearnedRatio> = ["newest", "middle", "oldest"]
            .map(|name| LearnedRatio {
                job_name: name.into(),
                ratio: 1.5,
                runs: 1,
                ..LearnedRatio::default()
            })
            .to_vec();
        let mut history = LearnedHistory::from_entries(&persisted, Some(2));
        assert_eq!(history.len(), 2);
        assert_eq!(history.ratio("oldest"), None, "the file is newest first");
        assert_eq!(history.ratio("newest"), Some(1.5));

        history.learn("middle", 3.0);
        history.learn("unseen", 2.0);
        assert_eq!(history.len(), 2, "still at the bound");
        assert_eq!(
            history.ratio("newest"),
            None,
            "now the name learned from longest ago"
        );
        assert_eq!(history.ratio("unseen"), Some(2.0));
        assert!(history.ratio("middle").is_some());

        let unbounded = LearnedHistory::from_entries(&persisted, None);
        assert_eq!(unbounded.len(), 3);
    }

    #[test]
    fn corrupt_persisted_entries_are_dropped() {
        let history = LearnedHistory::from_entries(
            &[
                LearnedRatio {
                    job_name: "ok".into(),
                    ratio: 0.5,
                    runs: 3,
                    ..LearnedRatio::default()
                },
                LearnedRatio {
                    job_name: "bad".into(),
                    ratio: f64::NAN,
                    runs: 1,
                    ..LearnedRatio::default()
                },
                LearnedRatio {
                    job_name: "bad-time".into(),
                    ratio: 0.5,
                    runs: 1,
                    map_ms: Some(-1.0),
                    ..LearnedRatio::default()
                },
            ],
            None,
        );
        assert_eq!(history.ratio("ok"), Some(0.5));
        assert_eq!(history.ratio("bad"), None);
        assert_eq!(history.ratio("bad-time"), None);
    }
}
