package io.rackwise.yarn.nativecore;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.wire.v1.OfferResponse;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A test engine in front of a real one: every call goes through to it unless a test overrides
 * the call to watch or alter it. Decoding helpers are here so that each test engine reads the
 * wire the same way, and a message it cannot read fails the test rather than passing it by.
 */
public class ForwardingEngine implements NativeEngine {
  private final NativeEngine real;

  public ForwardingEngine(NativeEngine real) {
    this.real = real;
  }

  @Override
  public byte[] offer(byte[] request) {
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

  /** The events an encoded offer request carries. */
  public static List<Event> events(byte[] request) {
    try {
      return OfferRequest.parseFrom(request).getEventsList();
    } catch (InvalidProtocolBufferException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An encoded offer response, decoded. */
  public static OfferResponse response(byte[] response) {
    try {
      return OfferResponse.parseFrom(response);
    } catch (InvalidProtocolBufferException e) {
      throw new UncheckedIOException(e);
    }
  }
}
