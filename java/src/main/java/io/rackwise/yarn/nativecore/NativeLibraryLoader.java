package io.rackwise.yarn.nativecore;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds, loads and vets {@code librackwise}, once per class loader.
 *
 * <p>Order: {@code System.loadLibrary("rackwise")} from {@code java.library.path} first, so a
 * developer or an operator can drop in another build; otherwise the copy inside this jar at
 * {@code io/rackwise/native/<os>/<arch>/librackwise.so}, extracted to a temporary file (a JVM
 * cannot map a library out of a jar). A loaded library is then vetted before anyone calls it on the
 * heartbeat path: its {@code version()} must equal the version this jar was built with, and
 * {@code verifyPanicGuard()} must come back as a {@link NativePanicException}.
 *
 * <p>Nothing here throws: the outcome, including every reason a load failed, is a
 * {@link LoadResult}, so the caller decides between falling back to stock FairScheduler and
 * refusing to start.
 */
public final class NativeLibraryLoader {
  public static final String LIBRARY_NAME = "rackwise";

  /**
   * System property naming the directory the jar's library is extracted to; defaults to
   * {@code java.io.tmpdir}. Set it on hosts that mount the temporary directory {@code noexec}.
   */
  public static final String EXTRACT_DIR_PROPERTY = "rackwise.native.extractDir";

  /** Written by Maven resource filtering from the template next to this class. */
  private static final String BUILD_PROPERTIES = "io/rackwise/yarn/nativecore/native-build.properties";

  private static final String LOCK_SUFFIX = ".lck";

  /** Where the loaded library came from. */
  public enum Source {
    LIBRARY_PATH,
    JAR_RESOURCE,
    NONE
  }

  /** What {@link #load} found; never null. */
  public static final class LoadResult {
    private final boolean loaded;
    private final Source source;
    private final String message;
    private final Throwable cause;

    private LoadResult(boolean loaded, Source source, String message, Throwable cause) {
      this.loaded = loaded;
      this.source = source;
      this.message = message;
      this.cause = cause;
    }

    /** True when the library is loaded, the expected version, and its panic guard works. */
    public boolean loaded() {
      return loaded;
    }

    public Source source() {
      return source;
    }

    /** Where the library was loaded from, or everything that was tried and why it failed. */
    public String message() {
      return message;
    }

    /** The underlying error of a failure, if there was one; null otherwise. */
    public Throwable cause() {
      return cause;
    }

    @Override
    public String toString() {
      return (loaded ? "loaded: " : "not loaded: ") + message;
    }
  }

  // Guarded by the class lock. A JVM can load a library only once per class loader and never
  // unload it, so the first outcome is the outcome for the life of this class.
  private static LoadResult result;

  // Closing a channel releases its lock, so the locks on our extracted copies are kept reachable
  // for the life of the JVM; another JVM's cleanup treats a held lock as "still in use".
  private static final List<FileChannel> HELD_LOCKS = new ArrayList<>();

  private NativeLibraryLoader() {}

  /** Loads the library on the first call and returns the same outcome on every later one. */
  public static synchronized LoadResult load() {
    if (result == null) {
      result = attempt();
    }
    return result;
  }

  /**
   * The library version this jar was built for: the Maven version without {@code -SNAPSHOT},
   * which must equal the Cargo workspace version.
   */
  public static String expectedVersion() throws IOException {
    Properties build = new Properties();
    try (InputStream in = resource(BUILD_PROPERTIES)) {
      if (in == null) {
        throw new IOException(BUILD_PROPERTIES + " is missing from the jar");
      }
      build.load(in);
    }
    String version = build.getProperty("version", "");
    if (version.isEmpty() || version.startsWith("${")) {
      throw new IOException(BUILD_PROPERTIES + " was not filtered by the build: '" + version + "'");
    }
    return version.endsWith("-SNAPSHOT")
        ? version.substring(0, version.length() - "-SNAPSHOT".length()) : version;
  }

  /** The jar resource holding the library for this platform. */
  public static String resourcePath() {
    return "io/rackwise/native/" + os() + "/" + arch() + "/" + System.mapLibraryName(LIBRARY_NAME);
  }

  /** {@code os.name} as the resource directories name it; keep in step with java/pom.xml. */
  static String os() {
    String name = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (name.startsWith("linux")) {
      return "linux";
    }
    if (name.startsWith("mac") || name.startsWith("darwin")) {
      return "macos";
    }
    if (name.startsWith("windows")) {
      return "windows";
    }
    return name.replaceAll("[^a-z0-9]", "");
  }

  /** {@code os.arch} as the resource directories name it; keep in step with java/pom.xml. */
  static String arch() {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    switch (arch) {
      case "amd64":
      case "x86_64":
        return "amd64";
      case "aarch64":
      case "arm64":
        return "aarch64";
      default:
        return arch.replaceAll("[^a-z0-9_]", "");
    }
  }

