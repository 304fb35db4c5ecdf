package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import java.io.UncheckedIOException;
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
      NativeCore real = NativeCore.open(config);
      return new NativeEngine() {
        @Override
        public byte[] offer(byte[] request) {
          try {
            for (Event event : OfferRequest.parseFrom(request).getEventsList()) {
              if (event.hasContainerAllocated() || event.hasContainerFinished()) {
                containerEvents.add(event);
              }
            }
          } catch (InvalidProtocolBufferException e) {
            throw new UncheckedIOException(e);
          }
          return real.offer(request);
        }

        @Override
        public void reconfigure(byte[] engineConfig) {
          real.reconfigure(engineConfig);
        }

        @Override
        public void close() {
          real.close();
        }
      };
    };
  }
}
