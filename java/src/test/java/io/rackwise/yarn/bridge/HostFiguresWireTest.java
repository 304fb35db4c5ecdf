package io.rackwise.yarn.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rackwise.wire.v1.Diagnostics;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.HostFigures;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.Plan;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.netsat.HostFigure;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;

/**
 * The {@code host_figures} event exactly as the core expects it: one per host, with the figures
 * the feed gave and no others. Read from the request an engine receives.
 */
class HostFiguresWireTest {
  private static final byte[] EMPTY_RESPONSE = OfferResponse.newBuilder()
      .setPlan(Plan.getDefaultInstance())
      .setDiagnostics(Diagnostics.newBuilder().setRackUtilization(0).setRackSaturated(false))
      .build().toByteArray();

  @Test
  void eachHostIsOneEventWithOnlyItsFigures() throws Exception {
    List<byte[]> requests = new ArrayList<>();
    NativeEngine.Factory recording = config -> new NativeEngine() {
      @Override
      public byte[] offer(byte[] request) {
        requests.add(request);
        return EMPTY_RESPONSE;
      }

      @Override
      public void reconfigure(byte[] engineConfig) {
      }

      @Override
      public void close() {
      }
    };
    RackwiseMetrics metrics = RackwiseMetrics.register();
    try (DecisionCore core = DecisionCore.start(true,
        WireCodec.engineConfig(Map.of(), List.of(), List.of(), 0, "test", null), metrics,
        ratios -> { }, weights -> { }, intervals -> { }, recording)) {
      Map<HostFigure, Double> all = new EnumMap<>(HostFigure.class);
      all.put(HostFigure.CPU_SPEED, 1.5);
      all.put(HostFigure.NETWORK_UTILIZATION, 0.3);
      all.put(HostFigure.DISK_UTILIZATION, 0.4);
      all.put(HostFigure.CROSS_RACK_MBPS, 312.5);
      core.hostFigures("node17", all, 1);
      core.hostFigures("node18", Map.of(HostFigure.DISK_UTILIZATION, 0.9), 2);
      core.offer(3, "h1:1", Resource.newInstance(1024, 1), null);
    } finally {
      metrics.unregister();
    }
    List<Event> events = OfferRequest.parseFrom(requests.get(0)).getEventsList();
    assertEquals(List.of(
        Event.newBuilder().setHostFigures(HostFigures.newBuilder().setHost("node17")
            .setTimeMs(1).setCrossRackMbps(312.5).setDiskUtilization(0.4)
            .setNetworkUtilization(0.3).setCpuSpeed(1.5)).build(),
        Event.newBuilder().setHostFigures(HostFigures.newBuilder().setHost("node18")
            .setTimeMs(2).setDiskUtilization(0.9)).build()), events);
  }
}
