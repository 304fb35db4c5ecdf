//! Parameters declared as data: a name, a type with its bounds, a default and one doc line.
//!
//! Every setting Rackwise reads (the core's yarn-site keys, each policy's `<rackwise>` children
//! and its own yarn-site keys) is one [`Param`]. Parsing, validation, the error messages and the
//! README's configuration tables all derive from these declarations, so none of them can drift
//! from what the code reads.

use crate::error::ConfigProblem;
use std::any::Any;
use std::fmt;
use std::sync::OnceLock;

/// One declared setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// The `<rackwise>` child element, or the full yarn-site key.
    pub name: &'static str,
    pub kind: ParamKind,
    /// One line for the error messages and the README.
    pub doc: &'static str,
}

/// What values a parameter takes, with its default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A number in `[min, max]`, or `(min, max]` when `min_exclusive`; `whole` refuses fractions.
    Number {
        default: f64,
        min: f64,
        min_exclusive: bool,
        max: f64,
        whole: bool,
    },
    Bool {
        default: bool,
    },
    /// One of a fixed set of words; `default` is one of them.
    Word {
        default: &'static str,
        words: &'static [&'static str],
    },
    /// A whole number in `[min, max]` or one of a few words that stand for a number worked out
    /// at run time (FRESH's `k`: `3`, `half`, `all`). `default` is one of the words or a
    /// number in range, as text.
    WholeOrWord {
        default: &'static str,
        min: f64,
        max: f64,
        words: &'static [&'static str],
    },
}

/// A parsed value of a [`Param`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Number(f64),
    Bool(bool),
    Word(&'static str),
}

impl Param {
    /// A number in `[min, max]` (`(min, max]` with `min_exclusive`), fractions allowed.
    pub const fn number(
        name: &'static str,
        default: f64,
        (min, min_exclusive): (f64, bool),
        max: f64,
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            kind: ParamKind::Number {
                default,
                min,
                min_exclusive,
                max,
                whole: false,
            },
            doc,
        }
    }

    /// A whole number in `[min, max]`.
    pub const fn whole(
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            kind: ParamKind::Number {
                default,
                min,
                min_exclusive: false,
                max,
                whole: true,
            },
            doc,
        }
    }

    pub const fn bool(name: &'static str, default: bool, doc: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Bool { default },
            doc,
        }
    }

    pub const fn word(
        name: &'static str,
        default: &'static str,
        words: &'static [&'static str],
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            kind: ParamKind::Word { default, words },
            doc,
        }
    }

    /// A whole number in `[min, max]`, or one of `words`.
    pub const fn whole_or_word(
        name: &'static str,
        default: &'static str,
        (min, max): (f64, f64),
        words: &'static [&'static str],
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            kind: ParamKind::WholeOrWord {
                default,
                min,
                max,
                words,
            },
            doc,
        }
    }

    pub fn default_value(&self) -> Value {
        match self.kind {
            ParamKind::Number { default, .. } => Value::Number(default),
            ParamKind::Bool { default } => Value::Bool(default),
            ParamKind::Word { default, .. } => Value::Word(default),
            // A declaration whose default its own kind refuses is a bug its first test finds.
            ParamKind::WholeOrWord { default, .. } => self
                .parse(default)
                .unwrap_or_else(|reason| panic!("default of {} {reason}", self.name)),
        }
    }

    /// Parses `raw`; on a bad value, the reason (the caller names the element and the value).
    pub fn parse(&self, raw: &str) -> Result<Value, String> {
        let trimmed = raw.trim();
        match self.kind {
            ParamKind::Number {
                min,
                min_exclusive,
                max,
                whole,
                ..
            } => {
                let value = match trimmed.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    _ => return Err("is not a number".to_string()),
                };
                let below = if min_exclusive {
                    value <= min
                } else {
                    value < min
                };
                if below || value > max {
                    let open = if min_exclusive { "(" } else { "[" };
                    return Err(format!("is out of range {open}{min}, {max}]: {}", self.doc));
                }
                if whole && value.fract() != 0.0 {
                    return Err(format!("must be a whole number: {}", self.doc));
                }
                Ok(Value::Number(value))
            }
            ParamKind::Bool { .. } => match trimmed {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err("must be true or false".to_string()),
            },
            ParamKind::Word { words, .. } => words
                .iter()
                .find(|word| **word == trimmed)
                .map(|word| Value::Word(word))
                .ok_or_else(|| format!("must be {}", alternatives(words))),
            ParamKind::WholeOrWord {
                min, max, words, ..
            } => {
                if let Some(word) = words.iter().find(|word| **word == trimmed) {
                    return Ok(Value::Word(word));
                }
                match trimmed.parse::<f64>() {
                    Ok(v) if v.is_finite() && v.fract() == 0.0 && (min..=max).contains(&v) => {
                        Ok(Value::Number(v))
                    }
                    _ => Err(format!(
                        "must be a whole number in [{min}, {max}] or {}: {}",
                        alternatives(words),
                        self.doc
                    )),
                }
            }
        }
    }

    /// The values column of the README's tables.
    pub fn values_text(&self) -> String {
        match self.kind {
            ParamKind::Number {
                min,
                min_exclusive,
                max,
                whole,
                ..
            } => {
                let open = if min_exclusive { "(" } else { "[" };
                let what = if whole { "whole number" } else { "number" };
                format!("{what} in {open}{min}, {max}]")
            }
            ParamKind::Bool { .. } => "`true`, `false`".to_string(),
            ParamKind::Word { words, .. } => quoted(words),
            ParamKind::WholeOrWord {
                min, max, words, ..
            } => format!("whole number in [{min}, {max}], {}", quoted(words)),
        }
    }

    /// The default column of the README's tables.
    pub fn default_text(&self) -> String {
        match self.kind {
            ParamKind::Number { default, .. } => format!("{default}"),
            ParamKind::Bool { default } => format!("{default}"),
            ParamKind::Word { default, .. } | ParamKind::WholeOrWord { default, .. } => {
                default.to_string()
            }
        }
    }
}

