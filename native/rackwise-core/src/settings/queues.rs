//! The queues' `<rackwise>` elements of fair-scheduler.xml: which policy steers each queue, with
//! its parameters, checked against the policies' declarations.

use super::cluster;
use super::params::{Declaration, Param, ParamValues, Value};
use crate::error::ConfigProblem;
use crate::protocol::QueueSettings;
use std::collections::BTreeMap;

/// The one element of `<rackwise>` every queue has: which policy steers it.
pub const ELEMENT_POLICY: &str = "policy";

/// A steered queue's own starvation guard, under any policy. Absent, the queue has the
/// yarn-site `starvation-guard-ms`, or its policy's own default when that key is unset: a
/// queue whose policy holds jobs for longer (FRESH's admission through a minutes-long map
/// phase) raises its own bound without loosening the others'.
pub const ELEMENT_STARVATION_GUARD: &str = "starvationGuardMs";

/// `<starvationGuardMs>` as a parameter: the yarn-site key's bounds, under the element's name.
pub fn starvation_guard_element() -> Param {
    Param {
        name: ELEMENT_STARVATION_GUARD,
        doc: "no app of this queue is held back by Rackwise for longer than this; absent = \
              the yarn-site `starvation-guard-ms`, or when that is unset the policy's own \
              default (shufflewatcher's is its `rackWaitMs` default)",
        ..*cluster::starvation_guard_key()
    }
}

/// The resolved policy of one queue and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSetup {
    /// The policy's position in the registry the settings were parsed against.
    pub policy: usize,
    pub policy_name: &'static str,
    /// The policy's declared queue parameters, set or defaulted.
    pub values: ParamValues,
    /// The queue's `<starvationGuardMs>`; `None` = the yarn-site key's or the policy's (see
    /// [`Settings::starvation_guard_ms`](super::Settings::starvation_guard_ms)).
    pub starvation_guard_ms: Option<u64>,
}

/// The position of the `<policy>` name `text` among `declarations` (case and spaces ignored).
pub(super) fn policy_index(declarations: &[Declaration], text: &str) -> Option<usize> {
    let wanted = text.trim().to_ascii_lowercase();
    declarations.iter().position(|d| d.name == wanted)
}

pub(super) fn policy_names(declarations: &[Declaration]) -> String {
    declarations
        .iter()
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every element `<rackwise>` accepts, in registry order.
fn queue_elements(declarations: &[Declaration]) -> String {
    let mut names = vec![ELEMENT_POLICY, ELEMENT_STARVATION_GUARD];
    for declaration in declarations {
        for param in declaration.queue_params {
            if !names.contains(&param.name) {
                names.push(param.name);
            }
        }
    }
    names.join(", ")
}

fn declares(declaration: &Declaration, name: &str) -> Option<&'static Param> {
    declaration.queue_params.iter().find(|p| p.name == name)
}

