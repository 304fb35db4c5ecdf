//! The `dp` policy in the simulator: a `.dp.json` workload's budgets and spending schedules
//! reach the core, the core's shares become FairScheduler's queue weights, and the run reports
//! per user what it got against what it paid for. Small clusters, so each run takes a second.

use rackwise_sim::dp_metrics::DpMetrics;
use rackwise_sim::dp_workload::DpWorkload;
use rackwise_sim::{run_policy, Cluster, SimOptions};

/// 4 racks × 10 nodes × 6 containers = 240 containers.
fn cluster() -> Cluster {
    Cluster {
        name: "dp240".into(),
        racks: 4,
        nodes_per_rack: 10,
        containers_per_node: 6,
        ..Cluster::preset("nas600").unwrap()
    }
}

/// One user per rate, each with more maps pending than the whole cluster for `jobs` jobs;
/// `budget` and extra spending changes `(user, at_s, rate)` as given.
fn workload(rates: &[f64], budget: &[f64], changes: &[(usize, f64, f64)], jobs: u32) -> String {
    let users: Vec<String> = rates
        .iter()
        .enumerate()
        .map(|(user, rate)| {
            let mut spending = vec![format!(r#"{{"at_s": 0, "rate": {rate}}}"#)];
            spending.extend(
                changes
                    .iter()
                    .filter(|change| change.0 == user)
                    .map(|(_, at_s, rate)| format!(r#"{{"at_s": {at_s}, "rate": {rate}}}"#)),
            );
            format!(
                r#"{{"budget": {}, "spending": [{}],
                    "jobs": {{"count": {jobs}, "maps": 600, "map_s": 20, "interval_s": 20}}}}"#,
                budget[user],
                spending.join(", ")
            )
        })
        .collect();
    format!(r#"{{"task_spread": 0.3, "users": [{}]}}"#, users.join(", "))
}

fn run(policy: &str, text: &str, seed: u64) -> Option<DpMetrics> {
    let workload = DpWorkload::parse(text, "test.dp.json").unwrap();
    let options = SimOptions {
        seed,
        accounts: workload.accounts(),
        ..SimOptions::default()
    };
    let (metrics, _, _) = run_policy(
        &cluster(),
        &workload.jobs(),
        policy,
        &options,
        &mut |_, _| {},
    )
    .unwrap();
    metrics.dp
}

#[test]
fn four_users_at_rates_1_2_4_8_hold_their_shares_within_5_percent() {
    let text = workload(&[1.0, 2.0, 4.0, 8.0], &[1e9; 4], &[], 4);
    let dp = run("dp", &text, 1).expect("the market closed intervals");
    assert!(dp.saturated_intervals >= 10, "{dp:?}");
    for (user, rate) in [1.0, 2.0, 4.0, 8.0].iter().enumerate() {
        let figures = &dp.users[&format!("root.u{user}")];
        let target = rate / 15.0;
        assert!((figures.target_share - target).abs() < 1e-3, "{figures:?}");
        // Relative: |mean − target| / target; an equal split (1/4 each) is off by 275 % for
        // the 1/15 user and 53 % for the 8/15 one.
        assert!(figures.relative_error <= 0.05, "user {user}: {figures:?}");
        assert!(figures.spent > 0.0);
    }
    // The user paying most finishes its jobs first.
    let turnaround = |user: usize| dp.users[&format!("root.u{user}")].turnaround.mean_s;
    assert!(turnaround(3) < turnaround(2) && turnaround(2) < turnaround(1));
    // Without the market no user has an account and FairScheduler splits evenly.
    assert!(run("fair", &text, 1).is_none());
}

#[test]
fn a_spending_change_moves_the_share_within_two_intervals() {
    // Two users at 1:1; user 0 raises to 3 at 200 s: its share goes from 1/2 to 3/4.
    let text = workload(&[1.0, 1.0], &[1e9; 2], &[(0, 200.0, 3.0)], 6);
    let dp = run("dp", &text, 2).unwrap();
    let series = &dp.users["root.u0"].series;
    let before: Vec<_> = series
        .iter()
        .filter(|p| p[0] > 60.0 && p[0] < 200.0)
        .collect();
    assert!(
        before.iter().all(|p| (p[1] - 0.5).abs() < 0.05),
        "{before:?}"
    );
    // Closes later than two intervals (40 s) after the change, while both still ask.
    let after: Vec<_> = series
        .iter()
        .filter(|p| p[0] > 240.0 && p[0] < 400.0)
        .collect();
    assert!(!after.is_empty());
    assert!(
        after
            .iter()
            .all(|p| p[2] == 0.75 && (p[1] - 0.75).abs() < 0.05),
        "{after:?}"
    );
}

#[test]
fn a_user_whose_budget_runs_out_drops_to_share_0_and_never_below_0_credits() {
    // User 0 has 2000 credits at spending 1: at its share of 1/2 it runs dry within minutes.
    let text = workload(&[1.0, 1.0], &[2000.0, 1e9], &[], 6);
    let dp = run("dp", &text, 3).unwrap();
    let broke = &dp.users["root.u0"];
    assert_eq!(broke.final_budget, 0.0);
    assert!((broke.spent - 2000.0).abs() < 1e-6, "{broke:?}");
    assert!(broke.series.iter().all(|p| p[4] >= 0.0));
    let empty = broke
        .series
        .iter()
        .position(|p| p[4] == 0.0)
        .expect("user 0's balance reaches 0");
    // From the close that emptied it, user 0 has no share (it still asks: its jobs are not
    // done) and the funded user's share is the whole market while it runs.
    assert!(
        broke.series[empty + 1..].iter().all(|p| p[2] == 0.0),
        "{:?}",
        &broke.series[empty..]
    );
    let rich = &dp.users["root.u1"].series;
    assert!(
        rich[empty + 1..]
            .iter()
            .filter(|p| p[1] > 0.0)
            .all(|p| p[2] == 1.0),
        "{:?}",
        &rich[empty..]
    );
    assert!(
        rich.len() > empty + 5,
        "the run went on after user 0 ran dry"
    );
}
