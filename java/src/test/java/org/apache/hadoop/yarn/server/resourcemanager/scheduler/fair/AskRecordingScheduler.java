package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.wire.v1.AsksChanged;
import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.nativecore.ForwardingEngine;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * RackwiseFairScheduler over the real native engine, keeping the ask changes of every request
 * the engine received (as the library read them) and counting the ask changes it built.
 */
public class AskRecordingScheduler extends RackwiseFairScheduler {
  /** Per native offer, the ask changes its request carried, in order. */
  final List<List<AsksChanged>> sent = new CopyOnWriteArrayList<>();
  /** Ask changes built per app id. */
  final List<String> builtFor = new CopyOnWriteArrayList<>();
  final AtomicInteger offers = new AtomicInteger();

  @Override
  NativeEngine.Factory engineFactory() {
    return config -> {
      return new ForwardingEngine(NativeCore.open(config)) {
        @Override
        public byte[] offer(byte[] request) {
          List<AsksChanged> changes = new ArrayList<>();
          for (Event event : events(request)) {
            if (event.hasAsksChanged()) {
              changes.add(event.getAsksChanged());
            }
          }
          sent.add(changes);
          offers.incrementAndGet();
          return super.offer(request);
        }
      };
    };
  }

  @Override
  Event asksChangedEvent(RackwiseAppAttempt attempt, List<SchedulerRequestKey> keys) {
    builtFor.add(attempt.getApplicationId().toString());
    return super.asksChangedEvent(attempt, keys);
  }
}