  private static LoadResult attempt() {
    String expected;
    try {
      expected = expectedVersion();
    } catch (IOException e) {
      return failure("cannot tell which library version this jar needs: " + e.getMessage(), e);
    }

    String fromPath;
    try {
      System.loadLibrary(LIBRARY_NAME);
      return vet(Source.LIBRARY_PATH, "java.library.path", expected);
    } catch (UnsatisfiedLinkError e) {
      fromPath = "not on java.library.path (" + e.getMessage() + ")";
    }

    String resource = resourcePath();
    URL url = NativeLibraryLoader.class.getClassLoader().getResource(resource);
    if (url == null) {
      return failure("Rackwise native library " + expected + " not found: " + fromPath
          + ", and the jar has no " + resource + " (built with -DskipNativeBuild, or not for "
          + os() + "/" + arch() + "?)", null);
    }
    Path copy;
    try {
      copy = extract(url);
    } catch (IOException | RuntimeException e) {
      return failure("cannot extract " + resource + " from the jar to " + extractDir()
          + " (set -D" + EXTRACT_DIR_PROPERTY + " to a writable directory): " + e, e);
    }
    try {
      System.load(copy.toString());
    } catch (UnsatisfiedLinkError e) {
      return failure("cannot load " + resource + " extracted to " + copy + " (a noexec "
          + "directory? set -D" + EXTRACT_DIR_PROPERTY + "): " + e.getMessage(), e);
    }
    return vet(Source.JAR_RESOURCE, resource + " (extracted to " + copy + ")", expected);
  }

  /** Checks a freshly loaded library before anyone trusts it. */
  private static LoadResult vet(Source source, String where, String expected) {
    String actual;
    try {
      actual = NativeCore.version();
    } catch (UnsatisfiedLinkError e) {
      return failure("the library loaded from " + where + " is not a Rackwise library: "
          + e.getMessage(), e);
    }
    if (!expected.equals(actual)) {
      return failure("the library loaded from " + where + " is version " + actual
          + " but this jar needs " + expected + "; remove the stale copy or rebuild", null);
    }
    try {
      NativeCore.verifyPanicGuard();
      return failure("the library loaded from " + where + " returned from verifyPanicGuard "
          + "instead of throwing: its panic guard is not working", null);
    } catch (NativePanicException expectedPanic) {
      return new LoadResult(true, source,
          "Rackwise native library " + actual + " loaded from " + where, null);
    } catch (RuntimeException | LinkageError e) {
      return failure("the library loaded from " + where + " failed verifyPanicGuard with " + e,
          e);
    }
  }

  private static LoadResult failure(String message, Throwable cause) {
    return new LoadResult(false, Source.NONE, message, cause);
  }

  private static InputStream resource(String name) {
    return NativeLibraryLoader.class.getClassLoader().getResourceAsStream(name);
  }

  private static Path extractDir() {
    return Paths.get(System.getProperty(EXTRACT_DIR_PROPERTY,
        System.getProperty("java.io.tmpdir")));
  }

  /**
   * Copies the library out of the jar under a unique name, next to a lock file this JVM holds
   * until it exits. The lock is taken before the copy exists, so another JVM's cleanup never sees
   * a fresh copy without a held lock.
   */
  private static Path extract(URL url) throws IOException {
    Path dir = extractDir();
    Files.createDirectories(dir);
    String fileName = System.mapLibraryName(LIBRARY_NAME);
    int dot = fileName.lastIndexOf('.');
    String stem = fileName.substring(0, dot) + "-";
    String extension = fileName.substring(dot);
    deleteStaleCopies(dir, stem, extension);

    Path lock = Files.createTempFile(dir, stem, extension + LOCK_SUFFIX);
    lock.toFile().deleteOnExit();
    FileChannel channel = FileChannel.open(lock, StandardOpenOption.WRITE);
    channel.lock();
    synchronized (HELD_LOCKS) {
      HELD_LOCKS.add(channel);
    }
    String lockName = lock.getFileName().toString();
    Path copy = dir.resolve(lockName.substring(0, lockName.length() - LOCK_SUFFIX.length()));
    try (InputStream in = url.openStream()) {
      Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
    }
    copy.toFile().deleteOnExit();
    return copy;
  }

  /**
   * Removes copies left by JVMs that are gone: their lock file was deleted on exit, or (after a
   * kill -9) it is still there but nobody holds it. Best effort: a copy we cannot judge or
   * delete (another user's) is left alone.
   */
  private static void deleteStaleCopies(Path dir, String stem, String extension) {
    try (DirectoryStream<Path> copies = Files.newDirectoryStream(dir, stem + "*" + extension)) {
      for (Path copy : copies) {
        Path lock = copy.resolveSibling(copy.getFileName() + LOCK_SUFFIX);
        if (!inUse(lock)) {
          Files.deleteIfExists(copy);
          Files.deleteIfExists(lock);
        }
      }
    } catch (IOException | DirectoryIteratorException | SecurityException e) {
      // Stale copies only cost disk space; failing to remove them must not stop the load.
    }
  }

  private static boolean inUse(Path lock) {
    if (!Files.exists(lock)) {
      return false;
    }
    try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.WRITE);
        FileLock probe = channel.tryLock()) {
      return probe == null;
    } catch (OverlappingFileLockException e) {
      return true; // held by this JVM
    } catch (IOException | SecurityException e) {
      return true; // cannot tell: leave it alone
    }
  }
}
