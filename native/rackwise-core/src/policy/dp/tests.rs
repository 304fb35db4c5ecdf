//! The market's arithmetic: the contrib scheduler's own example, idle and broke children,
//! charging only within share, and the invariants (shares sum to 1, budgets never below 0)
//! over random markets.

use super::*;
use proptest::prelude::*;

fn account(budget: f64, spending: f64, share: f64) -> Account {
    Account {
        budget,
        spending,
        share,
    }
}

fn usage(units: f64, pending: u64) -> Usage {
    Usage { units, pending }
}

fn market(entries: &[(&str, Account)]) -> BTreeMap<String, Account> {
    entries
        .iter()
        .map(|(queue, account)| (queue.to_string(), *account))
        .collect()
}

fn usages(entries: &[(&str, Usage)]) -> BTreeMap<String, Usage> {
    entries
        .iter()
        .map(|(queue, usage)| (queue.to_string(), *usage))
        .collect()
}

#[test]
fn the_contrib_example_charges_2_and_6_and_shares_a_third_and_two_thirds() {
    // Spending 1 and 2, usage 2 and 3 units, budgets 100; the shares in force (1/3, 2/3 of 9
    // units: 3 and 6) cover the usage, so all of it is charged.
    let mut accounts = market(&[
        ("root.u.a", account(100.0, 1.0, 1.0 / 3.0)),
        ("root.u.b", account(100.0, 2.0, 2.0 / 3.0)),
    ]);
    let used = usages(&[("root.u.a", usage(2.0, 0)), ("root.u.b", usage(3.0, 0))]);
    let (price, lines) = settle(&mut accounts, &used, 9.0);
    assert_eq!(price, 3.0);
    assert_eq!(accounts["root.u.a"].budget, 98.0);
    assert_eq!(accounts["root.u.b"].budget, 94.0);
    assert_eq!(accounts["root.u.a"].share, 1.0 / 3.0);
    assert_eq!(accounts["root.u.b"].share, 2.0 / 3.0);
    assert_eq!(
        lines.iter().map(|l| l.charge).collect::<Vec<_>>(),
        [2.0, 6.0]
    );
}

#[test]
fn only_units_within_the_share_are_charged() {
    // Share 1/3 of 9 units is 3: of the 5 units held, the 2 beyond the share are free.
    let mut accounts = market(&[("root.u.a", account(100.0, 1.5, 1.0 / 3.0))]);
    let (_, lines) = settle(&mut accounts, &usages(&[("root.u.a", usage(5.0, 0))]), 9.0);
    assert_eq!(lines[0].charged_units, 3.0);
    assert_eq!(lines[0].charge, 4.5);
    assert_eq!(accounts["root.u.a"].budget, 95.5);
}

#[test]
fn idle_and_broke_children_get_weight_0_and_the_rest_share_everything() {
    let mut accounts = market(&[
        ("root.u.idle", account(100.0, 4.0, 0.5)),
        ("root.u.broke", account(0.5, 1.0, 0.0)),
        ("root.u.payer", account(100.0, 2.0, 0.5)),
        ("root.u.waiter", account(100.0, 6.0, 0.0)),
    ]);
    let used = usages(&[
        ("root.u.broke", usage(0.0, 10)),
        ("root.u.payer", usage(1.0, 0)),
        ("root.u.waiter", usage(0.0, 3)),
    ]);
    let (price, _) = settle(&mut accounts, &used, 10.0);
    assert_eq!(price, 8.0, "payer's 2 and waiter's 6 only");
    assert_eq!(accounts["root.u.idle"].share, 0.0, "holds and asks nothing");
    assert_eq!(accounts["root.u.broke"].share, 0.0, "cannot pay one unit");
    assert_eq!(accounts["root.u.payer"].share, 0.25);
    assert_eq!(accounts["root.u.waiter"].share, 0.75);
    assert_eq!(accounts["root.u.idle"].budget, 100.0, "idle: not charged");
}