/// `` `a`, `b` ``: the words of a README values column.
fn quoted(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a or b`, `a, b or c`.
fn alternatives(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The parsed values of a list of declared parameters: each one's value, or its default.
pub struct ParamValues {
    params: &'static [Param],
    values: Vec<Value>,
    /// The values as the policy's own type, read once (see [`ParamValues::typed`]).
    typed: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl ParamValues {
    /// Every parameter at its default.
    pub fn defaults(params: &'static [Param]) -> ParamValues {
        ParamValues {
            params,
            values: params.iter().map(Param::default_value).collect(),
            typed: OnceLock::new(),
        }
    }

    /// The values read into a policy's own type by `read`, once: policies read their
    /// parameters on every offer, and looking each one up by name there would cost more than
    /// the ranking. Every caller must ask for the same type (a policy reads its parameters one
    /// way); asking for another is a bug and panics.
    pub fn typed<T: Any + Send + Sync>(&self, read: fn(&ParamValues) -> T) -> &T {
        self.typed
            .get_or_init(|| Box::new(read(self)))
            .downcast_ref::<T>()
            .expect("parameters read as two different types")
    }

    /// Parses the raw values given (by name) for `params`, reporting each bad one as a problem
    /// named by `element(name)`; a bad or missing value takes its default. Names that are not
    /// among `params` are the caller's business.
    pub fn parse<'a>(
        params: &'static [Param],
        raw: impl Fn(&str) -> Option<&'a str>,
        element: &dyn Fn(&str) -> String,
        problems: &mut Vec<ConfigProblem>,
    ) -> ParamValues {
        let mut parsed = ParamValues::defaults(params);
        for (param, value) in params.iter().zip(&mut parsed.values) {
            let Some(text) = raw(param.name) else {
                continue;
            };
            match param.parse(text) {
                Ok(v) => *value = v,
                Err(reason) => problems.push(ConfigProblem {
                    element: element(param.name),
                    value: text.to_string(),
                    reason,
                }),
            }
        }
        parsed
    }

    pub fn params(&self) -> &'static [Param] {
        self.params
    }

    /// Sets a declared parameter; `false` if `name` is not declared.
    pub fn set(&mut self, name: &str, value: Value) -> bool {
        match self.params.iter().position(|p| p.name == name) {
            Some(i) => {
                self.values[i] = value;
                self.typed = OnceLock::new();
                true
            }
            None => false,
        }
    }

    fn value(&self, name: &str) -> Value {
        match self.params.iter().position(|p| p.name == name) {
            Some(i) => self.values[i],
            None => panic!("parameter {name} is not declared"),
        }
    }

    /// A declared number. Panics if `name` is not a declared number: a policy reading a
    /// parameter it did not declare is a bug caught by its first test.
    pub fn number(&self, name: &str) -> f64 {
        match self.value(name) {
            Value::Number(v) => v,
            other => panic!("parameter {name} is {other:?}, not a number"),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.value(name) {
            Value::Bool(v) => v,
            other => panic!("parameter {name} is {other:?}, not a bool"),
        }
    }

    pub fn word(&self, name: &str) -> &'static str {
        match self.value(name) {
            Value::Word(v) => v,
            other => panic!("parameter {name} is {other:?}, not a word"),
        }
    }

    /// A declared whole-number-or-word parameter, as it was given.
    pub fn whole_or_word(&self, name: &str) -> Value {
        match self.value(name) {
            value @ (Value::Number(_) | Value::Word(_)) => value,
            other => panic!("parameter {name} is {other:?}, not a number or a word"),
        }
    }
}

// The typed copy is a cache of the values: it is not part of what the values are.
impl Clone for ParamValues {
    fn clone(&self) -> ParamValues {
        ParamValues {
            params: self.params,
            values: self.values.clone(),
            typed: OnceLock::new(),
        }
    }
}

impl PartialEq for ParamValues {
    fn eq(&self, other: &ParamValues) -> bool {
        self.params == other.params && self.values == other.values
    }
}

impl fmt::Debug for ParamValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.params.iter().map(|p| p.name).zip(&self.values))
            .finish()
    }
}

/// What the settings know of a policy: the `<policy>` name it answers to and the parameters it
/// declares. A policy hands this over as data; the settings parse and check everything from it.
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    pub name: &'static str,
    /// Children of a queue's `<rackwise>` element.
    pub queue_params: &'static [Param],
    /// Cluster-wide yarn-site keys (full names, `yarn.scheduler.rackwise.<policy>.*`).
    pub cluster_params: &'static [Param],
    /// Checks between a queue's parameters, past each one's own bounds.
    pub check: fn(&ParamValues) -> Vec<ParamProblem>,
    /// Whether the policy ranks its queues' apps on each offer. `false` for `none`, whose
    /// queues are left to FairScheduler and which declares no elements, so under it every
    /// element is kept unchecked (a queue can be switched off and on by its `<policy>` alone);
    /// and for `dp`, which steers through queue weights only and checks its own elements.
    pub steers: bool,
    /// Whether the policy reads NetSat's verdict on the offered rack
    /// ([`Offer::rack_saturated`](crate::policy::Offer)). NetSat's sample walks every running
    /// container, so the engine takes it only while some queue names such a policy.
    pub reads_netsat: bool,
    /// The starvation guard of a queue this policy steers when neither the queue's
    /// `<starvationGuardMs>` nor the yarn-site `starvation-guard-ms` is set: a policy whose
    /// holds measured better under a longer bound declares it here, without loosening the other
    /// policies' bound. `None`: the yarn-site key's default.
    pub starvation_guard_ms: Option<u64>,
}

/// A problem a policy's [`Declaration::check`] found: which element, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamProblem {
    pub element: &'static str,
    pub reason: String,
}

/// A [`Declaration::check`] that finds nothing.
pub fn no_check(_: &ParamValues) -> Vec<ParamProblem> {
    Vec::new()
}

/// A README configuration table for `params`: `<rackwise>` elements (`element`) or yarn-site
/// keys shown without `prefix`; columns name, values, default, meaning (the doc line).
pub fn table(params: &[Param], element: bool, prefix: &str) -> String {
    let mut lines = vec![
        format!(
            "| {} | values | default | meaning |",
            if element { "element" } else { "key" }
        ),
        "|---|---|---|---|".to_string(),
    ];
    for p in params {
        let name = if element {
            format!("`<rackwise><{}>`", p.name)
        } else {
            format!("`{}`", p.name.strip_prefix(prefix).unwrap_or(p.name))
        };
        lines.push(format!(
            "| {name} | {} | {} | {} |",
            p.values_text(),
            p.default_text(),
            p.doc
        ));
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[Param] = &[
        Param::number("ratio", 1.0, (0.0, true), 10.0, "a ratio"),
        Param::whole("count", 0.0, 0.0, 5.0, "a count"),
        Param::bool("on", false, "a switch"),
        Param::word("mode", "a", &["a", "b", "c"], "a mode"),
        Param::whole_or_word("jobs", "half", (1.0, 100.0), &["half", "all"], "a count"),
    ];

    #[test]
    fn bad_values_give_the_reason_and_keep_the_default() {
        let raw = |name: &str| match name {
            "ratio" => Some("0"),
            "count" => Some("2.5"),
            "on" => Some("yes"),
            "mode" => Some("d"),
            "jobs" => Some("most"),
            _ => None,
        };
        let mut problems = Vec::new();
        let values = ParamValues::parse(PARAMS, raw, &|n| format!("<{n}>"), &mut problems);
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            text,
            [
                "<ratio>: value '0' is out of range (0, 10]: a ratio",
                "<count>: value '2.5' must be a whole number: a count",
                "<on>: value 'yes' must be true or false",
                "<mode>: value 'd' must be a, b or c",
                "<jobs>: value 'most' must be a whole number in [1, 100] or half or all: a count",
            ]
        );
        assert_eq!(values, ParamValues::defaults(PARAMS));
    }

    #[test]
    fn good_values_are_read_back_by_name() {
        let raw = |name: &str| match name {
            "ratio" => Some(" 2.5 "),
            "count" => Some("3"),
            "on" => Some("true"),
            "mode" => Some("c"),
            "jobs" => Some("4"),
            _ => None,
        };
        let mut problems = Vec::new();
        let values = ParamValues::parse(PARAMS, raw, &|n| n.to_string(), &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(values.number("ratio"), 2.5);
        assert_eq!(values.number("count"), 3.0);
        assert!(values.bool("on"));
        assert_eq!(values.word("mode"), "c");
        assert_eq!(values.whole_or_word("jobs"), Value::Number(4.0));
        assert_eq!(
            ParamValues::defaults(PARAMS).whole_or_word("jobs"),
            Value::Word("half")
        );
        for refused in ["0", "2.5", "101", "Half"] {
            assert!(PARAMS[4].parse(refused).is_err(), "{refused}");
        }
        let read = |v: &ParamValues| (v.number("count"), v.bool("on"));
        assert_eq!(*values.typed(read), (3.0, true));
    }
}
