//! The README's configuration tables are the declared parameters, rendered: every element and
//! key with its values, default and doc line, nothing more. Each table sits between
//! `<!-- rackwise-core: NAME -->` and `<!-- rackwise-core: end -->`. After changing a
//! declaration, `RACKWISE_BLESS_README=1 cargo test -p rackwise-core --test readme_tables`
//! rewrites them.

use rackwise_core::policy::Registry;
use rackwise_core::settings::params::table;
use rackwise_core::settings::{starvation_guard_element, CORE_KEYS, KEY_PREFIX};
use std::path::Path;

const END: &str = "<!-- rackwise-core: end -->";

/// Every generated table of the README, by marker name.
fn expected_tables() -> Vec<(String, String)> {
    let registry = Registry::builtin();
    let names: Vec<String> = registry
        .declarations()
        .iter()
        .map(|d| format!("`{}`", d.name))
        .collect();
    let guard = starvation_guard_element();
    let mut tables = vec![
        (
            "policy".to_string(),
            format!(
                "| element | values | default | meaning |\n|---|---|---|---|\n\
                 | `<rackwise><policy>` | {} | required | the policy steering the queue; \
                 `none` = stock FairScheduler |\n\
                 | `<rackwise><{}>` | {} | `starvation-guard-ms` | {} |\n",
                names.join(", "),
                guard.name,
                guard.values_text(),
                guard.doc
            ),
        ),
        ("core-keys".to_string(), table(CORE_KEYS, false, KEY_PREFIX)),
    ];
    for declaration in registry.declarations() {
        if !declaration.queue_params.is_empty() {
            tables.push((
                format!("queue-params {}", declaration.name),
                table(declaration.queue_params, true, KEY_PREFIX),
            ));
        }
        if !declaration.cluster_params.is_empty() {
            tables.push((
                format!("cluster-params {}", declaration.name),
                table(declaration.cluster_params, false, KEY_PREFIX),
            ));
        }
    }
    tables
}

/// The README with each generated table's body replaced by `body(name, current)`; panics on a
/// marker without its end.
fn rewrite(readme: &str, mut body: impl FnMut(&str, &str) -> String) -> String {
    let mut out = String::new();
    let mut rest = readme;
    while let Some(at) = rest.find("<!-- rackwise-core: ") {
        let open_end = at + rest[at..].find("-->").expect("marker closes") + 3;
        let name = rest[at + "<!-- rackwise-core: ".len()..open_end - 3].trim();
        assert_ne!(name, "end", "an end marker without its table");
        let close = open_end + rest[open_end..].find(END).expect("table has an end marker");
        out.push_str(&rest[..open_end]);
        out.push('\n');
        out.push_str(&body(name, rest[open_end..close].trim_start_matches('\n')));
        out.push_str(END);
        rest = &rest[close + END.len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_readme_tables_are_the_declared_parameters() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let expected = expected_tables();
    let mut found = Vec::new();
    let rendered = rewrite(&readme, |name, current| {
        found.push(name.to_string());
        match expected.iter().find(|(n, _)| n == name) {
            Some((_, table)) => table.clone(),
            None => current.to_string(),
        }
    });
    if std::env::var_os("RACKWISE_BLESS_README").is_some() {
        std::fs::write(&path, &rendered).unwrap();
    }
    let mut wanted: Vec<&String> = expected.iter().map(|(n, _)| n).collect();
    let mut found: Vec<&String> = found.iter().collect();
    wanted.sort();
    found.sort();
    assert_eq!(found, wanted, "the README's generated tables");
    assert!(
        rendered == readme,
        "a README configuration table differs from the declarations; run \
         RACKWISE_BLESS_README=1 cargo test -p rackwise-core --test readme_tables"
    );
}

#[test]
fn a_changed_default_is_caught() {
    let readme = format!(
        "intro\n<!-- rackwise-core: core-keys -->\n{}{END}\nrest\n",
        table(CORE_KEYS, false, KEY_PREFIX).replace("| 0.8 |", "| 0.9 |")
    );
    let fixed = rewrite(&readme, |_, _| table(CORE_KEYS, false, KEY_PREFIX));
    assert_ne!(fixed, readme);
    assert!(fixed.contains("| 0.8 |") && !fixed.contains("| 0.9 |"));
}
