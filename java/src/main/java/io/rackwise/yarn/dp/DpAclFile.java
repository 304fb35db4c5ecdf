package io.rackwise.yarn.dp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The users allowed to sign Dynamic Priority requests where HTTP authentication is not Kerberos:
 * a text file of lines {@code <user> <role> <key>} ({@code role} is {@code user} or {@code
 * admin}; the key at least {@value #MIN_KEY_LENGTH} characters without spaces; blank lines and lines starting
 * with {@code #} are ignored). It is read again whenever its content changes, on the endpoint's
 * threads only; a file with a bad line is refused whole, naming the line, and the last good one
 * stays in force.
 */
public final class DpAclFile {
  private static final Logger LOG = LoggerFactory.getLogger(DpAclFile.class);
  /** 16 characters: a key anyone could guess by trying is no key. */
  static final int MIN_KEY_LENGTH = 16;

  /** The roles a line may give. */
  public enum Role {
    USER, ADMIN
  }

  /** One user's line. */
  public record Entry(String user, Role role, String key) {
    @Override
    public String toString() {
      // Never the key, should an entry reach a log.
      return user + " " + role;
    }
  }

  private final Path file;
  /** The content last read (good or refused), so that an unchanged file is not parsed again. */
  private byte[] lastRead;
  /** The users of the last good content; guarded by this. */
  private Map<String, Entry> users = Map.of();

  public DpAclFile(Path file) {
    this.file = file;
  }

  /** The user's line in the file as last read well, after reading it again if it changed. */
  public synchronized Optional<Entry> user(String user) {
    reloadIfChanged();
    return Optional.ofNullable(users.get(user));
  }

  private void reloadIfChanged() {
    byte[] content;
    try {
      content = Files.readAllBytes(file);
    } catch (IOException e) {
      if (lastRead != null) {
        LOG.error("Dynamic Priority ACL file {} cannot be read ({}); the last good one stays in "
            + "force", file, e.toString());
        lastRead = null;
      }
      return;
    }
    if (Arrays.equals(content, lastRead)) {
      return;
    }
    lastRead = content;
    try {
      users = parse(new String(content, StandardCharsets.UTF_8), file.toString());
      LOG.info("Dynamic Priority ACL file {} read: {} users", file, users.size());
    } catch (IllegalArgumentException e) {
      LOG.error("{}; the last good ACL file stays in force ({} users)", e.getMessage(),
          users.size());
    }
  }

  /**
   * Parses the file's text.
   *
   * @throws IllegalArgumentException a line is malformed (the message names the file, the line
   *     number, what it holds, and why)
   */
  static Map<String, Entry> parse(String text, String source) {
    Map<String, Entry> parsed = new HashMap<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] fields = line.split("\\s+");
      String at = source + " line " + (i + 1) + ": ";
      if (fields.length != 3) {
        throw new IllegalArgumentException(at + fields.length + " fields where 3 are required "
            + "(<user> <role> <key>)" + (fields.length > 0 ? ", user '" + fields[0] + "'" : ""));
      }
      Role role;
      try {
        role = Role.valueOf(fields[1].toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at + "role '" + fields[1] + "' of user '" + fields[0]
            + "' must be user or admin");
      }
      if (fields[2].length() < MIN_KEY_LENGTH) {
        throw new IllegalArgumentException(at + "the key of user '" + fields[0] + "' has "
            + fields[2].length() + " characters, fewer than the " + MIN_KEY_LENGTH
            + " required");
      }
      if (parsed.put(fields[0], new Entry(fields[0], role, fields[2])) != null) {
        throw new IllegalArgumentException(at + "user '" + fields[0] + "' has a line already");
      }
    }
    return Map.copyOf(parsed);
  }
}
