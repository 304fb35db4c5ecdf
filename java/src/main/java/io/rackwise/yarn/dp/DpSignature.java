package io.rackwise.yarn.dp;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The signature of a Dynamic Priority request where HTTP authentication is not Kerberos:
 * HMAC-SHA256, keyed with the user's key from the ACL file, over the canonical string
 *
 * <pre>
 * RACKWISE-DP-HMAC-SHA256 \n METHOD \n PATH \n USER \n TIMESTAMP \n BODY
 * </pre>
 *
 * <p>where {@code METHOD} is the HTTP method in capitals, {@code PATH} the request's path as sent
 * (e.g. {@code /dp/queue/root.users.alice}, without the query string), {@code USER} and {@code
 * TIMESTAMP} (milliseconds since the epoch, in decimal) the values of the {@value #USER_HEADER}
 * and {@value #TIMESTAMP_HEADER} headers, and {@code BODY} the request body's bytes (empty for a
 * GET); every part but the body is UTF-8 and followed by one newline byte. The signature goes in
 * {@value #SIGNATURE_HEADER}, Base64 (RFC 4648, with padding). The key is the ACL file's key
 * string's UTF-8 bytes.
 */
public final class DpSignature {
  public static final String USER_HEADER = "X-Rackwise-User";
  public static final String TIMESTAMP_HEADER = "X-Rackwise-Timestamp";
  public static final String SIGNATURE_HEADER = "X-Rackwise-Signature";
  static final String SCHEME = "RACKWISE-DP-HMAC-SHA256";
  private static final String ALGORITHM = "HmacSHA256";

  private DpSignature() {
  }

  /** The bytes that are signed. */
  static byte[] canonical(String method, String path, String user, long timestamp,
      byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    String head = SCHEME + "\n" + method + "\n" + path + "\n" + user + "\n" + timestamp + "\n";
    out.writeBytes(head.getBytes(StandardCharsets.UTF_8));
    out.writeBytes(body);
    return out.toByteArray();
  }

  /** The signature of a request, Base64. */
  public static String sign(String key, String method, String path, String user, long timestamp,
      byte[] body) {
    return Base64.getEncoder().encodeToString(mac(key, canonical(method, path, user, timestamp,
        body)));
  }

  /**
   * Whether {@code signature} (already Base64-decoded) is the request's, compared in constant
   * time so that the time taken tells nothing of how much of it was right.
   */
  static boolean matches(String key, String method, String path, String user, long timestamp,
      byte[] body, byte[] signature) {
    return MessageDigest.isEqual(mac(key, canonical(method, path, user, timestamp, body)),
        signature);
  }

  private static byte[] mac(String key, byte[] data) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), ALGORITHM));
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      // Every Java runtime must provide HmacSHA256.
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}