pub(super) fn parse_queues(
    source: &str,
    queues: &[QueueSettings],
    declarations: &[Declaration],
    problems: &mut Vec<ConfigProblem>,
) -> BTreeMap<String, QueueSetup> {
    let mut setups = BTreeMap::new();
    for queue in queues {
        let Some(elements) = &queue.rackwise else {
            continue;
        };
        let element = |name: &str| format!("{source}: queue {} <rackwise><{name}>", queue.queue);
        let chosen = elements
            .get(ELEMENT_POLICY)
            .and_then(|raw| policy_index(declarations, raw));
        let mut values = chosen.map(|i| ParamValues::defaults(declarations[i].queue_params));
        let mut starvation_guard_ms = None;
        // Element by element, in name order: each is checked against the chosen policy's
        // declaration if it has one, else against the first policy declaring it.
        for (name, raw) in elements {
            if name == ELEMENT_POLICY {
                if chosen.is_none() {
                    problems.push(ConfigProblem {
                        element: element(name),
                        value: raw.clone(),
                        reason: format!(
                            "is not a policy; expected one of: {}",
                            policy_names(declarations)
                        ),
                    });
                }
                continue;
            }
            if name == ELEMENT_STARVATION_GUARD {
                match starvation_guard_element().parse(raw) {
                    Ok(Value::Number(ms)) => starvation_guard_ms = Some(ms as u64),
                    Ok(_) => unreachable!("the guard is declared as a number"),
                    Err(reason) => problems.push(ConfigProblem {
                        element: element(name),
                        value: raw.clone(),
                        reason,
                    }),
                }
                continue;
            }
            let own = chosen.and_then(|i| declares(&declarations[i], name));
            let Some(param) = own.or_else(|| declarations.iter().find_map(|d| declares(d, name)))
            else {
                problems.push(ConfigProblem {
                    element: format!("{source}: queue {} <rackwise>", queue.queue),
                    value: name.clone(),
                    reason: format!(
                        "is not a Rackwise element; expected one of: {}",
                        queue_elements(declarations)
                    ),
                });
                continue;
            };
            match param.parse(raw) {
                Ok(value) => {
                    if let (Some(values), Some(_)) = (values.as_mut(), own) {
                        values.set(name, value);
                    }
                }
                Err(reason) => problems.push(ConfigProblem {
                    element: element(name),
                    value: raw.clone(),
                    reason,
                }),
            }
        }
        if let (Some(i), Some(values)) = (chosen, values.as_ref()) {
            let declaration = &declarations[i];
            if !declaration.steers && starvation_guard_ms.is_some() {
                problems.push(ConfigProblem {
                    element: element(ELEMENT_STARVATION_GUARD),
                    value: elements[ELEMENT_STARVATION_GUARD].clone(),
                    reason: format!(
                        "applies only to a steered queue: <policy>{}</policy> holds nothing back",
                        declaration.name
                    ),
                });
            }
            if declaration.steers || !declaration.queue_params.is_empty() {
                check_foreign_elements(declaration, declarations, elements, &element, problems);
                for problem in (declaration.check)(values) {
                    problems.push(ConfigProblem {
                        element: element(problem.element),
                        value: elements.get(problem.element).cloned().unwrap_or_default(),
                        reason: problem.reason,
                    });
                }
            }
        }
        if !elements.contains_key(ELEMENT_POLICY) {
            problems.push(ConfigProblem {
                element: element(ELEMENT_POLICY),
                value: String::new(),
                reason: format!(
                    "is missing; a <rackwise> element must name its policy, one of: {}",
                    policy_names(declarations)
                ),
            });
        }
        let policy = chosen.unwrap_or_default();
        setups.insert(
            queue.queue.clone(),
            QueueSetup {
                policy,
                policy_name: declarations.get(policy).map_or("", |d| d.name),
                values: values.unwrap_or_else(|| ParamValues::defaults(&[])),
                starvation_guard_ms,
            },
        );
    }
    setups
}

/// Under one steering policy an element only another policy declares would be silently
/// ignored, so it is refused.
fn check_foreign_elements(
    chosen: &Declaration,
    declarations: &[Declaration],
    elements: &BTreeMap<String, String>,
    element: &dyn Fn(&str) -> String,
    problems: &mut Vec<ConfigProblem>,
) {
    for (name, raw) in elements {
        if name == ELEMENT_POLICY
            || name == ELEMENT_STARVATION_GUARD
            || declares(chosen, name).is_some()
        {
            continue;
        }
        let owners: Vec<String> = declarations
            .iter()
            .filter(|d| declares(d, name).is_some())
            .map(|d| format!("<policy>{}</policy>", d.name))
            .collect();
        if !owners.is_empty() {
            problems.push(ConfigProblem {
                element: element(name),
                value: raw.clone(),
                reason: format!("applies only to {}", owners.join(" or ")),
            });
        }
    }
}
