package io.rackwise.yarn.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.netsat.HostFigure;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;

/**
 * The {@code host_figures} event exactly as the core expects it: one per host, the figures the
 * feed gave in a fixed order, absent ones omitted. Read from the request an engine receives.
 */
class HostFiguresWireTest {
  private static final byte[] EMPTY_RESPONSE = ("{\"plan\":{\"queues\":[]},\"learned\":[],"
      + "\"diagnostics\":{\"rack\":null,\"rack_utilization\":0,\"rack_saturated\":false,"
      + "\"starved\":[]},\"logs\":[]}").getBytes(StandardCharsets.UTF_8);

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
        DecisionCore.configDocument(Map.of(), List.of(), List.of(), "test"), metrics,
        ratios -> { }, recording)) {
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
    JsonNode events = new ObjectMapper().readTree(requests.get(0)).path("events");
    assertEquals(2, events.size(), events.toString());
    assertEquals("{\"type\":\"host_figures\",\"host\":\"node17\",\"time_ms\":1,"
        + "\"cross_rack_mbps\":312.5,\"disk_utilization\":0.4,\"network_utilization\":0.3,"
        + "\"cpu_speed\":1.5}", events.get(0).toString());
    assertEquals("{\"type\":\"host_figures\",\"host\":\"node18\",\"time_ms\":2,"
        + "\"disk_utilization\":0.9}", events.get(1).toString());
  }
}
