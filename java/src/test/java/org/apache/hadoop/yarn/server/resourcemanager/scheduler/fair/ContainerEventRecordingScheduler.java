package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.nativecore.ForwardingEngine;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * RackwiseFairScheduler over the real native engine, keeping every container event the engine
 * received (as the library read it), in order.
 */
public class ContainerEventRecordingScheduler extends RackwiseFairScheduler {
  final List<Event> containerEvents = new CopyOnWriteArrayList<>();

  @Override
  NativeEngine.Factory engineFactory() {
    return config -> {
      return new ForwardingEngine(NativeCore.open(config)) {
        @Override
        public byte[] offer(byte[] request) {
          for (Event event : events(request)) {
            if (event.hasContainerAllocated() || event.hasContainerFinished()) {
              containerEvents.add(event);
            }
          }
          return super.offer(request);
        }
      };
    };
  }
}
