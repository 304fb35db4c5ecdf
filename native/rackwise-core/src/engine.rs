//! The engine: validated settings plus cluster state, fed one offer at a time.

use crate::error::CoreError;
use crate::netsat::NetSat;
use crate::policy::nas::NasState;
use crate::policy::{self, Offer, RelaxedSkips};
use crate::predictor::LearnedHistory;
use crate::protocol::{
    Diagnostics, EngineConfig, Event, LearnedRatio, NodeOffer, OfferRequest, OfferResponse,
};
use crate::settings::Settings;
use crate::state::ClusterState;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub struct Engine {
    settings: Settings,
    state: ClusterState,
    netsat: NetSat,
    relaxed_skips: RelaxedSkips,
    /// What NAS carries from offer to offer (skips, delayed reduces, held racks). Kept apart
    /// from `state` so the policies can update it while reading the cluster state.
    nas: NasState,
}

impl Engine {
    /// Builds an engine from a configuration, refusing it with every problem listed. The
    /// learned history in the configuration seeds the predictor.
    pub fn new(config: &EngineConfig) -> Result<Engine, CoreError> {
        let settings = Settings::from_config(config)?;
        let history = LearnedHistory::from_entries(&config.learned);
        Ok(Engine {
            settings,
            state: ClusterState::with_history(history),
            netsat: NetSat::default(),
            relaxed_skips: RelaxedSkips::default(),
            nas: NasState::default(),
        })
    }

    /// Replaces the settings; on error the engine keeps the previous ones untouched. Cluster
    /// state and learned history carry over (the history in `config` is only read at start).
    pub fn reconfigure(&mut self, config: &EngineConfig) -> Result<(), CoreError> {
        self.settings = Settings::from_config(config)?;
        Ok(())
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    pub fn nas(&self) -> &NasState {
        &self.nas
    }

    /// Applies the offer's events, then decides what may be placed on the offered node.
    pub fn offer(&mut self, request: &OfferRequest) -> OfferResponse {
        let mut learned = Vec::new();
        for event in &request.events {
            self.state
                .apply(event, request.now_ms, &self.settings, &mut learned);
            self.nas.observe(event, &self.state);
        }
        self.decide(request.now_ms, &request.node, learned)
    }

    /// [`Engine::offer`] for a request the caller gives away: the same response, but the
    /// events are moved into the state instead of cloned (an ask table carries one map entry
    /// per host holding a pending split, and is re-sent after every allocation).
    pub fn offer_owned(&mut self, request: OfferRequest) -> OfferResponse {
        let OfferRequest {
            now_ms,
            events,
            node,
        } = request;
        let mut learned = Vec::new();
        for event in events {
            match event {
                Event::Asks { app, asks } => {
                    self.state.apply_owned(
                        Event::Asks {
                            app: app.clone(),
                            asks,
                        },
                        now_ms,
                        &self.settings,
                        &mut learned,
                    );
                    // NAS observes allocations and removals, never an ask table: it sees the
                    // event without the asks that were moved into the state.
                    let seen = Event::Asks {
                        app,
                        asks: Vec::new(),
                    };
                    self.nas.observe(&seen, &self.state);
                }
                other => {
                    self.state
                        .apply(&other, now_ms, &self.settings, &mut learned);
                    self.nas.observe(&other, &self.state);
                }
            }
        }
        self.decide(now_ms, &node, learned)
    }

    fn decide(
        &mut self,
        now_ms: u64,
        offered: &NodeOffer,
        learned: Vec<LearnedRatio>,
    ) -> OfferResponse {
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
        node.unallocated.set(offered.unallocated);
        node.utilization.set(offered.utilization);

        let rack_utilization =
            self.netsat
                .utilization(&node.rack, &self.state, &self.settings, now_ms);
        let rack_saturated = rack_utilization > self.settings.netsat.threshold;
        let offer = Offer {
            node_id: &offered.node,
            node,
            host: &node.host,
            rack: &node.rack,
            rack_saturated,
            now_ms,
        };
        let (plan, starved) = policy::plan(
            &self.state,
            &self.settings,
            &offer,
            &mut self.relaxed_skips,
            &mut self.nas,
        );
        OfferResponse {
            plan,
            learned,
            diagnostics: Diagnostics {
                rack: Some(node.rack.clone()),
                rack_utilization,
                rack_saturated,
                starved,
            },
            logs: Vec::new(),
        }
    }
}

/// Decodes one wire message (UTF-8 JSON).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CoreError> {
    serde_json::from_slice(bytes).map_err(|e| CoreError::Protocol(e.to_string()))
}

/// Encodes one wire message. Our protocol types hold only strings, numbers, lists and maps
/// with string keys, which always serialize.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    serde_json::to_vec(message).unwrap_or_default()
}
