//! The engine: validated settings, cluster state and the registered policies, fed one offer at
//! a time.

use crate::error::CoreError;
use crate::netsat::NetSat;
use crate::policy::{Offer, Policy, Registry};
use crate::predictor::LearnedHistory;
use crate::protocol::{Diagnostics, EngineConfig, OfferRequest, OfferResponse};
use crate::settings::Settings;
use crate::state::{ClusterState, Observation};

pub struct Engine {
    settings: Settings,
    state: ClusterState,
    netsat: NetSat,
    /// The policies, each with its own memory; queues name theirs by position in it.
    policies: Registry,
    /// What the current event told the policies (kept to reuse its buffer).
    observed: Vec<Observation>,
}

impl Engine {
    /// Builds an engine with the built-in policies from a configuration, refusing it with
    /// every problem listed. The learned history in the configuration seeds the predictor.
    pub fn new(config: &EngineConfig) -> Result<Engine, CoreError> {
        Engine::with_registry(config, Registry::builtin())
    }

    /// As [`Engine::new`], with the caller's policies (e.g. [`Registry::builtin`] plus its own).
    pub fn with_registry(config: &EngineConfig, policies: Registry) -> Result<Engine, CoreError> {
        let settings = Settings::from_config(config, policies.declarations())?;
        let history = LearnedHistory::from_entries(&config.learned, config.learned_max_entries);
        Ok(Engine {
            settings,
            state: ClusterState::with_history(history),
            netsat: NetSat::default(),
            policies,
            observed: Vec::new(),
        })
    }

    /// Replaces the settings; on error the engine keeps the previous ones untouched. Cluster
    /// state, the policies' memory and the learned history carry over (the history in `config`
    /// is only read at start).
    pub fn reconfigure(&mut self, config: &EngineConfig) -> Result<(), CoreError> {
        self.settings = Settings::from_config(config, self.policies.declarations())?;
        Ok(())
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// The registered policy of type `T` with its memory, if any.
    pub fn policy<T: Policy + 'static>(&self) -> Option<&T> {
        self.policies.get::<T>()
    }

    /// Applies the offer's events, then decides what may be placed on the offered node. The
    /// request is taken by value: its ask tables move into the state.
    pub fn offer(&mut self, request: OfferRequest) -> OfferResponse {
        let OfferRequest {
            now_ms,
            events,
            node: offered,
        } = request;
        let mut learned = Vec::new();
        for event in events {
            self.state.apply(
                event,
                now_ms,
                &self.settings,
                &mut learned,
                &mut self.observed,
            );
            for observation in self.observed.drain(..) {
                self.policies
                    .observe(&self.state, &self.settings, &observation);
            }
        }
        // Most offers carry no utilization report: they only read the node.
        if let Some(utilization) = offered.utilization {
            self.state.record_utilization(&offered.node, utilization);
        }
        let Some(node) = self.state.nodes.get(&offered.node) else {
            log::warn!(
                "offer for unknown node {}: left to FairScheduler",
                offered.node.0
            );
            return OfferResponse {
                learned,
                ..OfferResponse::default()
            };
        };
        // No queue's policy reads NetSat: its sample (a walk over every running container) is
        // not taken, and one that starts reading it later starts from a fresh average.
        let rack_utilization = if self.settings.netsat_read() {
            Some(
                self.netsat
                    .utilization(&node.rack, &self.state, &self.settings, now_ms),
            )
        } else {
            self.netsat = NetSat::default();
            None
        };
        let rack_saturated = rack_utilization
            .is_some_and(|utilization| utilization > self.settings.netsat.threshold);
        let some_rack_unsaturated =
            rack_utilization.is_none() || self.netsat.some_rack_unsaturated();
        let offer = Offer {
            node_id: &offered.node,
            node,
            host: &node.host,
            rack: &node.rack,
            rack_saturated,
            some_rack_unsaturated,
            now_ms,
        };
        let (plan, starved) = self.policies.plan(&self.state, &self.settings, &offer);
        let rack = Some(node.rack.clone());
        let queue_weights = self
            .policies
            .queue_weights(&self.state, &self.settings, now_ms);
        OfferResponse {
            plan,
            learned,
            diagnostics: Diagnostics {
                rack,
                rack_utilization,
                rack_saturated,
                starved,
            },
            logs: Vec::new(),
            queue_weights,
            intervals: self.policies.closed_intervals(&self.settings),
            node_scores: self.policies.node_scores(&self.settings),
        }
    }
}
