package io.rackwise.yarn.nativecore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

/**
 * How the library is found. The build runs these with no {@code java.library.path}, so a loaded
 * library can only have come out of target/classes, as it would from the deployed jar. With
 * {@code -DskipNativeBuild} the jar has no library and the failure tests run instead.
 */
class NativeLibraryLoaderTest {
  static final boolean REQUIRED = Boolean.getBoolean("rackwise.native.required");

  @Test
  void theLibraryLoadsFromTheJarResourceAndIsVetted() throws Exception {
    NativeLibraryLoader.LoadResult result = NativeLibraryLoader.load();
    if (!REQUIRED) {
      assumeTrue(result.loaded(), result::message);
    }
    assertTrue(result.loaded(), result::message);
    assertEquals(NativeLibraryLoader.Source.JAR_RESOURCE, result.source(), result.message());
    assertTrue(result.message().contains(NativeLibraryLoader.resourcePath()), result.message());
    assertNull(result.cause());
    // The Cargo workspace version and the Maven version (less -SNAPSHOT) must agree; this is
    // where the build notices if one is bumped without the other.
    assertEquals(NativeLibraryLoader.expectedVersion(), NativeCore.version());
  }

  @Test
  void theResourcePathNamesThisPlatform() {
    String path = NativeLibraryLoader.resourcePath();
    assertTrue(path.startsWith("io/rackwise/native/" + NativeLibraryLoader.os() + "/"), path);
    if (System.getProperty("os.name").startsWith("Linux")
        && System.getProperty("os.arch").equals("amd64")) {
      assertEquals("io/rackwise/native/linux/amd64/librackwise.so", path);
    }
  }

  @Test
  void theExtractedCopyIsLockedWhileThisJvmRuns() throws Exception {
    NativeLibraryLoader.LoadResult result = NativeLibraryLoader.load();
    assumeTrue(result.source() == NativeLibraryLoader.Source.JAR_RESOURCE, result::message);
    String extractDir = System.getProperty(NativeLibraryLoader.EXTRACT_DIR_PROPERTY);
    assumeTrue(extractDir != null, "extract directory not set by the build");
    Path dir = Paths.get(extractDir);
    try (var copies = Files.list(dir)) {
      Path copy = copies
          .filter(p -> p.getFileName().toString().matches("librackwise-.*\\.so"))
          .filter(p -> result.message().contains(p.toString()))
          .findFirst().orElseThrow(() -> new AssertionError("no copy in " + dir));
      Path lock = copy.resolveSibling(copy.getFileName() + ".lck");
      // A lock this JVM holds makes its own tryLock throw; without one, tryLock succeeds. Another
      // JVM's cleanup deletes a copy whose lock nobody holds, so the lock is what protects it.
      try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.WRITE)) {
        assertThrows(OverlappingFileLockException.class, channel::tryLock,
            "this JVM holds the lock on " + lock);
      }
    }
  }

  @Test
  void loadingTwiceGivesTheSameOutcome() {
    assertSame(NativeLibraryLoader.load(), NativeLibraryLoader.load());
  }

  @Test
  void withoutTheLibraryTheFailureIsRecordedWithAClearMessage() {
    NativeLibraryLoader.LoadResult result = NativeLibraryLoader.load();
    assumeFalse(REQUIRED, "native is required in this build");
    assumeFalse(result.loaded(), "the library is present in this build");
    assertFalse(result.loaded());
    assertEquals(NativeLibraryLoader.Source.NONE, result.source());
    assertTrue(result.message().contains("java.library.path"), result.message());
    assertTrue(result.message().contains(NativeLibraryLoader.resourcePath()), result.message());
    NativeCoreException refused =
        assertThrows(NativeCoreException.class, () -> NativeCore.open(new byte[0]));
    assertEquals(result.message(), refused.getMessage());
  }
}