#[test]
fn a_budget_that_cannot_cover_the_charge_goes_to_0_and_the_share_with_it() {
    let mut accounts = market(&[
        ("root.u.a", account(3.0, 2.0, 0.5)),
        ("root.u.b", account(100.0, 1.0, 0.5)),
    ]);
    let used = usages(&[("root.u.a", usage(4.0, 2)), ("root.u.b", usage(4.0, 0))]);
    let (price, lines) = settle(&mut accounts, &used, 8.0);
    assert_eq!(
        lines[0].charge, 3.0,
        "what was left, not the 8 its usage cost"
    );
    assert_eq!(accounts["root.u.a"].budget, 0.0);
    assert_eq!(accounts["root.u.a"].share, 0.0);
    assert_eq!((price, accounts["root.u.b"].share), (1.0, 1.0));
}

#[test]
fn nobody_eligible_means_price_0_and_every_share_0() {
    let mut accounts = market(&[("root.u.a", account(100.0, 0.0, 0.0))]);
    let (price, _) = settle(&mut accounts, &usages(&[("root.u.a", usage(2.0, 1))]), 4.0);
    assert_eq!((price, accounts["root.u.a"].share), (0.0, 0.0));
}

#[test]
fn a_container_costs_its_largest_dimension_in_units() {
    let unit = Resources {
        memory_mb: 1024,
        vcores: 1,
    };
    let big = Resources {
        memory_mb: 3072,
        vcores: 1,
    };
    assert_eq!(container_units(big, unit), 3.0);
    let node = Resources {
        memory_mb: 8192,
        vcores: 4,
    };
    assert_eq!(
        capacity_units(node, unit),
        Some(4.0),
        "4 vcores fit 4 units"
    );
    let memory_only = resource_unit(
        Resources {
            memory_mb: 2048,
            vcores: 0,
        },
        Resources::default(),
    );
    assert_eq!(container_units(big, memory_only), 1.5);
    assert_eq!(container_units(big, Resources::default()), 1.0, "a slot");
    assert_eq!(
        resource_unit(Resources::default(), unit),
        unit,
        "0 = the scheduler's minimum allocation"
    );
}

#[test]
fn a_child_is_the_queue_one_level_below_the_market() {
    assert_eq!(Dp::child_of("root.u", "root.u.alice"), Some("root.u.alice"));
    assert_eq!(
        Dp::child_of("root.u", "root.u.alice.etl"),
        Some("root.u.alice")
    );
    assert_eq!(Dp::child_of("root.u", "root.u"), None);
    assert_eq!(Dp::child_of("root.u", "root.users.bob"), None);
}

fn random_market() -> impl Strategy<Value = (Vec<(Account, Usage)>, f64)> {
    let child = (
        0.0..1000.0f64,
        prop_oneof![Just(0.0), 0.0..50.0f64],
        0.0..1.0f64,
        prop_oneof![Just(0.0), 0.0..40.0f64],
        prop_oneof![Just(0), 0..20u64],
    )
        .prop_map(|(budget, spending, share, units, pending)| {
            (account(budget, spending, share), usage(units, pending))
        });
    (prop::collection::vec(child, 1..8), 1.0..100.0f64)
}

proptest! {
    #[test]
    fn shares_sum_to_1_and_budgets_never_go_negative((children, capacity) in random_market()) {
        let names: Vec<String> = (0..children.len()).map(|i| format!("root.u.q{i}")).collect();
        let mut accounts: BTreeMap<String, Account> =
            names.iter().cloned().zip(children.iter().map(|(a, _)| *a)).collect();
        let used: BTreeMap<String, Usage> =
            names.iter().cloned().zip(children.iter().map(|(_, u)| *u)).collect();
        let before = accounts.clone();
        let (price, lines) = settle(&mut accounts, &used, capacity);
        let total: f64 = accounts.values().map(|a| a.share).sum();
        if price > 0.0 {
            prop_assert!((total - 1.0).abs() < 1e-9, "shares sum to {total}");
        } else {
            prop_assert_eq!(total, 0.0);
        }
        for (line, (queue, account)) in lines.iter().zip(&accounts) {
            let old = before[queue];
            prop_assert!(account.budget >= 0.0, "{queue}: {}", account.budget);
            prop_assert!(account.budget <= old.budget);
            prop_assert!(line.charged_units <= old.share * capacity + 1e-9);
            prop_assert!(line.charge <= old.spending * old.share * capacity + 1e-9);
            prop_assert_eq!(line.budget, account.budget);
        }
    }
}
